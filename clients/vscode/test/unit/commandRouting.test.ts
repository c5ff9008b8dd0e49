// Code actions' agent.run / agent.runSkill go through the palette's run path; other commands go on.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type RunRequest, routeServerCommand, runRequest, unsupportedCommand } from '../../src/commandRouting';
import type { RunResult } from '../../src/protocol';

const uri = 'file:///w/src/app.py';
const range = { start: { line: 3, character: 4 }, end: { line: 3, character: 9 } };
const diagnostic = { range, message: '"x" is not defined', severity: 1, source: 'pyright' };

test('the server code actions and what they start', () => {
  // The four code actions of issue 6, as the server sends them, and agent.run with a task.
  const cases: [string, unknown[], RunRequest | undefined][] = [
    [
      'agent.runSkill',
      [{ skill: 'fix-diagnostics', uri, range, args: '"x" is not defined', diagnostics: [diagnostic] }],
      {
        command: 'agent.runSkill',
        params: { skill: 'fix-diagnostics', uri, range, args: '"x" is not defined', diagnostics: [diagnostic] },
        label: '/fix-diagnostics app.py: "x" is not defined',
      },
    ],
    ['agent.runSkill', [{ skill: 'code-review', uri }], { command: 'agent.runSkill', params: { skill: 'code-review', uri }, label: '/code-review app.py' }],
    ['agent.runSkill', [{ skill: 'explain', uri, range }], { command: 'agent.runSkill', params: { skill: 'explain', uri, range }, label: '/explain app.py' }],
    ['agent.runSkill', [{ skill: 'write-tests', uri, range }], { command: 'agent.runSkill', params: { skill: 'write-tests', uri, range }, label: '/write-tests app.py' }],
    ['agent.run', [{ task: '/code-review', uri }], { command: 'agent.run', params: { task: '/code-review', uri }, label: '/code-review' }],
    // Not runs, or not well-formed: left to the server.
    ['agent.cancel', [{ sessionId: 's1' }], undefined],
    ['agent.proposal', [{}], undefined],
    ['agent.runSkill', [], undefined],
    ['agent.runSkill', [{ skill: '' }], undefined],
    ['agent.runSkill', [{ skill: 3 }], undefined],
    ['agent.runSkill', ['code-review'], undefined],
    ['agent.runSkill', [[{ skill: 'code-review' }]], undefined],
    ['agent.runSkill', [null], undefined],
    ['agent.runSkill', [{ skill: 'a' }, { skill: 'b' }], undefined],
    ['agent.run', [{ task: '   ' }], undefined],
    ['agent.run', [{ skill: 'code-review' }], undefined],
  ];
  for (const [command, args, expected] of cases) {
    assert.deepEqual(runRequest(command, args), expected, `${command} ${JSON.stringify(args)}`);
  }
});

test('the argument object is passed on as it is (fields the extension does not know included)', () => {
  const argument = { skill: 'code-review', uri, futureField: { x: 1 } };
  assert.equal(runRequest('agent.runSkill', [argument])?.params, argument);
});

function harness(start: (request: RunRequest) => Promise<RunResult | undefined>) {
  const started: RunRequest[] = [];
  const sent: [string, unknown[]][] = [];
  const reported: unknown[] = [];
  const route = routeServerCommand(
    (request) => {
      started.push(request);
      return start(request);
    },
    (error) => reported.push(error),
  );
  const send = (command: string, args: unknown[]) => {
    sent.push([command, args]);
    return Promise.resolve({ sentToServer: command });
  };
  return { route, send, started, sent, reported };
}

test('a code action run starts through the run path, not straight to the server', async () => {
  const result: RunResult = { sessionId: 's1', progressToken: 't1' };
  const h = harness(() => Promise.resolve(result));
  const answer = await h.route('agent.runSkill', [{ skill: 'code-review', uri }], h.send);
  assert.deepEqual(answer, result);
  assert.deepEqual(h.started, [{ command: 'agent.runSkill', params: { skill: 'code-review', uri }, label: '/code-review app.py' }]);
  assert.deepEqual(h.sent, []);
  assert.deepEqual(h.reported, []);
});

test('other server commands go to the server unchanged', async () => {
  const h = harness(() => Promise.reject(new Error('must not start')));
  const answer = await h.route('agent.cancel', [{ sessionId: 's1' }], h.send);
  assert.deepEqual(answer, { sentToServer: 'agent.cancel' });
  assert.deepEqual(h.sent, [['agent.cancel', [{ sessionId: 's1' }]]]);
  await h.route('agent.runSkill', [{ skill: '' }], h.send);
  assert.deepEqual(h.sent[1], ['agent.runSkill', [{ skill: '' }]], 'a malformed run gets the server’s own error');
  assert.deepEqual(h.started, []);
});

test('a failed start is reported, and the command resolves', async () => {
  const error = new Error('unknown skill "nope"');
  const h = harness(() => Promise.reject(error));
  assert.equal(await h.route('agent.runSkill', [{ skill: 'nope', uri }], h.send), undefined);
  assert.deepEqual(h.reported, [error]);
  assert.deepEqual(h.sent, []);
});

test('a command the server does not offer is a clear error; an unlisting server is trusted', () => {
  assert.equal(unsupportedCommand(['agent.run', 'agent.runSkill'], 'agent.runSkill'), undefined);
  assert.equal(unsupportedCommand(undefined, 'agent.runSkill'), undefined);
  assert.match(
    unsupportedCommand(['agent.run'], 'agent.instructions') ?? '',
    /^this agent-ls server does not offer agent\.instructions: it is older than the extension\. Update agent-ls/,
  );
});
