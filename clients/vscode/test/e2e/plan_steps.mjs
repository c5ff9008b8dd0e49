// Steps 20-22 of the code-server e2e (driver.mjs): plan mode in the Agent view. A plan run from the
// view's mode switch ends with its plan as a card (its write was refused: the policy is in plan mode);
// "Revise" sends feedback as a second plan run; "Use as acceptance checks" puts the plan's check in the
// view's Checks box, and "Approve plan" implements the revised plan in the same session with it; the check's result shows next to the
// proposal, and the user applies the new file from the view. docs/vscode-e2e.md describes each step.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Must match model_server.py.
const PLAN_TASK = 'Add a median() function to the helpers';
const PLAN_FEEDBACK = 'Also say what median([]) does';
const PLAN_CHECK = 'grep -c "def median" median.py';
const PLAN_STEP = 'For an even count, return the mean of the two middle values.';
const REVISED_STEP = 'Say in the docstring that median([]) raises IndexError.';
const IMPLEMENTED_ANSWER = 'Added median() in median.py, as the approved plan says.';
const MEDIAN_DEF = 'def median(values: list[float]) -> float:';
// The view's and the server's words (sessionView/outcome.ts, core/plan.py).
const IMPLEMENT_TASK = 'Implement the approved plan.';
const PLAN_NOTE = 'Plan mode: research the task with read-only tools';
const APPROVED_NOTE = 'The user approved this plan';

const toolNames = (request) => (request.tools ?? []).map((tool) => tool.function?.name ?? tool.name);

/**
 * `e`: the driver's page and helpers: page, agentViewFrame, shot, check, waitUntil, mark, readRequests,
 * text, toasts, runCommand, step (sets the step named on failure), WORKSPACE, STEP_TIMEOUT.
 */
