// package.json's contributions: the palette commands, the settings and their scopes, the engine.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';

import { COMMAND_IDS } from '../../src/commandIds';
import { SERVER_SETTING_KEYS } from '../../src/settings';

interface Manifest {
  main: string;
  activationEvents: string[];
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  contributes: {
    commands: { command: string; title: string; category: string }[];
    configuration: { properties: Record<string, { scope: string; markdownDescription?: string; description?: string }> };
  };
}

const manifest = JSON.parse(readFileSync(resolve(process.cwd(), 'package.json'), 'utf8')) as Manifest;

test('the palette commands are exactly the implemented ones, all agentLs.* in category Agent', () => {
  const commands = manifest.contributes.commands;
  assert.deepEqual(
    commands.map((c) => c.command),
    [...COMMAND_IDS],
  );
  for (const command of commands) {
    assert.equal(command.category, 'Agent');
    assert.match(command.command, /^agentLs\./, 'the server registers agent.* itself; a duplicate fails activation');
  }
});

test('settings have a scope and a description; those that run code or send data are machine-scoped', () => {
  const properties = manifest.contributes.configuration.properties;
  const scopes = Object.fromEntries(Object.entries(properties).map(([key, p]) => [key, p.scope]));
  assert.deepEqual(scopes, {
    'agentLs.pythonPath': 'machine',
    'agentLs.model': 'window',
    'agentLs.baseUrl': 'machine',
    'agentLs.models': 'machine',
    'agentLs.maxTurns': 'window',
    'agentLs.maxTokens': 'window',
    'agentLs.maxCostUsd': 'window',
    'agentLs.permissions': 'machine',
    'agentLs.trace': 'window',
    'agentLs.mcp': 'window',
  });
  for (const [key, property] of Object.entries(properties)) {
    assert.ok(property.markdownDescription ?? property.description, `${key} has no description`);
  }
  for (const key of SERVER_SETTING_KEYS) {
    assert.ok(`agentLs.${key}` in properties, `agentLs.${key} is sent to the server but not contributed`);
  }
});

test('engines.vscode matches @types/vscode (vsce refuses newer types) and main is the bundle', () => {
  assert.equal(manifest.engines.vscode, '^1.91.0');
  assert.equal(manifest.devDependencies['@types/vscode'], '1.91.0');
  assert.equal(manifest.main, './out/extension.js');
});

test('the extension starts with the window, so the server’s code actions are there before any command', () => {
  assert.deepEqual(manifest.activationEvents, ['onStartupFinished']);
});
