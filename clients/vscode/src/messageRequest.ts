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
