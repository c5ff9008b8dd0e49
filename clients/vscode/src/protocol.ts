/**
 * Custom agent-ls messages on the wire: `agent.*` commands and `agent/*` notifications.
 *
 * Mirrors `server/agent_ls/lsp/protocol.py` name for name, camelCase as on the wire. Commands go
 * through `workspace/executeCommand` with exactly one object in `arguments` and return an object.
 * `test/protocol.test.ts` reads the Python module and fails when the two drift apart.
 *
 * | command                 | argument        | returns                 |
 * |-------------------------|-----------------|-------------------------|
 * | `agent.run`             | `RunParams`     | `RunResult` at once; the run continues in the background |
 * | `agent.cancel`          | `SessionParams` | `CancelResult`          |
 * | `agent.proposal`        | `SessionParams` | `ProposalResult`        |
 * | `agent.applyProposal`   | `SessionParams` | `ApplyProposalResult`   |
 * | `agent.discardProposal` | `SessionParams` | `DiscardProposalResult` |
 * | `agent.listSkills`      | `{}`            | `ListSkillsResult`      |
 *
 * Notifications (server to client): `agent/event` (`AgentEventNotification`) and `agent/runEnded`
 * (`RunEndedNotification`).
 *
 * This module must not import `vscode`: the unit tests load it in plain Node.
 */

export const CMD_RUN = 'agent.run';
export const CMD_CANCEL = 'agent.cancel';
export const CMD_PROPOSAL = 'agent.proposal';
export const CMD_APPLY_PROPOSAL = 'agent.applyProposal';
export const CMD_DISCARD_PROPOSAL = 'agent.discardProposal';
export const CMD_LIST_SKILLS = 'agent.listSkills';

export const AGENT_EVENT = 'agent/event';
export const AGENT_RUN_ENDED = 'agent/runEnded';

export type EventKind =
  | 'runStarted'
  | 'turnStarted'
  | 'textDelta'
  | 'reasoningDelta'
  | 'retrying'
  | 'toolCall'
  | 'verdict'
  | 'toolResult'
  | 'usage'
  | 'proposalChanged';

/** 0-based, in the negotiated position encoding (UTF-16 code units in VS Code). */
export interface WirePosition {
  line: number;
  character: number;
}

export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

export interface RunParams {
  task: string;
  uri?: string | null;
  range?: WireRange | null;
  model?: string | null;
}

export interface RunResult {
  sessionId: string;
  progressToken: string;
}

export interface SessionParams {
  /** Left out: the latest session (for clients that never see command results). */
  sessionId?: string | null;
}

export interface CancelResult {
  cancelled: boolean;
}

export interface ProposalFile {
  uri: string;
  /** Workspace-relative POSIX path. */
  path: string;
  isNew: boolean;
  baseVersion: number | null;
  diff: string;
  added: number;
  removed: number;
  originalText: string;
  proposedText: string;
}

export interface ProposalResult {
  files: ProposalFile[];
}

export interface ApplyProposalResult {
  applied: boolean;
  failureReason: string | null;
}

export interface DiscardProposalResult {
  discarded: boolean;
}

export interface ListSkillsResult {
  skills: Record<string, unknown>[];
}

export interface AgentEventNotification {
  sessionId: string;
  kind: EventKind;
  text: string | null;
  toolName: string | null;
  verdict: 'allow' | 'ask' | 'deny' | null;
  /** On `runStarted`: the model string the run resolved (wherever it came from). */
  model: string | null;
  /** On `usage`: the run's total so far. */
  usage: UsageSummary | null;
  /** On `usage`: the last model call's usage. */
  callUsage: UsageSummary | null;
  /** On `usage`: the session's total so far, earlier runs included. */
  sessionUsage: UsageSummary | null;
  /** On `retrying`: true when the text streamed so far in this turn is void (clear it). */
  partial: boolean | null;
  /** On `verdict`: the user's answer when the policy asked, else null (the rule decided alone). */
  approval: 'once' | 'session' | 'always' | 'deny' | null;
}

