// "Agent: Show MCP Servers": agent.mcpStatus's answer as output channel lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { mcpStatusLines } from '../../src/mcpView';
import type { McpServerWire } from '../../src/protocol';

const server = (over: Partial<McpServerWire> = {}): McpServerWire => ({
  name: 'time',
  scope: 'user',
  transport: 'stdio',
  target: 'python3 -m mcp_server_time --local-timezone UTC',
  source: '/home/u/.config/agent-ls/mcp.json',
  state: 'connected',
  detail: '2 tools, mcp-time 1.2.0',
  serverInfo: { name: 'mcp-time', version: '1.2.0' },
  protocolVersion: '2025-11-25',
  tools: [
    { name: 'mcp__time__get_current_time', original: 'get_current_time', readOnly: true, destructive: false, schemaTokens: 102 },
    { name: 'mcp__time__wipe', original: 'wipe', readOnly: null, destructive: true, schemaTokens: 1197 },
  ],
  schemaTokens: 1299,
  deferred: false,
  resources: [],
  prompts: [],
  stderrTail: '',
  ...over,
});

test('a connected server: its state line, its command line, then its tools with their hints and cost', () => {
  assert.deepEqual(mcpStatusLines({ servers: [server()], problems: [] }), [
    'time (user, stdio): connected: 2 tools, mcp-time 1.2.0',
    '  python3 -m mcp_server_time --local-timezone UTC',
    '  2 tools, ~1,299 schema tokens, sent with every request:',
    '    mcp__time__get_current_time [read-only] ~102 tokens',
    '    mcp__time__wipe [destructive] ~1,197 tokens',
  ]);
});

test('a failed server shows why and the end of its stderr; problems come first; resources and prompts follow', () => {
  const failed = server({
    name: 'git',
    scope: 'workspace',
    state: 'failed',
    detail: 'the server closed the connection',
    target: 'uvx mcp-server-git',
    tools: [],
    schemaTokens: 0,
    stderrTail: Array.from({ length: 7 }, (_, i) => `line ${i + 1}`).join('\n'),
  });
  const probe = server({
    name: 'probe',
    transport: 'http',
    target: 'http://127.0.0.1:8123/mcp',
    state: 'connected',
    detail: '1 tools, probe 0.1',
    tools: [{ name: 'mcp__probe__echo', original: 'echo', readOnly: null, destructive: null, schemaTokens: 40 }],
    schemaTokens: 40,
    deferred: true,
    resources: [{ uri: 'probe://readme', name: 'readme', mimeType: 'text/plain' }],
    prompts: [{ name: 'greet', description: 'Say hello' }],
  });
  const approval = server({ name: 'repo', scope: 'workspace', state: 'needs approval', detail: '', tools: [], target: 'node x.js' });
  assert.deepEqual(mcpStatusLines({ servers: [failed, probe, approval], problems: ['/ws/.mcp.json: server "a__b": bad name'] }), [
    'problem: /ws/.mcp.json: server "a__b": bad name',
    'git (workspace, stdio): failed: the server closed the connection',
    '  uvx mcp-server-git',
    '  stderr: line 3',
    '  stderr: line 4',
    '  stderr: line 5',
    '  stderr: line 6',
    '  stderr: line 7',
    'probe (user, http): connected: 1 tools, probe 0.1',
    '  http://127.0.0.1:8123/mcp',
    '  1 tools, ~40 schema tokens, deferred (names only):',
    '    mcp__probe__echo ~40 tokens',
    '  resource probe://readme readme',
    '  prompt greet: Say hello',
    'repo (workspace, stdio): needs approval',
    '  node x.js',
  ]);
});

test('nothing configured: no lines (the command then says how to configure one)', () => {
  assert.deepEqual(mcpStatusLines({ servers: [], problems: [] }), []);
});
