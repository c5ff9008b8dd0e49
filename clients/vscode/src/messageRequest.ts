/**
 * `window/showMessageRequest` as a modal dialog.
 *
 * The server asks these while a run waits (permission questions, "apply N files?"), so they must not
 * get lost among toasts (or be hidden by Do Not Disturb, which hides all but errors). A modal dialog
 * takes a short message and a longer detail: the first line becomes the message, the rest the
 * detail. Closing the dialog answers null, which the server treats as "deny" / "not now".
 *
 * Pure: no `vscode` import.
 */

export interface ModalText {
  message: string;
  detail?: string;
}

export function modalText(message: string): ModalText {
  const [first, ...rest] = message.split(/\r?\n/);
  const detail = rest.join('\n').trim();
  return detail ? { message: (first ?? '').trim(), detail } : { message: message.trim() };
}

/** The extra action a permission question gets here: refuse, then type what the agent should do instead. */
export const DENY_WITH_FEEDBACK = 'Deny with feedback…';

/**
 * The actions to show for a server question. A permission question (it offers "Deny" and an "Allow …")
 * gets `DENY_WITH_FEEDBACK` after "Deny": the answer is then `{title: 'Deny', feedback}` (LSP 3.16
 * `messageActionItem.additionalPropertiesSupport`), and the server passes the feedback to the model.
 */
export function withFeedbackAction<T extends { title: string }>(actions: readonly T[]): (T | { title: string })[] {
  const titles = actions.map((action) => action.title);
  if (!titles.includes('Deny') || !titles.some((title) => title.startsWith('Allow'))) {
    return [...actions];
  }
  const denyAt = titles.indexOf('Deny');
  return [...actions.slice(0, denyAt + 1), { title: DENY_WITH_FEEDBACK }, ...actions.slice(denyAt + 1)];
}

/** The answer for a chosen action: the feedback action becomes a "Deny" carrying the user's words. */
export function answerFor(title: string, feedback: string | undefined): { title: string; feedback?: string } | null {
  if (title !== DENY_WITH_FEEDBACK) {
    return { title };
  }
  const words = feedback?.trim();
  return words ? { title: 'Deny', feedback: words } : { title: 'Deny' };
}
