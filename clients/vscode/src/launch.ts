/**
 * How the server process is launched, and what the user reads when it cannot start or dies.
 *
 * Launch order: pick the interpreter (`agentLs.pythonPath`, else the Python extension's selected
 * interpreter, else `python3`), build the environment, spawn `<python> -m agent_ls serve` on stdio.
 * The API key from SecretStorage is handed over on a pipe (file descriptor 3, named by
 * `AGENT_LS_KEYS_FD`, as `{"AGENT_LS_API_KEY": key}`), never in the environment: other processes of
 * the user can read a process's initial environment (`/proc/<pid>/environ`, `ps eww`), and a command
 * the agent runs without a sandbox could (server/agent_ls/key_handoff.py). On Windows, which has no
 * such descriptors for Python, it goes in the environment as `AGENT_LS_API_KEY`.
 *
 * Pure: no `vscode` import, so the unit tests run in plain Node.
 */

export const SERVER_ARGS: readonly string[] = ['-m', 'agent_ls', 'serve'];
export const API_KEY_ENV = 'AGENT_LS_API_KEY';
export const KEYS_FD_ENV = 'AGENT_LS_KEYS_FD';
/** The server's file descriptor that carries the keys (stdin, stdout, stderr are 0 to 2). */
export const KEYS_FD = 3;

export type PythonSource = 'agentLs.pythonPath' | 'the Python extension' | 'the default';

export interface PythonChoice {
  command: string;
  source: PythonSource;
}

/**
 * The interpreter to run the server with.
 *
 * @param setting `agentLs.pythonPath` as configured (may be empty or have a leading `~`).
 * @param fromPythonExtension the Python extension's selected interpreter, when it has one.
 * @param platform `process.platform`; the default is `python` on Windows, `python3` elsewhere.
 * @param home the user's home directory, for `~` expansion.
 */
export function choosePython(
  setting: string | undefined,
  fromPythonExtension: string | undefined,
  platform: string,
  home: string,
): PythonChoice {
  const configured = (setting ?? '').trim();
  if (configured) {
    const expanded = configured === '~' || configured.startsWith('~/') ? home + configured.slice(1) : configured;
    return { command: expanded, source: 'agentLs.pythonPath' };
  }
  if (fromPythonExtension?.trim()) {
    return { command: fromPythonExtension.trim(), source: 'the Python extension' };
  }
  return { command: platform === 'win32' ? 'python' : 'python3', source: 'the default' };
}

export interface ServerLaunch {
  env: NodeJS.ProcessEnv;
  /** What to write on descriptor `KEYS_FD` (then close it), or undefined for no handoff. */
  keys: string | undefined;
}

/**
 * The server's environment and key handoff: the editor's own environment, plus, when a key is stored,
 * `AGENT_LS_KEYS_FD=3` and the key as JSON for that descriptor (on Windows: `AGENT_LS_API_KEY` in the
 * environment instead).
 */
export function serverLaunch(base: NodeJS.ProcessEnv, apiKey: string | undefined, platform: string): ServerLaunch {
  const env = { ...base };
  if (!apiKey) {
    return { env, keys: undefined };
  }
  if (platform === 'win32') {
    env[API_KEY_ENV] = apiKey;
    return { env, keys: undefined };
  }
  env[KEYS_FD_ENV] = String(KEYS_FD);
  return { env, keys: JSON.stringify({ [API_KEY_ENV]: apiKey }) };
}

/** Keeps the last `maxChars` characters a process wrote to stderr, for error messages. */
export class StderrTail {
  private text = '';

  constructor(private readonly maxChars = 4000) {}

  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.maxChars);
  }

  /** The last non-empty line, or '' when nothing was written. */
  lastLine(): string {
    const lines = this.text.split(/\r?\n/).map((line) => line.trim());
    return lines.filter((line) => line.length > 0).pop() ?? '';
  }

  /** Whether the server's module could not be imported. */
  moduleMissing(): boolean {
    return /No module named '?agent_ls'?/.test(this.text);
  }
}

export interface StartFailure {
  python: PythonChoice;
  /** The spawn error's `code` (`ENOENT`, `EACCES`), when the process could not be started at all. */
  spawnErrorCode?: string;
  spawnErrorMessage?: string;
  exitCode?: number | null;
  signal?: string | null;
  stderr: StderrTail;
}

function exitText(failure: StartFailure): string {
  if (failure.signal) {
    return `killed by ${failure.signal}`;
  }
  if (failure.exitCode !== undefined && failure.exitCode !== null) {
    return `exit code ${failure.exitCode}`;
  }
  return 'no exit code';
}

function fromWhere(python: PythonChoice): string {
  return `(interpreter from ${python.source})`;
}

/** One message for a server that did not start: what failed, and what to do about it. */
export function startFailureMessage(failure: StartFailure): string {
  const { python } = failure;
  const command = `${python.command} ${SERVER_ARGS.join(' ')}`;
  if (failure.spawnErrorCode === 'ENOENT') {
    return (
      `Agent: the Python interpreter "${python.command}" was not found ${fromWhere(python)}. ` +
      'Set agentLs.pythonPath to a Python that has agent-ls installed.'
    );
  }
  if (failure.spawnErrorCode) {
    return (
      `Agent: could not run "${python.command}" ${fromWhere(python)}: ` +
      `${failure.spawnErrorMessage ?? failure.spawnErrorCode}. Check agentLs.pythonPath.`
    );
  }
  if (failure.stderr.moduleMissing()) {
    return (
      `Agent: agent-ls is not installed in "${python.command}" ${fromWhere(python)}. ` +
      `Install it there ("${python.command} -m pip install ." in an agent-ls checkout), ` +
      'or set agentLs.pythonPath to a Python that has it.'
    );
  }
  const last = failure.stderr.lastLine().replace(/\.$/, '');
  return `Agent: the server did not start ("${command}", ${exitText(failure)})${last ? `: ${last}` : ''}. See the log for details.`;
}

/** The message for a server that stopped while it was running. */
export function crashMessage(exitCode: number | null | undefined, signal: string | null | undefined, stderr: StderrTail): string {
  const how = signal ? `killed by ${signal}` : exitCode !== undefined && exitCode !== null ? `exit code ${exitCode}` : 'connection closed';
  const last = stderr.lastLine().replace(/\.$/, '');
  return `Agent: the server stopped unexpectedly (${how})${last ? `: ${last}` : ''}. Runs in progress and their proposed changes are lost.`;
}
