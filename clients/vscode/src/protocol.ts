/**
 * Custom agent-ls messages on the wire: `agent.*` commands and `agent/*` notifications.
 *
 * Mirrors `server/agent_ls/lsp/protocol.py` name for name, camelCase as on the wire. Commands go
 * through `workspace/executeCommand` with exactly one object in `arguments` and return an object.
 * `test/unit/protocol.test.ts` reads the Python module and fails when the two drift apart (the
 * field lists it compares are in `wireFields.ts`).
 *
 * | command                 | argument             | returns                 |
 * |-------------------------|----------------------|-------------------------|
 * | `agent.run`             | `RunParams`          | `RunResult` at once; the run continues in the background |
 * | `agent.cancel`          | `SessionParams`      | `CancelResult`          |
 * | `agent.proposal`        | `SessionParams`      | `ProposalResult`        |
 * | `agent.applyProposal`   | `ProposalFilesParams` | `ApplyProposalResult`  |
 * | `agent.discardProposal` | `ProposalFilesParams` | `DiscardProposalResult` |
 * | `agent.runSkill`        | `RunSkillParams`     | `RunResult`, as `agent.run` |
 * | `agent.listSkills`      | `ListSkillsParams`   | `ListSkillsResult`      |
 * | `agent.instructions`    | `InstructionsParams` | `InstructionsResult`    |
 * | `agent.context`         | `SessionParams`      | `ContextResult`         |
 * | `agent.listSessions`    | `ListSessionsParams` | `ListSessionsResult`    |
 * | `agent.sessionHistory`  | `SessionHistoryParams` | `SessionHistoryResult` |
 * | `agent.traceHtml`       | `SessionHistoryParams` | `TraceHtmlResult`    |
 * | `agent.compact`         | `CompactParams`      | `CompactResult`         |
 * | `agent.clearFindings`   | `ClearFindingsParams` | `ClearFindingsResult`  |
 * | `agent.status`          | `StatusParams`       | `StatusResult`          |
 * | `agent.mcpStatus`       | `McpStatusParams`    | `McpStatusResult`       |
 *
 * Notifications (server to client): `agent/event` (`AgentEventNotification`; a subagent's events carry
 * `subagent`), `agent/runEnded` (`RunEndedNotification`) and `agent/todos` (`TodosNotification`, the
 * whole todo list each time the model writes it).
 *
 * This module must not import `vscode`: the unit tests load it in plain Node.
 */

export const CMD_RUN = 'agent.run';
export const CMD_CANCEL = 'agent.cancel';
export const CMD_PROPOSAL = 'agent.proposal';
export const CMD_APPLY_PROPOSAL = 'agent.applyProposal';
export const CMD_DISCARD_PROPOSAL = 'agent.discardProposal';
export const CMD_LIST_SKILLS = 'agent.listSkills';
export const CMD_RUN_SKILL = 'agent.runSkill';
export const CMD_INSTRUCTIONS = 'agent.instructions';
export const CMD_CONTEXT = 'agent.context';
export const CMD_LIST_SESSIONS = 'agent.listSessions';
export const CMD_SESSION_HISTORY = 'agent.sessionHistory';
export const CMD_TRACE_HTML = 'agent.traceHtml';
export const CMD_COMPACT = 'agent.compact';
export const CMD_CLEAR_FINDINGS = 'agent.clearFindings';
export const CMD_STATUS = 'agent.status';
export const CMD_MCP_STATUS = 'agent.mcpStatus';

export const AGENT_EVENT = 'agent/event';
export const AGENT_RUN_ENDED = 'agent/runEnded';
export const AGENT_TODOS = 'agent/todos';
/** Client to server: the editor's problems of some files (`DidChangeProblemsParams`). */
export const AGENT_DID_CHANGE_PROBLEMS = 'agent/didChangeProblems';
/** Server to client request: the problems of texts not on disk (`ProblemsOfTextParams` → `ProblemsOfTextResult`). */
export const AGENT_PROBLEMS_OF_TEXT = 'agent/problemsOfText';

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
  | 'proposalChanged'
  | 'compacted'
  | 'findings';

