/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The session view's script, run inside the webview (bundled to `out/webview/main.js`): renders the
 * state the extension posts (`render.ts`, answers through markdown-it and DOMPurify), forwards the
 * user's clicks and tasks, and keeps what the user had open (folded tool calls) and the scroll
 * position across renders. It calls nothing but `postMessage`.
 *
 * The input area's mode (Ask/Act or Plan) and checks are the webview's own, kept with `setState`
 * across the view's reloads. "Revise" on a plan switches the mode to Plan and focuses the input box;
 * "Approve plan" sends the checks with it and switches back to Ask/Act.
 */

import DOMPurify from 'dompurify';

import { TASK_PLACEHOLDER } from '../sessionView/html';
import { markdownRenderer } from '../sessionView/markdown';
import { checkLines, type FromWebview, type ToWebview } from '../sessionView/messages';
import { renderConversation } from '../sessionView/render';

/** What the webview keeps across reloads of the view (`getState` / `setState`). */
interface InputState {
  mode?: 'default' | 'plan';
  checks?: string;
}

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): InputState | undefined;
  setState(state: InputState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const markdown = markdownRenderer(DOMPurify(window));
const conversation = document.getElementById('conversation') as HTMLElement;
const composer = document.getElementById('composer') as HTMLFormElement;
const input = document.getElementById('task') as HTMLTextAreaElement;
const mode = document.getElementById('mode') as HTMLSelectElement;
const modeIcon = document.getElementById('mode-icon') as HTMLElement;
const checksBox = document.getElementById('checks-box') as HTMLDetailsElement;
const checks = document.getElementById('checks') as HTMLTextAreaElement;
const checksCount = document.getElementById('checks-count') as HTMLElement;
const sendLabel = document.getElementById('send-label') as HTMLElement;
const sendButton = document.getElementById('send') as HTMLButtonElement;
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
  if (action === 'revise') {
    setMode('plan', true);
    input.focus();
  } else if (action === 'usePlanChecks') {
    usePlanChecks(target);
  } else if (action === 'approvePlan') {
    const lines = checkLines(checks.value);
    vscode.postMessage({ type: 'approvePlan', ...(lines.length ? { checks: lines } : {}) });
    setMode('default');
  } else if (action === 'newSession' || action === 'pickSession') {
    vscode.postMessage({ type: action });
  } else if (action) {
    vscode.postMessage({ type: 'action', action, ...(uri ? { uri } : {}) } as FromWebview);
  }
});

function saveInput(): void {
  vscode.setState({ mode: mode.value === 'plan' ? 'plan' : 'default', checks: checks.value });
}

/** Shows `value` as the input's mode; `revising`: the next task is feedback on the plan. */
function setMode(value: 'default' | 'plan', revising = false): void {
  mode.value = value;
  const plan = value === 'plan';
  modeIcon.className = `codicon codicon-${plan ? 'checklist' : 'edit'}`;
  input.placeholder = revising ? TASK_PLACEHOLDER.revise : TASK_PLACEHOLDER[value];
  sendLabel.textContent = plan ? 'Plan' : 'Send';
  sendButton.title = plan ? 'Send as a plan run (Enter)' : 'Send (Enter)';
  sendButton.setAttribute('aria-label', plan ? 'Send as a plan run' : 'Send');
  saveInput();
}

function showChecksCount(): void {
  const count = checkLines(checks.value).length;
  checksCount.textContent = count ? ` (${count})` : '';
}

/** Adds the checks of the plan holding `button` to the Checks box (each once) and shows the box. */
function usePlanChecks(button: Element): void {
  const listed = [...(button.closest('.plan')?.querySelectorAll('.plan-checks code') ?? [])].map((node) => node.textContent ?? '');
  const lines = checkLines(checks.value);
  const added = listed.filter((line) => line.trim() && !lines.includes(line.trim())).map((line) => line.trim());
  checks.value = [...lines, ...added].join('\n');
  checksBox.open = true;
  showChecksCount();
  saveInput();
}

function send(): void {
  const text = input.value.trim();
  if (text) {
    const lines = checkLines(checks.value);
    vscode.postMessage({ type: 'send', text, ...(mode.value === 'plan' ? { mode: 'plan' } : {}), ...(lines.length ? { checks: lines } : {}) });
    input.value = '';
    input.placeholder = TASK_PLACEHOLDER[mode.value === 'plan' ? 'plan' : 'default'];
  }
}

mode.addEventListener('change', () => setMode(mode.value === 'plan' ? 'plan' : 'default'));
checks.addEventListener('input', () => {
  showChecksCount();
  saveInput();
});
const saved = vscode.getState();
checks.value = saved?.checks ?? '';
checksBox.open = checks.value.trim() !== '';
showChecksCount();
setMode(saved?.mode === 'plan' ? 'plan' : 'default');

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
