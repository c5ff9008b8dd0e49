// The Agent view's state (rebuilt from the server's notifications), its HTML, its page and messages.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { AgentEventNotification, ProposalFile, RunEndedNotification, UsageSummary } from '../../src/protocol';
import { contentSecurityPolicy, pageHtml } from '../../src/sessionView/html';
import { parseFromWebview } from '../../src/sessionView/messages';
import { renderConversation, verdictText } from '../../src/sessionView/render';
import { EMPTY_STATE, reduce, type ViewAction, type ViewState } from '../../src/sessionView/state';

const usage = (inputTokens: number, costUsd: number | null = null): UsageSummary => ({
  inputTokens,
  outputTokens: 100,
  cachedInputTokens: 0,
  estimated: false,
  costUsd,
});

function event(kind: AgentEventNotification['kind'], over: Partial<AgentEventNotification> = {}): ViewAction {
  return {
    type: 'event',
    event: {
      sessionId: 's1',
      kind,
      text: null,
      toolName: null,
      verdict: null,
      model: null,
      unsandboxed: null,
      usage: null,
      callUsage: null,
      sessionUsage: null,
      partial: null,
      approval: null,
      subagent: null,
      ...over,
    },
  };
}

function ended(over: Partial<RunEndedNotification> = {}): ViewAction {
  return {
    type: 'runEnded',
    ended: {
      sessionId: 's1',
      status: 'done',
      reason: 'the model answered',
      answer: 'Fixed mean().',
      usage: usage(900),
      sessionUsage: usage(1900),
      proposal: { files: ['stats.py'], added: 1, removed: 1, governedBy: {} },
      mode: 'default',
      plan: null,
      checks: [],
      notVerified: [],
      usageByRole: {},
      ...over,
    },
  };
}

const fold = (actions: ViewAction[], from: ViewState = EMPTY_STATE): ViewState => actions.reduce(reduce, from);

const firstRun: ViewAction[] = [
  { type: 'runLaunched', sessionId: 's1', task: 'Fix mean()' },
  event('runStarted', { text: 'Fix mean()' }),
  event('turnStarted', { text: '1' }),
  event('textDelta', { text: 'Let me ' }),
  event('textDelta', { text: 'read it.' }),
  event('toolCall', { toolName: 'read_file', text: '{"path": "stats.py"}' }),
  event('verdict', { toolName: 'read_file', verdict: 'allow' }),
  event('toolResult', { toolName: 'read_file', text: '1: def mean(values):' }),
  event('turnStarted', { text: '2' }),
  event('toolCall', { toolName: 'bash', text: '{"command": "wc -l stats.py"}' }),
  event('verdict', { toolName: 'bash', verdict: 'ask', approval: 'once' }),
  event('toolResult', { toolName: 'bash', text: 'exit code 0' }),
  event('turnStarted', { text: '3' }),
  event('textDelta', { text: 'Fixed mean().' }),
  event('usage', { usage: usage(900), sessionUsage: usage(900) }),
];

test('a run is its task, the streamed text and the tool calls with their verdicts and results, in order', () => {
  const state = fold(firstRun);
  assert.equal(state.sessionId, 's1');
  assert.equal(state.running, true);
  assert.deepEqual(state.runs, [
    {
      task: 'Fix mean()',
      status: 'running',
      usage: usage(900),
      items: [
        { kind: 'text', text: 'Let me read it.' },
        { kind: 'tool', call: { name: 'read_file', args: '{"path": "stats.py"}', verdict: 'allow', result: '1: def mean(values):' } },
        { kind: 'tool', call: { name: 'bash', args: '{"command": "wc -l stats.py"}', verdict: 'ask', approval: 'once', result: 'exit code 0' } },
        { kind: 'text', text: 'Fixed mean().' },
      ],
    },
  ]);
});

