/**
 * The fields of every wire type in `protocol.ts`, as data, for the drift test
 * (`test/unit/protocol.test.ts`), which compares them with the server's Python. The compiler checks
 * each list against its interface (a missing or extra key, or a wrong "optional", fails `tsc`).
 *
 * Pure: no `vscode` import.
 */

import type {
  AgentEventNotification,
  ApplyProposalResult,
  CancelResult,
  ClearFindingsParams,
  ClearFindingsResult,
  CompactParams,
  CompactResult,
  ContextPartWire,
  ContextResult,
  DiscardProposalResult,
  EventKind,
  FindingData,
  InstructionFileInfo,
  InstructionImport,
  InstructionsParams,
  InstructionsResult,
  ListSessionsParams,
  ListSessionsResult,
  ListSkillsParams,
  ListSkillsResult,
  MemoryFileWire,
  ProposalFile,
  ProposalFilesParams,
  ProposalResult,
  ProposalSummary,
  RunEndedNotification,
  RunParams,
  RunResult,
  ReviewFindingWire,
  RunSkillParams,
  SessionParams,
  StatusParams,
  StatusResult,
  SubagentMarker,
  TodosNotification,
  TodoWire,
  SkillInfo,
  UsageSummary,
  WireDiagnostic,
  WireFileDiagnostic,
  WirePosition,
  WireRange,
} from './protocol';

/**
 * "optional" means the sender may leave the field out: client params with a default in Python.
 * Results and notifications always carry every field (null where Python says None).
 * The types the server builds as plain dicts (`SkillInfo`, `InstructionsResult` and their parts)
 * have no pydantic model: they are in `DICT_WIRE_FIELDS`.
 */
type Fields<T> = { [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : 'required' };

/** The wire types that have a pydantic model in `protocol.py`. */
export const WIRE_FIELDS = {
  WirePosition: { line: 'required', character: 'required' } satisfies Fields<WirePosition>,
  WireRange: { start: 'required', end: 'required' } satisfies Fields<WireRange>,
  WireDiagnostic: {
    range: 'required',
    message: 'required',
    severity: 'optional',
    source: 'optional',
    code: 'optional',
  } satisfies Fields<WireDiagnostic>,
  RunParams: {
    task: 'required',
    uri: 'optional',
    range: 'optional',
    model: 'optional',
    diagnostics: 'optional',
    sessionId: 'optional',
    maxTokens: 'optional',
    maxCostUsd: 'optional',
  } satisfies Fields<RunParams>,
  RunSkillParams: {
    skill: 'required',
    uri: 'optional',
    range: 'optional',
    args: 'optional',
    model: 'optional',
    diagnostics: 'optional',
    sessionId: 'optional',
  } satisfies Fields<RunSkillParams>,
  ListSessionsParams: { uri: 'optional' } satisfies Fields<ListSessionsParams>,
  ListSessionsResult: { sessions: 'required' } satisfies Fields<ListSessionsResult>,
  ListSkillsParams: { uri: 'optional' } satisfies Fields<ListSkillsParams>,
  InstructionsParams: { uri: 'optional' } satisfies Fields<InstructionsParams>,
  RunResult: { sessionId: 'required', progressToken: 'required' } satisfies Fields<RunResult>,
  CompactParams: { sessionId: 'optional', focus: 'optional' } satisfies Fields<CompactParams>,
  CompactResult: {
    how: 'required',
    tokensBefore: 'required',
    tokensAfter: 'required',
    pruned: 'required',
  } satisfies Fields<CompactResult>,
  SessionParams: { sessionId: 'optional' } satisfies Fields<SessionParams>,
  ProposalFilesParams: { sessionId: 'optional', files: 'optional' } satisfies Fields<ProposalFilesParams>,
  ContextPartWire: { name: 'required', tokens: 'required' } satisfies Fields<ContextPartWire>,
  ContextResult: {
    contextWindow: 'required',
    used: 'required',
    free: 'required',
    parts: 'required',
    memory: 'required',
    noModel: 'required',
  } satisfies Fields<ContextResult>,
  MemoryFileWire: { path: 'required', bytes: 'required' } satisfies Fields<MemoryFileWire>,
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
    instructions: 'required',
  } satisfies Fields<ProposalFile>,
  ProposalResult: { files: 'required' } satisfies Fields<ProposalResult>,
  ApplyProposalResult: {
    applied: 'required',
    failureReason: 'required',
    message: 'required',
    changesApplied: 'required',
    changesKept: 'required',
    keptFiles: 'required',
  } satisfies Fields<ApplyProposalResult>,
  DiscardProposalResult: { discarded: 'required', keptFiles: 'required' } satisfies Fields<DiscardProposalResult>,
  ListSkillsResult: { skills: 'required', skipped: 'required' } satisfies Fields<ListSkillsResult>,
  AgentEventNotification: {
    sessionId: 'required',
    kind: 'required',
    text: 'required',
    toolName: 'required',
    verdict: 'required',
    model: 'required',
    unsandboxed: 'required',
    usage: 'required',
    callUsage: 'required',
    sessionUsage: 'required',
    partial: 'required',
    approval: 'required',
    subagent: 'required',
  } satisfies Fields<AgentEventNotification>,
  SubagentMarker: { callId: 'required', description: 'required' } satisfies Fields<SubagentMarker>,
  TodoWire: { content: 'required', status: 'required', activeForm: 'required' } satisfies Fields<TodoWire>,
  TodosNotification: { sessionId: 'required', todos: 'required' } satisfies Fields<TodosNotification>,
  UsageSummary: {
    inputTokens: 'required',
    outputTokens: 'required',
    cachedInputTokens: 'required',
    estimated: 'required',
    costUsd: 'required',
  } satisfies Fields<UsageSummary>,
  ProposalSummary: {
    files: 'required',
    added: 'required',
    removed: 'required',
    governedBy: 'required',
  } satisfies Fields<ProposalSummary>,
  RunEndedNotification: {
    sessionId: 'required',
    status: 'required',
    reason: 'required',
    answer: 'required',
    usage: 'required',
    sessionUsage: 'required',
    proposal: 'required',
  } satisfies Fields<RunEndedNotification>,
  ReviewFindingWire: {
    path: 'required',
    line: 'required',
    endLine: 'required',
    severity: 'required',
    message: 'required',
  } satisfies Fields<ReviewFindingWire>,
  FindingData: { sessionId: 'required', finding: 'required' } satisfies Fields<FindingData>,
  ClearFindingsParams: { sessionId: 'optional', uris: 'optional' } satisfies Fields<ClearFindingsParams>,
  ClearFindingsResult: { cleared: 'required' } satisfies Fields<ClearFindingsResult>,
  StatusParams: { uri: 'optional' } satisfies Fields<StatusParams>,
  StatusResult: {
    model: 'required',
    baseUrl: 'required',
    modelState: 'required',
    modelDetail: 'required',
    sandboxed: 'required',
    sandbox: 'required',
  } satisfies Fields<StatusResult>,
} as const;