/** The `source` of the diagnostics that carry review findings (their `data` is a `FindingData`). */
export const REVIEW_SOURCE = 'agent-ls review';

/** 0-based, in the negotiated position encoding (UTF-16 code units in VS Code). */
export interface WirePosition {
  line: number;
  character: number;
}

export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

/**
 * An LSP `Diagnostic` the client passes with a run (the file's problems, for fix-diagnostics).
 * `severity` is LSP's number: 1 error, 2 warning, 3 information, 4 hint.
 */
export interface WireDiagnostic {
  range: WireRange;
  message: string;
  severity?: number | null;
  source?: string | null;
  code?: number | string | null;
}

/** One file's problems: `uri` a `file:` URI, `diagnostics` all of its current ones (empty: none). */
export interface FileDiagnostics {
  uri: string;
  diagnostics: WireDiagnostic[];
}

/** `agent/didChangeProblems`: each listed file's problems replace the ones sent before; files not listed keep theirs. */
export interface DidChangeProblemsParams {
  files: FileDiagnostics[];
}

/** A file's proposed text: `uri` the file it would replace (its language decides the checker). */
export interface TextOfFile {
  uri: string;
  text: string;
}

/** `agent/problemsOfText`: the texts to check, as the editor's language servers would see them. */
export interface ProblemsOfTextParams {
  files: TextOfFile[];
}

/** The problems of each text, under the `uri` it was sent with; a file left out was not checked. */
export interface ProblemsOfTextResult {
  files: FileDiagnostics[];
}

/** A task starting with `/<skill> args` runs that skill explicitly (its body is injected up front). */
export interface RunParams {
  task: string;
  uri?: string | null;
  range?: WireRange | null;
  model?: string | null;
  diagnostics?: WireDiagnostic[] | null;
  /** Continue this session (in memory or stored, docs/sessions.md); left out, a new one starts. */
  sessionId?: string | null;
  /** This run's token budget (input plus output tokens of its model calls); over `agentLs.maxTokens`. */
  maxTokens?: number | null;
  /** This run's cost budget in US dollars; over `agentLs.maxCostUsd`. */
  maxCostUsd?: number | null;
  /**
   * `plan`: read-only tools, edits refused by the policy, the run ends with a `plan` (docs/modes.md);
   * `default` after a plan run of the same session implements that plan ("Approve plan").
   */
  mode?: RunMode;
  /**
   * Acceptance checks: shell commands the server runs in the shadow copy when the model says it is done
   * (docs/modes.md, "Definition of done").
   */
  checks?: string[];
  /**
   * MCP resources to attach to the task (docs/mcp.md): `<server>:<uri>`, or a URI a connected server
   * lists; read with resources/read and given to the model as data. One that cannot be read ends the run.
   */
  resource?: string | string[] | null;
}

/**
 * An acceptance check's result: `passed` when it ran and exited 0; `exitCode` null when it was stopped
 * (a timeout) or could not run (then `outputTail` says why, and `notVerified` lists it); `outputTail` its
 * last lines (about 20, at most 2 KB), secrets redacted.
 */
export interface CheckWire {
  command: string;
  passed: boolean;
  exitCode: number | null;
  outputTail: string;
}

/** A run's mode; left out of `RunParams`, `default`. */
export type RunMode = 'default' | 'plan';

/**
 * The plan a plan run ended with: `files` workspace-relative, `steps` in order, `checks` commands that
 * verify the result, `risks`.
 */
export interface PlanWire {
  summary: string;
  files: string[];
  steps: string[];
  checks: string[];
  risks: string[];
}

