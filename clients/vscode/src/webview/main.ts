/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The session view's script, run inside the webview (bundled to `out/webview/main.js`): renders the
 * state the extension posts (`render.ts`, answers through markdown-it and DOMPurify), forwards the
 * user's clicks and tasks, and keeps what the user had open (folded tool calls) and the scroll
 * position across renders. It calls nothing but `postMessage`.
 */

import DOMPurify from 'dompurify';

import { markdownRenderer } from '../sessionView/markdown';
import { type FromWebview, type ToWebview } from '../sessionView/messages';
import { renderConversation } from '../sessionView/render';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const markdown = markdownRenderer(DOMPurify(window));
const conversation = document.getElementById('conversation') as HTMLElement;
const composer = document.getElementById('composer') as HTMLFormElement;
const input = document.getElementById('task') as HTMLTextAreaElement;
const announce = document.getElementById('announce') as HTMLElement;
let announced = '';

function render(message: Extract<ToWebview, { type: 'state' }>): void {
  const open = new Set([...conversation.querySelectorAll('details[open]')].map((node) => node.getAttribute('data-key')));
  const scroller = document.scrollingElement ?? document.documentElement;
  const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  conversation.innerHTML = renderConversation(message.state, markdown);
  for (const node of conversation.querySelectorAll('details[data-key]')) {
    if (open.has(node.getAttribute('data-key'))) {
      node.setAttribute('open', '');
    }
  }
  // The CSP forbids style attributes in markup; setting a style property from the script is allowed.
  for (const bar of conversation.querySelectorAll<HTMLElement>('.bar[data-share]')) {
    bar.style.width = `${(Number(bar.dataset['share']) * 100).toFixed(2)}%`;
  }
  if (atBottom) {
    scroller.scrollTop = scroller.scrollHeight;
  }
  // Screen readers hear a run start and end, not every streamed word (the conversation is re-rendered).
  const runs = message.state.runs;
  const last = runs[runs.length - 1];
  const status = last ? `Run ${runs.length}: ${last.status === 'running' ? 'working' : last.status}` : '';
  if (status !== announced) {
    announced = status;
    announce.textContent = status;
  }
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  if (message.type === 'state') {
    render(message);
  } else {
    input.focus();
  }
});

document.addEventListener('click', (event) => {
  const target = (event.target as Element | null)?.closest('button[data-action]');
  if (!target) {
    return;
  }
  const action = target.getAttribute('data-action');
  const uri = target.getAttribute('data-uri') ?? undefined;
  if (action === 'newSession' || action === 'pickSession') {
    vscode.postMessage({ type: action });
  } else if (action) {
    vscode.postMessage({ type: 'action', action, ...(uri ? { uri } : {}) } as FromWebview);
  }
});

function send(): void {
  const text = input.value.trim();
  if (text) {
    vscode.postMessage({ type: 'send', text });
    input.value = '';
  }
}

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  send();
});
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});

vscode.postMessage({ type: 'ready' });
