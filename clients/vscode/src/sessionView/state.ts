/**
 * The session view's state: what the Agent view shows of the current session, rebuilt from what the
 * server sends (`agent/event`, `agent/todos`, `agent/runEnded`, `agent.proposal`, `agent.context`,
 * `agent.listSessions`). The view renders it (`render.ts`); it never decides anything of the agent.
 *
 * One session at a time. A run of another session (a palette "Run Task…", a code action) switches the
 * view to that session; a run of the same session (a follow-up) adds to it. Events of other sessions
 * and of subagents are ignored (a subagent's steps are the parent's `task` tool call).
 *
 * Pure: no `vscode` import; `reduce` returns a new state and never mutates its input.
 */

import type {
  AgentEventNotification,
  ContextResult,
  HistoryRunWire,
  ProposalFile,
  RunEndedNotification,
  RunStatus,
  SessionSummary,
  TodoWire,
  UsageSummary,
} from '../protocol';
import { type CheckView, type OutcomeWire, type PlanView, runOutcome } from './outcome';

/** Tool arguments and results are clipped to this many characters in the view (the log has them whole). */
export const TOOL_TEXT_CHARS = 2000;

/** One tool call of a run, with the policy's verdict and, when it asked, the user's answer. */
export interface ToolCallView {
  name: string;
  /** The arguments as the model sent them (JSON), clipped. */
  args: string;
  verdict?: 'allow' | 'ask' | 'deny';
  approval?: 'once' | 'session' | 'always' | 'deny';
  /** The rule that decided, when one did. */
  rule?: string;
  /** The tool's output as the model read it, clipped; undefined while the call runs. */
  result?: string;
}

/** A run's output in order: streamed answer text and tool calls, as they came. */
export type RunItem = { kind: 'text'; text: string } | { kind: 'tool'; call: ToolCallView };

export interface RunView {
  /** The user's task, as typed (`/code-review stats.py` for a skill). */
  task: string;
  items: RunItem[];
  /** `interrupted`: a stored run that never ended (the server stopped during it). */
  status: RunStatus | 'running' | 'interrupted';
  /** Why the run stopped, when it did not end `done`. */
  reason?: string;
  usage?: UsageSummary;
  /** Set for a plan-mode run once it ended (`agent/runEnded` says the mode). */
  mode?: 'plan';
  /** The plan a plan run ended with. */
  plan?: PlanView;
  /** The acceptance checks the server ran, in order; left out when there were none. */
  checks?: CheckView[];
  /** One line per check that could not be run, and why; left out when empty. */
  notVerified?: string[];
  /** The run's usage by role (`main`, `compaction`, `subagent`); left out when no role is reported. */
  usageByRole?: Record<string, UsageSummary>;
}

/** A proposed file as the view lists it. */
export interface ProposalFileView {
  uri: string;
  /** Workspace-relative POSIX path. */
  path: string;
  added: number;
  removed: number;
  isNew: boolean;
}

export interface ViewState {
  /** Undefined before the first run of a new session. */
  sessionId?: string;
  /** A session resumed from the picker: its stored summary (earlier runs are in its session file). */
  resumed?: Pick<SessionSummary, 'title' | 'runs' | 'status' | 'updatedAt' | 'model'>;
  runs: RunView[];
  todos: TodoWire[];
  proposal: ProposalFileView[];
  /**
   * The session's usage: the stored summary's when resumed, plus each run's usage as it ends. (The
   * server's `sessionUsage` fields count every run of the editor's connection, all sessions together.)
   */
  sessionUsage?: UsageSummary;
  context?: ContextResult;
  /** True from a run's start to its `agent/runEnded`. */
  running: boolean;
  /** A plan run of this session was launched and its `runStarted` has not come yet: that run is marked. */
  pendingMode?: 'plan';
}

export type ViewAction =
  /**
   * The extension started a run (`agent.run`'s answer): from the view, the palette or a code action.
   * A run of another session switches the view to it (the server's own `runStarted` event, before or
   * after this, does not add the run twice); a run of the view's session is added by that event.
   */
  | { type: 'runLaunched'; sessionId: string; task: string; mode?: 'plan' }
  | { type: 'event'; event: AgentEventNotification }
  | { type: 'todos'; sessionId: string; todos: TodoWire[] }
  | { type: 'runEnded'; ended: RunEndedNotification }
  | { type: 'proposal'; sessionId: string; files: ProposalFile[] }
  | { type: 'context'; sessionId: string; context: ContextResult }
  /** The user picked a stored session: the view now shows it, with nothing of it streamed yet. */
  | { type: 'resumed'; session: SessionSummary }
  /** The resumed session's earlier runs and todos (`agent.sessionHistory`). */
  | { type: 'history'; sessionId: string; runs: HistoryRunWire[]; todos: TodoWire[] }
  /** "New session": the next task starts a new session. */
  | { type: 'newSession' }
  /** The server stopped: a run in progress will not end. */
  | { type: 'serverStopped' };

