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
/** A plan run's plan: the Agent view, where it is approved or revised. */
export const SHOW_PLAN = 'Show Plan';

export type OutcomeAction = typeof REVIEW | typeof APPLY | typeof DISCARD | typeof SHOW_ANSWER | typeof SHOW_TRANSCRIPT | typeof SHOW_PLAN;

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

/** Labels shown in "Governed by …" before the rest are counted. */
const GOVERNED_LABELS = 3;

/**
 * "Governed by AGENTS.md, pkg/AGENTS.md": every AGENTS.md file that governs a proposed file, each
 * once, in the order first met (root first per file); past three, "and N more". "" when none.
 */
export function governedLine(governedBy: Readonly<Record<string, readonly string[]>> | undefined): string {
  const labels = [...new Set(Object.values(governedBy ?? {}).flat())];
  if (labels.length === 0) {
    return '';
  }
  const shown = labels.slice(0, GOVERNED_LABELS).join(', ');
  const more = labels.length - GOVERNED_LABELS;
  return `Governed by ${shown}${more > 0 ? ` and ${more} more` : ''}.`;
}

/** "Checks: 1 of 2 passed." after the run's acceptance checks; "" when it had none. */
export function checksLine(ended: Pick<RunEndedNotification, 'checks'>): string {
  const { checks } = ended;
  if (checks.length === 0) {
    return '';
  }
  return `Checks: ${checks.filter((check) => check.passed).length} of ${checks.length} passed.`;
}

export function runEndedView(ended: RunEndedNotification): OutcomeView | undefined {
  const { proposal } = ended;
  const hasChanges = proposal.files.length > 0;
  if (ended.status === 'cancelled' && !hasChanges) {
    return undefined;
  }
  if (ended.plan && ended.status === 'done') {
    // The answer is the plan as markdown; the Agent view shows it as a card with Approve / Revise. A
    // notification shows plain text: the summary's bold and code marks are dropped.
    return {
      severity: 'info',
      message: `Agent: plan ready. ${clip(ended.plan.summary.replace(/\*\*|`/g, ''), ANSWER_CHARS)} Approve or revise it in the Agent view.`,
      actions: [SHOW_PLAN],
    };
  }
  const checks = checksLine(ended);
  const governed = hasChanges ? governedLine(proposal.governedBy) : '';
  const changes = hasChanges
    ? ` Proposed: ${proposalLine(proposal.files.length, proposal.added, proposal.removed)}.${governed ? ` ${governed}` : ''}`
    : '';
  const answer = ended.answer.trim();
  const actions: OutcomeAction[] = hasChanges ? [REVIEW, APPLY, DISCARD] : [];
  if (answer && (answer.length > ANSWER_CHARS || answer.includes('\n'))) {
    actions.push(SHOW_ANSWER);
  }
  switch (ended.status) {
    case 'done':
      return {
        severity: 'info',
        message: `Agent done.${changes}${checks ? ` ${checks}` : ''}${answer ? ` ${clip(answer, ANSWER_CHARS)}` : ''}`,
        actions,
      };
    case 'stopped':
      return { severity: 'warning', message: `Agent stopped: ${ended.reason}.${changes}${checks ? ` ${checks}` : ''}`, actions };
    case 'cancelled':
      return { severity: 'info', message: `Agent run cancelled.${changes}`, actions };
    case 'error':
      return { severity: 'error', message: `Agent run failed: ${ended.reason}${changes}`, actions: [...actions, SHOW_TRANSCRIPT] };
  }
}
