/**
 * The "Run Skill on Current File…" quick pick, fed by `agent.listSkills`.
 *
 * The server's skill objects are open-ended (`Record<string, unknown>`); the pick reads `name` and
 * `description` when they are strings and skips entries without a name.
 *
 * Pure: no `vscode` import.
 */

export const NO_SKILLS = 'No skills are installed yet. Skills arrive with a later agent-ls version.';

export interface SkillPickItem {
  label: string;
  description?: string;
  skill: string;
}

export function skillPickItems(skills: readonly Record<string, unknown>[]): SkillPickItem[] {
  const items: SkillPickItem[] = [];
  for (const skill of skills) {
    const name = skill['name'];
    if (typeof name !== 'string' || !name.trim()) {
      continue;
    }
    const description = skill['description'];
    items.push({
      label: name,
      skill: name,
      ...(typeof description === 'string' && description.trim() ? { description } : {}),
    });
  }
  return items;
}
