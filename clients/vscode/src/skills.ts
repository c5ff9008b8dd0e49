/**
 * The "Run Skill on Current File…" quick pick, fed by `agent.listSkills`.
 *
 * One entry per skill, in the server's order (by name): its name (a warning icon in front when the
 * SKILL.md has problems), its source and, for a skill with `disable-model-invocation: true`,
 * "explicit only" (the model never picks it, so this is its only way in), with the description
 * below. SKILL.md files the server skipped follow under "Not loaded", each with its reason; picking
 * one opens it.
 *
 * Pure: no `vscode` import.
 */

import type { ListSkillsResult, SkillInfo, WireFileDiagnostic } from './protocol';

export const NO_SKILLS =
  'No skills found. Add one as .agents/skills/<name>/SKILL.md in the workspace (docs/skills.md explains how).';

export type SkillPick =
  | { type: 'skill'; label: string; description: string; detail?: string; skill: SkillInfo }
  | { type: 'separator'; label: string }
  | { type: 'skipped'; label: string; description: string; detail: string; path: string; line: number };

const DETAIL_CHARS = 200;

function oneLine(text: string, maxChars: number): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  return flat.length <= maxChars ? flat : flat.slice(0, maxChars - 1) + '…';
}

function problems(count: number): string {
  return `${count} ${count === 1 ? 'problem' : 'problems'}`;
}

/** The folder name of a SKILL.md (`/w/.agents/skills/review/SKILL.md` → `review`). */
function skillFolder(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length >= 2 ? parts[parts.length - 2]! : path;
}

function skillPick(skill: SkillInfo): SkillPick {
  const notes: string[] = [skill.source];
  if (!skill.modelInvocable) {
    notes.push('explicit only');
  }
  if (skill.diagnostics.length > 0) {
    notes.push(problems(skill.diagnostics.length));
  }
  const detail = oneLine(skill.description, DETAIL_CHARS);
  return {
    type: 'skill',
    label: skill.diagnostics.length > 0 ? `$(warning) ${skill.name}` : skill.name,
    description: notes.join(' · '),
    ...(detail ? { detail } : {}),
    skill,
  };
}

function skippedPick(diagnostic: WireFileDiagnostic, relative: (path: string) => string): SkillPick {
  return {
    type: 'skipped',
    label: `$(error) ${skillFolder(diagnostic.path)}`,
    description: relative(diagnostic.path),
    detail: oneLine(diagnostic.message, DETAIL_CHARS),
    path: diagnostic.path,
    line: diagnostic.line,
  };
}

/**
 * The pick's entries; empty when the server found nothing at all. Entries without a name are left
 * out (a server bug, never a skill). `relative` shows a path the way the workspace does.
 */
export function skillPicks(listed: ListSkillsResult, relative: (path: string) => string = (p) => p): SkillPick[] {
  const picks = listed.skills.filter((skill) => typeof skill.name === 'string' && skill.name.trim()).map(skillPick);
  const skipped = listed.skipped ?? [];
  if (skipped.length > 0) {
    picks.push({ type: 'separator', label: 'Not loaded' }, ...skipped.map((d) => skippedPick(d, relative)));
  }
  return picks;
}

/** The prompt of the arguments input box after a skill is picked. */
export function argsPrompt(skill: SkillInfo): { prompt: string; placeHolder: string } {
  const hint = skill.argumentHint?.trim();
  return {
    prompt: `Arguments for /${skill.name} (optional; the skill reads them as $ARGUMENTS). Press Enter to run it.`,
    placeHolder: hint ? hint : 'No arguments',
  };
}
