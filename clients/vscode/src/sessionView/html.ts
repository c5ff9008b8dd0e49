/**
 * The session view's HTML page: a toolbar, the conversation (filled by the webview script) and the
 * input box. Its Content Security Policy allows nothing but the extension's own script (by nonce),
 * stylesheet and font: `default-src 'none'`, so the page makes no network request and runs no
 * inline script or style (VS Code's webview guidance, "Content security policy").
 *
 * Pure: no `vscode` import; the caller passes `webview.cspSource` and the `asWebviewUri` addresses.
 */

import { escapeHtml } from './render';

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
<label for="task" class="visually-hidden">Task or follow-up</label>
<textarea id="task" rows="3" placeholder="Ask the agent… (Enter sends, Shift+Enter for a new line)"></textarea>
<button type="submit" class="action primary" id="send" title="Send (Enter)" aria-label="Send"><span class="codicon codicon-send" aria-hidden="true"></span><span>Send</span></button>
</form>
<script nonce="${escapeHtml(nonce)}" src="${escapeHtml(scriptUri)}"></script>
</body>
</html>`;
}
