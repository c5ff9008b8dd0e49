/**
 * The Agent view (a webview view in its own activity bar container): the current session as the
 * server reports it, with an input box for follow-ups, "New session" and a session picker.
 *
 * The extension keeps the state (`state.ts`), fed by the server's notifications and a few requests
 * (`agent.proposal` after a run or a change of the proposal, `agent.context` after a run,
 * `agent.sessionHistory` when a stored session is resumed); the
 * webview renders it and forwards the user's actions (`messages.ts`), which become server commands:
 * `agent.run {task, sessionId, mode, checks}` (through `RunTracker.launch`, so the run gets its progress
 * notification and end notification as from the palette; "Approve plan" is `agent.run {sessionId,
 * task: "Implement the approved plan.", mode: "default"}`), `agent.applyProposal` /
 * `agent.discardProposal`, `agent.cancel`, `agent.listSessions`. Nothing of the agent runs here.
 *
 * Events of a session the view does not show yet are kept (bounded) until that session's run is
 * launched, because `agent.run`'s answer, which names the session, comes after its first events.
 */

import { randomBytes } from 'node:crypto';

import * as vscode from 'vscode';

import { errorText } from '../commands';
import {
  type AgentEventNotification,
  type ApplyProposalResult,
  CMD_APPLY_PROPOSAL,
  CMD_CONTEXT,
  CMD_DISCARD_PROPOSAL,
  CMD_LIST_SESSIONS,
  CMD_PROPOSAL,
  CMD_RUN,
  CMD_SESSION_HISTORY,
  CMD_TRACE_HTML,
  type ContextResult,
  type DiscardProposalResult,
  type ListSessionsResult,
  type ProposalFilesParams,
  type ProposalResult,
  type RunMode,
  type RunParams,
  type SessionHistoryParams,
  type SessionHistoryResult,
  type SessionSummary,
  type TraceHtmlResult,
} from '../protocol';
import type { ProposalActions } from '../proposals';
import type { RunTracker } from '../runs';
import type { AgentServer } from '../server';
import { pageHtml } from './html';
import type { ViewActionName } from './markup';
import { type FromWebview, parseFromWebview, type ToWebview } from './messages';
import { IMPLEMENT_PLAN_TASK } from './outcome';
import { EMPTY_STATE, reduce, type ViewAction, type ViewState } from './state';

/** The view's id in package.json (`contributes.views.agentLs`). */
export const SESSION_VIEW_ID = 'agentLs.sessionView';

/** Sessions whose early events are kept, and events per session. */
const EARLY_SESSIONS = 4;
const EARLY_EVENTS = 5000;
const POST_DELAY_MS = 40;
const PROPOSAL_DELAY_MS = 300;

interface SessionPick extends vscode.QuickPickItem {
  session: SessionSummary;
}

