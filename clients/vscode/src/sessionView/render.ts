/**
 * The session view's conversation as an HTML fragment: the session line, each run (the user's task,
 * the answer as sanitized markdown, tool calls folded with their verdicts, the run's status and
 * usage), the todo list, the pending proposal with its buttons, and the context chart.
 *
 * Every string from the server is escaped here; answers go through `markdown.ts` (sanitized). The
 * fragment has no inline style (the CSP forbids it): the context bars carry `data-share` (0 to 1)
 * and the webview script sets their widths. Buttons carry `data-action` (and `data-uri` for one
 * file); the webview script forwards a click as a message. Folded tool calls have a stable
 * `data-key`, so the script can keep open what the user opened across renders.
 *
 * Pure: no `vscode` import, no DOM.
 */

import type { ContextResult, TodoWire, UsageSummary } from '../protocol';
import { proposalLine } from '../runOutcome';
import { formatCost, formatTokens } from '../status';
import type { RenderMarkdown } from './markdown';
import { button, escapeHtml, icon } from './markup';
import { checksSection, planCard, roleUsageText } from './outcome';
import type { ProposalFileView, RunView, ToolCallView, ViewState } from './state';

export { escapeHtml, type ViewActionName } from './markup';

/** "1.2k tokens · $0.0042", as the status bar says it. */
export function usageText(usage: UsageSummary): string {
  const total = `${usage.estimated ? '~' : ''}${formatTokens(usage.inputTokens + usage.outputTokens)} tokens`;
  return usage.costUsd === null ? total : `${total} · ${formatCost(usage.costUsd)}`;
}

/** The verdict in words: "allowed", "allowed once by you", "denied by rule Bash(git push*)". */
export function verdictText(call: ToolCallView): string {
  if (!call.verdict) {
    return 'waiting for the policy';
  }
  if (call.approval) {
    return call.approval === 'deny'
      ? 'denied by you'
      : `allowed ${call.approval === 'once' ? 'once' : call.approval === 'session' ? 'for this session' : 'always'} by you`;
  }
  if (call.verdict === 'ask') {
    return 'asking you';
  }
  const word = call.verdict === 'allow' ? 'allowed' : 'denied';
  return call.rule ? `${word} by rule ${call.rule}` : word;
}

function verdictClass(call: ToolCallView): string {
  if (call.approval === 'deny' || call.verdict === 'deny') {
    return 'deny';
  }
  return call.verdict === 'ask' && !call.approval ? 'ask' : 'allow';
}

function toolCall(call: ToolCallView, key: string): string {
  const running = call.result === undefined ? ` ${icon('loading codicon-modifier-spin')}` : '';
  return (
    `<details class="tool" data-key="${key}"><summary>${icon('tools')} <code>${escapeHtml(call.name)}</code> ` +
    `<span class="verdict verdict-${verdictClass(call)}">${escapeHtml(verdictText(call))}</span>${running}</summary>` +
    `<div class="tool-body"><div class="label">Arguments</div><pre>${escapeHtml(call.args)}</pre>` +
    (call.result === undefined ? '' : `<div class="label">Result</div><pre>${escapeHtml(call.result)}</pre>`) +
    '</div></details>'
  );
}

const STATUS_ICONS: Record<RunView['status'], string> = {
  running: 'loading codicon-modifier-spin',
  done: 'pass',
  stopped: 'debug-pause',
  cancelled: 'circle-slash',
  error: 'error',
  interrupted: 'debug-disconnect',
};

/** `latest`: the session's last run, and nothing is running (its plan can be approved or revised). */
function run(view: RunView, index: number, markdown: RenderMarkdown, latest: boolean): string {
  const mode = view.mode === 'plan' ? ' data-mode="plan"' : '';
  const parts = [`<li class="run" data-status="${view.status}"${mode}>`];
  const badge = view.mode === 'plan' ? `<span class="mode-badge">${icon('checklist')}<span>Plan</span></span>` : '';
  parts.push(`<div class="task" role="heading" aria-level="3">${icon('account')}<span>${escapeHtml(view.task)}</span>${badge}</div>`);
  view.items.forEach((item, i) => {
    if (item.kind === 'tool') {
      parts.push(toolCall(item.call, `${index}-${i}`));
    } else if (item.text.trim()) {
      parts.push(`<div class="answer markdown">${markdown(item.text)}</div>`);
    }
  });
  if (view.plan) {
    parts.push(planCard(view.plan, markdown, latest));
  }
  parts.push(checksSection(view.checks ?? [], view.notVerified ?? [], String(index)));
  const status = view.status === 'running' ? (view.mode === 'plan' ? 'planning…' : 'working…') : view.status;
  const reason = view.reason ? `: ${escapeHtml(view.reason)}` : '';
  const roles = view.usageByRole ? roleUsageText(view.usageByRole) : '';
  const usage = (view.usage ? ` · ${escapeHtml(usageText(view.usage))}` : '') + (roles ? ` (${escapeHtml(roles)})` : '');
  parts.push(`<div class="run-status">${icon(STATUS_ICONS[view.status])} <span>${escapeHtml(status)}${reason}${usage}</span></div>`);
  parts.push('</li>');
  return parts.join('');
}

const TODO_ICONS: Record<TodoWire['status'], string> = {
  pending: 'circle-large-outline',
  in_progress: 'arrow-circle-right',
  completed: 'pass-filled',
};