test('the run ends with its status and usage; a follow-up of the same session adds a run, another session replaces the view', () => {
  const done = fold([...firstRun, ended()]);
  assert.equal(done.running, false);
  assert.equal(done.runs[0]?.status, 'done');
  assert.equal(done.runs[0]?.items.length, 4);
  assert.deepEqual(done.sessionUsage, usage(900), 'the run’s usage, not the server’s sessionUsage (every session of the connection)');

  // A follow-up: the server's runStarted adds the run, whether the launch comes before or after it.
  const followUp = fold([event('runStarted', { text: 'Now add a test' }), { type: 'runLaunched', sessionId: 's1', task: 'Now add a test' }], done);
  assert.deepEqual(followUp.runs.map((run) => run.task), ['Fix mean()', 'Now add a test']);
  assert.equal(followUp.running, true);

  const other = fold([{ type: 'runLaunched', sessionId: 's2', task: '/code-review stats.py' }, event('runStarted', { sessionId: 's2', text: '/code-review stats.py' })], done);
  assert.equal(other.sessionId, 's2');
  assert.deepEqual(other.runs.map((run) => run.task), ['/code-review stats.py'], 'the launch and the runStarted event add one run');
  assert.deepEqual(other.proposal, []);
});

test('each model turn’s text is its own paragraph', () => {
  const state = fold([...firstRun, event('turnStarted', { text: '4' }), event('textDelta', { text: 'Also: done.' })]);
  assert.deepEqual(state.runs[0]?.items.slice(-2), [{ kind: 'text', text: 'Fixed mean().' }, { kind: 'text', text: 'Also: done.' }]);
});

test('an answer that was not streamed is shown from agent/runEnded; a stopped run says why', () => {
  const state = fold([{ type: 'runLaunched', sessionId: 's1', task: 't' }, ended({ status: 'stopped', reason: 'max turns (15) reached', answer: 'Partial.' })]);
  assert.deepEqual(state.runs[0]?.items, [{ kind: 'text', text: 'Partial.' }]);
  assert.equal(state.runs[0]?.reason, 'max turns (15) reached');
});

test('events of other sessions and of subagents are ignored; a retry drops the void partial text', () => {
  const base = fold(firstRun.slice(0, 4));
  assert.equal(reduce(base, event('textDelta', { sessionId: 'other', text: 'x' })), base);
  assert.equal(reduce(base, event('textDelta', { text: 'x', subagent: { callId: 'c', description: 'd' } })), base);
  const retried = fold([event('retrying', { partial: true }), event('textDelta', { text: 'Again.' })], base);
  assert.deepEqual(retried.runs[0]?.items, [{ kind: 'text', text: 'Again.' }]);
});

test('todos, the proposal and the context are the session’s; a resumed session starts empty with its summary', () => {
  const base = fold(firstRun);
  const file: ProposalFile = {
    uri: 'file:///w/stats.py', path: 'stats.py', isNew: false, baseVersion: 2, diff: '', added: 1, removed: 1,
    originalText: '', proposedText: '', instructions: [],
  };
  const state = fold(
    [
      { type: 'todos', sessionId: 's1', todos: [{ content: 'Fix mean', status: 'in_progress', activeForm: 'Fixing mean' }] },
      { type: 'todos', sessionId: 's9', todos: [] },
      { type: 'proposal', sessionId: 's1', files: [file] },
      { type: 'context', sessionId: 's1', context: { contextWindow: 1000, used: 250, free: 750, parts: [{ name: 'system prompt', tokens: 250 }], memory: null, noModel: null } },
    ],
    base,
  );
  assert.equal(state.todos.length, 1);
  assert.deepEqual(state.proposal, [{ uri: 'file:///w/stats.py', path: 'stats.py', added: 1, removed: 1, isNew: false }]);
  assert.equal(state.context?.used, 250);

  const resumed = reduce(state, {
    type: 'resumed',
    session: {
      sessionId: 'old', title: 'Fix the CLI', workspace: '/w', createdAt: '', updatedAt: '2026-11-30T10:00:00Z', runs: 2,
      status: 'done', pendingFiles: [], model: 'openai/x', usage: { inputTokens: 5, outputTokens: 6, cachedInputTokens: 0, costUsd: 0.5 },
    },
  });
  assert.equal(resumed.sessionId, 'old');
  assert.deepEqual(resumed.runs, []);
  assert.equal(resumed.resumed?.title, 'Fix the CLI');
  const continued = fold([event('runStarted', { sessionId: 'old', text: 'more' }), ended({ sessionId: 'old', usage: usage(10, 0.25) })], resumed);
  assert.deepEqual(continued.sessionUsage, { inputTokens: 15, outputTokens: 106, cachedInputTokens: 0, estimated: false, costUsd: 0.75 });
  assert.deepEqual(reduce(resumed, { type: 'newSession' }), EMPTY_STATE);
});

