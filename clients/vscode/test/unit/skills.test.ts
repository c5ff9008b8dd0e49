// The "Run Skill on Current File…" pick, from agent.listSkills' answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { SkillInfo, WireFileDiagnostic } from '../../src/protocol';
import { argsPrompt, NO_SKILLS, skillPicks } from '../../src/skills';

const problem = (path: string, message: string, line = 0): WireFileDiagnostic => ({
  path,
  line,
  character: 0,
  endCharacter: 3,
  severity: 'warning',
  message,
});

const skill = (name: string, over: Partial<SkillInfo> = {}): SkillInfo => ({
  name,
  description: `Does ${name}.`,
  source: 'bundled',
  path: `/pkg/skills/${name}/SKILL.md`,
  baseDir: `/pkg/skills/${name}`,
  modelInvocable: true,
  allowedTools: [],
  argumentHint: null,
  diagnostics: [],
  ...over,
});

test('each skill: name, source, and the description below; server order kept', () => {
  assert.deepEqual(skillPicks({ skills: [skill('code-review'), skill('explain', { source: 'project' })], skipped: [] }), [
    { type: 'skill', label: 'code-review', description: 'bundled', detail: 'Does code-review.', skill: skill('code-review') },
    { type: 'skill', label: 'explain', description: 'project', detail: 'Does explain.', skill: skill('explain', { source: 'project' }) },
  ]);
});

test('markers: problems get a warning icon and a count; explicit-only skills stay listed', () => {
  const cases: [Partial<SkillInfo>, string, string][] = [
    [{ diagnostics: [problem('/w/SKILL.md', 'name does not match its folder')] }, '$(warning) deploy', 'user · 1 problem'],
    [{ diagnostics: [problem('/w/SKILL.md', 'a'), problem('/w/SKILL.md', 'b')] }, '$(warning) deploy', 'user · 2 problems'],
    [{ modelInvocable: false }, 'deploy', 'user · explicit only'],
    [{ modelInvocable: false, diagnostics: [problem('/w/SKILL.md', 'a')] }, '$(warning) deploy', 'user · explicit only · 1 problem'],
  ];
  for (const [over, label, description] of cases) {
    const [pick] = skillPicks({ skills: [skill('deploy', { source: 'user', ...over })], skipped: [] });
    assert.ok(pick?.type === 'skill');
    assert.equal(pick.label, label);
    assert.equal(pick.description, description);
  }
});

test('a multi-line or long description becomes one line, clipped', () => {
  const [short] = skillPicks({ skills: [skill('a', { description: 'Review a file.\nUse when asked to review.\n' })], skipped: [] });
  assert.equal(short?.type === 'skill' ? short.detail : '', 'Review a file. Use when asked to review.');
  const [long] = skillPicks({ skills: [skill('a', { description: 'x'.repeat(500) })], skipped: [] });
  const detail = long?.type === 'skill' ? (long.detail ?? '') : '';
  assert.equal(detail.length, 200);
  assert.ok(detail.endsWith('…'));
  const [none] = skillPicks({ skills: [skill('a', { description: '  ' })], skipped: [] });
  assert.ok(none && !('detail' in none));
});

test('skipped SKILL.md files follow under "Not loaded", with their reason, workspace-relative', () => {
  const picks = skillPicks(
    { skills: [skill('explain')], skipped: [problem('/w/.agents/skills/broken/SKILL.md', 'no description: skipped', 2)] },
    (path) => path.replace('/w/', ''),
  );
  assert.deepEqual(picks.slice(1), [
    { type: 'separator', label: 'Not loaded' },
    {
      type: 'skipped',
      label: '$(error) broken',
      description: '.agents/skills/broken/SKILL.md',
      detail: 'no description: skipped',
      path: '/w/.agents/skills/broken/SKILL.md',
      line: 2,
    },
  ]);
});

test('nothing found: no picks; a nameless entry is never a skill', () => {
  assert.deepEqual(skillPicks({ skills: [], skipped: [] }), []);
  assert.deepEqual(skillPicks({ skills: [skill('')], skipped: [] }), []);
  assert.match(NO_SKILLS, /^No skills found\. Add one as \.agents\/skills\/<name>\/SKILL\.md/);
});

test('the arguments box shows argument-hint as its placeholder', () => {
  assert.deepEqual(argsPrompt(skill('fix-issue', { argumentHint: '[issue-number]' })), {
    prompt: 'Arguments for /fix-issue (optional; the skill reads them as $ARGUMENTS). Press Enter to run it.',
    placeHolder: '[issue-number]',
  });
  assert.equal(argsPrompt(skill('explain')).placeHolder, 'No arguments');
  assert.equal(argsPrompt(skill('explain', { argumentHint: '  ' })).placeHolder, 'No arguments');
});
