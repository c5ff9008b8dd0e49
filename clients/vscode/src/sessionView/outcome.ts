/**
 * What a run ended with besides its answer (issue 17), read from `agent/runEnded` (or a stored run of
 * `agent.sessionHistory`) and rendered in the session view:
 *
 * - the plan of a plan-mode run (`mode: "plan"`): a card with the summary, the files to touch, the
 *   numbered steps, the checks to run and the risks, and, on the session's latest run, "Approve plan"
 *   (an implementation run in the same session, which carries the plan) and "Revise" (feedback typed
 *   in the input box, sent as another plan run);
 * - the acceptance checks the server ran on the proposal: ✓/✗, the command, its exit code, the output
 *   tail folded; and "Not verified": one line per check that could not be run, and why;
 * - the usage per role (`main`, `compaction`, `subagent`), shown when more than one role made calls.
 *
 * The wire shapes are docs/protocol.md's and `server/agent_ls/lsp/protocol.py`'s; everything here is
 * read defensively (a field left out by an older server is empty), and every string is escaped or
 * goes through the sanitizing markdown renderer.
 *
 * Pure: no `vscode` import, no DOM.
 */

import type { PlanWire, RunMode, UsageSummary } from '../protocol';
import { usageLine } from '../status';
import type { RenderMarkdown } from './markdown';
import { button, escapeHtml, icon } from './markup';

/** The task of the implementation run that "Approve plan" starts; the server carries the plan in the session. */
export const IMPLEMENT_PLAN_TASK = 'Implement the approved plan.';

/** A plan as the server reports it (`submit_plan`): workspace-relative paths in `files`; `steps` in order. */
export type PlanView = PlanWire;

/** One acceptance check the server ran in the shadow copy. `exitCode` null: it could not run. */
export interface CheckView {
  command: string;
  passed: boolean;
  exitCode: number | null;
  /** The last lines of its output (stdout and stderr), as the server clipped them. */
  outputTail: string;
}

/** The fields of `agent/runEnded` this module reads; all optional (older servers send none). */
export interface OutcomeWire {
  mode?: unknown;
  plan?: unknown;
  checks?: unknown;
  notVerified?: unknown;
  usageByRole?: unknown;
}

/** A run's outcome, normalized: lists are empty, not missing. */
export interface RunOutcome {
  mode: RunMode;
  /** Only for a plan run that ended with a plan. */
  plan?: PlanView;
  checks: CheckView[];
  notVerified: string[];
  /** By role, in `ROLE_ORDER`; only roles that made model calls. */
  usageByRole: Record<string, UsageSummary>;
}

/** Roles in the order the usage line names them; any other role follows, by name. */
export const ROLE_ORDER = ['main', 'compaction', 'subagent'];

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function plan(value: unknown): PlanView | undefined {
  const wire = record(value);
  if (!wire) {
    return undefined;
  }
  return {
    summary: typeof wire['summary'] === 'string' ? wire['summary'] : '',
    files: strings(wire['files']),
    steps: strings(wire['steps']),
    checks: strings(wire['checks']),
    risks: strings(wire['risks']),
  };
}

function checks(value: unknown): CheckView[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.flatMap((item) => {
    const wire = record(item);
    if (!wire || typeof wire['command'] !== 'string') {
      return [];
    }
    const exitCode = wire['exitCode'];
    return [
      {
        command: wire['command'],
        passed: wire['passed'] === true,
        exitCode: typeof exitCode === 'number' ? exitCode : null,
        outputTail: typeof wire['outputTail'] === 'string' ? wire['outputTail'] : '',
      },
    ];
  });
}

function isUsage(value: unknown): value is UsageSummary {
  const wire = record(value);
  return wire !== undefined && typeof wire['inputTokens'] === 'number' && typeof wire['outputTokens'] === 'number';
}

function roleRank(role: string): number {
  const rank = ROLE_ORDER.indexOf(role);
  return rank === -1 ? ROLE_ORDER.length : rank;
}

function usageByRole(value: unknown): Record<string, UsageSummary> {
  const entries = Object.entries(record(value) ?? {}).filter((entry): entry is [string, UsageSummary] => isUsage(entry[1]));
  entries.sort(([a], [b]) => roleRank(a) - roleRank(b) || a.localeCompare(b));
  return Object.fromEntries(entries);
}

/** The outcome fields of `agent/runEnded` or of a stored run, normalized. */
export function runOutcome(wire: OutcomeWire): RunOutcome {
  const mode: RunMode = wire.mode === 'plan' ? 'plan' : 'default';
  const found = plan(wire.plan);
  return {
    mode,
    ...(found ? { plan: found } : {}),
    checks: checks(wire.checks),
    notVerified: strings(wire.notVerified),
    usageByRole: usageByRole(wire.usageByRole),
  };
}

