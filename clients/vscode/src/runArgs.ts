/**
 * The arguments of `agent.run` and `agent.runSkill`, built from what the editor shows.
 *
 * The focus is the active editor's file and its primary selection. Only `file:` documents are sent
 * (the server reads a file by its path; an untitled buffer has none), and the range only when the
 * selection is not empty: a bare cursor is not a selection.
 *
 * Pure: no `vscode` import; `EditorFocus` is what `extension.ts` reads from `window.activeTextEditor`.
 */

import type { RunParams, RunSkillParams, WireRange } from './protocol';

export interface EditorFocus {
  /** The document URI as a string (`Uri.toString()`). */
  uri: string;
  scheme: string;
  /** The primary selection, 0-based, UTF-16 code units (VS Code's positions). */
  selection: WireRange;
}

function isEmpty(range: WireRange): boolean {
  return range.start.line === range.end.line && range.start.character === range.end.character;
}

function fileUri(focus: EditorFocus | undefined): string | undefined {
  return focus && focus.scheme === 'file' ? focus.uri : undefined;
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

/** `agent.runSkill`'s argument; `args` is left out when blank. */
export function skillParams(skill: string, focus: EditorFocus | undefined, args?: string): RunSkillParams {
  const params: RunSkillParams = { skill };
  const uri = fileUri(focus);
  if (uri) {
    params.uri = uri;
  }
  if (args?.trim()) {
    params.args = args.trim();
  }
  return params;
}

/** A short label for a run in notifications: the first line of the task, clipped. */
export function taskLabel(task: string, maxChars = 50): string {
  const first = task.trim().split(/\r?\n/)[0] ?? '';
  return first.length <= maxChars ? first : first.slice(0, maxChars - 1) + '…';
}
