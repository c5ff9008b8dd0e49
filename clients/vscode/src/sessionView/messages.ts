/**
 * The messages between the session view's webview script and the extension (`postMessage`), both
 * ways. The webview only forwards what the user did; the extension calls the server.
 *
 * Pure: no `vscode` import.
 */

import type { ViewActionName } from './render';
import type { ViewState } from './state';

/** Extension → webview. */
export type ToWebview =
  | { type: 'state'; state: ViewState }
  /** Put the keyboard focus in the input box (a new session). */
  | { type: 'focusInput' };

/** Webview → extension. `uri` names one proposed file; left out, the action is on the whole proposal. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'newSession' }
  | { type: 'pickSession' }
  | { type: 'action'; action: ViewActionName; uri?: string };

const ACTIONS: readonly string[] = ['review', 'apply', 'discard', 'refreshContext', 'cancel'] satisfies ViewActionName[];

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
      return typeof m['text'] === 'string' && m['text'].trim() ? { type: 'send', text: m['text'].trim() } : undefined;
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
