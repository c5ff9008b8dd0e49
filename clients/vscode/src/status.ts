/**
 * The status bar item's text and tooltip: the model, and the tokens (and cost, once the server has
 * prices) of the current or last run.
 *
 * Pure: no `vscode` import. `$(name)` are VS Code codicons.
 */

import type { RunStatus, TodoWire, UsageSummary } from './protocol';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export interface StatusState {
  /** `agentLs.model`; empty when the server takes it from its environment. */
  model: string | undefined;
  server: ServerState;
  /**
   * The run in progress; `usageText` is the server's latest `agent/event` usage text, `todo` the todo
   * item in progress (`todoLine` of the last `agent/todos`).
   */
  running?: { task: string; usageText?: string; todo?: string };
  /** Why shell commands run without a sandbox (the server's last `runStarted`); undefined when sandboxed or not yet known. */
  unsandboxed?: string;
  last?: { status: RunStatus; usage: UsageSummary };
}

export interface StatusView {
  text: string;
  tooltip: string;
}

/** 950, 12.3k, 1.2M. */
export function formatTokens(count: number): string {
  if (count < 1000) {
    return String(count);
  }
  if (count < 1_000_000) {
    return `${(count / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  }
  return `${(count / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** $0.0042 under a cent, $1.23 above. */
export function formatCost(usd: number): string {
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function usageLine(usage: UsageSummary): string {
  const approx = usage.estimated ? '~' : '';
  const total = `${approx}${formatTokens(usage.inputTokens + usage.outputTokens)} tokens`;
  return usage.costUsd === null ? total : `${total} · ${formatCost(usage.costUsd)}`;
}

function usageDetail(usage: UsageSummary): string {
  const approx = usage.estimated ? ' (estimated)' : '';
  const cached = usage.cachedInputTokens ? `, ${usage.cachedInputTokens} of them cached` : '';
  const cost = usage.costUsd === null ? '' : `; cost ${formatCost(usage.costUsd)}`;
  return `${usage.inputTokens} input tokens${cached}, ${usage.outputTokens} output tokens${approx}${cost}`;
}

export function statusView(state: StatusState): StatusView {
  const model = state.model?.trim();
  const label = model || 'Agent';
  const modelLine = model ? `Model: ${model}` : 'Model: agentLs.model is empty; the server uses AGENT_LS_MODEL';
  if (state.server === 'failed') {
    return { text: '$(error) Agent', tooltip: 'The agent server is not running. Click to show the log.' };
  }
  const view = plainStatusView(state, label, modelLine);
  if (!state.unsandboxed) {
    return view;
  }
  return {
    text: `${view.text.replace(/^\$\(hubot\)/, '$(warning)')} · unsandboxed`,
    tooltip: `Unsandboxed: ${state.unsandboxed}\n${view.tooltip}`,
  };
}

function plainStatusView(state: StatusState, label: string, modelLine: string): StatusView {
  if (state.running) {
    const usage = state.running.usageText ?? (state.server === 'starting' ? 'starting the server' : 'working');
    const todo = state.running.todo;
    return {
      text: `$(loading~spin) ${label} · ${todo ? `${todo.length <= 48 ? todo : `${todo.slice(0, 47)}…`} · ` : ''}${usage}`,
      tooltip: `${modelLine}\nRunning: ${state.running.task}${todo ? `\nNow: ${todo}` : ''}\nClick to show the transcript.`,
    };
  }
  if (state.last) {
    return {
      text: `$(hubot) ${label} · ${usageLine(state.last.usage)}`,
      tooltip: `${modelLine}\nLast run ${state.last.status}: ${usageDetail(state.last.usage)}\nClick to show the transcript.`,
    };
  }
  const server = state.server === 'running' ? '' : `\nServer: ${state.server}`;
  return { text: `$(hubot) ${label}`, tooltip: `${modelLine}${server}\nClick to show the transcript.` };
}

/** The last characters of a streamed answer, on one line, as a progress message can show them. */
export function streamTail(text: string, max = 120): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= max ? line : `…${line.slice(line.length - max + 1)}`;
}

/** The todo item in progress and the count done (`Fixing mean() (1/3 done)`); the count alone when none is in progress; undefined for an empty list. */
export function todoLine(todos: TodoWire[]): string | undefined {
  if (todos.length === 0) {
    return undefined;
  }
  const done = todos.filter((todo) => todo.status === 'completed').length;
  const now = todos.find((todo) => todo.status === 'in_progress');
  return now ? `${now.activeForm} (${done}/${todos.length} done)` : `${done}/${todos.length} todos done`;
}
