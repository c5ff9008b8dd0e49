// src/protocol.ts against server/agent_ls/lsp/protocol.py: same command and notification names,
// same fields (camelCase), same event kinds. Reads the Python file from the repository.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';

import * as protocol from '../../src/protocol';

const PYTHON = resolve(process.cwd(), '../../server/agent_ls/lsp/protocol.py');
const source = readFileSync(PYTHON, 'utf8');

const camel = (name: string): string => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

function pythonConstants(): Record<string, string> {
  const constants: Record<string, string> = {};
  for (const match of source.matchAll(/^((?:CMD|AGENT)_\w+) = "([^"]+)"$/gm)) {
    constants[match[1]!] = match[2]!;
  }
  return constants;
}

type Presence = 'required' | 'optional';

/**
 * Each pydantic model's fields, camelCase. Params from clients (`_Lenient`) are optional where the
 * field has a default; everything the server sends (`_Wire`) always carries every field.
 */
function pythonModels(): Record<string, Record<string, Presence>> {
  const models: Record<string, Record<string, Presence>> = {};
  for (const block of source.split(/^(?=class )/m).slice(1)) {
    const [, name, base] = /^class (\w+)\((\w+)\)/.exec(block)!;
    if (name!.startsWith('_')) {
      continue;
    }
    const fields: Record<string, Presence> = {};
    for (const match of block.matchAll(/^ {4}(\w+): ([^\n]*)$/gm)) {
      if (match[1] !== 'model_config') {
        const annotation = match[2]!;
        const hasDefault = / = (?!Field\()/.test(annotation) || /Field\([^)]*default/.test(annotation);
        fields[camel(match[1]!)] = base === '_Lenient' && hasDefault ? 'optional' : 'required';
      }
    }
    models[name!] = fields;
  }
  return models;
}

test('command and notification names match the server', () => {
  const fromTs = Object.fromEntries(
    Object.entries(protocol).filter(([key, value]) => /^(CMD|AGENT)_/.test(key) && typeof value === 'string'),
  );
  const { CMD_RUN_SKILL, ...served } = fromTs;
  assert.equal(CMD_RUN_SKILL, 'agent.runSkill');
  assert.deepEqual(served, pythonConstants());
});

test('every wire type has the same fields, equally optional, as its pydantic model', () => {
  const models = pythonModels();
  assert.ok(Object.keys(models).length >= 15, `parsed ${Object.keys(models).length} models from ${PYTHON}`);
  assert.deepEqual(protocol.WIRE_FIELDS, models);
});

test('event kinds match the server', () => {
  const literal = /EventKind = Literal\[([^\]]*)\]/s.exec(source)![1]!;
  const kinds = [...literal.matchAll(/"(\w+)"/g)].map((m) => m[1]);
  assert.deepEqual([...protocol.EVENT_KINDS].sort(), kinds.sort());
});
