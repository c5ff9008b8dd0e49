// src/protocol.ts against server/agent_ls/lsp/protocol.py: same command and notification names,
// same fields (camelCase), same event kinds; and the hand-built wire() dicts (skills, instructions,
// file diagnostics) against their Python classes. Reads the Python files from the repository.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import * as protocol from '../../src/protocol';
import { DICT_WIRE_FIELDS, EVENT_KINDS, WIRE_FIELDS } from '../../src/wireFields';

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
  assert.deepEqual(fromTs, pythonConstants());
  assert.equal(fromTs['CMD_RUN_SKILL'], 'agent.runSkill');
});

test('every wire type has the same fields, equally optional, as its pydantic model', () => {
  const models = pythonModels();
  assert.ok(Object.keys(models).length >= 15, `parsed ${Object.keys(models).length} models from ${PYTHON}`);
  assert.deepEqual(WIRE_FIELDS, models);
});

test('event kinds match the server', () => {
  const literal = /EventKind = Literal\[([^\]]*)\]/s.exec(source)![1]!;
  const kinds = [...literal.matchAll(/"(\w+)"/g)].map((m) => m[1]);
  assert.deepEqual([...EVENT_KINDS].sort(), kinds.sort());
});

/** The Python class behind each hand-built wire type of `DICT_WIRE_FIELDS`. */
const DICT_WIRE_CLASSES: Record<keyof typeof DICT_WIRE_FIELDS, string> = {
  WireFileDiagnostic: 'FileDiagnostic',
  SkillInfo: 'Skill',
  InstructionImport: 'ImportRecord',
  InstructionFileInfo: 'InstructionFile',
  InstructionsResult: 'InstructionChain',
};

const PACKAGE = resolve(process.cwd(), '../../server/agent_ls');

function pythonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() && entry.name !== '__pycache__'
      ? pythonFiles(join(dir, entry.name))
      : entry.name.endsWith('.py')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The top-level keys of the dict literal that `class <name>`'s `wire()` returns. */
function wireKeys(className: string): string[] {
  const blocks = pythonFiles(PACKAGE).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split(/^(?=class |def |[A-Za-z_]+ = )/m)
      .filter((block) => block.startsWith(`class ${className}(`) || block.startsWith(`class ${className}:`)),
  );
  assert.equal(blocks.length, 1, `one class ${className} under ${PACKAGE}`);
  const wire = /^( {4})def wire\(.*?\n\1 {4}return \{\n(.*?)\n\1 {4}\}/ms.exec(blocks[0]!);
  assert.ok(wire, `${className}.wire() returns a dict literal`);
  return [...wire[2]!.matchAll(/^ {12}"(\w+)":/gm)].map((match) => match[1]!);
}

test('hand-built wire dicts (skills, instructions, file diagnostics) have the fields the client reads', () => {
  for (const [tsName, className] of Object.entries(DICT_WIRE_CLASSES)) {
    const fields = DICT_WIRE_FIELDS[tsName as keyof typeof DICT_WIRE_FIELDS];
    assert.deepEqual(wireKeys(className).sort(), Object.keys(fields).sort(), `${tsName} ↔ ${className}.wire()`);
  }
});
