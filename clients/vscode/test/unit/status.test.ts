import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { UsageSummary } from '../../src/protocol';
import { formatCost, formatTokens, statusView, streamTail, todoLine } from '../../src/status';

const usage = (over: Partial<UsageSummary> = {}): UsageSummary => ({
  inputTokens: 12000,
  outputTokens: 345,
  cachedInputTokens: 0,
  estimated: false,
  costUsd: null,
  ...over,
});

test('token and cost formats', () => {
  assert.equal(formatTokens(950), '950');
  assert.equal(formatTokens(12345), '12.3k');
  assert.equal(formatTokens(2000), '2k');
  assert.equal(formatTokens(1_250_000), '1.3M');
  assert.equal(formatCost(0.00421), '$0.0042');
  assert.equal(formatCost(1.234), '$1.23');
});

test('idle: the model, or "Agent" when the server takes it from its environment', () => {
  assert.equal(statusView({ model: 'openai/gpt-4.1', server: 'running' }).text, '$(hubot) openai/gpt-4.1');
  const view = statusView({ model: '', server: 'running' });
  assert.equal(view.text, '$(hubot) Agent');
  assert.match(view.tooltip, /AGENT_LS_MODEL/);
});

test('running: a spinner and the server usage text', () => {
  assert.equal(
    statusView({ model: 'm/x', server: 'running', running: { task: 'Fix', usageText: '1200 in, 30 out' } }).text,
    '$(loading~spin) m/x · 1200 in, 30 out',
  );
  assert.equal(statusView({ model: 'm/x', server: 'running', running: { task: 'Fix' } }).text, '$(loading~spin) m/x · working');
});

test('after a run: total tokens, ~ when estimated, cost once there are prices', () => {
  assert.equal(statusView({ model: 'm/x', server: 'running', last: { status: 'done', usage: usage() } }).text, '$(hubot) m/x · 12.3k tokens');
  assert.equal(
    statusView({ model: 'm/x', server: 'running', last: { status: 'done', usage: usage({ estimated: true, costUsd: 0.0123 }) } }).text,
    '$(hubot) m/x · ~12.3k tokens · $0.01',
  );
  assert.equal(
    statusView({ model: 'm/x', server: 'running', last: { status: 'stopped', usage: usage({ cachedInputTokens: 800 }) } }).tooltip,
    'Model: m/x\nLast run stopped: 12000 input tokens, 800 of them cached, 345 output tokens\nClick to show the transcript.',
  );
});

test('a server that failed to start shows an error icon', () => {
  assert.equal(statusView({ model: 'm/x', server: 'failed', last: { status: 'done', usage: usage() } }).text, '$(error) Agent');
});

test('a streamed answer shows its last characters on one line', () => {
  assert.equal(streamTail('Looking at\n  the file'), 'Looking at the file');
  const long = 'x'.repeat(200) + 'END';
  const tail = streamTail(long, 20);
  assert.equal(tail.length, 20);
  assert.ok(tail.startsWith('…') && tail.endsWith('END'));
});

test('commands without a sandbox: a warning icon, "unsandboxed" and the reason in the tooltip', () => {
  const reason = 'no sandbox: bubblewrap (bwrap) is not installed; commands that run workspace code ask first';
  const idle = statusView({ model: 'm/x', server: 'running', unsandboxed: reason });
  assert.equal(idle.text, '$(warning) m/x · unsandboxed');
  assert.match(idle.tooltip, /^Unsandboxed: no sandbox: bubblewrap/);
  const running = statusView({ model: 'm/x', server: 'running', unsandboxed: reason, running: { task: 'Fix' } });
  assert.equal(running.text, '$(loading~spin) m/x · working · unsandboxed');
  assert.equal(statusView({ model: 'm/x', server: 'running', unsandboxed: undefined }).text, '$(hubot) m/x');
});

test('the status bar names the todo item in progress', () => {
  const todos = [
    { content: 'Read stats.py', status: 'completed' as const, activeForm: 'Reading stats.py' },
    { content: 'Fix mean()', status: 'in_progress' as const, activeForm: 'Fixing mean()' },
    { content: 'Run the tests', status: 'pending' as const, activeForm: 'Running the tests' },
  ];
  const todo = todoLine(todos);
  assert.equal(todo, 'Fixing mean() (1/3 done)');
  const view = statusView({ model: 'openai/gpt', server: 'running', running: { task: 'Fix it', usageText: '1.2k tokens', todo } });
  assert.equal(view.text, '$(loading~spin) openai/gpt · Fixing mean() (1/3 done) · 1.2k tokens');
  assert.ok(view.tooltip.includes('\nNow: Fixing mean() (1/3 done)\n'));
  assert.equal(todoLine([{ ...todos[0]! }]), '1/1 todos done');
  assert.equal(todoLine([]), undefined);
});