export class SessionViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private state: ViewState = EMPTY_STATE;
  private view: vscode.WebviewView | undefined;
  private readonly early = new Map<string, ViewAction[]>();
  private readonly disposables: vscode.Disposable[] = [];
  private postTimer: ReturnType<typeof setTimeout> | undefined;
  private proposalTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: AgentServer,
    private readonly runs: RunTracker,
    private readonly proposals: ProposalActions,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      server.onAgentEvent((event) => this.agentEvent(event)),
      server.onRunEnded((ended) => {
        this.dispatch({ type: 'runEnded', ended });
        if (ended.sessionId === this.state.sessionId) {
          void this.refreshProposal();
          void this.refreshContext();
        }
      }),
      server.onTodos((todos) => this.dispatch({ type: 'todos', sessionId: todos.sessionId, todos: todos.todos })),
      server.onStopped(() => {
        this.early.clear();
        this.dispatch({ type: 'serverStopped' });
      }),
      runs.onLaunched(({ sessionId, task, mode }) => this.launched(sessionId, task, mode)),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const root = vscode.Uri.joinPath(this.extensionUri, 'out', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [root] };
    view.webview.html = pageHtml({
      cspSource: view.webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(root, 'view.css')).toString(),
    });
    this.disposables.push(
      view.webview.onDidReceiveMessage((message: unknown) => {
        const parsed = parseFromWebview(message);
        if (parsed) {
          void this.received(parsed);
        }
      }),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
    );
  }

  /** Shows the view without taking the keyboard focus from the editor (a run from the palette). */
  async reveal(): Promise<void> {
    if (this.view) {
      if (!this.view.visible) {
        this.view.show(true);
      }
      return;
    }
    // The first time the view is opened there is no way to open it without focusing it: give the
    // keyboard back to the editor group, as the palette left it.
    const hadEditor = vscode.window.activeTextEditor !== undefined;
    await vscode.commands.executeCommand(`${SESSION_VIEW_ID}.focus`);
    if (hadEditor) {
      await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    }
  }

  dispose(): void {
    clearTimeout(this.postTimer);
    clearTimeout(this.proposalTimer);
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private dispatch(action: ViewAction): void {
    const next = reduce(this.state, action);
    if (next !== this.state) {
      this.state = next;
      this.schedulePost();
    }
  }

  private agentEvent(event: AgentEventNotification): void {
    if (event.sessionId === this.state.sessionId) {
      this.dispatch({ type: 'event', event });
      if (event.kind === 'proposalChanged' && !event.subagent) {
        clearTimeout(this.proposalTimer);
        this.proposalTimer = setTimeout(() => void this.refreshProposal(), PROPOSAL_DELAY_MS);
      }
      return;
    }
    let kept = this.early.get(event.sessionId);
    if (!kept) {
      kept = [];
      this.early.set(event.sessionId, kept);
      for (const old of [...this.early.keys()].slice(0, Math.max(0, this.early.size - EARLY_SESSIONS))) {
        this.early.delete(old);
      }
    }
    if (kept.length < EARLY_EVENTS) {
      kept.push({ type: 'event', event });
    }
  }

  private launched(sessionId: string, task: string, mode: 'plan' | undefined): void {
    const switching = sessionId !== this.state.sessionId;
    this.dispatch({ type: 'runLaunched', sessionId, task, ...(mode ? { mode } : {}) });
    for (const action of this.early.get(sessionId) ?? []) {
      this.dispatch(action);
    }
    this.early.delete(sessionId);
    if (switching) {
      void this.refreshProposal();
    }
    void this.reveal();
  }

  private schedulePost(): void {
    if (this.postTimer !== undefined) {
      return;
    }
    this.postTimer = setTimeout(() => {
      this.postTimer = undefined;
      this.post({ type: 'state', state: this.state });
    }, POST_DELAY_MS);
  }

  private post(message: ToWebview): void {
    void this.view?.webview.postMessage(message);
  }

  private async received(message: FromWebview): Promise<void> {
    try {
      switch (message.type) {
        case 'ready':
          this.post({ type: 'state', state: this.state });
          return;
        case 'send':
          await this.send(message.text, message.mode, message.checks);
          return;
        case 'approvePlan':
          await this.approvePlan(message.checks);
          return;
        case 'newSession':
          this.dispatch({ type: 'newSession' });
          this.post({ type: 'focusInput' });
          return;
        case 'pickSession':
          await this.pickSession();
          return;
        case 'action':
          await this.action(message.action, message.uri);
          return;
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent: ${errorText(error)}`);
    }
  }

  /**
   * The input box: a follow-up in the view's session, or the first task of a new one; `mode` `plan`
   * for a plan run (the mode switch, or "Revise" on a plan), `checks` the typed acceptance checks.
   */
  private async send(task: string, mode: RunMode | undefined, checks: string[] | undefined): Promise<void> {
    if (this.state.running) {
      void vscode.window.showInformationMessage('Agent: a run of this session is in progress; cancel it or wait for it to end.');
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const params: RunParams = {
      task,
      ...(this.state.sessionId ? { sessionId: this.state.sessionId } : {}),
      ...(editor?.document.uri.scheme === 'file' ? { uri: editor.document.uri.toString() } : {}),
      ...(mode === 'plan' ? { mode } : {}),
      ...(checks?.length ? { checks } : {}),
    };
    await this.runs.launch({ command: CMD_RUN, params, label: task });
  }

  /**
   * "Approve plan": an implementation run in the same session (`agent.run {sessionId, task, mode:
   * "default"}`); the server gives it the approved plan, which the session holds.
   */
  private async approvePlan(checks: string[] | undefined): Promise<void> {
    const sessionId = this.state.sessionId;
    const last = this.state.runs[this.state.runs.length - 1];
    if (!sessionId || !last?.plan) {
      return;
    }
    if (this.state.running) {
      void vscode.window.showInformationMessage('Agent: a run of this session is in progress; cancel it or wait for it to end.');
      return;
    }
    const params: RunParams = { task: IMPLEMENT_PLAN_TASK, sessionId, mode: 'default', ...(checks?.length ? { checks } : {}) };
    await this.runs.launch({ command: CMD_RUN, params, label: IMPLEMENT_PLAN_TASK });
  }

  private async pickSession(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const listed = await this.server.execute<ListSessionsResult>(CMD_LIST_SESSIONS, folder ? { uri: folder.uri.toString() } : {});
    if (!listed) {
      return;
    }
    if (listed.sessions.length === 0) {
      void vscode.window.showInformationMessage('Agent: no stored session in this workspace yet.');
      return;
    }
    const picks: SessionPick[] = listed.sessions.map((session) => ({
      label: session.title || '(no task)',
      description: `${session.runs} ${session.runs === 1 ? 'run' : 'runs'} · ${session.status} · ${session.updatedAt.replace('T', ' ').slice(0, 16)}`,
      ...(session.pendingFiles.length ? { detail: `pending: ${session.pendingFiles.join(', ')}` } : {}),
      session,
    }));
    const picked = await vscode.window.showQuickPick(picks, {
      title: 'Agent: Resume a Session',
      placeHolder: 'Choose a session; the next task continues it',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) {
      return;
    }
    this.dispatch({ type: 'resumed', session: picked.session });
    this.post({ type: 'focusInput' });
    await Promise.all([this.loadHistory(picked.session.sessionId), this.refreshProposal(), this.refreshContext()]);
  }

  private async action(action: ViewActionName, uri: string | undefined): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId) {
      return;
    }
    const file = uri ? this.state.proposal.find((candidate) => candidate.uri === uri) : undefined;
    switch (action) {
      case 'review':
        await (file ? this.proposals.showFile(sessionId, file.path) : this.proposals.show(sessionId));
        return;
      case 'apply':
        if (file) {
          await this.applyFiles(sessionId, [file.uri]);
        } else {
          await this.proposals.apply(sessionId);
        }
        await this.refreshProposal();
        return;
      case 'discard':
        if (file) {
          await this.discardFiles(sessionId, [file.uri]);
        } else {
          await this.proposals.discard(sessionId);
        }
        await this.refreshProposal();
        return;
      case 'refreshContext':
        await this.refreshContext();
        return;
      case 'cancel':
        await this.runs.cancelSession(sessionId);
        return;
      case 'trace':
        await this.openTrace(sessionId);
        return;
    }
  }

  /**
   * The session's trace page (`agent.traceHtml`, the page `agent-ls trace html` writes) in an editor
   * panel without scripts: the page has none, is inert, and loads nothing (docs/sessions.md).
   */
  private async openTrace(sessionId: string): Promise<void> {
    const page = await this.server.execute<TraceHtmlResult>(CMD_TRACE_HTML, { sessionId } satisfies SessionHistoryParams);
    if (!page) {
      return;
    }
    const title = `Agent trace ${sessionId.slice(0, 8)}`;
    const options = { enableScripts: false, enableForms: false, localResourceRoots: [] };
    const panel = vscode.window.createWebviewPanel('agentLs.trace', title, vscode.ViewColumn.Active, options);
    panel.webview.html = page.html;
  }

  private async applyFiles(sessionId: string, files: string[]): Promise<void> {
    const params: ProposalFilesParams = { sessionId, files };
    const result = await this.server.execute<ApplyProposalResult>(CMD_APPLY_PROPOSAL, params);
    if (result?.applied) {
      void vscode.window.showInformationMessage(`Agent: ${result.message ?? 'applied the file'}.`);
    } else if (result) {
      const reason = (result.failureReason ?? 'the editor did not apply the edit').replace(/\.$/, '');
      void vscode.window.showWarningMessage(`Agent: not applied: ${reason}.`);
    }
  }

  private async discardFiles(sessionId: string, files: string[]): Promise<void> {
    const params: ProposalFilesParams = { sessionId, files };
    await this.server.execute<DiscardProposalResult>(CMD_DISCARD_PROPOSAL, params);
  }

  /** The resumed session's earlier runs (`agent.sessionHistory`); without them the view still works. */
  private async loadHistory(sessionId: string): Promise<void> {
    try {
      const params: SessionHistoryParams = { sessionId };
      const result = await this.server.execute<SessionHistoryResult>(CMD_SESSION_HISTORY, params);
      if (result) {
        this.dispatch({ type: 'history', sessionId, runs: result.runs, todos: result.todos });
      }
    } catch (error) {
      this.log.warn(`The Agent view could not read the history of ${sessionId}: ${errorText(error)}`);
    }
  }

  private async refreshProposal(): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId) {
      return;
    }
    try {
      const result = await this.server.execute<ProposalResult>(CMD_PROPOSAL, { sessionId });
      if (result) {
        this.dispatch({ type: 'proposal', sessionId, files: result.files });
      }
    } catch (error) {
      this.log.warn(`The Agent view could not read the proposal of ${sessionId}: ${errorText(error)}`);
    }
  }

  private async refreshContext(): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId || this.state.running) {
      return;
    }
    try {
      const context = await this.server.execute<ContextResult>(CMD_CONTEXT, { sessionId });
      if (context) {
        this.dispatch({ type: 'context', sessionId, context });
      }
    } catch (error) {
      this.log.warn(`The Agent view could not measure the context of ${sessionId}: ${errorText(error)}`);
    }
  }
}