test('a resumed session shows its stored runs (agent.sessionHistory), unless a run started meanwhile', () => {
  const resumed = reduce(EMPTY_STATE, {
    type: 'resumed',
    session: {
      sessionId: 'old', title: 'Fix mean', workspace: '/w', createdAt: '', updatedAt: '', runs: 2, status: 'interrupted',
      pendingFiles: [], model: '', usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: null },
    },
  });
  const tool = { kind: 'tool' as const, text: null, toolName: 'bash', arguments: '{"command": "ls"}', verdict: 'ask' as const, rule: null, approval: 'once' as const, result: 'a.py', isError: false };
  const text = { kind: 'text' as const, text: 'Fixed.', toolName: null, arguments: null, verdict: null, rule: null, approval: null, result: null, isError: false };
  const history: ViewAction = {
    type: 'history',
    sessionId: 'old',
    runs: [
      { task: 'Fix mean', items: [tool, text], mode: 'default', plan: null, status: 'done', reason: 'the model answered', usage: usage(5), usageByRole: {}, checks: [], notVerified: [] },
      { task: 'And more', items: [], mode: 'default', plan: null, status: 'interrupted', reason: '', usage: null, usageByRole: {}, checks: [], notVerified: [] },
    ],
    todos: [{ content: 'Fix mean', status: 'completed', activeForm: 'Fixing mean' }],
  };
  const shown = reduce(resumed, history);
  assert.deepEqual(shown.runs, [
    {
      task: 'Fix mean',
      status: 'done',
      usage: usage(5),
      items: [{ kind: 'tool', call: { name: 'bash', args: '{"command": "ls"}', verdict: 'ask', approval: 'once', result: 'a.py' } }, { kind: 'text', text: 'Fixed.' }],
    },
    { task: 'And more', status: 'interrupted', items: [] },
  ]);
  assert.equal(shown.todos.length, 1);
  assert.ok(renderConversation(shown, html).includes('allowed once by you'));
  assert.equal(reduce(reduce(resumed, event('runStarted', { sessionId: 'old', text: 'new' })), history).runs.length, 1);
  assert.equal(reduce(EMPTY_STATE, history), EMPTY_STATE, 'another session’s history is ignored');
});

test('the server stopping ends a run in progress as an error', () => {
  const state = reduce(fold(firstRun), { type: 'serverStopped' });
  assert.equal(state.running, false);
  assert.equal(state.runs[0]?.status, 'error');
});

const html = (text: string) => `<p>${text}</p>`;