/** `agent.runSkill`: run `skill` explicitly on the file `uri` (the run's task is `/<skill> <args>`). */
export interface RunSkillParams {
  skill: string;
  uri?: string | null;
  range?: WireRange | null;
  args?: string | null;
  model?: string | null;
  diagnostics?: WireDiagnostic[] | null;
  /** Continue this session, as `RunParams.sessionId`; left out, a new one starts. */
  sessionId?: string | null;
  /** As `RunParams.mode`. */
  mode?: RunMode;
  /** As `RunParams.checks`; the skill's own (its `metadata` `checks`) join them. */
  checks?: string[];
}

/**
 * `agent.listSessions`: the stored sessions of the workspace folder holding `uri` (left out: of every
 * open folder), newest first.
 */
export interface ListSessionsParams {
  uri?: string | null;
}

/** The session's usage over every run (`SavedSession.summary()`); no `estimated` flag. */
export interface SessionSummaryUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** US dollars; null when no price is configured. */
  costUsd: number | null;
}

/**
 * One stored session as `agent.listSessions` lists it (`agent_ls.sessions.saved.SavedSession.summary()`,
 * a plain dict: no pydantic model).
 */
export interface SessionSummary {
  sessionId: string;
  /** The first task, shortened to one line of at most 60 characters. */
  title: string;
  /** The workspace folder, absolute. */
  workspace: string;
  /** ISO 8601 times of the header and of the last event. */
  createdAt: string;
  updatedAt: string;
  /** How many runs started. */
  runs: number;
  /** The last run's status; `new` before any run, `interrupted` when one never ended, `running` now. */
  status: RunStatus | 'new' | 'interrupted' | 'running';
  /** Workspace-relative paths of the pending proposal, sorted. */
  pendingFiles: string[];
  /** The last run's model ('' before any run). */
  model: string;
  usage: SessionSummaryUsage;
}

/** Each entry: a `SessionSummary`. */
export interface ListSessionsResult {
  sessions: SessionSummary[];
}

/** `agent.sessionHistory`: a stored session of an open workspace folder (`agent.listSessions`). */
export interface SessionHistoryParams {
  sessionId: string;
}

/**
 * Answer text (`kind` `text`) or a tool call (`kind` `tool`: its name, its arguments as the model sent
 * them, the verdict, the rule that decided, the user's answer when asked, and the result); texts are
 * clipped to 2,000 characters.
 */
export interface HistoryItemWire {
  kind: 'text' | 'tool';
  text: string | null;
  toolName: string | null;
  arguments: string | null;
  verdict: 'allow' | 'ask' | 'deny' | null;
  rule: string | null;
  approval: 'once' | 'session' | 'always' | 'deny' | null;
  result: string | null;
  isError: boolean;
}

/** One run: status `interrupted` for a run that never ended; `usage` null before its end. */
export interface HistoryRunWire {
  task: string;
  items: HistoryItemWire[];
  mode: RunMode;
  /** The plan a plan run ended with (shown again by an editor that resumes the session); else null. */
  plan: PlanWire | null;
  status: string;
  reason: string;
  usage: UsageSummary | null;
  /** The run's usage by role; a run stored before roles were recorded has all of it under `main`. */
  usageByRole: Record<string, UsageSummary>;
  /** As `RunEndedNotification.checks` (from the session file's `checks` records). */
  checks: CheckWire[];
  /** As `RunEndedNotification.notVerified`. */
  notVerified: string[];
}

/** `agent.sessionHistory`: the session's runs, oldest first (`sessions.history`), and its todos. */
export interface SessionHistoryResult {
  sessionId: string;
  runs: HistoryRunWire[];
  todos: TodoWire[];
}

/** `agent.traceHtml`: the stored session's trajectory as one inert HTML page (`agent-ls trace html`). */
export interface TraceHtmlResult {
  sessionId: string;
  html: string;
}

/** `uri`: the file whose folders' `.agents/skills` count; left out, the workspace root. */
export interface ListSkillsParams {
  uri?: string | null;
}

