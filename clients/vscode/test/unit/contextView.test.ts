// "Agent: Show Context": agent.context's answer as a markdown chart.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { bar, BAR_WIDTH, renderContext } from '../../src/contextView';
import type { ContextResult } from '../../src/protocol';

const answer = (over: Partial<ContextResult> = {}): ContextResult => ({
  contextWindow: 128000,
  used: 1400,
  free: 126600,
  parts: [
    { name: 'request options', tokens: 10 },
    { name: 'system prompt', tokens: 400 },
    { name: 'tool definitions', tokens: 800 },
    { name: 'instructions: AGENTS.md', tokens: 190 },
  ],
  memory: { path: '/state/ws/memory.md', bytes: 1234 },
  noModel: null,
  ...over,
});

test('a bar is proportional, in eighths of a character; 0 is empty and any tokens show', () => {
  assert.equal(bar(800, 800), '█'.repeat(BAR_WIDTH));
  assert.equal(bar(400, 800), '█'.repeat(BAR_WIDTH / 2));
  assert.equal(bar(1, 8, 1), '▏');
  assert.equal(bar(3, 8, 2), '▊');
  assert.equal(bar(0, 800), '');
  assert.equal(bar(1, 1_000_000), '▏');
});

test('the chart: totals, window and free space, one bar per part, the memory file', () => {
  assert.equal(
    renderContext(answer(), 'session abc'),
    [
      '# Context of session abc',
      '',
      '~1,400 tokens used of a 128,000 tokens window (1.1%), ~126,600 tokens free.',
      'Tokens are estimated as bytes / 4 of the next request, as the server would send it.',
      '',
      '```text',
      `window  ▓${'░'.repeat(39)}  1.1% used`,
      '```',
      '',
      '## Parts of the next request',
      '',
      '```text',
      `request options             10    0.7%  ${bar(10, 800)}`,
      `system prompt              400   28.6%  ${'█'.repeat(20)}`,
      `tool definitions           800   57.1%  ${'█'.repeat(40)}`,
      `instructions: AGENTS.md    190   13.6%  ${'█'.repeat(9)}▌`,
      'total                    1,400',
      '```',
      '',
      'The parts add up to 1,400 tokens; each is rounded, the whole request is ~1,400 tokens. ' +
        'Shares are of the whole request; bars are relative to the largest part.',
      '',
      '## Memory',
      '',
      '- /state/ws/memory.md (1,234 bytes): not in the request until the model calls `memory_read`.',
      '',
    ].join('\n'),
  );
});

test('no parts, no memory file, a full window', () => {
  const text = renderContext(answer({ parts: [], memory: null, used: 4000, free: 0, contextWindow: 4000 }), 'the latest session');
  assert.match(text, /^# Context of the latest session\n/);
  assert.match(text, new RegExp(`window  ${'▓'.repeat(40)}  100\\.0% used`));
  assert.match(text, /The request is empty\./);
  assert.match(text, /No memory notes file for this session\./);
});

test('with no model configured, the report says how it was measured', () => {
  const text = renderContext(answer({ noModel: 'no model configured' }), 'the latest session');
  assert.ok(text.includes('No model to measure with (no model configured): measured as a Chat Completions request.'));
  assert.ok(!renderContext(answer(), 'the latest session').includes('No model to measure with'));
});
