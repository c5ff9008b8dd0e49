// The Agent view's side of issue 17: a plan run's card with Approve / Revise, the checks' results and
// "Not verified", the usage per role; read from agent/runEnded and from a stored run.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { HistoryRunWire, RunEndedNotification, UsageSummary } from '../../src/protocol';
import { pageHtml } from '../../src/sessionView/html';
import { checkLines, parseFromWebview } from '../../src/sessionView/messages';
import { checksSection, IMPLEMENT_PLAN_TASK, planCard, roleUsageText, runOutcome } from '../../src/sessionView/outcome';
import { renderConversation } from '../../src/sessionView/render';
import { EMPTY_STATE, reduce, type ViewAction, type ViewState } from '../../src/sessionView/state';

const usage = (inputTokens: number, costUsd: number | null = null): UsageSummary => ({
  inputTokens,
  outputTokens: 100,
  cachedInputTokens: 0,
  estimated: false,
  costUsd,
});

const PLAN = {
  summary: 'Make **mean()** divide by the count.',
  files: ['stats.py', 'tests/test_stats.py'],
  steps: ['Change the divisor in `mean()`.', 'Add a test for `[1, 2, 3]`.'],
  checks: ['pytest tests/test_stats.py'],
  risks: ['Callers that relied on <the old value>.'],
};

/**
 * agent/runEnded with the issue-17 fields (as the server sends them) over the older ones. Built loosely
 * (`as unknown as`): the fields reach protocol.ts one part at a time.
 */
function ended(over: Record<string, unknown> = {}): ViewAction {
  const base = {
    sessionId: 's1',
    status: 'done',
    reason: 'the model answered',
    answer: 'Here is the plan.',
    usage: usage(900),
    sessionUsage: usage(900),
    proposal: { files: [], added: 0, removed: 0, governedBy: {} },
  };
  const extra = { mode: 'default', plan: null, checks: [], notVerified: [], usageByRole: { main: usage(900) }, ...over };
  return { type: 'runEnded', ended: { ...base, ...extra } as unknown as RunEndedNotification };
}

const fold = (actions: ViewAction[], from: ViewState = EMPTY_STATE): ViewState => actions.reduce(reduce, from);
const md = (text: string) => `<p>${text.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`;
const planRun: ViewAction[] = [{ type: 'runLaunched', sessionId: 's1', task: 'Fix mean()' }, ended({ mode: 'plan', plan: PLAN })];

test('a plan run keeps its mode and plan; the card lists summary, files, numbered steps, checks and risks', () => {
  const state = fold(planRun);
  assert.equal(state.runs[0]?.mode, 'plan');
  assert.deepEqual(state.runs[0]?.plan, PLAN);
  assert.equal(state.runs[0]?.checks, undefined, 'no checks ran: the field is left out');
  const out = renderConversation(state, md);
  assert.ok(out.includes('<section class="plan" aria-label="Plan">'));
  assert.ok(out.includes('data-mode="plan"') && out.includes('class="mode-badge"'), 'the run is marked as a plan run');
  assert.ok(out.includes('<p>Make **mean()** divide by the count.</p>'), 'the summary goes through the markdown renderer');
  assert.ok(out.includes('<ul class="plan-files"><li><code>stats.py</code></li><li><code>tests/test_stats.py</code></li></ul>'));
  assert.ok(out.includes('<ol class="plan-steps markdown"><li><p>Change the divisor in `mean()`.</p></li><li><p>Add a test'), 'steps are an ordered list');
  assert.ok(out.includes('<ul class="plan-checks"><li><code>pytest tests/test_stats.py</code></li></ul>'));
  assert.ok(out.includes('Callers that relied on &lt;the old value&gt;.'), 'risks are escaped (by the renderer)');
  assert.ok(out.includes('data-action="approvePlan"') && out.includes('data-action="revise"'), 'the latest plan can be approved or revised');
  assert.ok(out.includes('data-action="usePlanChecks"'), 'its checks can be taken as acceptance checks');
  assert.deepEqual(state.runs[0]?.items, [], 'the answer (the plan as markdown) is not shown twice');
  const streamed = fold([{ type: 'runLaunched', sessionId: 's1', task: 't' }, { type: 'event', event: { sessionId: 's1', kind: 'textDelta', text: 'I read stats.py.', toolName: null, verdict: null, model: null, unsandboxed: null, usage: null, callUsage: null, sessionUsage: null, partial: null, approval: null, subagent: null } }, ended({ mode: 'plan', plan: PLAN })]);
  const html = renderConversation(streamed, md);
  assert.ok(html.indexOf('I read stats.py.') < html.indexOf('class="plan"'), 'the card follows what was streamed');
});

