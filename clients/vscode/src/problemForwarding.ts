/**
 * The editor's problems for the agent: which diagnostics go to the server, and when
 * (`agent/didChangeProblems`, docs/modes.md "The editor's problems").
 *
 * - At start, a snapshot: every file inside a workspace folder that has diagnostics.
 * - Then only the URIs VS Code says changed (`onDidChangeDiagnostics`), gathered and sent together
 *   `DEBOUNCE_MS` (300 ms) after the last change; a file whose problems are gone is sent with an empty
 *   list, which clears it on the server.
 * - Only `file:` URIs inside a workspace folder; never agent-ls's own diagnostics (source `agent-ls`,
 *   `agent-ls review`): the server would drop them anyway, the agent must not read its findings back.
 *
 * Pure: no `vscode` import (the caller passes VS Code's diagnostics, which have these shapes), timers
 * injectable, so the unit tests need neither VS Code nor a clock.
 */

import { Debouncer, type Timers } from './debounce';
import type { FileDiagnostics, WireDiagnostic } from './protocol';

export const DEBOUNCE_MS = 300;

/** The fields of a `vscode.Diagnostic` that are sent (its `severity` 0 error … 3 hint, as VS Code numbers it). */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
}

/** True for agent-ls's own sources (`agent-ls`, `agent-ls review`), as the server decides it. */
export function isOwnSource(source: string | undefined): boolean {
  return source !== undefined && source.split(' ', 1)[0] === 'agent-ls';
}

/** `diagnostic` on the wire: LSP's severity (1 error … 4 hint), the code's value. */
export function wireDiagnostic(diagnostic: EditorDiagnostic): WireDiagnostic {
  const { start, end } = diagnostic.range;
  const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
  return {
    range: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
    message: diagnostic.message,
    severity: diagnostic.severity + 1,
    source: diagnostic.source ?? null,
    code: code ?? null,
  };
}

/** The file's diagnostics as sent: agent-ls's own left out. */
export function fileDiagnostics(uri: string, diagnostics: readonly EditorDiagnostic[]): FileDiagnostics {
  return { uri, diagnostics: diagnostics.filter((d) => !isOwnSource(d.source)).map(wireDiagnostic) };
}

export interface ForwarderPorts {
  /** The current diagnostics of `uri` (`vscode.languages.getDiagnostics(uri)`). */
  read(uri: string): readonly EditorDiagnostic[];
  /** True for a `file:` URI inside a workspace folder. */
  inWorkspace(uri: string): boolean;
  /** Sends `agent/didChangeProblems {files}` (never called with an empty list). */
  send(files: FileDiagnostics[]): void;
}

export class ProblemForwarder {
  private readonly pending = new Set<string>();
  private readonly debouncer: Debouncer;

  constructor(
    private readonly ports: ForwarderPorts,
    timers?: Timers,
  ) {
    this.debouncer = new Debouncer(() => this.flush(), DEBOUNCE_MS, timers);
  }

  /** Sends every workspace file that has diagnostics (`all`: `vscode.languages.getDiagnostics()`), at once. */
  snapshot(all: ReadonlyArray<readonly [string, readonly EditorDiagnostic[]]>): void {
    const files = all
      .filter(([uri]) => this.ports.inWorkspace(uri))
      .map(([uri, diagnostics]) => fileDiagnostics(uri, diagnostics))
      .filter((file) => file.diagnostics.length > 0);
    if (files.length > 0) {
      this.ports.send(files);
    }
  }

  /** The diagnostics of `uris` changed: they are sent together after the debounce. */
  changed(uris: readonly string[]): void {
    const inside = uris.filter((uri) => this.ports.inWorkspace(uri));
    if (inside.length === 0) {
      return;
    }
    for (const uri of inside) {
      this.pending.add(uri);
    }
    this.debouncer.trigger();
  }

  /** Sends what changed since the last send, now. */
  flush(): void {
    const uris = [...this.pending];
    this.pending.clear();
    if (uris.length > 0) {
      this.ports.send(uris.map((uri) => fileDiagnostics(uri, this.ports.read(uri))));
    }
  }

  dispose(): void {
    this.debouncer.dispose();
    this.pending.clear();
  }
}

/**
 * Waits until the diagnostics of a document settle: `QUIET_MS` (300 ms) after the last change of its
 * diagnostics, or `MAX_WAIT_MS` (2 s) in all, whichever comes first. Resolves to whether any change came:
 * false means no language server reported on the document (none checks it, or none finished in time),
 * which is not the same as "no problems". Used to answer `agent/problemsOfText`.
 */
export const QUIET_MS = 300;
export const MAX_WAIT_MS = 2000;

export function settled(
  onChange: (listener: () => void) => { dispose(): void },
  timers: Timers = { set: (f, ms) => setTimeout(f, ms), clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
): Promise<boolean> {
  return new Promise((resolve) => {
    let heard = false;
    const quiet = new Debouncer(() => done(), QUIET_MS, timers);
    const limit = timers.set(() => done(), MAX_WAIT_MS);
    const subscription = onChange(() => {
      heard = true;
      quiet.trigger();
    });
    let finished = false;
    function done(): void {
      if (finished) {
        return;
      }
      finished = true;
      quiet.dispose();
      timers.clear(limit);
      subscription.dispose();
      resolve(heard);
    }
  });
}