/** `uri`: the file whose AGENTS.md chain is wanted; left out, the workspace root's. */
export interface InstructionsParams {
  uri?: string | null;
}

export interface RunResult {
  sessionId: string;
  progressToken: string;
}

/**
 * `agent.compact`: `sessionId` left out means the latest session; `focus` is what the summary should
 * keep in particular (as `/compact focus`).
 */
export interface CompactParams {
  sessionId?: string | null;
  focus?: string | null;
}

/**
 * `agent.compact`: `how` (`pruned` or `summarized`), the request's estimated tokens before and after,
 * and how many tool results were pruned.
 */
export interface CompactResult {
  how: string;
  tokensBefore: number;
  tokensAfter: number;
  pruned: number;
}

export interface SessionParams {
  /** Left out: the latest session (for clients that never see command results). */
  sessionId?: string | null;
}

/**
 * `agent.applyProposal` and `agent.discardProposal`: `files` (file URIs, as `ProposalFile.uri`) limits the
 * command to those files; the others stay pending. Left out, every file. A URI not in the proposal is an
 * InvalidParams error.
 */
export interface ProposalFilesParams {
  sessionId?: string | null;
  files?: string[] | null;
}

export interface ContextPartWire {
  name: string;
  tokens: number;
}

/** `agent.context`: the session's next request, measured; tokens are bytes / 4 of the exact body. */
export interface ContextResult {
  contextWindow: number;
  used: number;
  free: number;
  parts: ContextPartWire[];
  /** The memory notes of the workspace (the memory tools); null when the session has none. */
  memory: MemoryFileWire | null;
  /** Why no model could be opened: the body was measured as a Chat Completions request; null when the
   * session's model measured it. */
  noModel: string | null;
}

/** The workspace's memory notes file: not in the request until the model calls `memory_read`. */
export interface MemoryFileWire {
  path: string;
  bytes: number;
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
  /** The AGENTS.md files (labels, root first) that govern this file. */
  instructions: string[];
}

export interface ProposalResult {
  files: ProposalFile[];
}

/**
 * `applied`: the editor applied the edit (all or part of it). When it did, `message` says what landed
 * ("applied 3 of 5 changes in 2 files; 2 changes kept"; a change is one line-diff hunk, one TextEdit); the
 * changes unticked in a preview and the files not asked for stay pending, by URI in `keptFiles`.
 */
export interface ApplyProposalResult {
  applied: boolean;
  failureReason: string | null;
  message: string | null;
  changesApplied: number;
  changesKept: number;
  keptFiles: string[];
}

/** `discarded`: some file was dropped; `keptFiles`: the URIs still pending. */
export interface DiscardProposalResult {
  discarded: boolean;
  keptFiles: string[];
}

/**
 * A problem found in an agent config file (`agent_ls.core.file_diagnostics.FileDiagnostic.wire()`):
 * 0-based line, code-point columns of that line (end exclusive).
 */
export interface WireFileDiagnostic {
  path: string;
  line: number;
  character: number;
  endCharacter: number;
  severity: 'error' | 'warning' | 'information';
  message: string;
}

export type SkillSource = 'project' | 'user' | 'bundled' | 'configured';

/** One skill as `agent.listSkills` lists it (`agent_ls.instructions.skills.Skill.wire()`). */
export interface SkillInfo {
  name: string;
  description: string;
  source: SkillSource;
  /** The SKILL.md, absolute. */
  path: string;
  baseDir: string;
  /** False with `disable-model-invocation: true`: only explicit invocation runs it. */
  modelInvocable: boolean;
  /** Recorded and shown only; never widens the permissions. */
  allowedTools: string[];
  argumentHint: string | null;
  diagnostics: WireFileDiagnostic[];
}

