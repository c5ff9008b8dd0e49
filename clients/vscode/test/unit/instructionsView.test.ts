// "Agent: Show Loaded Instructions": the chain from agent.instructions as a document.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { renderInstructions } from '../../src/instructionsView';
import type { InstructionFileInfo, InstructionsResult, WireFileDiagnostic } from '../../src/protocol';

const file = (label: string, over: Partial<InstructionFileInfo> = {}): InstructionFileInfo => ({
  order: 0,
  path: `/w/${label}`,
  realPath: `/w/${label}`,
  label,
  scope: label.includes('/') ? `${label.slice(0, label.lastIndexOf('/'))}/**` : '**',
  kind: 'project',
  bytes: 1200,
  keptBytes: 1200,
  truncated: false,
  imports: [],
  ...over,
});

const chain = (over: Partial<InstructionsResult> = {}): InstructionsResult => ({
  workspaceRoot: '/w',
  projectRoot: '/w',
  focusDir: '/w/pkg',
  files: [],
  notices: [],
  diagnostics: [],
  budgetBytes: 32768,
  totalBytes: 0,
  ...over,
});

const warning = (path: string, line: number, message: string): WireFileDiagnostic => ({
  path,
  line,
  character: 0,
  endCharacter: 1,
  severity: 'warning',
  message,
});

test('the whole chain: order, paths, bytes, truncation, imports, problems, files not loaded', () => {
  const truncation = warning('/w/CLAUDE.md', 0, 'truncated: 30000 of 40960 bytes kept');
  const refused = warning('/w/docs/style.md', 1, 'import refused: ~/x.md is outside the workspace');
  const notice = warning('/w/pkg/sub/AGENTS.md', 0, 'a symlink leaving the workspace: not loaded');
  const stray = warning('/w/elsewhere.md', 2, 'invalid UTF-8');
  const result = chain({
    files: [
      file('~/.config/agent-ls/AGENTS.md', {
        order: 1,
        path: '/home/u/.config/agent-ls/AGENTS.md',
        realPath: '/home/u/.config/agent-ls/AGENTS.md',
        kind: 'global',
        scope: 'global',
        bytes: 1,
        keptBytes: 1,
      }),
      file('CLAUDE.md', {
        order: 2,
        realPath: '/w/AGENTS.md',
        bytes: 40960,
        keptBytes: 30000,
        truncated: true,
        imports: [
          { spec: 'docs/style.md', line: 2, status: 'resolved', path: '/w/docs/style.md', message: '', importer: '/w/CLAUDE.md' },
          { spec: '~/x.md', line: 1, status: 'refused', path: null, message: 'refused: ~/x.md is outside the workspace', importer: '/w/docs/style.md' },
          { spec: 'missing.md', line: 6, status: 'not_found', path: '/w/missing.md', message: 'no such file', importer: '/w/CLAUDE.md' },
        ],
      }),
      file('pkg/AGENTS.md', { order: 3, bytes: 1024, keptBytes: 1024 }),
    ],
    notices: [notice],
    diagnostics: [truncation, refused, stray, notice],
    totalBytes: 31025,
  });
  assert.equal(
    renderInstructions(result, 'pkg/app.py'),
    [
      '# Instructions for pkg/app.py',
      '',
      '3 files loaded, 31,025 bytes of the 32,768 bytes budget (1 truncated).',
      'In the prompt in this order: the global file, then the project root down to the file’s folder.',
      'Deeper files override shallower ones; your request overrides them all.',
      '',
      '- workspace: /w',
      '- project root: /w',
      '- focus folder: /w/pkg',
      '',
      '## 1. ~/.config/agent-ls/AGENTS.md',
      '',
      '- global',
      '- /home/u/.config/agent-ls/AGENTS.md',
      '- 1 byte, loaded whole',
      '',
      '## 2. CLAUDE.md',
      '',
      '- project, scope `**`',
      '- /w/CLAUDE.md (→ /w/AGENTS.md)',
      '- **truncated**: 30,000 bytes of 40,960 bytes loaded',
      '- 3 imports:',
      '  - `@docs/style.md` (line 3): resolved → /w/docs/style.md',
      '  - `@~/x.md` (line 2 in /w/docs/style.md): refused: ~/x.md is outside the workspace',
      '  - `@missing.md` (line 7): not found: no such file',
      '- 2 problems:',
      '  - warning, line 1: truncated: 30000 of 40960 bytes kept',
      '  - warning, /w/docs/style.md:2: import refused: ~/x.md is outside the workspace',
      '',
      '## 3. pkg/AGENTS.md',
      '',
      '- project, scope `pkg/**`',
      '- /w/pkg/AGENTS.md',
      '- 1,024 bytes, loaded whole',
      '',
      '## Other problems',
      '',
      '- warning, /w/elsewhere.md:3: invalid UTF-8',
      '',
      '## Not loaded',
      '',
      '- warning, /w/pkg/sub/AGENTS.md:1: a symlink leaving the workspace: not loaded',
      '',
    ].join('\n'),
  );
});

test('no files, a budget of 0, and no chain at all, say so', () => {
  assert.match(renderInstructions(chain(), 'the workspace root'), /^# Instructions for the workspace root\n\nNo instruction file applies: /);
  assert.match(renderInstructions(chain({ budgetBytes: 0 }), 'a.py'), /\n\nInstructions are disabled \(their budget is 0 bytes\)\.\n/);
  assert.equal(
    renderInstructions({}, 'a.py'),
    '# Instructions for a.py\n\nNo instructions: they are disabled in the agent-ls configuration, or could not be loaded (see the log).\n',
  );
});
