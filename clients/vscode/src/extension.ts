/**
 * Entry point: wires the server, the run display, the Agent view, the proposal documents and the commands.
 *
 * Activation starts the server: when the window has finished starting (`onStartupFinished`, so that
 * the server's code actions and its lint of AGENTS.md / SKILL.md are there without running a command
 * first; never in Restricted Mode), or on any Agent command. Settings that pick the process
 * (`agentLs.pythonPath`, the stored API key, the Python extension's interpreter) restart it,
 * debounced, and so does clearing a setting (the server cannot be told "unset"); other changes reach
 * the running server through `workspace/didChangeConfiguration`, so a run in progress and its
 * proposal survive them.
 */

import * as vscode from 'vscode';

import { routeServerCommand } from './commandRouting';
import { errorText, registerCommands } from './commands';
import { CONTEXT_SCHEME } from './contextView';
import { Debouncer } from './debounce';
import { showOnFirstStart } from './firstStart';
import { INSTRUCTIONS_SCHEME } from './instructionsView';
import { PROPOSAL_SCHEME } from './proposalUri';
import { ProposalActions, ProposalDocuments } from './proposals';
import { onInterpreterChanged } from './python';
import { ANSWER_SCHEME, AnswerDocuments, RunTracker } from './runs';
import { AgentServer, API_KEY_SECRET } from './server';
import { SESSION_VIEW_ID, SessionViewProvider } from './sessionView/provider';
import { RESTART_SETTINGS, SECTION } from './settings';
import { ReadOnlyDocuments } from './textDocuments';

const RESTART_DELAY_MS = 1000;

let server: AgentServer | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('agent-ls', { log: true });
  const agentServer = new AgentServer(context.secrets, log);
  server = agentServer;
  const documents = new ProposalDocuments(agentServer);
  const answers = new AnswerDocuments();
  const runs: RunTracker = new RunTracker(
    agentServer,
    () => proposals,
    answers,
    (sessionId) => documents.invalidate(sessionId),
    log,
  );
  const proposals = new ProposalActions(agentServer, documents, (sessionId) => runs.proposalSettled(sessionId));
  const sessionView = new SessionViewProvider(context.extensionUri, agentServer, runs, proposals, log);
  const instructions = new ReadOnlyDocuments(INSTRUCTIONS_SCHEME);
  const contextDocuments = new ReadOnlyDocuments(CONTEXT_SCHEME);
  // Code actions' agent.run / agent.runSkill get the palette's progress, Cancel and Review / Apply.
  agentServer.routeCommands(
    routeServerCommand(
      (request) => runs.launch(request),
      (error) => void vscode.window.showErrorMessage(`Agent: ${errorText(error)}`),
    ),
  );

  const restart = new Debouncer(() => {
    if (agentServer.currentState !== 'stopped') {
      log.info('Restarting the server for the new settings.');
      void agentServer.restart();
    }
  }, RESTART_DELAY_MS);

  context.subscriptions.push(
    log,
    agentServer,
    documents,
    runs,
    sessionView,
    vscode.window.registerWebviewViewProvider(SESSION_VIEW_ID, sessionView),
    { dispose: () => restart.dispose() },
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, documents),
    vscode.workspace.registerTextDocumentContentProvider(ANSWER_SCHEME, answers),
    instructions,
    vscode.workspace.registerTextDocumentContentProvider(INSTRUCTIONS_SCHEME, instructions),
    contextDocuments,
    vscode.workspace.registerTextDocumentContentProvider(CONTEXT_SCHEME, contextDocuments),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      runs.refreshModel();
      if (RESTART_SETTINGS.some((key) => event.affectsConfiguration(key)) || !agentServer.notifySettings()) {
        restart.trigger();
      }
    }),
    context.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET) {
        restart.trigger();
      }
    }),
  );
  registerCommands(context, { server: agentServer, runs, proposals, secrets: context.secrets, log, documents: instructions, contextDocuments });

  void onInterpreterChanged(() => {
    if (!vscode.workspace.getConfiguration(SECTION).get<string>('pythonPath')?.trim()) {
      restart.trigger();
    }
  }).then((disposable) => disposable && context.subscriptions.push(disposable));

  showOnFirstStart(context, agentServer, log); // once per workspace: the model and sandbox in use
  void agentServer.ensureStarted();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
