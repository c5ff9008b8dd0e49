import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type EditorFocus, runParams, skillParams, taskLabel } from '../../src/runArgs';

const at = (line: number, character: number) => ({ line, character });
const focus = (scheme: string, start: [number, number], end: [number, number]): EditorFocus => ({
  uri: `${scheme}:///work/app.py`,
  scheme,
  selection: { start: at(...start), end: at(...end) },
});

test('a task with a selection sends the file and the range', () => {
  assert.deepEqual(runParams('  Add type hints\n', focus('file', [2, 0], [5, 4])), {
    task: 'Add type hints',
    uri: 'file:///work/app.py',
    range: { start: at(2, 0), end: at(5, 4) },
  });
});

test('a bare cursor is not a selection: the file only', () => {
  assert.deepEqual(runParams('Fix it', focus('file', [3, 7], [3, 7])), { task: 'Fix it', uri: 'file:///work/app.py' });
});

test('no file in focus, or an untitled buffer: the task alone', () => {
  assert.deepEqual(runParams('Fix it', undefined), { task: 'Fix it' });
  assert.deepEqual(runParams('Fix it', focus('untitled', [0, 0], [1, 0])), { task: 'Fix it' });
});

test('a blank or dismissed input box runs nothing', () => {
  assert.equal(runParams(undefined, undefined), undefined);
  assert.equal(runParams('   ', focus('file', [0, 0], [0, 0])), undefined);
});

test('skill arguments', () => {
  assert.deepEqual(skillParams('code-review', focus('file', [0, 0], [0, 0])), {
    skill: 'code-review',
    uri: 'file:///work/app.py',
  });
  assert.deepEqual(skillParams('explain', undefined, ' the parser '), { skill: 'explain', args: 'the parser' });
  assert.deepEqual(skillParams('explain', focus('untitled', [0, 0], [0, 0]), ''), { skill: 'explain' });
});

test('task labels are the first line, clipped', () => {
  assert.equal(taskLabel('Fix the bug\nin detail'), 'Fix the bug');
  assert.equal(taskLabel('x'.repeat(60), 10), 'xxxxxxxxx…');
});