export const EMPTY_STATE: ViewState = { runs: [], todos: [], proposal: [], running: false };

export function clip(text: string, maxChars = TOOL_TEXT_CHARS): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

function withLastRun(state: ViewState, change: (run: RunView) => RunView): ViewState {
  const last = state.runs[state.runs.length - 1];
  if (!last) {
    return state;
  }
  return { ...state, runs: [...state.runs.slice(0, -1), change(last)] };
}

/** The last tool call named `name` that has not got this field yet. */
function withOpenCall(run: RunView, name: string, open: (call: ToolCallView) => boolean, change: (call: ToolCallView) => ToolCallView): RunView {
  for (let i = run.items.length - 1; i >= 0; i -= 1) {
    const item = run.items[i];
    if (item?.kind === 'tool' && item.call.name === name && open(item.call)) {
      const items = [...run.items];
      items[i] = { kind: 'tool', call: change(item.call) };
      return { ...run, items };
    }
  }
  return run;
}

function appendText(run: RunView, text: string): RunView {
  const last = run.items[run.items.length - 1];
  if (last?.kind === 'text') {
    return { ...run, items: [...run.items.slice(0, -1), { kind: 'text', text: last.text + text }] };
  }
  return { ...run, items: [...run.items, { kind: 'text', text }] };
}

/** The text of the model turn in progress is void (a retry after a partial stream): drop it. */
function dropTrailingText(run: RunView): RunView {
  const last = run.items[run.items.length - 1];
  return last?.kind === 'text' ? { ...run, items: run.items.slice(0, -1) } : run;
}

/** The last run is running and nothing of it has come yet (launched, its events not in). */
function lastRunJustStarted(state: ViewState): boolean {
  const last = state.runs[state.runs.length - 1];
  return last !== undefined && last.status === 'running' && last.items.length === 0;
}

function addRun(state: ViewState, task: string, mode?: 'plan'): ViewState {
  const run: RunView = { task, items: [], status: 'running', ...(mode ? { mode } : {}) };
  const next: ViewState = { ...state, running: true, runs: [...state.runs, run] };
  delete next.pendingMode; // consumed by this run
  return next;
}

/**
 * A plan run of the view's session was launched: mark it when its `runStarted` came first (the last run
 * has its task and is running, or has ended as a plan run already), else the run that event will add.
 */
function launchedPlan(state: ViewState, task: string): ViewState {
  const last = state.runs[state.runs.length - 1];
  if (last?.task === task && (last.status === 'running' || last.mode === 'plan')) {
    return withLastRun(state, (run) => ({ ...run, mode: 'plan' }));
  }
  return { ...state, pendingMode: 'plan' };
}

function eventReduce(state: ViewState, event: AgentEventNotification): ViewState {
  if (event.sessionId !== state.sessionId || event.subagent) {
    return state;
  }
  switch (event.kind) {
    case 'textDelta':
      return event.text ? withLastRun(state, (run) => appendText(run, event.text ?? '')) : state;
    case 'turnStarted':
      // Each model turn's text is its own paragraph, apart from the previous turn's.
      return withLastRun(state, (run) => {
        const last = run.items[run.items.length - 1];
        return last?.kind === 'text' ? { ...run, items: [...run.items, { kind: 'text', text: '' }] } : run;
      });
    case 'retrying':
      return event.partial ? withLastRun(state, dropTrailingText) : state;
    case 'toolCall':
      return withLastRun(state, (run) => ({
        ...run,
        items: [...run.items, { kind: 'tool', call: { name: event.toolName ?? '?', args: clip(event.text ?? '') } }],
      }));
    case 'verdict':
      return withLastRun(state, (run) =>
        withOpenCall(
          run,
          event.toolName ?? '?',
          (call) => call.verdict === undefined,
          (call) => ({
            ...call,
            ...(event.verdict ? { verdict: event.verdict } : {}),
            ...(event.approval ? { approval: event.approval } : {}),
            ...(event.text ? { rule: event.text } : {}),
          }),
        ),
      );
    case 'toolResult':
      return withLastRun(state, (run) =>
        withOpenCall(
          run,
          event.toolName ?? '?',
          (call) => call.result === undefined,
          (call) => ({ ...call, result: clip(event.text ?? '') }),
        ),
      );
    case 'usage':
      return withLastRun(state, (run) => (event.usage ? { ...run, usage: event.usage } : run));
    case 'runStarted':
      return { ...(lastRunJustStarted(state) ? state : addRun(state, event.text ?? '', state.pendingMode)), running: true };
    case 'reasoningDelta':
    case 'proposalChanged':
    case 'compacted':
    case 'findings':
      return state; // the proposal is re-read; compactions and findings show in the answer and the Problems panel
  }
}