test('only the latest plan, with nothing running, has Approve / Revise', () => {
  const approved = fold([{ type: 'event', event: { sessionId: 's1', kind: 'runStarted', text: 'Implement the approved plan.', toolName: null, verdict: null, model: null, unsandboxed: null, usage: null, callUsage: null, sessionUsage: null, partial: null, approval: null, subagent: null } }], fold(planRun));
  assert.equal(approved.running, true);
  const running = renderConversation(approved, md);
  assert.ok(running.includes('class="plan"'), 'the approved plan stays in the conversation');
  assert.ok(!running.includes('data-action="approvePlan"') && !running.includes('data-action="usePlanChecks"'), 'no Approve while the implementation runs');
  const done = reduce(approved, ended({ answer: 'Implemented.' }));
  assert.equal(done.runs[1]?.mode, undefined);
  assert.ok(!renderConversation(done, md).includes('data-action="approvePlan"'), 'an earlier plan has no buttons');
});

test('a plan run that ended without a plan shows no card; an empty plan field is no plan', () => {
  const state = fold([{ type: 'runLaunched', sessionId: 's1', task: 't' }, ended({ mode: 'plan', plan: null, status: 'stopped', reason: 'max turns (15) reached' })]);
  assert.equal(state.runs[0]?.mode, 'plan');
  assert.equal(state.runs[0]?.plan, undefined);
  assert.ok(!renderConversation(state, md).includes('class="plan"'));
});

test('checks: passed, failed and not run, with the output folded; "Not verified" lines; a false done says why', () => {
  const checks = [
    { command: 'pytest tests/test_stats.py', passed: true, exitCode: 0, outputTail: '1 passed' },
    { command: 'ruff check <src>', passed: false, exitCode: 1, outputTail: 'E501 line too long' },
    { command: 'make lint', passed: false, exitCode: null, outputTail: '' },
  ];
  const state = fold([
    { type: 'runLaunched', sessionId: 's1', task: 'Fix mean()' },
    ended({ status: 'stopped', reason: 'claims done, checks fail: ruff check <src>', checks, notVerified: ['make lint: denied by rule Bash(make *)'] }),
  ]);
  assert.deepEqual(state.runs[0]?.checks, checks);
  assert.deepEqual(state.runs[0]?.notVerified, ['make lint: denied by rule Bash(make *)']);
  const out = renderConversation(state, md);
  assert.ok(out.includes('Checks: 1 of 3 passed'));
  assert.ok(out.includes('<li class="check check-passed"><details class="check-output" data-key="check-0-0">'));
  assert.ok(out.includes('codicon-pass') && out.includes('codicon-error') && out.includes('codicon-circle-slash'));
  assert.ok(out.includes('<code class="check-command">ruff check &lt;src&gt;</code><span class="check-exit">exit 1</span>'));
  assert.ok(out.includes('<pre>E501 line too long</pre>'), 'the output tail, folded');
  assert.ok(out.includes('<li class="check check-not-run"><div class="check-line">'), 'no output: nothing to unfold');
  assert.ok(out.includes('could not run'));
  assert.ok(out.includes('<section class="not-verified" aria-label="Not verified">') && out.includes('make lint: denied by rule Bash(make *)'));
  assert.ok(out.includes('stopped: claims done, checks fail: ruff check &lt;src&gt;'));
  assert.ok(!/style=/.test(out));
});

test('usage per role shows only with more than one role, main first', () => {
  assert.equal(roleUsageText({ main: usage(900) }), '');
  assert.equal(roleUsageText(runOutcome({ usageByRole: { subagent: usage(50), compaction: usage(300, 0.001), main: usage(1900, 0.02) } }).usageByRole),
    'main 2k tokens · $0.02, compaction 400 tokens · $0.0010, subagent 150 tokens');
  const state = fold([{ type: 'runLaunched', sessionId: 's1', task: 't' }, ended({ usageByRole: { compaction: usage(300), main: usage(600) } })]);
  assert.ok(renderConversation(state, md).includes('done · 1k tokens (main 700 tokens, compaction 400 tokens)'));
  const single = fold([{ type: 'runLaunched', sessionId: 's1', task: 't' }, ended()]);
  assert.ok(renderConversation(single, md).includes('done · 1k tokens</span>'));
});

test('an older server (no issue-17 fields) and malformed fields give an empty outcome', () => {
  assert.deepEqual(runOutcome({}), { mode: 'default', checks: [], notVerified: [], usageByRole: {} });
  assert.deepEqual(runOutcome({ mode: 'plan', plan: 'x', checks: [{ passed: true }, 3], notVerified: [1, 'a'], usageByRole: { main: 5 } }), {
    mode: 'plan', checks: [], notVerified: ['a'], usageByRole: {},
  });
  assert.deepEqual(runOutcome({ plan: { summary: 'S' } }).plan, { summary: 'S', files: [], steps: [], checks: [], risks: [] });
  assert.equal(checksSection([], [], '0'), '');
  assert.ok(!planCard({ summary: '', files: [], steps: [], checks: [], risks: [] }, md, false).includes('<h4>'));
});