/**
 * The types the server builds by hand (a `wire()` method returning a dict literal, no pydantic
 * model): their keys, checked by `test/unit/protocol.test.ts` against those methods.
 */
export const DICT_WIRE_FIELDS = {
  /** `agent_ls.core.file_diagnostics.FileDiagnostic.wire()` */
  WireFileDiagnostic: {
    path: 'required',
    line: 'required',
    character: 'required',
    endCharacter: 'required',
    severity: 'required',
    message: 'required',
  } satisfies Fields<WireFileDiagnostic>,
  /** `Skill.wire()` */
  SkillInfo: {
    name: 'required',
    description: 'required',
    source: 'required',
    path: 'required',
    baseDir: 'required',
    modelInvocable: 'required',
    allowedTools: 'required',
    argumentHint: 'required',
    diagnostics: 'required',
  } satisfies Fields<SkillInfo>,
  /** `ImportRecord.wire()` */
  InstructionImport: {
    spec: 'required',
    line: 'required',
    status: 'required',
    path: 'required',
    message: 'required',
    importer: 'required',
  } satisfies Fields<InstructionImport>,
  /** `InstructionFile.wire()` */
  InstructionFileInfo: {
    order: 'required',
    path: 'required',
    realPath: 'required',
    label: 'required',
    scope: 'required',
    kind: 'required',
    bytes: 'required',
    keptBytes: 'required',
    truncated: 'required',
    imports: 'required',
  } satisfies Fields<InstructionFileInfo>,
  /** `InstructionChain.wire()` */
  InstructionsResult: {
    workspaceRoot: 'required',
    projectRoot: 'required',
    focusDir: 'required',
    budgetBytes: 'required',
    totalBytes: 'required',
    files: 'required',
    notices: 'required',
    diagnostics: 'required',
  } satisfies Fields<InstructionsResult>,
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
  compacted: true,
  findings: true,
} satisfies Record<EventKind, true>) as EventKind[];
