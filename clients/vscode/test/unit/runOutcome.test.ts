import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { RunEndedNotification } from '../../src/protocol';
import { checksLine, governedLine, runEndedView } from '../../src/runOutcome';

const ended = (over: Partial<RunEndedNotification>): RunEndedNotification => ({
  sessionId: 's1',
  status: 'done',
  reason: 'the model answered',
  answer: '',
  usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, estimated: false, costUsd: null },
  sessionUsage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, estimated: false, costUsd: null },
  proposal: { files: [], added: 0, removed: 0, governedBy: {} },
  mode: 'default',
  plan: null,
  checks: [],
  notVerified: [],
  usageByRole: {},
  ...over,
});

const proposal = { files: ['app.py', 'tests/test_app.py'], added: 5, removed: 3, governedBy: {} };

test('done with a proposal offers review, apply and discard', () => {
  assert.deepEqual(runEndedView(ended({ proposal, answer: 'Fixed the off-by-one.' })), {
    severity: 'info',
    message: 'Agent done. Proposed: 2 files changed (+5 −3). Fixed the off-by-one.',
    actions: ['Review Changes', 'Apply', 'Discard'],
  });
});

test('a long answer gets a Show Answer button', () => {
  const answer = 'Review:\n' + '- point\n'.repeat(40);
  const view = runEndedView(ended({ answer }))!;
  assert.deepEqual(view.actions, ['Show Answer']);
  assert.ok(view.message.length < 230);
});

test('an error is an error message with the reason, plainly', () => {
  assert.deepEqual(runEndedView(ended({ status: 'error', reason: 'no model: set agentLs.model' })), {
    severity: 'error',
    message: 'Agent run failed: no model: set agentLs.model',
    actions: ['Show Transcript'],
  });
});

test('stopped is a warning; a cancelled run with no changes says nothing', () => {
  assert.deepEqual(runEndedView(ended({ status: 'stopped', reason: 'clean stop: maximum of 15 turns exceeded', proposal: { files: ['a.py'], added: 1, removed: 0, governedBy: {} } })), {
    severity: 'warning',
    message: 'Agent stopped: clean stop: maximum of 15 turns exceeded. Proposed: 1 file changed (+1 −0).',
    actions: ['Review Changes', 'Apply', 'Discard'],
  });
  assert.equal(runEndedView(ended({ status: 'cancelled', reason: 'cancelled by the user' })), undefined);
});

test('the AGENTS.md files that govern the proposal, each once, root first', () => {
  const governedBy = { 'app.py': ['AGENTS.md'], 'pkg/x.py': ['AGENTS.md', 'pkg/AGENTS.md'] };
  assert.deepEqual(runEndedView(ended({ proposal: { ...proposal, governedBy }, answer: 'Done.' })), {
    severity: 'info',
    message: 'Agent done. Proposed: 2 files changed (+5 −3). Governed by AGENTS.md, pkg/AGENTS.md. Done.',
    actions: ['Review Changes', 'Apply', 'Discard'],
  });
});

test('governed-by line: empty without files, "and N more" past three labels', () => {
  const cases: [Record<string, string[]> | undefined, string][] = [
    [{}, ''],
    [undefined, ''],
    [{ 'a.py': [] }, ''],
    [{ 'a.py': ['AGENTS.md'] }, 'Governed by AGENTS.md.'],
    [{ 'a/b/c/d.py': ['AGENTS.md', 'a/AGENTS.md', 'a/b/AGENTS.md', 'a/b/c/AGENTS.md'], 'e/f.py': ['AGENTS.md', 'e/AGENTS.md'] },
      'Governed by AGENTS.md, a/AGENTS.md, a/b/AGENTS.md and 2 more.'],
  ];
  for (const [governedBy, expected] of cases) {
    assert.equal(governedLine(governedBy), expected, JSON.stringify(governedBy));
  }
});

test('a run without changes says nothing about instructions, even if the server sent some', () => {
  const view = runEndedView(ended({ answer: 'Nothing to change.', proposal: { files: [], added: 0, removed: 0, governedBy: { 'a.py': ['AGENTS.md'] } } }))!;
  assert.equal(view.message, 'Agent done. Nothing to change.');
});

test('a plan run says its plan is ready and offers Show Plan (the Agent view), not its markdown answer', () => {
  const plan = { summary: 'Add **median()** in `median.py`.', files: ['median.py'], steps: ['Write it.'], checks: [], risks: [] };
  assert.deepEqual(runEndedView(ended({ mode: 'plan', plan, answer: 'Add median() …\n\nSteps:\n1. Write it.', reason: 'plan submitted for approval' })), {
    severity: 'info',
    message: 'Agent: plan ready. Add median() in median.py. Approve or revise it in the Agent view.',
    actions: ['Show Plan'],
  });
  const noPlan = runEndedView(ended({ mode: 'plan', status: 'stopped', reason: 'no plan: the model answered without calling submit_plan' }))!;
  assert.equal(noPlan.message, 'Agent stopped: no plan: the model answered without calling submit_plan.');
});

test('the checks count goes with the end notification', () => {
  const checks = [
    { command: 'pytest -q', passed: true, exitCode: 0, outputTail: '' },
    { command: 'ruff check src', passed: false, exitCode: 1, outputTail: 'E501' },
  ];
  assert.equal(runEndedView(ended({ checks, answer: 'Done.' }))!.message, 'Agent done. Checks: 1 of 2 passed. Done.');
  assert.equal(
    runEndedView(ended({ checks, status: 'stopped', reason: 'claims done, checks fail: ruff check src', proposal }))!.message,
    'Agent stopped: claims done, checks fail: ruff check src. Proposed: 2 files changed (+5 −3). Checks: 1 of 2 passed.',
  );
  assert.equal(checksLine({ checks: [] }), '');
});
