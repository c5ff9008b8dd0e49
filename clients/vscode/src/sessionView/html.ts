/**
 * The session view's HTML page: a toolbar, the conversation (filled by the webview script) and the
 * input area: the mode switch (Ask/Act or Plan, a native `select`, so it is keyboard-accessible and
 * read by screen readers), the optional acceptance checks (one command per line) and the input box. Its Content Security Policy allows nothing but the extension's own script (by nonce),
 * stylesheet and font: `default-src 'none'`, so the page makes no network request and runs no
 * inline script or style (VS Code's webview guidance, "Content security policy").
 *
 * Pure: no `vscode` import; the caller passes `webview.cspSource` and the `asWebviewUri` addresses.
 */

import { escapeHtml } from './markup';

/** The input box's placeholder in each mode ("Revise" has its own). */
export const TASK_PLACEHOLDER = {
  default: 'Ask the agent… (Enter sends, Shift+Enter for a new line)',
  plan: 'Describe the task to plan: the agent only reads, then proposes a plan (Enter sends)',
  revise: 'What should the plan change? (sent as a plan run; Enter sends)',
} as const;

export interface PageResources {
  /** `webview.cspSource`: the origin the extension's files are served from. */
  cspSource: string;
  /** A fresh random token per page (`script-src 'nonce-…'`). */
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

/** The CSP of the page, one directive per kind of resource. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    "img-src 'none'",
    "connect-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function pageHtml(resources: PageResources): string {
  const { cspSource, nonce, scriptUri, styleUri } = resources;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(styleUri)}">
<title>Agent</title>
</head>
<body>
<div class="toolbar" role="toolbar" aria-label="Session">
<button type="button" class="action" data-action="newSession" title="Start a new session" aria-label="New session"><span class="codicon codicon-add" aria-hidden="true"></span><span>New session</span></button>
<button type="button" class="action" data-action="pickSession" title="Resume a stored session" aria-label="Resume a session"><span class="codicon codicon-history" aria-hidden="true"></span><span>Sessions…</span></button>
</div>
<main id="conversation" aria-label="Conversation"></main>
<div id="announce" class="visually-hidden" role="status" aria-live="polite"></div>
<form id="composer" class="composer">
<div class="composer-options">
<span id="mode-icon" class="codicon codicon-edit" aria-hidden="true"></span>
<label for="mode" class="visually-hidden">Mode</label>
<select id="mode" title="Ask/Act: the agent may propose edits. Plan: read-only, it ends with a plan to approve.">
<option value="default">Ask/Act</option>
<option value="plan">Plan</option>
</select>
<details id="checks-box" class="checks-input">
<summary title="Acceptance checks: commands the server runs on the proposal when the agent is done">Checks<span id="checks-count"></span></summary>
<label for="checks" class="visually-hidden">Acceptance checks, one command per line</label>
<textarea id="checks" rows="2" spellcheck="false" placeholder="One command per line, e.g. pytest tests/test_price.py"></textarea>
</details>
</div>
<div class="composer-row">
<label for="task" class="visually-hidden">Task or follow-up</label>
<textarea id="task" rows="3" placeholder="${escapeHtml(TASK_PLACEHOLDER.default)}"></textarea>
<button type="submit" class="action primary" id="send" title="Send (Enter)" aria-label="Send"><span class="codicon codicon-send" aria-hidden="true"></span><span id="send-label">Send</span></button>
</div>
</form>
<script nonce="${escapeHtml(nonce)}" src="${escapeHtml(scriptUri)}"></script>
</body>
</html>`;
}