export interface UsageSummary {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  estimated: boolean;
  /** US dollars from the provider's price table; null when no price is configured. */
  costUsd: number | null;
}

export interface ProposalSummary {
  /** Workspace-relative POSIX paths. */
  files: string[];
  added: number;
  removed: number;
}

export type RunStatus = 'done' | 'stopped' | 'cancelled' | 'error';

export interface RunEndedNotification {
  sessionId: string;
  status: RunStatus;
  reason: string;
  answer: string;
  usage: UsageSummary;
  sessionUsage: UsageSummary;
  proposal: ProposalSummary;
}

/**
 * Not served yet: the skills issue adds `agent.runSkill` to the server (issue 3 names its argument;
 * until then the server answers "Command name 'agent.runSkill' is not defined"). Its result is
 * assumed to be a `RunResult`, like `agent.run`.
 */
export const CMD_RUN_SKILL = 'agent.runSkill';

export interface RunSkillParams {
  skill: string;
  uri?: string | null;
  args?: string | null;
}

/**
 * The fields of every wire type, checked by the compiler against the interfaces above (a missing or
 * extra key, or a wrong "optional", fails `tsc`) and by `test/unit/protocol.test.ts` against the
 * Python models. "optional" means the sender may leave the field out: client params with a default
 * in Python. Results and notifications always carry every field (null where Python says None).
 */
type Fields<T> = { [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : 'required' };

export const WIRE_FIELDS = {
  WirePosition: { line: 'required', character: 'required' } satisfies Fields<WirePosition>,
  WireRange: { start: 'required', end: 'required' } satisfies Fields<WireRange>,
  RunParams: { task: 'required', uri: 'optional', range: 'optional', model: 'optional' } satisfies Fields<RunParams>,
  RunResult: { sessionId: 'required', progressToken: 'required' } satisfies Fields<RunResult>,
  SessionParams: { sessionId: 'optional' } satisfies Fields<SessionParams>,
  CancelResult: { cancelled: 'required' } satisfies Fields<CancelResult>,
  ProposalFile: {
    uri: 'required',
    path: 'required',
    isNew: 'required',
    baseVersion: 'required',
    diff: 'required',
    added: 'required',
    removed: 'required',
    originalText: 'required',
    proposedText: 'required',
  } satisfies Fields<ProposalFile>,
  ProposalResult: { files: 'required' } satisfies Fields<ProposalResult>,
  ApplyProposalResult: { applied: 'required', failureReason: 'required' } satisfies Fields<ApplyProposalResult>,
  DiscardProposalResult: { discarded: 'required' } satisfies Fields<DiscardProposalResult>,
  ListSkillsResult: { skills: 'required' } satisfies Fields<ListSkillsResult>,
  AgentEventNotification: {
    sessionId: 'required',
    kind: 'required',
    text: 'required',
    toolName: 'required',
    verdict: 'required',
    model: 'required',
    usage: 'required',
    callUsage: 'required',
    sessionUsage: 'required',
    partial: 'required',
    approval: 'required',
  } satisfies Fields<AgentEventNotification>,
  UsageSummary: {
    inputTokens: 'required',
    outputTokens: 'required',
    cachedInputTokens: 'required',
    estimated: 'required',
    costUsd: 'required',
  } satisfies Fields<UsageSummary>,
  ProposalSummary: { files: 'required', added: 'required', removed: 'required' } satisfies Fields<ProposalSummary>,
  RunEndedNotification: {
    sessionId: 'required',
    status: 'required',
    reason: 'required',
    answer: 'required',
    usage: 'required',
    sessionUsage: 'required',
    proposal: 'required',
  } satisfies Fields<RunEndedNotification>,
} as const;

/** Every `EventKind` (the compiler checks the set is complete), for the drift test. */
export const EVENT_KINDS = Object.keys({
  runStarted: true,
  turnStarted: true,
  textDelta: true,
  reasoningDelta: true,
  retrying: true,
  toolCall: true,
  verdict: true,
  toolResult: true,
  usage: true,
  proposalChanged: true,
} satisfies Record<EventKind, true>) as EventKind[];