function ended(state: ViewState, notification: RunEndedNotification): ViewState {
  if (notification.sessionId !== state.sessionId) {
    return state;
  }
  const next = withLastRun(state, (run) => {
    const streamed = run.items.some((item) => item.kind === 'text' && item.text.trim() !== '');
    // The answer is the last turn's text, streamed already; shown here when nothing was streamed. A
    // plan run's answer is its plan as markdown, which the plan card shows.
    const shown = streamed || !notification.answer.trim() || notification.plan;
    const items: RunItem[] = shown ? run.items : [...run.items, { kind: 'text', text: notification.answer }];
    return {
      ...run,
      items: items.filter((item) => item.kind !== 'text' || item.text !== ''),
      status: notification.status,
      usage: notification.usage,
      ...(notification.status === 'done' ? {} : { reason: notification.reason }),
      ...outcomeFields(notification),
    };
  });
  return { ...next, running: false, sessionUsage: addUsage(state.sessionUsage, notification.usage) };
}

/** `a + b`; the cost is unknown (null) only when neither knows it. */
export function addUsage(a: UsageSummary | undefined, b: UsageSummary): UsageSummary {
  if (!a) {
    return b;
  }
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    estimated: a.estimated || b.estimated,
    costUsd: a.costUsd === null && b.costUsd === null ? null : (a.costUsd ?? 0) + (b.costUsd ?? 0),
  };
}

/** The RunView fields of a run's outcome (plan, checks, not verified, usage by role), only those present. */
function outcomeFields(wire: OutcomeWire): Partial<RunView> {
  const outcome = runOutcome(wire);
  return {
    ...(outcome.mode === 'plan' ? { mode: 'plan' as const } : {}),
    ...(outcome.plan ? { plan: outcome.plan } : {}),
    ...(outcome.checks.length ? { checks: outcome.checks } : {}),
    ...(outcome.notVerified.length ? { notVerified: outcome.notVerified } : {}),
    ...(Object.keys(outcome.usageByRole).length ? { usageByRole: outcome.usageByRole } : {}),
  };
}

const RUN_STATUSES: readonly string[] = ['done', 'stopped', 'cancelled', 'error', 'interrupted'];

/** A stored run (`agent.sessionHistory`) as the view shows it. */
function storedRun(run: HistoryRunWire): RunView {
  const items: RunItem[] = run.items.map((item) =>
    item.kind === 'text'
      ? { kind: 'text', text: item.text ?? '' }
      : {
          kind: 'tool',
          call: {
            name: item.toolName ?? '?',
            args: item.arguments ?? '',
            ...(item.verdict ? { verdict: item.verdict } : {}),
            ...(item.approval ? { approval: item.approval } : {}),
            ...(item.rule ? { rule: item.rule } : {}),
            ...(item.result !== null ? { result: item.result } : {}),
          },
        },
  );
  const status = (RUN_STATUSES.includes(run.status) ? run.status : 'interrupted') as RunView['status'];
  return {
    task: run.task,
    items,
    status,
    ...(status === 'done' || !run.reason ? {} : { reason: run.reason }),
    ...(run.usage ? { usage: run.usage } : {}),
    // A stored run carries its plan and checks when the server keeps them (issue 17).
    ...outcomeFields(run),
  };
}

function proposalFiles(files: ProposalFile[]): ProposalFileView[] {
  return files.map((file) => ({ uri: file.uri, path: file.path, added: file.added, removed: file.removed, isNew: file.isNew }));
}

/** The next state. Actions about another session than the view's are ignored, except a launch. */
export function reduce(state: ViewState, action: ViewAction): ViewState {
  switch (action.type) {
    case 'runLaunched':
      if (action.sessionId !== state.sessionId) {
        return addRun({ ...EMPTY_STATE, sessionId: action.sessionId }, action.task, action.mode);
      }
      // A follow-up: the server's runStarted event adds it (it may even have ended already).
      return action.mode === 'plan' ? launchedPlan(state, action.task) : state;
    case 'event':
      return eventReduce(state, action.event);
    case 'todos':
      return action.sessionId === state.sessionId ? { ...state, todos: action.todos } : state;
    case 'runEnded':
      return ended(state, action.ended);
    case 'proposal':
      return action.sessionId === state.sessionId ? { ...state, proposal: proposalFiles(action.files) } : state;
    case 'context':
      return action.sessionId === state.sessionId ? { ...state, context: action.context } : state;
    case 'resumed': {
      const { session } = action;
      return {
        ...EMPTY_STATE,
        sessionId: session.sessionId,
        resumed: { title: session.title, runs: session.runs, status: session.status, updatedAt: session.updatedAt, model: session.model },
        sessionUsage: { ...session.usage, estimated: false },
      };
    }
    case 'history':
      // Only while nothing new has come: a run started meanwhile keeps the view as it is.
      return action.sessionId === state.sessionId && state.runs.length === 0
        ? { ...state, runs: action.runs.map(storedRun), todos: action.todos }
        : state;
    case 'newSession':
      return EMPTY_STATE;
    case 'serverStopped':
      return state.running
        ? { ...withLastRun(state, (run) => (run.status === 'running' ? { ...run, status: 'error', reason: 'the server stopped' } : run)), running: false }
        : state;
  }
}
