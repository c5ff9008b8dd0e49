/**
 * The agent-ls server process and its language client: start, stop, restart, and the few LSP
 * messages the extension handles itself.
 *
 * Start, in order: pick the interpreter (`launch.ts`), read the API key from SecretStorage, spawn
 * `<python> bundled/tool/launch_server.py serve` with the key handed over on a pipe (`launch.ts`), initialize with
 * `{agentLs: {...}}`, then take over `window/workDoneProgress/create` (see below). A start that fails
 * or a server that dies is reported once, with the reason read from its exit code and stderr and a
 * "Show log" button; it is not restarted behind the user's back (the next command, or
 * "Agent: Restart Server", starts it again).
 *
 * Messages handled here rather than by vscode-languageclient's defaults:
 * - `window/showMessageRequest`: a modal dialog (`messageRequest.ts`), because a run waits on it;
 * - `window/workDoneProgress/create`: the default shows server progress in the status bar only,
 *   without Cancel; here every `$/progress` value is forwarded to `onProgress` instead, and
 *   `runs.ts` shows it as a cancellable notification. The create request can arrive before
 *   `agent.run`'s answer, so the token is accepted first and matched to its run later.
 * - `agent/event`, `agent/runEnded` and `agent/todos`, forwarded as events;
 * - the editor's problems: sent with `agent/didChangeProblems`, and `agent/problemsOfText` answered
 *   (`problems.ts`; `initializationOptions.problemsOfText` says so);
 * - `agent.run` / `agent.runSkill` run by VS Code itself (code actions): through `routeCommands`.
 */

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';

import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  type MessageActionItem,
  MessageType,
  NotificationType,
  RevealOutputChannelOn,
  ShowMessageRequest,
  type ShowMessageRequestParams,
  WorkDoneProgress,
  type WorkDoneProgressBegin,
  WorkDoneProgressCreateRequest,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageclient/node';

import { choosePython, crashMessage, serverArgs, serverLaunch, startFailureMessage } from './launch';
import { type CommandRoute, unsupportedCommand } from './commandRouting';
import { answerFor, DENY_WITH_FEEDBACK, modalText, withFeedbackAction } from './messageRequest';
import { forwardProblems, PROBLEMS_OF_TEXT_OPTION } from './problems';
import {
  AGENT_EVENT,
  AGENT_RUN_ENDED,
  AGENT_TODOS,
  type AgentEventNotification,
  type RunEndedNotification,
  type TodosNotification,
} from './protocol';
import { selectedInterpreter } from './python';
import { ServerProcess } from './serverProcess';
import { clearsValue, modelSetting, SECTION, type ServerSettings, serverSettings } from './settings';
import type { ServerState } from './status';

/** The SecretStorage key of the API key. */
export const API_KEY_SECRET = 'agentLs.apiKey';

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

const SHOW_LOG = 'Show log';
const OPEN_SETTINGS = 'Open Settings';
const RESTART = 'Restart Server';

/**
 * vscode-languageclient adds its own generic notification when a start fails ("couldn't create
 * connection to server"); this extension shows one message with the reason instead. Everything is
 * still written to the log.
 */
class AgentLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, showNotification === 'force' ? false : showNotification);
  }
}

async function askModal(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
  const { message, detail } = modalText(params.message);
  const options: vscode.MessageOptions = detail ? { modal: true, detail } : { modal: true };
  // The refusing answer closes the dialog, so VS Code adds no second "Cancel" that means the same.
  const actions = withFeedbackAction(params.actions ?? []).map((action) =>
    REFUSALS.has(action.title) ? { ...action, isCloseAffordance: true } : action,
  );
  const show =
    params.type === MessageType.Error
      ? vscode.window.showErrorMessage
      : params.type === MessageType.Warning
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const chosen = await show(message, options, ...actions);
  if (!chosen) {
    return null;
  }
  const feedback =
    chosen.title === DENY_WITH_FEEDBACK
      ? await vscode.window.showInputBox({
          title: 'Deny with feedback',
          prompt: 'What should the agent do instead? It reads this.',
          ignoreFocusOut: true,
        })
      : undefined;
  return answerFor(chosen.title, feedback);
}

/** Action titles that refuse (the server's "Deny" and "Discard"). */
const REFUSALS = new Set(['Deny', 'Discard']);

function workspaceCwd(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return folder?.scheme === 'file' && existsSync(folder.fsPath) ? folder.fsPath : undefined;
}

export class AgentServer implements vscode.Disposable {
  private client: AgentLanguageClient | undefined;
  private process: ServerProcess | undefined;
  private state: ServerState = 'stopped';
  /** Lifecycle operations (start, stop, restart) run one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly progressHandlers = new Map<string, vscode.Disposable>();
  /** What the running server was last sent (initializationOptions or didChangeConfiguration). */
  private sentSettings: ServerSettings | undefined;
  private commandRoute: CommandRoute | undefined;
  /** Forwards the editor's problems to the running server (`problems.ts`). */
  private problemForwarding: vscode.Disposable | undefined;

