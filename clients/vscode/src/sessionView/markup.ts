/**
 * The small HTML pieces every part of the session view is built from: escaping, codicons and action
 * buttons. A button carries `data-action` (and `data-uri` for one file); the webview script forwards
 * a click as a message (`messages.ts`).
 *
 * Pure: no `vscode` import, no DOM.
 */

/** What the webview can ask of the extension (`data-action` values, plus `send`). */
export type ViewActionName = 'review' | 'apply' | 'discard' | 'refreshContext' | 'cancel' | 'trace';

/**
 * `data-action` values the webview handles itself or sends as their own message: `approvePlan`
 * (a message with the checks typed in the input area), `revise` (the input box takes the feedback, in
 * plan mode; nothing is sent until the user sends it) and `usePlanChecks` (the plan's checks are added
 * to the input area's Checks box, where the user sees and edits them before anything runs).
 */
export type PlanActionName = 'approvePlan' | 'revise' | 'usePlanChecks';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A codicon (`@vscode/codicons`), hidden from screen readers. */
export function icon(name: string): string {
  return `<span class="codicon codicon-${name}" aria-hidden="true"></span>`;
}

export interface ButtonOptions {
  /** The one proposed file the action is on. */
  uri?: string;
  /** Tooltip and accessible name. */
  title?: string;
  /** The primary button of its group (the theme's button colours). */
  primary?: boolean;
}

export function button(action: ViewActionName | PlanActionName, label: string, iconName: string, options: ButtonOptions = {}): string {
  const { uri, title, primary } = options;
  const target = uri ? ` data-uri="${escapeHtml(uri)}"` : '';
  const tip = title ? ` title="${escapeHtml(title)}" aria-label="${escapeHtml(title)}"` : '';
  const cls = primary ? 'action primary' : 'action';
  return `<button type="button" class="${cls}" data-action="${action}"${target}${tip}>${icon(iconName)}<span>${escapeHtml(label)}</span></button>`;
}