test('the conversation HTML escapes the server’s strings and shows verdicts, todos, the proposal and the chart', () => {
  const state = fold([
    ...firstRun,
    event('toolCall', { toolName: 'bash', text: '<b>rm -rf</b>' }),
    event('verdict', { toolName: 'bash', verdict: 'deny', text: 'Bash(rm *)' }),
    ended(),
    { type: 'todos', sessionId: 's1', todos: [{ content: 'Fix <mean>', status: 'completed', activeForm: 'Fixing' }] },
    {
      type: 'proposal', sessionId: 's1',
      files: [{ uri: 'file:///w/a "b".py', path: 'a "b".py', isNew: true, baseVersion: null, diff: '', added: 3, removed: 0, originalText: '', proposedText: '', instructions: [] }],
    },
    { type: 'context', sessionId: 's1', context: { contextWindow: 1000, used: 250, free: 750, parts: [{ name: 'system <prompt>', tokens: 250 }], memory: null, noModel: null } },
  ]);
  const out = renderConversation(state, html);
  assert.ok(out.includes('<p>Let me read it.</p>'), 'the answer goes through the markdown renderer');
  assert.ok(out.includes('&lt;b&gt;rm -rf&lt;/b&gt;') && !out.includes('<b>rm'), 'tool arguments are escaped');
  assert.ok(out.includes('denied by rule Bash(rm *)'));
  assert.ok(out.includes('allowed once by you'));
  assert.ok(out.includes('Fix &lt;mean&gt;'));
  assert.ok(out.includes('Proposed changes: 1 file changed (+3 −0)'));
  assert.ok(out.includes('data-action="apply" data-uri="file:///w/a &quot;b&quot;.py"'), 'a per-file Apply with the escaped URI');
  assert.ok(out.includes('data-share="0.2500"'), 'the window bar is a quarter');
  assert.ok(out.includes('system &lt;prompt&gt;'));
  assert.ok(!/style=/.test(out), 'no inline style: the CSP forbids it');
  assert.ok(out.includes('data-action="discard" data-uri="file:///w/a &quot;b&quot;.py"'));
  assert.ok(out.includes('data-action="apply" title="Apply every proposed file"'), 'and Apply all, without a URI');
  assert.ok(out.includes('data-action="trace" title="Open the session’s trace'), 'the session line links to its trace');
});

test('verdicts in words', () => {
  assert.equal(verdictText({ name: 'x', args: '' }), 'waiting for the policy');
  assert.equal(verdictText({ name: 'x', args: '', verdict: 'allow' }), 'allowed');
  assert.equal(verdictText({ name: 'x', args: '', verdict: 'ask' }), 'asking you');
  assert.equal(verdictText({ name: 'x', args: '', verdict: 'ask', approval: 'session' }), 'allowed for this session by you');
  assert.equal(verdictText({ name: 'x', args: '', verdict: 'ask', approval: 'deny' }), 'denied by you');
});

test('the page allows no network and only its own nonce’d script', () => {
  const csp = contentSecurityPolicy('https://res.example', 'abc123');
  assert.equal(
    csp,
    "default-src 'none'; script-src 'nonce-abc123'; style-src https://res.example; font-src https://res.example; " +
      "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'",
  );
  const page = pageHtml({ cspSource: 'https://res.example', nonce: 'abc123', scriptUri: 'https://res.example/main.js', styleUri: 'https://res.example/view.css' });
  assert.ok(page.includes(`content="${csp.replace(/'/g, '&#39;')}"`));
  assert.equal((page.match(/<script/g) ?? []).length, 1);
  assert.ok(page.includes('<script nonce="abc123" src="https://res.example/main.js">'));
  assert.ok(!/https?:\/\/(?!res\.example)/.test(page), 'nothing from another origin');
});

test('messages from the webview are checked', () => {
  assert.deepEqual(parseFromWebview({ type: 'send', text: '  Add a test ' }), { type: 'send', text: 'Add a test' });
  assert.equal(parseFromWebview({ type: 'send', text: '   ' }), undefined);
  assert.deepEqual(parseFromWebview({ type: 'action', action: 'apply', uri: 'file:///w/a.py' }), { type: 'action', action: 'apply', uri: 'file:///w/a.py' });
  assert.equal(parseFromWebview({ type: 'action', action: 'rm' }), undefined);
  assert.deepEqual(parseFromWebview({ type: 'action', action: 'trace' }), { type: 'action', action: 'trace' });
  assert.equal(parseFromWebview('send'), undefined);
  assert.deepEqual(parseFromWebview({ type: 'pickSession' }), { type: 'pickSession' });
});