  private readonly agentEvent = new vscode.EventEmitter<AgentEventNotification>();
  private readonly runEnded = new vscode.EventEmitter<RunEndedNotification>();
  private readonly todos = new vscode.EventEmitter<TodosNotification>();
  private readonly progress = new vscode.EventEmitter<{ token: string; value: ProgressValue }>();
  private readonly stateChanged = new vscode.EventEmitter<ServerState>();
  private readonly stopped = new vscode.EventEmitter<void>();

  readonly onAgentEvent = this.agentEvent.event;
  readonly onRunEnded = this.runEnded.event;
  readonly onTodos = this.todos.event;
  readonly onProgress = this.progress.event;
  readonly onStateChanged = this.stateChanged.event;
  /** The server went away (restart, crash, shutdown): its runs and proposals are gone. */
  readonly onStopped = this.stopped.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get currentState(): ServerState {
    return this.state;
  }

  /** The running client, starting the server first when needed; undefined when it could not start (the user was told). */
  async ensureStarted(): Promise<LanguageClient | undefined> {
    if (this.client && this.state === 'running') {
      return this.client;
    }
    return this.serial(() => (this.client && this.state === 'running' ? Promise.resolve(this.client) : this.start()));
  }

  async restart(): Promise<LanguageClient | undefined> {
    return this.serial(async () => {
      await this.stopNow();
      return this.start();
    });
  }

  async stop(): Promise<void> {
    await this.serial(() => this.stopNow());
  }