test('a resumed session shows its last plan when the stored run carries it, and it can be approved', () => {
  const resumed = reduce(EMPTY_STATE, {
    type: 'resumed',
    session: {
      sessionId: 's1', title: 'Fix mean', workspace: '/w', createdAt: '', updatedAt: '', runs: 1, status: 'done',
      pendingFiles: [], model: '', usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: null },
    },
  });
  const stored = { task: 'Fix mean', items: [], status: 'done', reason: '', usage: usage(5), usageByRole: {}, mode: 'plan', plan: PLAN } as unknown as HistoryRunWire;
  const shown = reduce(resumed, { type: 'history', sessionId: 's1', runs: [stored], todos: [] });
  assert.deepEqual(shown.runs[0]?.plan, PLAN);
  assert.ok(renderConversation(shown, md).includes('data-action="approvePlan"'));
});

test('the input area sends its mode and checks; Approve plan carries the checks; the rest is dropped', () => {
  assert.deepEqual(checkLines(' pytest -q \n\n  ruff check .\r\n'), ['pytest -q', 'ruff check .']);
  assert.deepEqual(parseFromWebview({ type: 'send', text: ' Fix mean() ', mode: 'plan', checks: ['pytest -q', '  ', 3] }), {
    type: 'send', text: 'Fix mean()', mode: 'plan', checks: ['pytest -q'],
  });
  assert.deepEqual(parseFromWebview({ type: 'send', text: 'x', mode: 'yolo', checks: 'pytest' }), { type: 'send', text: 'x' }, 'an unknown mode is the default');
  assert.deepEqual(parseFromWebview({ type: 'send', text: 'x', checks: ['a\nrm -rf /'] }), { type: 'send', text: 'x' }, 'one line per check');
  assert.deepEqual(parseFromWebview({ type: 'approvePlan' }), { type: 'approvePlan' });
  assert.deepEqual(parseFromWebview({ type: 'approvePlan', checks: ['pytest -q'] }), { type: 'approvePlan', checks: ['pytest -q'] });
  assert.equal(parseFromWebview({ type: 'action', action: 'approvePlan' }), undefined, 'Approve is its own message');
  assert.equal(IMPLEMENT_PLAN_TASK, 'Implement the approved plan.');
});

test('the page has the mode switch (Ask/Act, Plan) and the checks box in its input area', () => {
  const page = pageHtml({ cspSource: 'https://res.example', nonce: 'n', scriptUri: 'https://res.example/main.js', styleUri: 'https://res.example/view.css' });
  assert.ok(page.includes('<label for="mode" class="visually-hidden">Mode</label>'));
  assert.ok(/<select id="mode"[^>]*>\s*<option value="default">Ask\/Act<\/option>\s*<option value="plan">Plan<\/option>/.test(page));
  assert.ok(page.includes('<textarea id="checks"') && page.includes('<textarea id="task"'));
  assert.ok(page.indexOf('id="mode"') < page.indexOf('id="task"'), 'the mode comes first in the tab order');
});

const started = (task: string, sessionId = 's1'): ViewAction => ({
  type: 'event',
  event: { sessionId, kind: 'runStarted', text: task, toolName: null, verdict: null, model: null, unsandboxed: null, usage: null, callUsage: null, sessionUsage: null, partial: null, approval: null, subagent: null },
});

test('a plan run is marked while it runs, whether its launch or its runStarted comes first', () => {
  const fresh = fold([{ type: 'runLaunched', sessionId: 's1', task: 'Plan it', mode: 'plan' }, started('Plan it')]);
  assert.equal(fresh.runs.length, 1);
  assert.equal(fresh.runs[0]?.mode, 'plan');
  assert.ok(renderConversation(fresh, md).includes('planning…'), 'a running plan run says planning');

  const base = fold(planRun);
  const eventFirst = fold([started('Also handle []'), { type: 'runLaunched', sessionId: 's1', task: 'Also handle []', mode: 'plan' }], base);
  assert.deepEqual(eventFirst.runs.map((run) => run.mode), ['plan', 'plan']);
  const launchFirst = fold([{ type: 'runLaunched', sessionId: 's1', task: 'Also handle []', mode: 'plan' }, started('Also handle []')], base);
  assert.deepEqual(launchFirst.runs.map((run) => run.mode), ['plan', 'plan']);
  assert.equal(launchFirst.pendingMode, undefined, 'the mark is used once');
  const approve = fold([{ type: 'runLaunched', sessionId: 's1', task: IMPLEMENT_PLAN_TASK }, started(IMPLEMENT_PLAN_TASK)], base);
  assert.deepEqual(approve.runs.map((run) => run.mode), ['plan', undefined], 'a default run is not marked');
  const endedFirst = fold([started('Again'), ended({ mode: 'plan', plan: PLAN }), { type: 'runLaunched', sessionId: 's1', task: 'Again', mode: 'plan' }], base);
  assert.equal(endedFirst.pendingMode, undefined, 'a plan run that ended before its launch leaves no mark for the next run');
});
