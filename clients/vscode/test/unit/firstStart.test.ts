import assert from 'node:assert/strict';
import { test } from 'node:test';

import { firstStartLine } from '../../src/firstStartText';
import type { StatusResult } from '../../src/protocol';

const SANDBOX = 'bubblewrap 0.8.0 at /usr/bin/bwrap: no network, only the shadow copy writable';
const ready: StatusResult = {
  model: 'ollama/qwen2.5-coder:7b',
  baseUrl: 'http://localhost:11434/v1',
  modelState: 'ready',
  modelDetail: '',
  sandboxed: true,
  sandbox: SANDBOX,
};
const FIX = 'Set an API key for a hosted model, or point agent-ls at a local server (Ollama, llama.cpp).';

test('a model that can run: one line naming it and the sandbox, no buttons', () => {
  assert.deepEqual(firstStartLine(ready), {
    severity: 'info',
    text: `Agent: model ollama/qwen2.5-coder:7b at http://localhost:11434/v1; commands run sandboxed (${SANDBOX}).`,
    actions: [],
  });
  const unsandboxed = 'no sandbox: bwrap not found on PATH; commands that run workspace code ask first';
  assert.equal(
    firstStartLine({ ...ready, baseUrl: null, model: 'replay:demo.json', sandboxed: false, sandbox: unsandboxed }).text,
    `Agent: model replay:demo.json; commands run UNSANDBOXED (${unsandboxed}).`,
  );
});

test('no model: what to do, with a button for a key and one for a local server', () => {
  assert.deepEqual(firstStartLine({ ...ready, model: null, baseUrl: null, modelState: 'noModel', modelDetail: 'no model configured' }), {
    severity: 'warning',
    text: `Agent: no model is configured; commands run sandboxed (${SANDBOX}). ${FIX}`,
    actions: ['Set API Key…', 'Use a Local Server…'],
  });
});

test('a hosted model without its key, or a model that cannot be used, says why', () => {
  const noKey = firstStartLine({
    ...ready,
    model: 'openai/gpt-4.1',
    baseUrl: 'https://api.openai.com/v1',
    modelState: 'noApiKey',
    modelDetail: 'openai/gpt-4.1 needs an API key: set OPENAI_API_KEY or AGENT_LS_API_KEY',
  });
  assert.equal(
    noKey.text,
    `Agent: openai/gpt-4.1 needs an API key: set OPENAI_API_KEY or AGENT_LS_API_KEY; commands run sandboxed (${SANDBOX}). ${FIX}`,
  );
  assert.deepEqual(noKey.actions, ['Set API Key…', 'Use a Local Server…']);
  const invalid = firstStartLine({ ...ready, model: null, baseUrl: null, modelState: 'invalid', modelDetail: 'unknown provider "foo".' });
  assert.equal(invalid.text, `Agent: the model cannot be used: unknown provider "foo"; commands run sandboxed (${SANDBOX}). ${FIX}`);
});
