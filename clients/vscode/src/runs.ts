/**
 * Runs as the user sees them: a cancellable progress notification per run, the status bar item,
 * and the notification when a run ends.
 *
 * A run is known from `agent.run`'s answer (`{sessionId, progressToken}`). Its notification shows
 * the server's `$/progress` messages for that token and closes on `agent/runEnded`; its Cancel
 * button sends `agent.cancel`. Messages can arrive before `agent.run`'s answer is handled (the
 * server creates the token first), so progress text and an early `agent/runEnded` are kept until
 * the run is known.
 */

import * as vscode from 'vscode';

import type { RunRequest } from './commandRouting';
import {
  type AgentEventNotification,
  type CancelResult,
  CMD_CANCEL,
  type RunEndedNotification,
  type RunResult,
  type TodosNotification,
} from './protocol';
import type { ProposalActions } from './proposals';
import { APPLY, DISCARD, REVIEW, runEndedView, SHOW_ANSWER, SHOW_PLAN, SHOW_TRANSCRIPT } from './runOutcome';
import { taskLabel } from './runArgs';
import type { AgentServer, ProgressValue } from './server';
import { modelSetting, SECTION } from './settings';
import { type StatusState, statusView, streamTail, todoLine, usageLine } from './status';

export const ANSWER_SCHEME = 'agent-ls-answer';
const EARLY_LIMIT = 20;

interface Run {
  sessionId: string;
  token: string;
  task: string;
  ended: boolean;
  message?: string;
  usageText?: string;
  /** The todo item in progress (`agent/todos`), as the status bar shows it. */
  todo?: string;
  /** The answer streamed so far in this turn (textDelta), shown live in the progress notification. */
  streamed?: string;
  progress?: vscode.Progress<{ message?: string }>;
  closeNotification?: () => void;
}

/** The model's final answers, as read-only markdown documents ("Show Answer"). */
export class AnswerDocuments implements vscode.TextDocumentContentProvider {
  private readonly answers = new Map<string, string>();

  set(sessionId: string, answer: string): vscode.Uri {
    this.answers.set(sessionId, answer);
    return vscode.Uri.from({ scheme: ANSWER_SCHEME, path: `/answer-${sessionId}.md` });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const sessionId = uri.path.replace(/^\/answer-/, '').replace(/\.md$/, '');
    return this.answers.get(sessionId) ?? '';
  }
}

export class RunTracker implements vscode.Disposable {
  /** Runs in progress, by session id, in the order they started. */
  private readonly runs = new Map<string, Run>();
  private readonly tokenMessages = new Map<string, string>();
  private readonly earlyEnds = new Map<string, RunEndedNotification>();
  private readonly item: vscode.StatusBarItem;
  private status: StatusState;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly launchedRun = new vscode.EventEmitter<{ sessionId: string; task: string; mode?: 'plan' }>();
  /** A run was started from this window (palette, code action, the Agent view): the Agent view shows it. */
  readonly onLaunched = this.launchedRun.event;
  /** The session whose proposal the Show / Apply / Discard commands act on. */
  private proposalSession: string | undefined;
  private lastSession: string | undefined;

  constructor(
    private readonly server: AgentServer,
    private readonly proposals: () => ProposalActions,
    private readonly answers: AnswerDocuments,
    private readonly invalidateProposal: (sessionId?: string) => void,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.item = vscode.window.createStatusBarItem('agentLs.status', vscode.StatusBarAlignment.Left, 0);
    this.item.name = 'Agent';
    this.item.command = 'agentLs.showTranscript';
    this.status = { model: this.configuredModel(), server: server.currentState };
    this.render();
    this.item.show();
    this.disposables.push(
      this.item,
      this.launchedRun,
      server.onProgress(({ token, value }) => this.progressed(token, value)),
      server.onAgentEvent((event) => this.event(event)),
      server.onRunEnded((ended) => this.ended(ended)),
      server.onTodos((todos) => this.todosChanged(todos)),
      server.onStateChanged((state) => this.update({ server: state })),
      server.onStopped(() => this.serverStopped()),
    );
  }

