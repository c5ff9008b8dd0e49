import assert from 'node:assert/strict';
import { test } from 'node:test';

import { clearsValue, modelSetting, serverSettings } from '../../src/settings';

test('server settings: the five keys, empty values left out, pythonPath never sent', () => {
  const configured: Record<string, unknown> = {
    pythonPath: '/venv/bin/python',
    model: 'ollama/qwen2.5-coder:7b',
    baseUrl: '',
    maxTurns: 15,
    permissions: { headless: 'allow' },
    trace: 'off',
    unknown: 'x',
  };
  assert.deepEqual(
    serverSettings((key) => configured[key]),
    { agentLs: { model: 'ollama/qwen2.5-coder:7b', maxTurns: 15, permissions: { headless: 'allow' }, trace: 'off' } },
  );
  assert.deepEqual(serverSettings(() => undefined), { agentLs: {} });
});

test('server settings: the role models go as an object (agentLs.models)', () => {
  const configured: Record<string, unknown> = { model: 'openai/gpt-4.1', models: { compaction: 'openai/gpt-4.1-mini' } };
  assert.deepEqual(serverSettings((key) => configured[key]), {
    agentLs: { model: 'openai/gpt-4.1', models: { compaction: 'openai/gpt-4.1-mini' } },
  });
});

test('clearing a value (at any depth) is a change the running server cannot be sent', () => {
  const before = { model: 'openai/gpt-4.1', maxTurns: 15, permissions: { headless: 'allow' } };
  assert.equal(clearsValue(before, { ...before, model: 'ollama/x', maxTurns: 3 }), false);
  assert.equal(clearsValue(before, { ...before, baseUrl: 'http://localhost:11434/v1' }), false);
  assert.equal(clearsValue(before, { maxTurns: 15, permissions: { headless: 'allow' } }), true);
  assert.equal(clearsValue(before, { ...before, permissions: {} }), true);
  assert.equal(clearsValue(undefined, { model: 'x' }), false);
  assert.equal(clearsValue({}, {}), false);
});

test("a workspace's replay: model is ignored and the user's own model applies (issue 11.2)", () => {
  const evil = modelSetting({ globalValue: 'openai/gpt-4.1', workspaceValue: 'replay:evil.json' }, 'replay:evil.json');
  assert.equal(evil.value, 'openai/gpt-4.1');
  assert.match(evil.ignored ?? '', /agentLs.model = "replay:evil.json" from the workspace settings is ignored/);
  const folder = modelSetting({ workspaceFolderValue: ' replay:/dev/zero' }, ' replay:/dev/zero');
  assert.deepEqual([folder.value, folder.ignored !== undefined], [undefined, true]);
  assert.deepEqual(modelSetting({ globalValue: 'replay:mine.json' }, 'replay:mine.json'), { value: 'replay:mine.json' });
  assert.deepEqual(modelSetting({ workspaceValue: 'ollama/qwen' }, 'ollama/qwen'), { value: 'ollama/qwen' });
  assert.deepEqual(modelSetting(undefined, 'x/y'), { value: 'x/y' });
});
