/**
 * What the user is told when a run ends (`agent/runEnded`): one notification whose buttons act on
 * the proposal, or nothing for a cancelled run that left no changes.
 *
 * Pure: no `vscode` import.
 */

import type { RunEndedNotification } from './protocol';

export const REVIEW = 'Review Changes';
export const APPLY = 'Apply';
export const DISCARD = 'Discard';
export const SHOW_ANSWER = 'Show Answer';
export const SHOW_TRANSCRIPT = 'Show Transcript';

export type OutcomeAction = typeof REVIEW | typeof APPLY | typeof DISCARD | typeof SHOW_ANSWER | typeof SHOW_TRANSCRIPT;

export interface OutcomeView {
  severity: 'info' | 'warning' | 'error';
  message: string;
  actions: OutcomeAction[];
}

const ANSWER_CHARS = 200;

function clip(text: string, maxChars: number): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  return flat.length <= maxChars ? flat : flat.slice(0, maxChars - 1) + '…';
}

/** "2 files changed (+5 −3)". */
export function proposalLine(files: number, added: number, removed: number): string {
  return `${files} ${files === 1 ? 'file' : 'files'} changed (+${added} −${removed})`;
}

export function runEndedView(ended: RunEndedNotification): OutcomeView | undefined {
  const { proposal } = ended;
  const hasChanges = proposal.files.length > 0;
  if (ended.status === 'cancelled' && !hasChanges) {
    return undefined;
  }
  const changes = hasChanges ? ` Proposed: ${proposalLine(proposal.files.length, proposal.added, proposal.removed)}.` : '';
  const answer = ended.answer.trim();
  const actions: OutcomeAction[] = hasChanges ? [REVIEW, APPLY, DISCARD] : [];
  if (answer && (answer.length > ANSWER_CHARS || answer.includes('\n'))) {
    actions.push(SHOW_ANSWER);
  }
  switch (ended.status) {
    case 'done':
      return {
        severity: 'info',
        message: `Agent done.${changes}${answer ? ` ${clip(answer, ANSWER_CHARS)}` : ''}`,
        actions,
      };
    case 'stopped':
      return { severity: 'warning', message: `Agent stopped: ${ended.reason}.${changes}`, actions };
    case 'cancelled':
      return { severity: 'info', message: `Agent run cancelled.${changes}`, actions };
    case 'error':
      return { severity: 'error', message: `Agent run failed: ${ended.reason}${changes}`, actions: [...actions, SHOW_TRANSCRIPT] };
  }
}
