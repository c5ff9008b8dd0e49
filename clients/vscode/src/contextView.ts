/**
 * "Agent: Show Context": what the session's next request holds (`agent.context`), as a markdown
 * document with a bar chart: one bar per part, proportional to its tokens (the largest part fills
 * the width), and a bar for the window (used ▓ / free ░). The server measures; this only renders.
 *
 * Pure: no `vscode` import.
 */

import type { ContextResult } from './protocol';

/** The scheme of the read-only context documents. */
export const CONTEXT_SCHEME = 'agent-ls-context';

/** Bar width in characters (a character holds eighths: ▏▎▍▌▋▊▉█). */
export const BAR_WIDTH = 40;

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** A bar of `value / max` of `width` characters, in eighths of a character; "" for 0. */
export function bar(value: number, max: number, width = BAR_WIDTH): string {
  if (max <= 0 || value <= 0) {
    return '';
  }
  const eighths = Math.max(1, Math.round((Math.min(value, max) / max) * width * 8));
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
}

function tokens(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'token' : 'tokens'}`;
}

function percent(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '0.0%';
}

function windowBar(result: ContextResult): string {
  const width = BAR_WIDTH;
  if (result.contextWindow <= 0) {
    return '';
  }
  const used = Math.min(width, Math.max(result.used > 0 ? 1 : 0, Math.round((result.used / result.contextWindow) * width)));
  return '▓'.repeat(used) + '░'.repeat(width - used);
}

/**
 * The document's text. `title` names the session ("session 3f2a…"). Token counts are the server's
 * estimates (bytes / 4 of the exact request body). Deterministic: the same answer gives the same text.
 */
export function renderContext(result: ContextResult, title: string): string {
  const lines = [`# Context of ${title}`, ''];
  lines.push(
    `~${tokens(result.used)} used of a ${tokens(result.contextWindow)} window ` +
      `(${percent(result.used, result.contextWindow)}), ~${tokens(result.free)} free.`,
    'Tokens are estimated as bytes / 4 of the next request, as the server would send it.',
    '',
  );
  if (result.noModel) {
    lines.push(`No model to measure with (${result.noModel}): measured as a Chat Completions request.`, '');
  }
  lines.push('```text', `window  ${windowBar(result)}  ${percent(result.used, result.contextWindow)} used`, '```', '');
  lines.push('## Parts of the next request', '');
  if (result.parts.length === 0) {
    lines.push('The request is empty.', '');
  } else {
    const largest = Math.max(...result.parts.map((part) => part.tokens));
    const nameWidth = Math.max(...result.parts.map((part) => part.name.length));
    const total = result.parts.reduce((sum, part) => sum + part.tokens, 0);
    const countWidth = total.toLocaleString('en-US').length;
    lines.push('```text');
    for (const part of result.parts) {
      const count = part.tokens.toLocaleString('en-US').padStart(countWidth);
      const share = percent(part.tokens, result.used).padStart(6);
      lines.push(`${part.name.padEnd(nameWidth)}  ${count}  ${share}  ${bar(part.tokens, largest)}`.trimEnd());
    }
    lines.push(`${'total'.padEnd(nameWidth)}  ${total.toLocaleString('en-US').padStart(countWidth)}`);
    lines.push('```', '');
    lines.push(
      `The parts add up to ${tokens(total)}; each is rounded, the whole request is ~${tokens(result.used)}. ` +
        'Shares are of the whole request; bars are relative to the largest part.',
      '',
    );
  }
  lines.push('## Memory', '');
  if (result.memory) {
    const size = `${result.memory.bytes.toLocaleString('en-US')} ${result.memory.bytes === 1 ? 'byte' : 'bytes'}`;
    lines.push(`- ${result.memory.path} (${size}): not in the request until the model calls \`memory_read\`.`, '');
  } else {
    lines.push('No memory notes file for this session.', '');
  }
  return lines.join('\n');
}
