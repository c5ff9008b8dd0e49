/**
 * The messages between the session view's webview script and the extension (`postMessage`), both
 * ways. The webview only forwards what the user did; the extension calls the server.
 *
 * Pure: no `vscode` import.
 */

import type { ViewActionName } from './markup';
import type { ViewState } from './state';

/** Extension → webview. */
export type ToWebview =
  | { type: 'state'; state: ViewState }
  /** Put the keyboard focus in the input box (a new session). */
  | { type: 'focusInput' };

/** Webview → extension. `uri` names one proposed file; left out, the action is on the whole proposal. */
export type FromWebview =
  | { type: 'ready' }
  /**
   * A task typed in the input box. `mode` `plan`: a read-only plan run (the mode switch, or "Revise");
   * `checks`: the acceptance check commands typed in the Checks box, one per line, blank lines dropped.
   */
  | { type: 'send'; text: string; mode?: 'plan'; checks?: string[] }
  /** "Approve plan": implement the latest plan in the same session, with the typed checks. */
  | { type: 'approvePlan'; checks?: string[] }
  | { type: 'newSession' }
  | { type: 'pickSession' }
  | { type: 'action'; action: ViewActionName; uri?: string };

/** At most this many checks go with a run, each at most `MAX_CHECK_CHARS` long. */
export const MAX_CHECKS = 20;
export const MAX_CHECK_CHARS = 1000;

/** The Checks box's text as commands: one per line, trimmed, blank lines dropped. */
export function checkLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

function checks(value: unknown): { checks?: string[] } {
  if (!Array.isArray(value)) {
    return {};
  }
  const list = value
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item !== '' && item.length <= MAX_CHECK_CHARS && !/[\r\n]/.test(item))
    .slice(0, MAX_CHECKS);
  return list.length ? { checks: list } : {};
}

const ACTIONS: readonly string[] = ['review', 'apply', 'discard', 'refreshContext', 'cancel', 'trace'] satisfies ViewActionName[];

/** A message from the webview, checked; undefined for anything else (the webview is not trusted blindly). */
export function parseFromWebview(message: unknown): FromWebview | undefined {
  if (typeof message !== 'object' || message === null) {
    return undefined;
  }
  const m = message as Record<string, unknown>;
  switch (m['type']) {
    case 'ready':
    case 'newSession':
    case 'pickSession':
      return { type: m['type'] };
    case 'send':
      return typeof m['text'] === 'string' && m['text'].trim()
        ? { type: 'send', text: m['text'].trim(), ...(m['mode'] === 'plan' ? { mode: 'plan' as const } : {}), ...checks(m['checks']) }
        : undefined;
    case 'approvePlan':
      return { type: 'approvePlan', ...checks(m['checks']) };
    case 'action': {
      const action = m['action'];
      const uri = m['uri'];
      if (typeof action !== 'string' || !ACTIONS.includes(action)) {
        return undefined;
      }
      return { type: 'action', action: action as ViewActionName, ...(typeof uri === 'string' && uri ? { uri } : {}) };
    }
    default:
      return undefined;
  }
}