  /**
   * Runs a server command (`workspace/executeCommand` with one argument object).
   *
   * @returns the server's result, or undefined when the server could not start (already reported).
   * @throws the server's error (a `ResponseError` whose message is meant for the user).
   */
  async execute<R>(command: string, argument: object): Promise<R | undefined> {
    const client = await this.ensureStarted();
    if (!client) {
      return undefined;
    }
    const unsupported = unsupportedCommand(client.initializeResult?.capabilities.executeCommandProvider?.commands, command);
    if (unsupported) {
      throw new Error(unsupported);
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] })) as R;
  }

  /**
   * Installs the client's `middleware.executeCommand` (see `commandRouting.ts`): server commands VS
   * Code runs itself, as code actions do, go through `route`. Takes effect at once.
   */
  routeCommands(route: CommandRoute): void {
    this.commandRoute = route;
  }

  /**
   * Sends the current `agentLs` settings to a running server (workspace/didChangeConfiguration).
   *
   * @returns false when the change cannot be sent (a value was cleared, see `settings.ts`): the
   *   caller restarts the server instead.
   */
  notifySettings(): boolean {
    const client = this.client;
    if (!client || this.state !== 'running') {
      return true;
    }
    const settings = this.readSettings();
    if (clearsValue(this.sentSettings, settings.agentLs)) {
      return false;
    }
    this.sentSettings = settings.agentLs;
    client
      .sendNotification(DidChangeConfigurationNotification.type, { settings })
      .catch((error: unknown) => this.log.warn(`Could not send the settings to the server: ${String(error)}`));
    return true;
  }

  /** The settings for the server, with a workspace's `replay:` model left out (`modelSetting`). */
  private readSettings(): { agentLs: ServerSettings } {
    const config = vscode.workspace.getConfiguration(SECTION);
    return serverSettings((key) => {
      if (key !== 'model') {
        return config.get(key);
      }
      const model = modelSetting(config.inspect('model'), config.get('model'));
      if (model.ignored) {
        this.log.warn(model.ignored);
        void vscode.window.showWarningMessage(`Agent: ${model.ignored}`);
      }
      return model.value;
    });
  }

  dispose(): void {
    void this.stop();
    for (const emitter of [this.agentEvent, this.runEnded, this.todos, this.progress, this.stateChanged, this.stopped]) {
      emitter.dispose();
    }
  }

  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.queue.then(operation, operation);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateChanged.fire(state);
  }

  private async start(): Promise<AgentLanguageClient | undefined> {
    this.setState('starting');
    const config = vscode.workspace.getConfiguration(SECTION);
    const configured = config.get<string>('pythonPath');
    const fromExtension = configured?.trim() ? undefined : await selectedInterpreter(this.log);
    const python = choosePython(configured, fromExtension, process.platform, homedir());
    const apiKey = await this.secrets.get(API_KEY_SECRET);
    const launch = serverLaunch(process.env, apiKey, process.platform);
    const cwd = workspaceCwd();
    // The bundle's out/extension.js runs from <extension>/out.
    const args = serverArgs(dirname(__dirname));
    const serverProcess = new ServerProcess(python, args);
    const initialSettings = this.readSettings();
    this.sentSettings = initialSettings.agentLs;
    this.log.info(
      `Starting the server: ${python.command} ${args.join(' ')} (interpreter from ${python.source}; ` +
        `API key ${apiKey ? 'from Agent: Set API Key' : 'not stored, the server reads its environment'})`,
    );
    const client: AgentLanguageClient = new AgentLanguageClient(
      'agent-ls',
      'agent-ls',
      () => serverProcess.spawn(launch, cwd, this.log),
      {
        documentSelector: [{ scheme: 'file' }],
        outputChannel: this.log,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions: { ...initialSettings, ...PROBLEMS_OF_TEXT_OPTION },
        initializationFailedHandler: () => false,
        middleware: {
          executeCommand: (command, args: unknown[], next): unknown =>
            this.commandRoute ? this.commandRoute(command, args, next) : next(command, args),
        },
        errorHandler: {
          error: (_error, _message, count) => ({
            action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          }),
          closed: () => {
            this.closed(client, serverProcess);
            return { action: CloseAction.DoNotRestart, handled: true };
          },
        },
      },
    );
    // Registered before start: vscode-languageclient installs these after its own defaults.
    client.onRequest(ShowMessageRequest.type, askModal);
    client.onNotification(new NotificationType<AgentEventNotification>(AGENT_EVENT), (n) => this.agentEvent.fire(n));
    client.onNotification(new NotificationType<RunEndedNotification>(AGENT_RUN_ENDED), (n) => this.runEnded.fire(n));
    client.onNotification(new NotificationType<TodosNotification>(AGENT_TODOS), (n) => this.todos.fire(n));
    this.client = client;
    this.process = serverProcess;
    try {
      await client.start();
    } catch (error) {
      if (this.client !== client) {
        return undefined; // stopped or restarted meanwhile
      }
      this.client = undefined;
      await serverProcess.settled(1500);
      serverProcess.kill();
      this.setState('failed');
      const message = startFailureMessage({
        python,
        args,
        spawnErrorCode: serverProcess.spawnError?.code,
        spawnErrorMessage: serverProcess.spawnError?.message,
        exitCode: serverProcess.exit?.code,
        signal: serverProcess.exit?.signal,
        stderr: serverProcess.stderr,
      });
      this.log.error(`${message} (${String(error)})`);
      void this.report(message, [SHOW_LOG, OPEN_SETTINGS]);
      return undefined;
    }
    // After start: vscode-languageclient's progress feature registers its own handler during start.
    client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const key = String(token);
      this.progressHandlers.get(key)?.dispose();
      this.progressHandlers.set(
        key,
        client.onProgress(WorkDoneProgress.type, token, (value) => {
          this.progress.fire({ token: key, value });
          if (value.kind === 'end') {
            this.progressHandlers.get(key)?.dispose();
            this.progressHandlers.delete(key);
          }
        }),
      );
    });
    this.problemForwarding = forwardProblems(client, this.log);
    this.setState('running');
    return client;
  }

  /** The connection closed without `stop()`: a failed start (reported by `start`) or a crash. */
  private closed(client: AgentLanguageClient, serverProcess: ServerProcess): void {
    if (this.client !== client || this.state !== 'running') {
      return;
    }
    this.client = undefined;
    this.process = undefined;
    this.disposeProgressHandlers();
    this.problemForwarding?.dispose();
    this.problemForwarding = undefined;
    this.setState('failed');
    this.stopped.fire();
    void serverProcess.settled(1500).then(() => {
      const message = crashMessage(serverProcess.exit?.code, serverProcess.exit?.signal, serverProcess.stderr);
      this.log.error(message);
      return this.report(message, [RESTART, SHOW_LOG]);
    });
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    const serverProcess = this.process;
    this.client = undefined;
    this.process = undefined;
    this.disposeProgressHandlers();
    this.problemForwarding?.dispose();
    this.problemForwarding = undefined;
    if (client) {
      this.stopped.fire();
      try {
        await client.stop(2000);
      } catch (error) {
        this.log.warn(`Stopping the server: ${String(error)}`);
      }
    }
    if (serverProcess) {
      await serverProcess.settled(2000);
      serverProcess.kill();
    }
    this.setState('stopped');
  }

  private disposeProgressHandlers(): void {
    for (const handler of this.progressHandlers.values()) {
      handler.dispose();
    }
    this.progressHandlers.clear();
  }

  private async report(message: string, actions: string[]): Promise<void> {
    const picked = await vscode.window.showErrorMessage(message, ...actions);
    if (picked === SHOW_LOG) {
      this.log.show(true);
    } else if (picked === OPEN_SETTINGS) {
      await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.pythonPath`);
    } else if (picked === RESTART) {
      await this.restart();
    }
  }
}
