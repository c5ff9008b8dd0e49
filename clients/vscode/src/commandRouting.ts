/**
 * Server commands that VS Code runs itself: code actions.
 *
 * The server's code actions ("Agent: Fix this problem", "Agent: Review this file (/code-review)", …)
 * carry LSP Commands `agent.runSkill` / `agent.run` with one argument object. vscode-languageclient
 * registers every command the server offers (`executeCommandProvider.commands`) as a VS Code command
 * that sends `workspace/executeCommand` itself, so the extension would never learn the run's
 * `{sessionId, progressToken}`: no progress notification, no Cancel, no Review / Apply at the end.
 * `routeServerCommand` is installed as the client's `middleware.executeCommand` (vscode-languageclient
 * 11 calls it for every such command) and sends those two through the same path as the palette
 * commands; every other command goes on to the server unchanged.
 *
 * Pure: no `vscode` import.
 */

import { CMD_RUN, CMD_RUN_SKILL, type RunParams, type RunResult, type RunSkillParams } from './protocol';
import { skillRunLabel } from './runArgs';

/** A run to start: the server command, its argument, and the label its notification shows. */
export type RunRequest =
  | { command: typeof CMD_RUN; params: RunParams; label: string }
  | { command: typeof CMD_RUN_SKILL; params: RunSkillParams; label: string };

/** Starts a run and shows it; undefined when the server could not start (already reported). */
export type StartRun = (request: RunRequest) => Promise<RunResult | undefined>;

/** vscode-languageclient's `ExecuteCommandSignature`: sends `workspace/executeCommand`. */
export type SendCommand = (command: string, args: unknown[]) => unknown;

function argumentObject(args: readonly unknown[]): Record<string, unknown> | undefined {
  const [first] = args;
  return args.length === 1 && typeof first === 'object' && first !== null && !Array.isArray(first)
    ? (first as Record<string, unknown>)
    : undefined;
}

function nonBlank(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * The run that `command(...args)` asks for: `agent.run` with `{task, …}` or `agent.runSkill` with
 * `{skill, …}` (the object is passed on as it is; the server checks the rest). Undefined for any
 * other command, or an argument that is not one such object (the server then answers with its error).
 */
export function runRequest(command: string, args: readonly unknown[]): RunRequest | undefined {
  const params = argumentObject(args);
  if (!params) {
    return undefined;
  }
  if (command === CMD_RUN && nonBlank(params['task'])) {
    const run = params as unknown as RunParams;
    return { command: CMD_RUN, params: run, label: run.task };
  }
  if (command === CMD_RUN_SKILL && nonBlank(params['skill'])) {
    const skill = params as unknown as RunSkillParams;
    return { command: CMD_RUN_SKILL, params: skill, label: skillRunLabel(skill) };
  }
  return undefined;
}

/**
 * The `middleware.executeCommand` of the language client: runs go to `start` and resolve to the
 * `RunResult` (an error goes to `report`, which shows it as the palette commands do, and resolves to
 * undefined); everything else is `send(command, args)`.
 */
/** The shape of `middleware.executeCommand`. */
export type CommandRoute = (command: string, args: unknown[], send: SendCommand) => unknown;

export function routeServerCommand(start: StartRun, report: (error: unknown) => void): CommandRoute {
  return (command, args, send) => {
    const request = runRequest(command, args);
    if (!request) {
      return send(command, args);
    }
    return start(request).catch((error: unknown) => {
      report(error);
      return undefined;
    });
  };
}

/**
 * The error for a command the running server does not offer (its `executeCommandProvider.commands`
 * lacks it: a server older than this extension), or undefined when it is offered or the server
 * lists nothing.
 */
export function unsupportedCommand(served: readonly string[] | undefined, command: string): string | undefined {
  if (!served || served.includes(command)) {
    return undefined;
  }
  return `this agent-ls server does not offer ${command}: it is older than the extension. Update agent-ls in the interpreter it runs (agentLs.pythonPath).`;
}
