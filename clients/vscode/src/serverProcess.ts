/**
 * One spawned server process (`<python> <launcher> serve`, see `launch.ts`): its stderr tail and how it ended, for the error
 * messages `server.ts` shows.
 */

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import type { Writable } from 'node:stream';

import type * as vscode from 'vscode';

import { KEYS_FD, type PythonChoice, SERVER_ARGS, type ServerLaunch, StderrTail } from './launch';

export class ServerProcess {
  readonly stderr = new StderrTail();
  child: ChildProcess | undefined;
  spawnError: NodeJS.ErrnoException | undefined;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly ended: Promise<void>;
  private markEnded: () => void = () => undefined;

  constructor(
    readonly python: PythonChoice,
    readonly args: readonly string[] = SERVER_ARGS,
  ) {
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
  }

  /** Spawns the server; rejects when the process cannot start at all (no such interpreter). The keys,
   * when there are any, are written on descriptor `KEYS_FD`, which is then closed. */
  async spawn(launch: ServerLaunch, cwd: string | undefined, log: vscode.LogOutputChannel): Promise<ChildProcess> {
    const stdio: StdioOptions = launch.keys === undefined ? 'pipe' : ['pipe', 'pipe', 'pipe', 'pipe'];
    const child: ChildProcess = spawn(this.python.command, [...this.args], { env: launch.env, cwd, stdio, windowsHide: true });
    if (launch.keys !== undefined) {
      const keys = child.stdio[KEYS_FD] as Writable | null;
      keys?.on('error', (error) => log.error(`agent-ls server process: the key handoff failed: ${error.message}`));
      keys?.end(launch.keys);
    }
    this.child = child;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.stderr.push(chunk));
    child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      this.markEnded();
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (error: NodeJS.ErrnoException) => {
        this.spawnError = error;
        this.markEnded();
        reject(error);
      });
    });
    child.on('error', (error) => log.error(`agent-ls server process: ${error.message}`));
    return child;
  }

  /** Waits until the process has exited, at most `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    await Promise.race([this.ended, new Promise((resolve) => setTimeout(resolve, timeoutMs))]);
  }

  kill(): void {
    if (this.child && !this.exit && !this.spawnError) {
      this.child.kill();
    }
  }
}
