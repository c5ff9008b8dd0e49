/**
 * "Agent: Show Loaded Instructions": the AGENTS.md chain that applies to the file in focus
 * (`agent.instructions`), as a read-only markdown document, so the user can check that a file was
 * loaded, in which order, how much of it, and which `@imports` resolved.
 *
 * Pure: no `vscode` import.
 */

import type {
  InstructionFileInfo,
  InstructionImport,
  InstructionsAnswer,
  InstructionsResult,
  WireFileDiagnostic,
} from './protocol';

/** The scheme of the read-only instructions documents. */
export const INSTRUCTIONS_SCHEME = 'agent-ls-instructions';

function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'byte' : 'bytes'}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** "warning, line 3: …" (1-based line, as editors show it), with the path when it is another file. */
function diagnosticLine(diagnostic: WireFileDiagnostic, ownPath?: string): string {
  const where = diagnostic.path === ownPath ? `line ${diagnostic.line + 1}` : `${diagnostic.path}:${diagnostic.line + 1}`;
  return `${diagnostic.severity}, ${where}: ${diagnostic.message}`;
}

function importLine(record: InstructionImport, file: InstructionFileInfo): string {
  const status = record.status.replace(/_/g, ' ');
  const message = record.message.trim();
  const said = message.toLowerCase().startsWith(status) ? message : `${status}${message ? `: ${message}` : ''}`;
  const target = record.status === 'resolved' && record.path && !said.includes(record.path) ? ` → ${record.path}` : '';
  const inFile = record.importer && record.importer !== file.path && record.importer !== file.realPath ? ` in ${record.importer}` : '';
  return `\`@${record.spec}\` (line ${record.line + 1}${inFile}): ${said}${target}`;
}

function sizeLine(file: InstructionFileInfo): string {
  return file.truncated
    ? `**truncated**: ${bytes(file.keptBytes)} of ${bytes(file.bytes)} loaded`
    : `${bytes(file.bytes)}, loaded whole`;
}

/** The paths whose problems belong to `file`: itself and what it imports. */
function ownPaths(file: InstructionFileInfo): Set<string> {
  const paths = new Set([file.path, file.realPath]);
  for (const record of file.imports) {
    paths.add(record.importer);
    if (record.path) {
      paths.add(record.path);
    }
  }
  return paths;
}

function fileSection(file: InstructionFileInfo, index: number, problems: readonly WireFileDiagnostic[]): string[] {
  const lines = [`## ${file.order || index + 1}. ${file.label}`, ''];
  lines.push(`- ${file.kind}${file.kind === 'global' ? '' : `, scope \`${file.scope}\``}`);
  lines.push(`- ${file.path}${file.realPath && file.realPath !== file.path ? ` (→ ${file.realPath})` : ''}`);
  lines.push(`- ${sizeLine(file)}`);
  if (file.imports.length > 0) {
    lines.push(`- ${plural(file.imports.length, 'import')}:`);
    lines.push(...file.imports.map((record) => `  - ${importLine(record, file)}`));
  }
  if (problems.length > 0) {
    lines.push(`- ${plural(problems.length, 'problem')}:`);
    lines.push(...problems.map((diagnostic) => `  - ${diagnosticLine(diagnostic, file.path)}`));
  }
  lines.push('');
  return lines;
}

function sameDiagnostic(a: WireFileDiagnostic, b: WireFileDiagnostic): boolean {
  return a.path === b.path && a.line === b.line && a.message === b.message;
}

function summary(result: InstructionsResult): string[] {
  const { files } = result;
  if (result.budgetBytes === 0) {
    return ['Instructions are disabled (their budget is 0 bytes).', ''];
  }
  if (files.length === 0) {
    return [
      'No instruction file applies: no AGENTS.override.md, AGENTS.md or fallback (CLAUDE.md) was found',
      'between the project root and this folder, and there is no global file.',
      '',
    ];
  }
  const truncated = files.filter((file) => file.truncated).length;
  return [
    `${plural(files.length, 'file')} loaded, ${bytes(result.totalBytes)} of the ${bytes(result.budgetBytes)} budget` +
      `${truncated > 0 ? ` (${truncated} truncated)` : ''}.`,
    'In the prompt in this order: the global file, then the project root down to the file’s folder.',
    'Deeper files override shallower ones; your request overrides them all.',
    '',
  ];
}

/**
 * The document's text. `target` names what the chain is for: a workspace-relative file, or "the
 * workspace root". Deterministic: the same answer gives the same text.
 */
export function renderInstructions(answer: InstructionsAnswer, target: string): string {
  const lines = [`# Instructions for ${target}`, ''];
  if (!('files' in answer)) {
    lines.push('No instructions: they are disabled in the agent-ls configuration, or could not be loaded (see the log).', '');
    return lines.join('\n');
  }
  const result: InstructionsResult = answer as InstructionsResult;
  lines.push(...summary(result));
  lines.push(`- workspace: ${result.workspaceRoot}`, `- project root: ${result.projectRoot}`, `- focus folder: ${result.focusDir}`, '');
  const notices = result.notices ?? [];
  let problems = (result.diagnostics ?? []).filter((d) => !notices.some((notice) => sameDiagnostic(d, notice)));
  result.files.forEach((file, index) => {
    const paths = ownPaths(file);
    lines.push(...fileSection(file, index, problems.filter((d) => paths.has(d.path))));
    problems = problems.filter((d) => !paths.has(d.path));
  });
  if (problems.length > 0) {
    lines.push('## Other problems', '', ...problems.map((d) => `- ${diagnosticLine(d)}`), '');
  }
  if (notices.length > 0) {
    lines.push('## Not loaded', '', ...notices.map((notice) => `- ${diagnosticLine(notice)}`), '');
  }
  return lines.join('\n');
}