export interface ListSkillsResult {
  skills: SkillInfo[];
  /** SKILL.md files not loaded, each a diagnostic saying why. */
  skipped: WireFileDiagnostic[];
}

export type ImportStatus = 'resolved' | 'refused' | 'not_found' | 'cycle' | 'too_deep' | 'duplicate';

/** An `@path` import in an instruction file (`agent_ls.instructions.imports.ImportRecord.wire()`). */
export interface InstructionImport {
  /** As written, without the `@`. */
  spec: string;
  /** 0-based line in `importer`. */
  line: number;
  status: ImportStatus;
  /** The absolute resolved target, when known. */
  path: string | null;
  /** One line, e.g. `refused: ~/x.md is outside the workspace (home paths are never read)`. */
  message: string;
  /** The file holding the import: the instruction file, or an imported file (nested imports). */
  importer: string;
}

/** One file of the chain (`agent_ls.instructions.agents_md.InstructionFile.wire()`). */
export interface InstructionFileInfo {
  /** 1-based place in the prompt. */
  order: number;
  /** Absolute, where it was found. */
  path: string;
  realPath: string;
  /** Workspace-relative POSIX (`AGENTS.md`, `pkg/AGENTS.md`); the global file `~/…` or absolute. */
  label: string;
  /** `**`, `pkg/**`, or `global`. */
  scope: string;
  kind: 'global' | 'project' | 'nested';
  /** Bytes on disk (BOM excluded). */
  bytes: number;
  /** Bytes the prompt got. */
  keptBytes: number;
  truncated: boolean;
  /** Every import met, nested ones included, in order. */
  imports: InstructionImport[];
}

/**
 * `agent.instructions`: the AGENTS.md chain for a file (`InstructionChain.wire()`), global first,
 * leaf last; `{}` when instructions are disabled or were not loaded.
 */
export interface InstructionsResult {
  workspaceRoot: string;
  projectRoot: string;
  focusDir: string;
  budgetBytes: number;
  totalBytes: number;
  files: InstructionFileInfo[];
  /** Files not loaded (a symlink leaving the workspace, a secret, unreadable, empty, loaded already). */
  notices: WireFileDiagnostic[];
  /** Every file's problems (truncation, imports not inlined, invalid UTF-8), then the notices. */
  diagnostics: WireFileDiagnostic[];
}

export type InstructionsAnswer = InstructionsResult | Record<string, never>;

export interface AgentEventNotification {
  sessionId: string;
  kind: EventKind;
  text: string | null;
  toolName: string | null;
  verdict: 'allow' | 'ask' | 'deny' | null;
  /** On `runStarted`: the model string the run resolved (wherever it came from). */
  model: string | null;
  /** On `runStarted`: why shell commands run without a sandbox (those running workspace code then ask first); null when sandboxed. */
  unsandboxed: string | null;
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
  /** On an event of a subagent's run (the `task` tool): which one; null for the session's own run. */
  subagent: SubagentMarker | null;
}

/** Which subagent an `agent/event` comes from: the parent's `task` call and its description. */
export interface SubagentMarker {
  callId: string;
  description: string;
}

export interface TodoWire {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  activeForm: string;
}

/** `agent/todos`: the session's whole todo list, in order, each time `todo_write` replaces it. */
export interface TodosNotification {
  sessionId: string;
  todos: TodoWire[];
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
  /** Per proposed file, the AGENTS.md files (labels, root first) that govern it. */
  governedBy: Record<string, string[]>;
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
  mode: RunMode;
  /**
   * Only for a plan run that ended with its plan (`submit_plan`); `answer` is then the plan as markdown.
   * A following `agent.run {sessionId}` in default mode implements it.
   */
  plan: PlanWire | null;
  /** The acceptance checks' results the run ended on, in order; empty when it had none. */
  checks: CheckWire[];
  /** One line per check that was not run at the end, and why; empty when every check ran. */
  notVerified: string[];
  /**
   * `usage` by what the calls were for: `main` (the run's turns), `compaction` (summaries), `subagent`
   * (the `task` tool's runs); only roles that made model calls.
   */
  usageByRole: Record<string, UsageSummary>;
}