export async function planSteps(e) {
  const { page, shot, check, waitUntil, mark, readRequests, text, toasts, runCommand, step, WORKSPACE, STEP_TIMEOUT } = e;
  // Screenshots show a run from its task on: scroll it to the top, below the view's sticky toolbar.
  const toTop = (locator) => locator.evaluate((node) => { node.scrollIntoView({ block: 'start' }); window.scrollBy(0, -40); });
  const userText = (request) => request.messages.filter((m) => m.role === 'user').map((m) => text(m.content)).join('\n');
  const lastUser = (request) => text([...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '');

  // 20. The mode switch on Plan, a task: the plan run offers no write tool, its write_file is refused, and it
  //     ends with the plan card (summary, files, numbered steps, checks, risks) and Approve / Revise.
  step('20. a plan run from the Agent view');
  const view = await e.agentViewFrame();
  await view.locator('button[data-action="newSession"]').click();
  await waitUntil('the view to be empty', async () => (await view.locator('#conversation .empty').count()) === 1);
  const mode = view.locator('#mode');
  const input = view.locator('#task');
  await mode.selectOption('plan');
  await waitUntil('the Send button to say Plan', async () => (await view.locator('#send').innerText()).includes('Plan'));
  const before = readRequests().length;
  await input.fill(PLAN_TASK);
  await input.press('Enter');
  const runs = view.locator('#conversation .run');
  const card = runs.last().locator('.plan');
  await waitUntil('the plan card', async () =>
    (await card.count()) === 1 && (await runs.last().locator('.run-status').innerText()).includes('done'));
  const planRun = await runs.last().innerText();
  await check(planRun.includes('write_file') && /denied/.test(planRun),
    `the plan run's write_file is not shown as denied: ${planRun}`);
  await check(await card.locator('.plan-steps li').count() === 2, 'the plan card does not number its two steps');
  const cardText = await card.innerText();
  await check(cardText.includes('median.py') && cardText.includes(PLAN_CHECK) && cardText.includes(PLAN_STEP)
    && cardText.includes('Callers may look for median()'), `the plan card lacks files, checks, steps or risks: ${cardText}`);
  await check(await card.locator('.plan-summary strong').count() === 1, 'the plan summary is not rendered markdown');
  await check(await view.locator('#conversation .proposal').count() === 0 && !existsSync(join(WORKSPACE, 'median.py')),
    'the plan run proposed or wrote a file');
  await waitUntil(`model request ${before + 2}`, () => readRequests().length >= before + 2);
  const planRequests = readRequests().slice(before, before + 2);
  await check(userText(planRequests[0]).includes(PLAN_NOTE) && userText(planRequests[0]).includes(PLAN_TASK),
    `the plan run's task does not carry the plan-mode note: ${userText(planRequests[0]).slice(0, 300)}`);
  const offered = toolNames(planRequests[0]);
  await check(offered.includes('submit_plan') && !offered.includes('edit_file') && !offered.includes('write_file'),
    `the plan run offers write tools or no submit_plan: ${offered}`);
  await toTop(runs.last());
  await shot('agent-view-plan');
  mark('a plan run from the view: its write refused, its plan shown as a card');

  // 21. Revise: the input box takes the feedback in plan mode; the second plan run's card replaces the
  //     first's buttons.
  step('21. Revise the plan');
  await card.locator('button[data-action="revise"]').click();
  await waitUntil('the input box focused in plan mode', async () =>
    (await mode.inputValue()) === 'plan' && (await input.evaluate((node) => node === document.activeElement)));
  await check((await input.getAttribute('placeholder')).includes('What should the plan change?'),
    'Revise did not ask what the plan should change');
  await input.fill(PLAN_FEEDBACK);
  await input.press('Enter');
  await waitUntil('the revised plan', async () =>
    (await runs.count()) === 2 && (await runs.last().locator('.plan').count()) === 1
    && (await runs.last().locator('.run-status').innerText()).includes('done'));
  const revised = runs.last().locator('.plan');
  await check((await revised.innerText()).includes(REVISED_STEP), 'the revised plan does not show its new step');
  await check(await view.locator('button[data-action="approvePlan"]').count() === 1,
    'only the latest plan should offer Approve plan');
  await waitUntil(`model request ${before + 3}`, () => readRequests().length >= before + 3);
  const revision = readRequests()[before + 2];
  await check(lastUser(revision).includes(PLAN_FEEDBACK) && toolNames(revision).includes('submit_plan'),
    'the feedback did not go as a plan run of the same session');
  await check(userText(revision).includes(PLAN_TASK), 'the feedback\'s request lacks the session\'s first task');
  await toTop(runs.last());
  await shot('agent-view-plan-revised');
  mark('Revise sent the feedback as a plan run of the same session');

  // 22. The plan's check taken as the acceptance check, then Approve plan: the implementation run (same session,
  //     default mode) gets the approved plan, writes median.py, and the check passes on the proposal;
  //     the file's Apply in the view creates it.
  step('22. Approve plan, then apply from the view');
  await revised.locator('button[data-action="usePlanChecks"]').click();
  await waitUntil('the plan\'s check in the Checks box', async () =>
    (await view.locator('#checks').inputValue()) === PLAN_CHECK && (await view.locator('#checks').isVisible()));
  await revised.locator('button[data-action="approvePlan"]').click();
  const done = runs.last();
  await waitUntil('the implementation run to end with its check', async () =>
    (await runs.count()) === 3 && (await done.locator('.run-status').innerText()).includes('done')
    && (await done.locator('.checks').count()) === 1);
  const implemented = await done.innerText();
  await check(implemented.includes(IMPLEMENT_TASK) && implemented.includes(IMPLEMENTED_ANSWER),
    `the implementation run does not show its task and answer: ${implemented}`);
  await check(await done.locator('.check-passed .check-command').innerText() === PLAN_CHECK
    && (await done.locator('.checks h4').innerText()).includes('1 of 1 passed'), 'the check is not shown as passed');
  await check((await mode.inputValue()) === 'default', 'Approve plan did not switch the input back to Ask/Act');
  const fileRow = view.locator('#conversation .proposal .file').filter({ hasText: 'median.py' });
  await waitUntil('median.py proposed in the view', async () => (await fileRow.count()) === 1);
  await waitUntil(`model request ${before + 5}`, () => readRequests().length >= before + 5);
  const implementation = readRequests()[before + 3];
  const task = lastUser(implementation);
  await check(task.includes(APPROVED_NOTE) && task.includes(REVISED_STEP) && task.includes(IMPLEMENT_TASK),
    `the implementation run's task does not carry the approved plan: ${task.slice(0, 600)}`);
  await check(userText(implementation).includes(PLAN_FEEDBACK), 'the implementation run is not in the plan\'s session');
  await check(!toolNames(implementation).includes('submit_plan'), 'the implementation run still offers submit_plan');
  await runCommand('Notifications: Clear All Notifications'); // they would cover the Refactor Preview
  await toasts().first().waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  await toTop(done);
  await shot('agent-view-plan-implemented');
  await fileRow.locator('button[data-action="apply"]').click();
  // The edit may need confirmation: then the Refactor Preview opens and every box is ticked.
  const preview = page.locator('.bulk-edit-panel');
  const said = toasts().filter({ hasText: /Agent: (applied|not applied)/ }).first();
  await waitUntil('the Refactor Preview or the apply message', async () =>
    (await preview.isVisible().catch(() => false)) || (await said.isVisible().catch(() => false)));
  if (await preview.isVisible().catch(() => false)) {
    const boxes = preview.locator('.edit-checkbox');
    await boxes.first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
    const unticked = async () => {
      const count = await boxes.count();
      for (let i = 0; i < count; i += 1) if (!(await boxes.nth(i).isChecked())) return i;
      return -1;
    };
    for (let round = 0, i = await unticked(); i >= 0; i = await unticked()) {
      await check(++round <= 10, 'the Refactor Preview checkboxes do not stay ticked');
      await boxes.nth(i).click();
      await page.waitForTimeout(100);
    }
    await preview.locator('.monaco-button', { hasText: 'Apply' }).first().click();
    await preview.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  }
  await said.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const saidText = await said.innerText();
  await check(/Agent: applied/.test(saidText), `median.py was not applied: ${saidText}`);
  await waitUntil('the proposal gone from the view', async () => (await view.locator('#conversation .proposal').count()) === 0);
  // The created file is open, unsaved: save it from its tab.
  const medianTab = page.locator('.tabs-container .tab').filter({ has: page.locator('.label-name', { hasText: /^median\.py$/ }) });
  await medianTab.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await medianTab.click();
  await page.keyboard.press('Control+S');
  await waitUntil('median.py on disk', () =>
    existsSync(join(WORKSPACE, 'median.py')) && readFileSync(join(WORKSPACE, 'median.py'), 'utf8').includes(MEDIAN_DEF));
  await shot('agent-view-plan-applied');
  mark('Approve plan implemented the revised plan; its check passed; median.py applied from the view');
}
