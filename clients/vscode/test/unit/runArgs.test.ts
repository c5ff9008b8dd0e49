import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { WireRange } from '../../src/protocol';
import {
  type EditorDiagnostic,
  type EditorFocus,
  MAX_DIAGNOSTICS,
  runParams,
  skillParams,
  skillRunLabel,
  taskLabel,
  uriBaseName,
  wireDiagnostics,
} from '../../src/runArgs';

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

test('skill arguments: file, selection only when asked for, args trimmed, diagnostics when any', () => {
  const diagnostic = { range: { start: at(1, 0), end: at(1, 3) }, message: 'x', severity: 1 };
  const cases: [string, ReturnType<typeof skillParams>, ReturnType<typeof skillParams>][] = [
    ['review: the file, not the selection', skillParams('code-review', focus('file', [0, 0], [4, 0])), { skill: 'code-review', uri: 'file:///work/app.py' }],
    [
      'run skill: the selection',
      skillParams('explain', focus('file', [0, 0], [4, 0]), { withRange: true, args: ' the parser ' }),
      { skill: 'explain', uri: 'file:///work/app.py', range: { start: at(0, 0), end: at(4, 0) }, args: 'the parser' },
    ],
    ['a bare cursor is no range', skillParams('explain', focus('file', [2, 2], [2, 2]), { withRange: true }), { skill: 'explain', uri: 'file:///work/app.py' }],
    ['no file: args only', skillParams('explain', undefined, { args: ' the parser ' }), { skill: 'explain', args: 'the parser' }],
    ['untitled: nothing of the buffer', skillParams('explain', focus('untitled', [0, 0], [1, 0]), { withRange: true, args: '', diagnostics: [diagnostic] }), { skill: 'explain' }],
    [
      'diagnostics go with the file',
      skillParams('fix-diagnostics', focus('file', [0, 0], [0, 0]), { diagnostics: [diagnostic] }),
      { skill: 'fix-diagnostics', uri: 'file:///work/app.py', diagnostics: [diagnostic] },
    ],
    ['no diagnostics: the field is left out', skillParams('fix-diagnostics', focus('file', [0, 0], [0, 0]), { diagnostics: [] }), { skill: 'fix-diagnostics', uri: 'file:///work/app.py' }],
  ];
  for (const [name, actual, expected] of cases) {
    assert.deepEqual(actual, expected, name);
  }
});

test('editor diagnostics in LSP form: severity + 1, code value, plain positions, errors first', () => {
  class Position {
    constructor(
      readonly line: number,
      readonly character: number,
    ) {}
    translate(): Position {
      return this;
    }
  }
  const diagnostic = (line: number, severity: number, message: string, extra: Partial<EditorDiagnostic> = {}): EditorDiagnostic => ({
    range: { start: new Position(line, 4), end: new Position(line, 9) },
    message,
    severity,
    ...extra,
  });
  const wire = wireDiagnostics([
    diagnostic(7, 1, 'unused import', { source: 'ruff', code: 'F401' }),
    diagnostic(3, 0, '"x" is not defined', { source: 'pyright', code: { value: 'reportUndefinedVariable' } }),
    diagnostic(2, 3, 'hint', { code: '' }),
    diagnostic(1, 0, 'syntax error', { code: 12 }),
  ]);
  assert.deepEqual(wire, [
    { range: { start: at(1, 4), end: at(1, 9) }, message: 'syntax error', severity: 1, code: 12 },
    { range: { start: at(3, 4), end: at(3, 9) }, message: '"x" is not defined', severity: 1, source: 'pyright', code: 'reportUndefinedVariable' },
    { range: { start: at(7, 4), end: at(7, 9) }, message: 'unused import', severity: 2, source: 'ruff', code: 'F401' },
    { range: { start: at(2, 4), end: at(2, 9) }, message: 'hint', severity: 4 },
  ]);
  assert.equal(Object.getPrototypeOf(wire[0]!.range.start), Object.prototype, 'positions are plain objects (JSON)');
});

test('diagnostics within a selection: those touching it; a bare cursor means the whole file', () => {
  const d = (startLine: number, endLine: number): EditorDiagnostic => ({
    range: { start: at(startLine, 0), end: at(endLine, 5) },
    message: `${startLine}-${endLine}`,
    severity: 0,
  });
  const all = [d(0, 0), d(2, 3), d(5, 5), d(9, 12)];
  const messages = (range?: WireRange) => wireDiagnostics(all, range).map((w) => w.message);
  assert.deepEqual(messages({ start: at(3, 2), end: at(9, 0) }), ['2-3', '5-5', '9-12']);
  assert.deepEqual(messages({ start: at(6, 0), end: at(8, 0) }), []);
  assert.deepEqual(messages({ start: at(4, 0), end: at(4, 0) }), ['0-0', '2-3', '5-5', '9-12']);
  assert.deepEqual(messages(), ['0-0', '2-3', '5-5', '9-12']);
});

test('at most MAX_DIAGNOSTICS go with a run, errors kept first', () => {
  const many: EditorDiagnostic[] = Array.from({ length: MAX_DIAGNOSTICS + 10 }, (_, i) => ({
    range: { start: at(i, 0), end: at(i, 1) },
    message: `w${i}`,
    severity: 1,
  }));
  many.push({ range: { start: at(999, 0), end: at(999, 1) }, message: 'the error', severity: 0 });
  const wire = wireDiagnostics(many);
  assert.equal(wire.length, MAX_DIAGNOSTICS);
  assert.equal(wire[0]!.message, 'the error');
});

test('run labels: file name from the URI, skill and arguments', () => {
  const cases: [Parameters<typeof skillRunLabel>[0], string][] = [
    [{ skill: 'code-review', uri: 'file:///work/src/app.py' }, '/code-review app.py'],
    [{ skill: 'fix-diagnostics', uri: 'file:///w/my%20file.py', args: '"x" is not defined' }, '/fix-diagnostics my file.py: "x" is not defined'],
    [{ skill: 'explain', args: 'the parser' }, '/explain the parser'],
    [{ skill: 'explain', uri: null, args: '  ' }, '/explain'],
    [{ skill: 'explain', uri: 'not a uri' }, '/explain'],
  ];
  for (const [params, expected] of cases) {
    assert.equal(skillRunLabel(params), expected);
  }
  assert.equal(uriBaseName('file:///w/dir/'), 'dir');
  assert.equal(uriBaseName('file:///'), undefined);
  assert.equal(uriBaseName('file:///w/100%'), '100%', 'a bad escape is kept as written');
});

test('task labels are the first line, clipped', () => {
  assert.equal(taskLabel('Fix the bug\nin detail'), 'Fix the bug');
  assert.equal(taskLabel('x'.repeat(60), 10), 'xxxxxxxxx…');
});
