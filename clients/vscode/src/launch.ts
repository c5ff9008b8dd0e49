/**
 * How the server process is launched, and what the user reads when it cannot start or dies.
 *
 * Launch order: pick the interpreter (`agentLs.pythonPath`, else the Python extension's selected
 * interpreter, else `python3`), build the environment, spawn `<python> <extension>/bundled/tool/launch_server.py
 * serve` on stdio. The launcher runs the interpreter's own agent-ls when it has one, else the agent-ls
 * and dependencies the platform .vsix carries (`bundled/libs`, built for CPython 3.11 to 3.14); a
 * Python it cannot use ends it with an `agent-ls-launcher:` line that `launcherStop` reads.
 * The API key from SecretStorage is handed over on a pipe (file descriptor 3, named by
 * `AGENT_LS_KEYS_FD`, as `{"AGENT_LS_API_KEY": key}`), never in the environment: other processes of
 * the user can read a process's initial environment (`/proc/<pid>/environ`, `ps eww`), and a command
 * the agent runs without a sandbox could (server/agent_ls/key_handoff.py). On Windows, which has no
 * such descriptors for Python, it goes in the environment as `AGENT_LS_API_KEY`.
 *
 * Pure: no `vscode` import, so the unit tests run in plain Node.
 */

import { join } from 'node:path';

/** What the launcher runs, as the interpreter's arguments when agent-ls is installed in it. */
export const SERVER_ARGS: readonly string[] = ['-m', 'agent_ls', 'serve'];
/** The launcher's path inside the extension (`bundled/tool/launch_server.py`). */
export const LAUNCHER_PATH: readonly string[] = ['bundled', 'tool', 'launch_server.py'];
export const MINIMUM_PYTHON = '3.11';

/** The interpreter's arguments: the extension's launcher, then `serve`. */
export function serverArgs(extensionRoot: string): string[] {
  return [join(extensionRoot, ...LAUNCHER_PATH), 'serve'];
}
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

  /** Why the launcher refused this interpreter (its `agent-ls-launcher:` line), or undefined. */
  launcherStop(): LauncherStop | undefined {
    const match = /^agent-ls-launcher: (too-old|no-bundle|no-wheels) (\S+) (.+?)(?: bundled=(\S+))?$/m.exec(this.text);
    if (!match) {
      return undefined;
    }
    const [, reason, version, executable, bundled] = match;
    return {
      reason: reason as LauncherStop['reason'],
      version: version ?? '',
      executable: executable ?? '',
      bundled: bundled ? bundled.split(',') : [],
    };
  }

  /** Whether the server's module could not be imported. */
  moduleMissing(): boolean {
    return /No module named '?agent_ls'?/.test(this.text);
  }
}

/**
 * The launcher's refusal (`bundled/tool/launch_server.py`): a Python older than 3.11 (`too-old`), a
 * .vsix without the bundle and no agent-ls in the interpreter (`no-bundle`), or a Python version the
 * bundle has no wheels for (`no-wheels`, with the bundled `major.minor` versions).
 */
export interface LauncherStop {
  reason: 'too-old' | 'no-bundle' | 'no-wheels';
  /** The interpreter's version, `3.10.12`. */
  version: string;
  /** Its `sys.executable`. */
  executable: string;
  bundled: string[];
}

export interface StartFailure {
  python: PythonChoice;
  /** The interpreter's arguments (default `SERVER_ARGS`), for the message. */
  args?: readonly string[];
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
  const command = `${python.command} ${(failure.args ?? SERVER_ARGS).join(' ')}`;
  if (failure.spawnErrorCode === 'ENOENT' && python.source !== 'agentLs.pythonPath') {
    return (
      `Agent: no Python found: "${python.command}" ${fromWhere(python)} is not on PATH. agent-ls needs ` +
      `Python ${MINIMUM_PYTHON} or newer: install one (python.org, or your system's package manager) and ` +
      'select it in the Python extension, or set agentLs.pythonPath to it.'
    );
  }
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
  const stop = failure.stderr.launcherStop();
  if (stop) {
    return launcherStopMessage(python, stop);
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

function launcherStopMessage(python: PythonChoice, stop: LauncherStop): string {
  const which = `"${python.command}" ${fromWhere(python)}`;
  const install = `or install agent-ls into it ("${python.command} -m pip install agent-ls")`;
  switch (stop.reason) {
    case 'too-old':
      return (
        `Agent: ${which} is Python ${stop.version}; agent-ls needs Python ${MINIMUM_PYTHON} or newer. Install a newer ` +
        'Python and select it in the Python extension, or set agentLs.pythonPath to it.'
      );
    case 'no-wheels':
      return (
        `Agent: ${which} is Python ${stop.version}, and this extension carries agent-ls's dependencies for Python ` +
        `${stop.bundled.join(', ')} only. Select one of those in the Python extension or in agentLs.pythonPath, ${install}.`
      );
    case 'no-bundle':
      return (
        `Agent: agent-ls is not installed in ${which}, and this package of the extension does not carry it. ` +
        `Install the extension's package for your platform (agent-ls-<platform>.vsix), ${install}.`
      );
  }
}

/** The message for a server that stopped while it was running. */
export function crashMessage(exitCode: number | null | undefined, signal: string | null | undefined, stderr: StderrTail): string {
  const how = signal ? `killed by ${signal}` : exitCode !== undefined && exitCode !== null ? `exit code ${exitCode}` : 'connection closed';
  const last = stderr.lastLine().replace(/\.$/, '');
  return `Agent: the server stopped unexpectedly (${how})${last ? `: ${last}` : ''}. Runs in progress and their proposed changes are lost.`;
}