/** "main 2.1k tokens · $0.0120, compaction 400 tokens"; empty when fewer than two roles made calls. */
export function roleUsageText(byRole: Record<string, UsageSummary>): string {
  const roles = Object.entries(byRole);
  return roles.length < 2 ? '' : roles.map(([role, usage]) => `${role} ${usageLine(usage)}`).join(', ');
}

function list(tag: 'ul' | 'ol', items: string[], cls: string): string {
  return `<${tag} class="${cls}">${items.map((item) => `<li>${item}</li>`).join('')}</${tag}>`;
}

function planPart(title: string, iconName: string, body: string): string {
  return `<div class="plan-part"><h4>${icon(iconName)}<span>${escapeHtml(title)}</span></h4>${body}</div>`;
}

/**
 * The plan card. `actionable`: the plan is the session's latest run and nothing runs, so it can be
 * approved or revised; an earlier plan is shown without its buttons.
 */
export function planCard(view: PlanView, markdown: RenderMarkdown, actionable: boolean): string {
  const parts = [`<section class="plan" aria-label="Plan"><h3>${icon('checklist')}<span>Plan</span></h3>`];
  if (view.summary.trim()) {
    parts.push(`<div class="plan-summary markdown">${markdown(view.summary)}</div>`);
  }
  if (view.files.length) {
    parts.push(planPart('Files to touch', 'files', list('ul', view.files.map((file) => `<code>${escapeHtml(file)}</code>`), 'plan-files')));
  }
  if (view.steps.length) {
    parts.push(planPart('Steps', 'list-ordered', list('ol', view.steps.map((step) => markdown(step)), 'plan-steps markdown')));
  }
  if (view.checks.length) {
    const use = actionable
      ? `<div class="plan-use-checks">${button('usePlanChecks', 'Use as acceptance checks', 'add', { title: 'Add these commands to the Checks box: the server runs them on the proposal when the agent says it is done' })}</div>`
      : '';
    parts.push(planPart('Checks', 'beaker', list('ul', view.checks.map((check) => `<code>${escapeHtml(check)}</code>`), 'plan-checks') + use));
  }
  if (view.risks.length) {
    parts.push(planPart('Risks', 'warning', list('ul', view.risks.map((risk) => markdown(risk)), 'plan-risks markdown')));
  }
  if (actionable) {
    parts.push(
      '<div class="plan-actions">' +
        button('approvePlan', 'Approve plan', 'check', { title: 'Approve: implement this plan in the same session', primary: true }) +
        button('revise', 'Revise', 'edit', { title: 'Revise: type what the plan should change, then send it' }) +
        '</div>',
    );
  }
  parts.push('</section>');
  return parts.join('');
}

function exitText(check: CheckView): string {
  if (check.exitCode === null) {
    return 'could not run';
  }
  return `exit ${check.exitCode}`;
}

function checkIcon(check: CheckView): string {
  if (check.exitCode === null) {
    return 'circle-slash';
  }
  return check.passed ? 'pass' : 'error';
}

function checkState(check: CheckView): 'passed' | 'failed' | 'not-run' {
  if (check.exitCode === null) {
    return 'not-run';
  }
  return check.passed ? 'passed' : 'failed';
}

/**
 * The checks' results and the "Not verified" list of a run. `key` makes the folded outputs' `data-key`
 * (the webview keeps open what the user opened across renders). Empty when there is neither.
 */
export function checksSection(results: CheckView[], notVerified: string[], key: string): string {
  const parts: string[] = [];
  if (results.length) {
    const passed = results.filter((check) => check.passed).length;
    const rows = results.map((check, i) => {
      const state = checkState(check);
      const head =
        `${icon(checkIcon(check))}<span class="visually-hidden">${state === 'passed' ? 'passed' : state === 'failed' ? 'failed' : 'not run'}: </span>` +
        `<code class="check-command">${escapeHtml(check.command)}</code>` +
        `<span class="check-exit">${escapeHtml(exitText(check))}</span>`;
      const body = check.outputTail.trim()
        ? `<details class="check-output" data-key="check-${key}-${i}"><summary>${head}</summary><pre>${escapeHtml(check.outputTail)}</pre></details>`
        : `<div class="check-line">${head}</div>`;
      return `<li class="check check-${state}">${body}</li>`;
    });
    parts.push(
      `<section class="checks" aria-label="Checks"><h4>${icon('beaker')}<span>Checks: ${passed} of ${results.length} passed</span></h4>` +
        `<ul>${rows.join('')}</ul></section>`,
    );
  }
  if (notVerified.length) {
    parts.push(
      `<section class="not-verified" aria-label="Not verified"><h4>${icon('warning')}<span>Not verified</span></h4>` +
        `<ul>${notVerified.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul></section>`,
    );
  }
  return parts.join('');
}