  /**
   * Starts a run (`agent.run` or `agent.runSkill`) and shows it: from the palette and from code
   * actions alike (`commandRouting.ts`).
   *
   * @returns the server's answer, or undefined when the server could not start (already reported).
   * @throws the server's error.
   */
  async launch(request: RunRequest): Promise<RunResult | undefined> {
    const result = await this.server.execute<RunResult>(request.command, request.params);
    if (result) {
      this.start(result, request.label, request.params.mode === 'plan' ? 'plan' : undefined);
    }
    return result;
  }

  /** Shows a run started by `agent.run` or `agent.runSkill`; `mode` `plan` for a plan run. */
  start(result: RunResult, task: string, mode?: 'plan'): void {
    const run: Run = { sessionId: result.sessionId, token: result.progressToken, task, ended: false };
    run.message = this.tokenMessages.get(run.token);
    this.tokenMessages.delete(run.token);
    this.runs.set(run.sessionId, run);
    this.lastSession = run.sessionId;
    this.update({ running: { task } });
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Agent: ${taskLabel(task)}`, cancellable: true },
      (progress, cancellation) => {
        run.progress = progress;
        if (run.message) {
          progress.report({ message: run.message });
        }
        cancellation.onCancellationRequested(() => void this.cancelRun(run));
        return new Promise<void>((resolve) => {
          run.closeNotification = resolve;
          if (run.ended) {
            resolve();
          }
        });
      },
    );
    this.launchedRun.fire({ sessionId: run.sessionId, task, ...(mode ? { mode } : {}) });
    const early = this.earlyEnds.get(run.sessionId);
    if (early) {
      this.earlyEnds.delete(run.sessionId);
      this.ended(early);
    }
  }

  /** "Agent: Cancel": the most recent run in progress. */
  async cancelCurrent(): Promise<void> {
    const run = [...this.runs.values()].pop();
    if (!run) {
      void vscode.window.showInformationMessage('Agent: no run is in progress.');
      return;
    }
    await this.cancelRun(run);
  }

  /** Cancels the session's run, when one is in progress (the Agent view's Cancel). */
  async cancelSession(sessionId: string): Promise<void> {
    const run = this.runs.get(sessionId);
    if (run) {
      await this.cancelRun(run);
    }
  }

  /** The session Show / Apply / Discard act on: the last one with a proposal, else the last run. */
  proposalTarget(): string | undefined {
    return this.proposalSession ?? this.lastSession;
  }

  /** The session of the latest run started from this window ("Agent: Show Context"), if any. */
  latestSession(): string | undefined {
    return this.lastSession;
  }

  /** The session's proposal was applied or discarded. */
  proposalSettled(sessionId: string): void {
    if (this.proposalSession === sessionId) {
      this.proposalSession = undefined;
    }
  }

  refreshModel(): void {
    this.update({ model: this.configuredModel() });
  }

  dispose(): void {
    for (const run of this.runs.values()) {
      run.closeNotification?.();
    }
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private async cancelRun(run: Run): Promise<void> {
    try {
      const result = await this.server.execute<CancelResult>(CMD_CANCEL, { sessionId: run.sessionId });
      if (result && !result.cancelled) {
        this.log.info(`Cancel: the run ${run.sessionId} had already ended.`);
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent: could not cancel: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private runByToken(token: string): Run | undefined {
    return [...this.runs.values()].find((run) => run.token === token);
  }

  private progressed(token: string, value: ProgressValue): void {
    const run = this.runByToken(token);
    if (value.kind === 'end') {
      this.tokenMessages.delete(token);
      run?.closeNotification?.();
      return;
    }
    const message = value.message;
    if (!message) {
      return;
    }
    if (!run) {
      this.tokenMessages.set(token, message);
      return;
    }
    run.message = message;
    run.progress?.report({ message });
  }

  private todosChanged(notification: TodosNotification): void {
    const run = this.runs.get(notification.sessionId);
    if (!run) {
      return;
    }
    run.todo = todoLine(notification.todos);
    this.update({ running: runningState(run) });
  }

  private event(event: AgentEventNotification): void {
    if (event.subagent) {
      return; // a subagent's own text and usage are not the run's; its steps come as $/progress
    }
    if (event.kind === 'proposalChanged') {
      this.proposalSession = event.sessionId;
      this.invalidateProposal(event.sessionId);
    }
    const run = this.runs.get(event.sessionId);
    if (event.kind === 'runStarted' && event.model && !this.configuredModel()?.trim()) {
      this.update({ model: event.model }); // the model came from the server's environment
    }
    if (event.kind === 'runStarted') {
      this.update({ unsandboxed: event.unsandboxed ?? undefined });
      if (event.unsandboxed) {
        this.log.warn(`agent-ls: ${event.unsandboxed}`);
      }
    }
    if (run && event.kind === 'textDelta' && event.text) {
      run.streamed = streamTail((run.streamed ?? '') + event.text);
      run.progress?.report({ message: run.streamed });
    }
    if (run && (event.kind === 'turnStarted' || (event.kind === 'retrying' && event.partial))) {
      run.streamed = undefined; // a new turn, or the failed attempt's text is void
    }
    const usageText = event.usage ? usageLine(event.usage) : event.text;
    if (event.kind === 'usage' && run && usageText) {
      run.usageText = usageText;
      this.update({ running: runningState(run) });
    }
  }

  private ended(ended: RunEndedNotification): void {
    const hasChanges = ended.proposal.files.length > 0;
    if (hasChanges) {
      this.proposalSession = ended.sessionId;
    } else if (this.proposalSession === ended.sessionId) {
      this.proposalSession = undefined;
    }
    this.invalidateProposal(ended.sessionId);
    const run = this.runs.get(ended.sessionId);
    if (!run) {
      // Not started from this window yet (agent.run's answer may still be on its way): keep it.
      this.earlyEnds.set(ended.sessionId, ended);
      for (const key of [...this.earlyEnds.keys()].slice(0, Math.max(0, this.earlyEnds.size - EARLY_LIMIT))) {
        this.earlyEnds.delete(key);
      }
      return;
    }
    run.ended = true;
    run.closeNotification?.();
    this.runs.delete(run.sessionId);
    const next = [...this.runs.values()].pop();
    this.update({
      running: next ? runningState(next) : undefined,
      last: { status: ended.status, usage: ended.usage },
    });
    void this.notifyEnded(ended);
  }

  private async notifyEnded(ended: RunEndedNotification): Promise<void> {
    const view = runEndedView(ended);
    if (!view) {
      return;
    }
    const show =
      view.severity === 'error'
        ? vscode.window.showErrorMessage
        : view.severity === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const picked = await show(view.message, ...view.actions);
    const proposals = this.proposals();
    switch (picked) {
      case REVIEW:
        await proposals.show(ended.sessionId);
        break;
      case APPLY:
        await proposals.apply(ended.sessionId);
        break;
      case DISCARD:
        await proposals.discard(ended.sessionId);
        break;
      case SHOW_ANSWER: {
        const document = await vscode.workspace.openTextDocument(this.answers.set(ended.sessionId, ended.answer));
        await vscode.window.showTextDocument(document, { preview: true });
        break;
      }
      case SHOW_TRANSCRIPT:
        this.log.show(true);
        break;
      case SHOW_PLAN:
        await vscode.commands.executeCommand('agentLs.sessionView.focus');
        break;
      case undefined:
        break;
    }
  }

  private serverStopped(): void {
    for (const run of this.runs.values()) {
      run.ended = true;
      run.closeNotification?.();
    }
    this.runs.clear();
    this.tokenMessages.clear();
    this.earlyEnds.clear();
    this.proposalSession = undefined;
    this.lastSession = undefined;
    this.invalidateProposal();
    this.update({ running: undefined });
  }

  private configuredModel(): string | undefined {
    const config = vscode.workspace.getConfiguration(SECTION);
    const { value } = modelSetting(config.inspect('model'), config.get('model'));
    return typeof value === 'string' ? value : undefined;
  }

  private update(change: Partial<StatusState>): void {
    this.status = { ...this.status, ...change };
    this.render();
  }

  private render(): void {
    const view = statusView(this.status);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
  }
}

function runningState(run: Run): NonNullable<StatusState['running']> {
  return { task: run.task, ...(run.usageText ? { usageText: run.usageText } : {}), ...(run.todo ? { todo: run.todo } : {}) };
}
