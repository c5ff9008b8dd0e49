/**
 * The arguments of `agent.run` and `agent.runSkill`, built from what the editor shows, and the labels
 * runs get in notifications.
 *
 * The focus is the active editor's file and its primary selection. Only `file:` documents are sent
 * (the server reads a file by its path; an untitled buffer has none), and the range only when the
 * selection is not empty: a bare cursor is not a selection.
 *
 * Pure: no `vscode` import; `EditorFocus` is what `commands.ts` reads from `window.activeTextEditor`,
 * and a `vscode.Diagnostic` is an `EditorDiagnostic` as it is.
 */

import type { RunParams, RunSkillParams, WireDiagnostic, WirePosition, WireRange } from './protocol';

export interface EditorFocus {
  /** The document URI as a string (`Uri.toString()`). */
  uri: string;
  scheme: string;
  /** The primary selection, 0-based, UTF-16 code units (VS Code's positions). */
  selection: WireRange;
}

/** The part of a `vscode.Diagnostic` sent to the server. */
export interface EditorDiagnostic {
  range: { start: WirePosition; end: WirePosition };
  message: string;
  /** `vscode.DiagnosticSeverity`: 0 error, 1 warning, 2 information, 3 hint (LSP counts from 1). */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
}

/** At most this many diagnostics go with a run (errors first): a file with 2,000 lint warnings would fill the prompt. */
export const MAX_DIAGNOSTICS = 50;

/** The skill that gets the file's diagnostics from the palette (code actions carry their own). */
export const FIX_DIAGNOSTICS_SKILL = 'fix-diagnostics';

function isEmpty(range: WireRange): boolean {
  return range.start.line === range.end.line && range.start.character === range.end.character;
}

function fileUri(focus: EditorFocus | undefined): string | undefined {
  return focus && focus.scheme === 'file' ? focus.uri : undefined;
}

function before(a: WirePosition, b: WirePosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}

function position(p: WirePosition): WirePosition {
  return { line: p.line, character: p.character };
}

/** `agent.run`'s argument, or undefined when the task is blank (the user typed nothing). */
export function runParams(task: string | undefined, focus: EditorFocus | undefined): RunParams | undefined {
  const text = task?.trim();
  if (!text) {
    return undefined;
  }
  const params: RunParams = { task: text };
  const uri = fileUri(focus);
  if (uri && focus) {
    params.uri = uri;
    if (!isEmpty(focus.selection)) {
      params.range = focus.selection;
    }
  }
  return params;
}

export interface SkillOptions {
  /** Left out when blank. */
  args?: string;
  /** Send the selection (when not empty). "Review Current File" reviews the whole file and does not. */
  withRange?: boolean;
  /** Left out when empty. */
  diagnostics?: WireDiagnostic[];
}

/** `agent.runSkill`'s argument. Without a `file:` document in focus there is no uri, range or diagnostics. */
export function skillParams(skill: string, focus: EditorFocus | undefined, options: SkillOptions = {}): RunSkillParams {
  const params: RunSkillParams = { skill };
  const uri = fileUri(focus);
  if (uri && focus) {
    params.uri = uri;
    if (options.withRange && !isEmpty(focus.selection)) {
      params.range = focus.selection;
    }
    if (options.diagnostics?.length) {
      params.diagnostics = options.diagnostics;
    }
  }
  if (options.args?.trim()) {
    params.args = options.args.trim();
  }
  return params;
}

/**
 * The editor's diagnostics as LSP `Diagnostic`s (severity + 1, a `{value, target}` code reduced to
 * its value, plain position objects). With `within` (a non-empty selection): only those touching
 * it. Errors first, then by position; at most `MAX_DIAGNOSTICS`.
 */
export function wireDiagnostics(diagnostics: readonly EditorDiagnostic[], within?: WireRange): WireDiagnostic[] {
  const touching =
    within && !isEmpty(within)
      ? diagnostics.filter((d) => !before(d.range.end, within.start) && !before(within.end, d.range.start))
      : [...diagnostics];
  touching.sort(
    (a, b) =>
      a.severity - b.severity ||
      a.range.start.line - b.range.start.line ||
      a.range.start.character - b.range.start.character,
  );
  return touching.slice(0, MAX_DIAGNOSTICS).map((d) => {
    const wire: WireDiagnostic = {
      range: { start: position(d.range.start), end: position(d.range.end) },
      message: d.message,
      severity: d.severity + 1,
    };
    if (d.source) {
      wire.source = d.source;
    }
    const code = typeof d.code === 'object' ? d.code.value : d.code;
    if (code !== undefined && code !== '') {
      wire.code = code;
    }
    return wire;
  });
}

/** The file name at the end of a URI (`file:///w/src/app%20x.py` → `app x.py`), or undefined. */
export function uriBaseName(uri: string | null | undefined): string | undefined {
  if (!uri) {
    return undefined;
  }
  let pathname: string;
  try {
    pathname = new URL(uri).pathname;
  } catch {
    return undefined;
  }
  const last = pathname.split('/').filter(Boolean).pop();
  if (!last) {
    return undefined;
  }
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** A short label for a run in notifications: the first line of the task, clipped. */
export function taskLabel(task: string, maxChars = 50): string {
  const first = task.trim().split(/\r?\n/)[0] ?? '';
  return first.length <= maxChars ? first : first.slice(0, maxChars - 1) + '…';
}

/** A skill run's label: `/code-review app.py`, `/fix-diagnostics app.py: "x" is not defined`. */
export function skillRunLabel(params: RunSkillParams): string {
  const file = uriBaseName(params.uri);
  const args = params.args?.trim();
  return `/${params.skill}${file ? ` ${file}` : ''}${args ? `${file ? ':' : ''} ${args}` : ''}`;
}