function todos(list: TodoWire[]): string {
  if (list.length === 0) {
    return '';
  }
  const done = list.filter((todo) => todo.status === 'completed').length;
  const items = list
    .map((todo) => {
      const text = todo.status === 'in_progress' ? todo.activeForm : todo.content;
      return `<li class="todo todo-${todo.status}">${icon(TODO_ICONS[todo.status])}<span>${escapeHtml(text)}</span></li>`;
    })
    .join('');
  return `<section class="todos" aria-label="Todo list"><h3>Todo (${done}/${list.length} done)</h3><ul>${items}</ul></section>`;
}

function proposal(files: ProposalFileView[]): string {
  if (files.length === 0) {
    return '';
  }
  const added = files.reduce((sum, file) => sum + file.added, 0);
  const removed = files.reduce((sum, file) => sum + file.removed, 0);
  const rows = files
    .map((file) => {
      const actions = [
        button('review', 'Review', 'diff', { uri: file.uri, title: `Review ${file.path}` }),
        button('apply', 'Apply', 'check', { uri: file.uri, title: `Apply ${file.path}` }),
        button('discard', 'Discard', 'discard', { uri: file.uri, title: `Discard ${file.path}` }),
      ];
      return (
        `<li class="file">${icon(file.isNew ? 'new-file' : 'file')}<span class="path">${escapeHtml(file.path)}</span>` +
        `<span class="added">+${file.added}</span><span class="removed">−${file.removed}</span>` +
        `<span class="file-actions">${actions.join('')}</span></li>`
      );
    })
    .join('');
  const all =
    button('review', 'Review all', 'diff-multiple', { title: 'Review every proposed file' }) +
    button('apply', 'Apply all', 'check-all', { title: 'Apply every proposed file' }) +
    button('discard', 'Discard all', 'discard', { title: 'Discard every proposed file' });
  return (
    `<section class="proposal" aria-label="Proposed changes"><h3>Proposed changes: ${escapeHtml(proposalLine(files.length, added, removed))}</h3>` +
    `<ul>${rows}</ul><div class="proposal-actions">${all}</div></section>`
  );
}

function share(part: number, whole: number): string {
  return whole > 0 ? Math.min(1, part / whole).toFixed(4) : '0';
}

/** The context chart: the window's use, then a bar per part (relative to the largest part). */
export function contextChart(context: ContextResult): string {
  const percent = context.contextWindow > 0 ? ((context.used / context.contextWindow) * 100).toFixed(1) : '0.0';
  const largest = Math.max(1, ...context.parts.map((part) => part.tokens));
  const rows = context.parts
    .map(
      (part) =>
        `<li><span class="part-name">${escapeHtml(part.name)}</span>` +
        `<span class="bar-track"><span class="bar" data-share="${share(part.tokens, largest)}"></span></span>` +
        `<span class="part-tokens">${escapeHtml(formatTokens(part.tokens))}</span></li>`,
    )
    .join('');
  return (
    `<section class="context" aria-label="Context of the next request"><h3>Context ` +
    `${button('refreshContext', '', 'refresh', { title: 'Measure the context again' })}</h3>` +
    `<div class="window" role="img" aria-label="${escapeHtml(`${percent}% of the context window used`)}">` +
    `<span class="bar-track"><span class="bar window-bar" data-share="${share(context.used, context.contextWindow)}"></span></span>` +
    `<span>~${escapeHtml(formatTokens(context.used))} of ${escapeHtml(formatTokens(context.contextWindow))} (${percent}%)</span></div>` +
    `<ul class="parts">${rows}</ul></section>`
  );
}

function head(state: ViewState): string {
  if (!state.sessionId) {
    return (
      '<section class="empty"><p>Ask the agent to do something in this workspace: type a task below and press Enter.</p>' +
      '<p>Its edits are proposals: you review them as a diff and apply what you want.</p></section>'
    );
  }
  const usage = state.sessionUsage ? ` · ${escapeHtml(usageText(state.sessionUsage))}` : '';
  const resumed = state.resumed
    ? `<p class="resumed">${icon('history')} Resumed “${escapeHtml(state.resumed.title)}”: ${state.resumed.runs} ` +
      `${state.resumed.runs === 1 ? 'run' : 'runs'} before, the last ${escapeHtml(state.resumed.status)}. A task below continues it.</p>`
    : '';
  const cancel = state.running ? button('cancel', 'Cancel', 'debug-stop', { title: 'Cancel the run' }) : '';
  const trace = button('trace', 'Trace', 'graph', { title: 'Open the session’s trace: turns, tool calls, tokens, latency and diffs' });
  return `<section class="session-head"><span class="session-id">Session ${escapeHtml(state.sessionId.slice(0, 8))}${usage}</span>${trace}${cancel}${resumed}</section>`;
}

/** The conversation fragment for `state`. Deterministic. */
export function renderConversation(state: ViewState, markdown: RenderMarkdown): string {
  const last = state.runs.length - 1;
  const runs = state.runs.map((view, index) => run(view, index, markdown, index === last && !state.running)).join('');
  return [
    head(state),
    runs ? `<ol class="runs">${runs}</ol>` : '',
    todos(state.todos),
    proposal(state.proposal),
    state.context ? contextChart(state.context) : '',
  ].join('');
}