/** A review finding: `path` workspace-relative POSIX, `line` and `endLine` 1-based and inclusive. */
export interface ReviewFindingWire {
  path: string;
  line: number;
  endLine: number;
  severity: 'error' | 'warning' | 'info' | 'hint';
  message: string;
}

/** The `data` of a review-finding diagnostic: the session that reported it, and the finding. */
export interface FindingData {
  sessionId: string;
  finding: ReviewFindingWire;
}

/** `agent.clearFindings`: the findings of `sessionId` (left out: every session) on `uris` (left out: every file). */
export interface ClearFindingsParams {
  sessionId?: string | null;
  uris?: string[] | null;
}

export interface ClearFindingsResult {
  /** How many finding diagnostics were removed. */
  cleared: number;
}

/**
 * `ready`: a run can start; `noModel`: none is configured; `noApiKey`: the provider needs a key and none
 * is set; `invalid`: the model or its config is wrong (`modelDetail` says how).
 */
export type ModelState = 'ready' | 'noModel' | 'noApiKey' | 'invalid';

/** `agent.status`: `uri` picks the folder whose agent-ls.toml counts; left out, the first folder. */
export interface StatusParams {
  uri?: string | null;
}

/** What a run would use now, found without a model call. */
export interface StatusResult {
  /** The model string (`ollama/qwen2.5-coder:7b`), or null when none is configured. */
  model: string | null;
  /** Its API root, or null. */
  baseUrl: string | null;
  modelState: ModelState;
  /** The fix for any state but `ready` (else empty). */
  modelDetail: string;
  sandboxed: boolean;
  /** One line: the bubblewrap in use, or why commands run unsandboxed. */
  sandbox: string;
}

/** `agent.mcpStatus`: `uri` picks the workspace folder (left out: the first). */
export interface McpStatusParams {
  uri?: string | null;
}

/** An MCP server's state (docs/mcp.md, "Status"). */
export type McpServerState = 'connected' | 'failed' | 'needs approval' | 'denied' | 'disabled' | 'not started';

/** One tool of a connected MCP server. */
export interface McpToolWire {
  /** The name the model sees: `mcp__<server>__<tool>` (at most 64 characters). */
  name: string;
  /** The server's own name of the tool. */
  original: string;
  /** The server's `readOnlyHint` / `destructiveHint` annotations (hints, not permissions); null: unset. */
  readOnly: boolean | null;
  destructive: boolean | null;
  /** Estimated tokens of its name, description and schema in each request. */
  schemaTokens: number;
}

/** One configured MCP server (`mcp_client.status.report`, a plain dict on the server). */
export interface McpServerWire {
  name: string;
  scope: 'user' | 'workspace';
  transport: 'stdio' | 'http';
  /** The command line or URL as written (variables unexpanded). */
  target: string;
  /** The file it came from, or null. */
  source: string | null;
  state: McpServerState;
  /** One line: the tools and the server's name and version, or why it is not connected. */
  detail: string;
  serverInfo: { name: string; version: string } | null;
  protocolVersion: string | null;
  tools: McpToolWire[];
  schemaTokens: number;
  /** Its tools are deferred: only their names are sent until `load_tools` or a call. */
  deferred: boolean;
  resources: { uri: string; name: string; mimeType: string }[];
  prompts: { name: string; description: string }[];
  /** The end of what the server wrote on stderr ("" for an HTTP server). */
  stderrTail: string;
}

/**
 * Every MCP server of the folder (docs/mcp.md), after starting those that may start without a question;
 * `problems`: lines about the configuration files (a file that is not JSON, an entry left out).
 */
export interface McpStatusResult {
  servers: McpServerWire[];
  problems: string[];
}
