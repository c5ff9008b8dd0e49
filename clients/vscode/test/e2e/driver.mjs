// Drives the agent-ls extension inside code-server with playwright-core and Debian's Chromium.
// Started by ../e2e.sh, which sets:
//   E2E_URL        code-server's URL (auth none), with the sample workspace as its folder
//   E2E_WORKSPACE  the sample workspace on disk (a copy of server/agent_ls/demo/sample)
//   E2E_REQUESTS   the JSON file where model_server.py records the model requests
//   E2E_SHOTS      the screenshot folder (its *.png are replaced)
// The scenario and the screenshots are described in docs/vscode-e2e.md. Exits 1 on the first failure,
// after a failure screenshot.
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';

import { planSteps } from './plan_steps.mjs';

const URL = need('E2E_URL');
const WORKSPACE = need('E2E_WORKSPACE');
const REQUESTS = need('E2E_REQUESTS');
const SHOTS = need('E2E_SHOTS');
const HEADED = process.env.AGENT_LS_E2E_HEADED === '1';
const STEP_TIMEOUT = 30_000;

// Must match model_server.py.
const UNSAVED_LINE = '# e2e: an unsaved note typed in the editor';
const TASK = 'Fix the mean() function in stats.py';
const ASKED_COMMAND = 'wc -l stats.py';
const PERMISSION_ANSWER = process.env.AGENT_LS_E2E_ANSWER || 'Allow once'; // or 'Deny'
const REVIEW_FROM_PALETTE = 'Review of stats.py (1 finding):';
const REVIEW_FROM_CODE_ACTION = 'Review of stats.py from the code action (1 finding):';
const REVIEW_ACTION = 'Agent: Review this file (/code-review)';
const VIEW_TASK = 'Explain what mean() returns';
const VIEW_ANSWER_START = 'What mean() returns';
const FOLLOW_UP = 'And for an empty list?';
const FOLLOW_UP_ANSWER = 'so mean([]) raises ZeroDivisionError';
const DOCS_TASK = 'Make the docstrings of stats.py say more';
// Must match model_server.py: the two changes of the partial accept.
const MEAN_DOC = '    """Arithmetic mean of a non-empty list of numbers."""';
const MEAN_DOC_NEW = '    """Arithmetic mean of a non-empty list of numbers, as a float."""';
const SPREAD_DOC = '    """Largest value minus smallest value."""';
const FINDING = 'spread() of an empty list raises ValueError from max(); say so in its docstring';
const FIX_ANSWER = 'The finding is fixed once';
const FIX_ACTION = 'Agent: Fix this finding';
const SPREAD_DOC_NEW = '    """Largest value minus smallest value of a non-empty list."""';
// Must match the AGENTS.md that e2e.sh writes into the workspace.
const AGENTS_RULE = 'e2e rule: keep the helpers free of dependencies.';
const BUGGY = '    return sum(values) / (len(values) - 1)';
const FIXED = '    return sum(values) / len(values)';

if (!['Allow once', 'Allow for this session', 'Deny'].includes(PERMISSION_ANSWER)) {
  console.error(`driver: AGENT_LS_E2E_ANSWER must be "Allow once", "Allow for this session" or "Deny"`);
  process.exit(2);
}

const original = readFileSync(join(WORKSPACE, 'stats.py'), 'utf8');
if (!original.includes(BUGGY)) fail(`the sample's stats.py no longer contains ${JSON.stringify(BUGGY)}`);
const EXPECTED = `${UNSAVED_LINE}\n${original.replace(BUGGY, FIXED)}`;

function need(name) {
  const value = process.env[name];
  if (!value) { console.error(`driver: ${name} is not set (run ../e2e.sh)`); process.exit(2); }
  return value;
}

const t0 = Date.now();
let lastMark = t0;
function mark(what) {
  const now = Date.now();
  console.error(`[driver +${((now - t0) / 1000).toFixed(1)}s] ${what} (${((now - lastMark) / 1000).toFixed(1)} s)`);
  lastMark = now;
}

let page;
let browser;
let currentStep = 'start';
const consoleErrors = [];
let shotNumber = 0;
const shots = [];

async function shot(name) {
  await page.mouse.move(1000, 440); // no hover tooltip from the last click
  await page.waitForTimeout(400); // let toasts and panels finish their slide-in animation
  shotNumber += 1;
  const file = `${String(shotNumber).padStart(2, '0')}-${name}.png`;
  await page.screenshot({ path: join(SHOTS, file) });
  shots.push(file);
}

class StepError extends Error {}
function fail(message) { throw new StepError(message); }

async function check(condition, message) { if (!condition) fail(message); }

// ---------------------------------------------------------------- VS Code helpers
const toasts = () => page.locator('.notifications-toasts .notification-toast');
const toastWith = (text) => toasts().filter({ hasText: text });

async function runCommand(label, { screenshot } = {}) {
  // F1 opens the command palette with ">" already typed.
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await input.fill(`>${label}`);
  const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: label }).first();
  await row.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  if (screenshot) await shot(screenshot);
  await row.click();
}

async function editorLines(editor) {
  // Lines in the DOM are rendered out of order and use U+00A0 for spaces; sort by their offset.
  return editor.locator('.view-lines .view-line').evaluateAll((nodes) =>
    nodes
      .map((n) => [parseFloat(n.style.top) || 0, n.textContent.replace(/\u00a0/g, ' ')])
      .sort((a, b) => a[0] - b[0])
      .map((x) => x[1]));
}

function readRequests() {
  return existsSync(REQUESTS) ? JSON.parse(readFileSync(REQUESTS, 'utf8')) : [];
}

async function waitUntil(what, predicate, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) fail(`timed out after ${timeout / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The tool results a request added: the tool messages after its last assistant message.
const toolMessages = (request) => {
  const messages = request.messages || [];
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages.slice(lastAssistant + 1).filter((m) => m.role === 'tool');
};
const text = (content) => (typeof content === 'string' ? content : JSON.stringify(content));
// The model reads each tool result wrapped as data: <tool_result tool="…" trust="data">…</tool_result>.
const WRAPPED = /^<tool_result [^>]*trust="data"[^>]*>\n([\s\S]*)\n<\/tool_result>$/;
const toolText = (message) => {
  const whole = text(message.content);
  const inner = WRAPPED.exec(whole);
  return inner ? inner[1] : `(not wrapped as data) ${whole}`;
};

// ---------------------------------------------------------------- the scenario
async function scenario() {
  // 1. Open the sample workspace and make an unsaved change in stats.py.
  currentStep = '1. open the workspace and type an unsaved change';
  await page.goto(`${URL}?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
  // The explorer lists the workspace once the file service is up.
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'stats.py' })
    .first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  mark('workbench loaded');

  await page.keyboard.press('Control+P');
  const quickOpen = page.locator('.quick-input-widget .quick-input-box input');
  await quickOpen.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await quickOpen.fill('stats.py');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'stats.py' }).first()
    .waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await page.keyboard.press('Enter');
  const tab = page.locator('.tabs-container .tab')
    .filter({ has: page.locator('.label-name', { hasText: /^stats\.py$/ }) });
  await tab.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await editor.locator('.view-lines .view-line').first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.type(UNSAVED_LINE);
  await page.keyboard.press('Enter');
  await waitUntil('the unsaved change in the editor', async () =>
    (await editorLines(editor))[0] === UNSAVED_LINE);
  await waitUntil('the dirty marker on the stats.py tab', async () =>
    (await tab.getAttribute('class')).includes('dirty'));
  await shot('unsaved-change');
  mark('unsaved change typed');

  // 2. Agent: Run Task… from the command palette, then type the task.
  currentStep = '2. Agent: Run Task… from the palette';
  await runCommand('Agent: Run Task', { screenshot: 'palette-run-task' });
  const taskBox = page.locator('.quick-input-widget .quick-input-box input');
  await waitUntil('the task input box', async () =>
    (await taskBox.isVisible()) && (await taskBox.inputValue()) === '');
  await taskBox.fill(TASK);
  await shot('task-input');
  await page.keyboard.press('Enter');
  mark('task submitted');

  // 3. The run's progress notification (the first model reply is held 2 s by the script).
  currentStep = '3. the progress notification';
  const progress = toasts().filter({ has: page.locator('.monaco-button', { hasText: 'Cancel' }) }).first();
  await progress.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await shot('progress');
  mark('progress notification shown');

  // 4. The permission question for the command the policy has no rule for. VS Code shows a
  //    showMessageRequest as a modal dialog or as a toast, depending on how the extension renders it.
  currentStep = '4. the permission question';
  const asked = `wants to run bash: ${ASKED_COMMAND}`;
  const question = page.locator('.monaco-dialog-box').filter({ hasText: asked })
    .or(toastWith(asked)).first();
  await question.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const asModal = await question.evaluate((n) => n.classList.contains('monaco-dialog-box'));
  // Exact titles: "Deny" must not also match "Deny with feedback…".
  const button = (title) => question.locator('.monaco-button', { hasText: new RegExp(`^${title}$`) });
  for (const answer of ['Allow once', 'Allow for this session', 'Always allow', 'Deny', 'Deny with feedback…']) {
    await check(await button(answer).count() === 1,
      `the permission ${asModal ? 'dialog' : 'toast'} has no "${answer}" button`);
  }
  await shot('permission-question');
  await button(PERMISSION_ANSWER).click();
  await question.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  mark(`permission answered in a ${asModal ? 'modal dialog' : 'toast'}: ${PERMISSION_ANSWER}`);

  // 5. The run ends with a proposal: the model's 4 requests are in, and the end notification offers a review.
  currentStep = '5. the end of the run and the model requests';
  await waitUntil('the 4th model request', () => readRequests().length >= 4);
  const ended = toasts().filter({ has: page.locator('.monaco-button', { hasText: 'Review Changes' }) }).first();
  await ended.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const endedText = await ended.innerText();
  await check(endedText.includes('Governed by AGENTS.md.'),
    `the end notification does not name the AGENTS.md that governs stats.py: ${JSON.stringify(endedText)}`);
  await shot('run-ended');
  // Close it (answering nothing), so it does not cover the diff; the palette commands act on the proposal.
  await ended.hover();
  await ended.locator('.codicon-notifications-clear').click();
  await ended.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  mark('run ended with a proposal');

  // What the model was sent: the task, the unsaved buffer (through read_file) and the allowed command's output.
  const requests = readRequests();
  await check(requests.length === 4, `the model got ${requests.length} requests, expected 4`);
  const firstUser = requests[0].messages.filter((m) => m.role === 'user').map((m) => text(m.content)).join('\n');
  await check(firstUser.includes(TASK), `the first request does not contain the task: ${firstUser.slice(0, 400)}`);
  await check(requests[0].messages.some((m) => text(m.content).includes(AGENTS_RULE)),
    'the first request does not carry the workspace\'s AGENTS.md');
  const readResult = toolMessages(requests[1]).map(toolText).join('\n');
  await check(readResult.includes(UNSAVED_LINE),
    `read_file's result does not contain the unsaved line: ${readResult.slice(0, 400)}`);
  await check(readResult.includes(BUGGY.trim()), `read_file's result does not contain stats.py: ${readResult.slice(0, 400)}`);
  const bashResult = toolMessages(requests[2]).map(toolText).join('\n');
  if (PERMISSION_ANSWER === 'Deny') {
    await check(bashResult.startsWith(`denied by user: ${ASKED_COMMAND} was not run`),
      `the denied command's result is not the refusal: ${JSON.stringify(bashResult.slice(0, 400))}`);
  } else {
    // Allowed: the model reads the command's output, run in the shadow copy, which holds the unsaved buffer.
    await check(/^exit code 0\n\s*\d+ stats\.py/.test(bashResult),
      `the allowed command's result is not its output: ${JSON.stringify(bashResult.slice(0, 400))}`);
    const counted = Number(/(\d+) stats\.py/.exec(bashResult)[1]);
    const diskLines = original.split('\n').length - 1;
    await check(counted === diskLines + 1,
      `"${ASKED_COMMAND}" counted ${counted} lines; the shadow copy should hold the unsaved buffer (${diskLines + 1})`);
  }
  const editResult = toolMessages(requests[3]).map(toolText).join('\n');
  console.error(`[driver] model saw: read_file with the unsaved line; "${ASKED_COMMAND}" → ` +
    `${JSON.stringify(bashResult.slice(0, 60))}; edit_file → ${JSON.stringify(editResult.slice(0, 80))}`);

  // 6. Agent: Show Proposed Changes opens a diff editor: the unsaved buffer on the left, the fix on the right.
  currentStep = '6. Agent: Show Proposed Changes';
  await runCommand('Agent: Show Proposed Changes');
  const diff = page.locator('.monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const originalSide = diff.locator('.editor.original .monaco-editor').first();
  const modifiedSide = diff.locator('.editor.modified .monaco-editor').first();
  await waitUntil('the diff editor content', async () => {
    const left = await editorLines(originalSide);
    const right = await editorLines(modifiedSide);
    return left.includes(BUGGY) && right.includes(FIXED);
  });
  const left = await editorLines(originalSide);
  await check(left[0] === UNSAVED_LINE, `the diff's original side does not start with the unsaved line: ${left[0]}`);
  await shot('proposed-diff');
  mark('diff editor shown');

  // 7. Agent: Apply Proposed Changes: the edit needs confirmation, so the Refactor Preview opens with it unticked.
  currentStep = '7. Agent: Apply Proposed Changes and the Refactor Preview';
  await runCommand('Agent: Apply Proposed Changes');
  const preview = page.locator('.bulk-edit-panel');
  await preview.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const boxes = preview.locator('.edit-checkbox');
  await boxes.first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await check(!(await boxes.last().isChecked()),
    'the Refactor Preview opened with the edit ticked; the server marks it needsConfirmation');
  await shot('refactor-preview-unticked');
  // Tick every unticked checkbox (ticking a file ticks its edits, so re-read after each click).
  const untickedIndex = async () => {
    const count = await boxes.count();
    for (let i = 0; i < count; i += 1) if (!(await boxes.nth(i).isChecked())) return i;
    return -1;
  };
  for (let round = 0, i = await untickedIndex(); i >= 0; i = await untickedIndex()) {
    if (++round > 10) fail('the Refactor Preview checkboxes do not stay ticked');
    await boxes.nth(i).click();
    await page.waitForTimeout(100);
  }
  console.error(`[driver] Refactor Preview: ${await boxes.count()} checkboxes, all ticked`);
  await shot('refactor-preview-ticked');
  await preview.locator('.monaco-button', { hasText: 'Apply' }).first().click();
  await preview.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  mark('Refactor Preview applied');

  // 8. The editor holds the unsaved change plus the fix.
  currentStep = '8. the editor text';
  // Back to the stats.py tab (quick open would offer the proposal's diff first, as recently opened).
  await tab.click();
  await waitUntil('the stats.py tab to be active', async () =>
    (await tab.getAttribute('class')).includes('active'));
  const active = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
  await waitUntil('the fix in the stats.py editor', async () => (await editorLines(active)).includes(FIXED));
  const lines = await editorLines(active);
  // The editor shows one line per \n plus the last one, so joining the lines gives the buffer text.
  await check(lines.join('\n') === EXPECTED,
    `the editor text is not the expected result:\n--- got\n${lines.join('\n')}\n--- expected\n${EXPECTED}`);
  await check(readFileSync(join(WORKSPACE, 'stats.py'), 'utf8') === original,
    'stats.py on disk changed before saving (the edit should go to the unsaved buffer)');
  await shot('applied');
  // Save, and compare the file byte for byte.
  await page.keyboard.press('Control+S');
  await waitUntil('stats.py saved', () => readFileSync(join(WORKSPACE, 'stats.py'), 'utf8') !== original);
  const saved = readFileSync(join(WORKSPACE, 'stats.py'), 'utf8');
  await check(saved === EXPECTED,
    `the saved stats.py is not the expected result:\n--- got\n${saved}\n--- expected\n${EXPECTED}`);
  mark('editor text checked and saved');

  // 9. Agent: Show Loaded Instructions: the workspace's AGENTS.md (written by e2e.sh), loaded whole.
  currentStep = '9. Agent: Show Loaded Instructions';
  await runCommand('Agent: Show Loaded Instructions');
  const instructionsTab = page.locator('.tabs-container .tab')
    .filter({ has: page.locator('.label-name', { hasText: 'Instructions for stats.py.md' }) });
  await instructionsTab.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const instructionsEditor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
  const instructions = await waitUntil('the instructions document', async () => {
    const shown = await editorLines(instructionsEditor);
    return shown.includes('## 1. AGENTS.md') ? shown : undefined;
  });
  for (const expected of ['# Instructions for stats.py', '- project, scope `**`']) {
    await check(instructions.includes(expected), `the instructions document has no line ${JSON.stringify(expected)}: ${instructions.join(' | ')}`);
  }
  await check(instructions.some((line) => /^1 file loaded, [\d,]+ bytes of the 32,768 bytes budget\.$/.test(line)),
    `the instructions document does not say one file was loaded: ${instructions.join(' | ')}`);
  await check(instructions.some((line) => /^- [\d,]+ bytes, loaded whole$/.test(line)),
    `the instructions document does not say AGENTS.md was loaded whole: ${instructions.join(' | ')}`);
  await shot('instructions');
  mark('instructions document shown');

  // 10. Agent: Run Skill on Current File… lists the bundled skills (agent.listSkills); Escape closes it.
  currentStep = '10. the Run Skill quick pick';
  await tab.click();
  await waitUntil('the stats.py tab to be active', async () =>
    (await tab.getAttribute('class')).includes('active'));
  await runCommand('Agent: Run Skill on Current File');
  const skillRows = page.locator('.quick-input-widget .monaco-list-row');
  const picked = await waitUntil('the skills in the quick pick', async () => {
    const rows = await skillRows.allInnerTexts();
    return rows.some((row) => row.includes('code-review')) ? rows : undefined;
  });
  for (const name of ['code-review', 'explain', 'fix-diagnostics', 'write-tests']) {
    await check(picked.some((row) => row.includes(name) && row.includes('bundled')),
      `the Run Skill pick has no bundled ${name}: ${JSON.stringify(picked)}`);
  }
  await shot('run-skill-pick');
  await page.keyboard.press('Escape');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  mark('skills listed');

  // 11. Agent: Review Current File runs /code-review on stats.py; the skill body is in the first request.
  currentStep = '11. Agent: Review Current File';
  await runCommand('Agent: Review Current File');
  const reviewed = await reviewRun('palette', REVIEW_FROM_PALETTE, 5);
  await shot('review-ended');
  await reviewed.hover();
  await reviewed.locator('.codicon-notifications-clear').click();
  await reviewed.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  mark('review from the palette ended');

  // 12. The server's code action "Agent: Review this file (/code-review)" under Source Action…: the
  //     extension routes it to the same run display (without that, no progress and no end notification).
  currentStep = '12. the code action Review this file';
  await runCommand('Source Action');
  const action = page.locator('.action-widget .monaco-list-row').filter({ hasText: REVIEW_ACTION }).first();
  await action.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await shot('source-action');
  await action.click();
  await reviewRun('code action', REVIEW_FROM_CODE_ACTION, 6);
  await shot('code-action-review-ended');
  mark('review from the code action ended');

  await agentView();
  await partialAccept(tab);
  await reviewFindings(tab);
  await planSteps({
    page, agentViewFrame, shot, check, waitUntil, mark, readRequests, text, toasts, runCommand, WORKSPACE, STEP_TIMEOUT,
    step: (name) => { currentStep = name; },
  });
}

// 18. A review whose finding the model reports with review_findings: it appears in the Problems panel as a
//     diagnostic of source "agent-ls review". 19. Its quick fix "Agent: Fix this finding" continues the
//     review's session (the Agent view shows both runs; the model gets the review's history and the finding).
async function reviewFindings(tab) {
  currentStep = '18. review findings in the Problems panel';
  await tab.click();
  await runCommand('Agent: Review Current File');
  const view = await agentViewFrame();
  await waitUntil('the review with findings to end in the view', async () => {
    const last = view.locator('#conversation .run').last();
    return (await last.innerText().catch(() => '')).includes('/code-review stats.py')
      && (await last.locator('.run-status').innerText()).includes('done');
  });
  await check((await view.locator('#conversation .run .tool').last().innerText()).includes('review_findings'),
    'the view does not show the review_findings call');
  await runCommand('Notifications: Clear All Notifications');
  await page.keyboard.press('Control+Shift+M'); // the Problems panel
  const problem = page.locator('.markers-panel .monaco-list-row').filter({ hasText: FINDING.slice(0, 40) }).first();
  await problem.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const problemText = await problem.innerText();
  await check(problemText.includes('agent-ls review'), `the finding's source is not "agent-ls review": ${problemText}`);
  await check(/\[Ln 14, Col \d+\]/.test(problemText), `the finding is not on line 14: ${problemText}`);
  await shot('review-findings-problems');
  mark('the review finding is in the Problems panel');

  currentStep = '19. Agent: Fix this finding';
  await problem.click(); // selects the finding in stats.py; the keyboard focus stays in the Problems panel
  await waitUntil('the stats.py tab to be active', async () => (await tab.getAttribute('class')).includes('active'));
  await page.keyboard.press('Control+.'); // the quick fixes of the selected problem, as a menu under it
  const fix = page.locator('.context-view .action-item, .action-widget .monaco-list-row').filter({ hasText: FIX_ACTION }).first();
  await fix.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await shot('fix-this-finding');
  await fix.click();
  await waitUntil('the fix run to end in the view', async () => {
    const runs = view.locator('#conversation .run');
    return (await runs.count()) === 2 && (await runs.last().innerText()).includes(FIX_ANSWER)
      && (await runs.last().locator('.run-status').innerText()).includes('done');
  });
  await check((await view.locator('#conversation .run').first().innerText()).includes('/code-review stats.py'),
    'the fix did not continue the review\'s session');
  await waitUntil('model request 13', () => readRequests().length >= 13);
  const history = readRequests()[12].messages.map((m) => `${m.role}: ${text(m.content)}`).join('\n');
  await check(history.includes('/code-review') && history.includes('Fix this finding of your review: stats.py')
    && history.includes(FINDING), `request 13 lacks the review's history or the finding: ${history.slice(-600)}`);
  await shot('fix-this-finding-ran');
  mark('Fix this finding continued the review\'s session');
}

// 17. A proposal of two changes, applied from the view's per-file Apply with only the first change ticked in
//     the Refactor Preview: the first lands in the editor, the second stays pending in the view; then the
//     view's per-file Discard drops it.
async function partialAccept(tab) {
  currentStep = '17. partial accept in the Refactor Preview';
  const view = await agentViewFrame();
  await view.locator('button[data-action="newSession"]').click();
  const input = view.locator('#task');
  await input.fill(DOCS_TASK);
  await input.press('Enter');
  const fileRow = view.locator('#conversation .proposal .file').filter({ hasText: 'stats.py' });
  await waitUntil('the two-change proposal in the view', async () =>
    (await fileRow.count()) === 1 && (await fileRow.innerText()).includes('+2') && (await fileRow.innerText()).includes('−2')
    && (await view.locator('#conversation .run').last().locator('.run-status').innerText()).includes('done'));
  await check(await fileRow.locator('button[data-action="apply"]').count() === 1, 'the proposed file has no Apply of its own');
  await runCommand('Notifications: Clear All Notifications'); // they would cover the Refactor Preview
  await toasts().first().waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  await shot('agent-view-proposal');
  await fileRow.locator('button[data-action="apply"]').click();
  const preview = page.locator('.bulk-edit-panel');
  await preview.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const rows = preview.locator('.monaco-list-row');
  // A row shows the change's old and new text, cut to the panel's width.
  const meanRow = rows.filter({ hasText: 'Arithmetic mean' }).first();
  const spreadRow = rows.filter({ hasText: 'Largest value' }).first();
  await meanRow.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await check(await spreadRow.count() === 1, 'the preview does not list the second change');
  const meanBox = meanRow.locator('.edit-checkbox');
  if (!(await meanBox.isChecked())) await meanBox.click();
  await waitUntil('the first change ticked', () => meanBox.isChecked());
  await check(!(await spreadRow.locator('.edit-checkbox').isChecked()), 'the second change is ticked too');
  await shot('refactor-preview-partial');
  await preview.locator('.monaco-button', { hasText: 'Apply' }).first().click();
  await preview.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT });
  const said = toasts().filter({ hasText: /Agent: (applied|not applied)/ }).first();
  await said.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const saidText = await said.innerText();
  await check(saidText.includes('applied 1 of 2 changes in 1 file; 1 change kept'),
    `the apply message does not say 1 of 2 changes landed and 1 was kept: ${saidText}`);
  // The editor has the ticked change only; the view still lists the file with the unticked one.
  await tab.click();
  const active = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
  await waitUntil('the ticked change in the editor', async () => (await editorLines(active)).includes(MEAN_DOC_NEW));
  const lines = await editorLines(active);
  await check(lines.includes(SPREAD_DOC) && !lines.includes(SPREAD_DOC_NEW) && !lines.includes(MEAN_DOC),
    `the editor does not hold exactly the ticked change: ${lines.join(' | ')}`);
  await waitUntil('the kept change in the view', async () =>
    (await fileRow.count()) === 1 && (await fileRow.innerText()).includes('+1') && (await fileRow.innerText()).includes('−1'));
  await shot('agent-view-change-kept');
  mark('partial accept: 1 of 2 changes applied, the other still pending in the view');

  // The kept change is the server's: its diff shows the spread() docstring change on the new text.
  await fileRow.locator('button[data-action="discard"]').click();
  await waitUntil('the proposal gone from the view', async () => (await view.locator('#conversation .proposal').count()) === 0);
  mark('the kept change discarded from the view');
}

// ---------------------------------------------------------------- the Agent view (a webview view)
// Its page is two iframes deep; find the frame that holds the view's conversation.
async function agentViewFrame() {
  return waitUntil('the Agent view\'s webview', async () => {
    for (const frame of page.frames()) {
      if (await frame.locator('#conversation').count().catch(() => 0)) return frame;
    }
    return undefined;
  });
}

async function agentView() {
  // 13. Runs from the palette and code actions show in the view, which they revealed: the last one is the
  //     code action's review, with its task, its answer and its status.
  currentStep = '13. the Agent view shows the code action\'s run';
  const container = page.locator('.activitybar .action-item a[aria-label^="Agent"]').first();
  await container.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const view = await agentViewFrame();
  const runs = view.locator('#conversation .run');
  await waitUntil('the review run in the view', async () =>
    (await runs.last().innerText().catch(() => '')).includes(REVIEW_FROM_CODE_ACTION.replace(':', '')));
  const lastRun = await runs.last().innerText();
  await check(lastRun.includes('/code-review stats.py'), `the view's run does not show its task: ${lastRun}`);
  await check(/done/.test(lastRun), `the view's run is not done: ${lastRun}`);
  await shot('agent-view-code-action-run');
  mark('the Agent view shows the run started by the code action');

  // 14. A new session from the view: the answer streams in as markdown (sanitized), then the run ends.
  currentStep = '14. a task from the Agent view';
  await view.locator('button[data-action="newSession"]').click();
  await waitUntil('the view to be empty', async () => (await view.locator('#conversation .empty').count()) === 1);
  const input = view.locator('#task');
  await input.fill(VIEW_TASK);
  await input.press('Enter');
  const answer = view.locator('#conversation .run').last().locator('.answer');
  const status = view.locator('#conversation .run').last().locator('.run-status');
  await waitUntil('part of the streamed answer', async () =>
    (await answer.count()) > 0 && (await status.innerText()).includes('working'));
  const partial = await answer.first().innerText();
  await shot('agent-view-streaming');
  await waitUntil('the run from the view to end', async () => (await status.innerText()).includes('done'));
  const whole = await answer.first().innerText();
  await check(whole.includes(VIEW_ANSWER_START) && whole.length > partial.length,
    `the view did not stream the answer (partial ${partial.length} chars, whole ${whole.length}): ${whole}`);
  await check(await answer.locator('h2').count() === 1 && await answer.locator('strong').count() >= 1
    && await answer.locator('li').count() === 2, 'the answer is not rendered as markdown (heading, bold, list)');
  await check(await view.locator('#conversation .run').count() === 1, 'the new session shows more than its own run');
  const task7 = await view.locator('#conversation .run .task').first().innerText();
  await check(task7.includes(VIEW_TASK), `the view does not show the typed task: ${task7}`);
  await waitUntil('model request 7', () => readRequests().length >= 7);
  const seventh = readRequests()[6].messages;
  const users7 = seventh.filter((m) => m.role === 'user').map((m) => text(m.content)).join('\n');
  await check(users7.includes(VIEW_TASK), `request 7 does not carry the view's task: ${users7.slice(0, 300)}`);
  await check(!users7.includes('/code-review'), 'request 7 carries an earlier session: New session did not start one');
  await view.locator('#conversation .context .bar').first().waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await shot('agent-view-answer');
  mark(`a task from the view streamed its answer (${partial.length} of ${whole.length} characters at the first look)`);

  // 15. A follow-up from the input box continues the session: the model gets the first task and answer.
  currentStep = '15. a follow-up in the same session';
  await input.fill(FOLLOW_UP);
  await input.press('Enter');
  await waitUntil('the follow-up to end', async () =>
    (await view.locator('#conversation .run').count()) === 2
    && (await view.locator('#conversation .run').last().locator('.run-status').innerText()).includes('done'));
  const followUp = await view.locator('#conversation .run').last().innerText();
  await check(followUp.includes(FOLLOW_UP) && followUp.includes(FOLLOW_UP_ANSWER), `the follow-up run is not shown: ${followUp}`);
  await waitUntil('model request 8', () => readRequests().length >= 8);
  const eighth = readRequests()[7].messages;
  const history = eighth.map((m) => `${m.role}: ${text(m.content)}`).join('\n');
  await check(history.includes(VIEW_TASK) && history.includes(VIEW_ANSWER_START) && history.includes(FOLLOW_UP),
    `request 8 does not carry the session's history (first task, its answer, the follow-up): ${history.slice(-800)}`);
  const order = [VIEW_TASK, VIEW_ANSWER_START, FOLLOW_UP].map((needle) => history.indexOf(needle));
  await check(order[0] < order[1] && order[1] < order[2], `request 8's history is out of order: ${order}`);
  await shot('agent-view-follow-up');
  mark('the follow-up went to the same session, with its history');

  // 16. The session picker (agent.listSessions) resumes an older session: the palette's first run.
  currentStep = '16. resume a session from the picker';
  await view.locator('button[data-action="pickSession"]').click();
  const sessionRows = page.locator('.quick-input-widget .monaco-list-row');
  const listed = await waitUntil('the stored sessions in the picker', async () => {
    const rows = await sessionRows.allInnerTexts();
    return rows.some((row) => row.includes(TASK)) ? rows : undefined;
  });
  await check(listed.some((row) => row.includes(VIEW_TASK)), `the picker does not list the view's session: ${JSON.stringify(listed)}`);
  await shot('agent-view-sessions');
  await sessionRows.filter({ hasText: TASK }).first().click();
  await waitUntil('the resumed session in the view', async () =>
    (await view.locator('#conversation .resumed').innerText().catch(() => '')).includes(TASK));
  // Its earlier run, read back from its session file (agent.sessionHistory): the task, the asked command
  // with the user's answer, and the answer.
  const storedRun = view.locator('#conversation .run').first();
  await waitUntil('the resumed session\'s earlier run', async () =>
    (await storedRun.innerText().catch(() => '')).includes('Fixed mean() in stats.py'));
  const stored = await storedRun.innerText();
  await check(stored.includes(TASK) && stored.includes('read_file') && stored.includes('edit_file'),
    `the resumed session's run does not show its task and tool calls: ${stored}`);
  if (PERMISSION_ANSWER === 'Allow once') {
    await check(stored.includes('allowed once by you'), `the resumed run does not show the user's answer: ${stored}`);
  }
  await shot('agent-view-resumed');
  mark('an older session resumed from the picker');
}

// A /code-review run on stats.py: its progress notification, its end notification with the answer, and
// the model request (the n-th): the task is /code-review and the skill's body came with it.
async function reviewRun(from, answer, n) {
  const progress = toasts().filter({ hasText: '/code-review stats.py' })
    .filter({ has: page.locator('.monaco-button', { hasText: 'Cancel' }) }).first();
  await progress.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const ended = toastWith(answer).first();
  await ended.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await check(await ended.locator('.monaco-button', { hasText: 'Show Answer' }).count() === 1,
    `the review's end notification (${from}) has no Show Answer button`);
  await waitUntil(`model request ${n}`, () => readRequests().length >= n);
  const requests = readRequests();
  await check(requests.length === n, `the model got ${requests.length} requests, expected ${n}`);
  const sent = requests[n - 1].messages.map((m) => text(m.content)).join('\n');
  const user = requests[n - 1].messages.filter((m) => m.role === 'user').map((m) => text(m.content)).join('\n');
  await check(user.includes('/code-review'), `request ${n} (${from}) has no /code-review task: ${user.slice(0, 400)}`);
  await check(sent.includes('# Code review'), `request ${n} (${from}) does not carry the code-review skill's body`);
  await check(sent.includes(AGENTS_RULE), `request ${n} (${from}) does not carry the workspace's AGENTS.md`);
  return ended;
}

// ---------------------------------------------------------------- main
async function main() {
  mkdirSync(SHOTS, { recursive: true });
  for (const f of readdirSync(SHOTS)) if (f.endsWith('.png')) rmSync(join(SHOTS, f));
  browser = await chromium.launch({
    executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
    headless: !HEADED,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 760 } });
  page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  mark('browser started');
  try {
    await scenario();
  } catch (err) {
    console.error(`driver: FAILED in step ${currentStep}: ${err instanceof StepError ? err.message : err.stack || err}`);
    try {
      await page.screenshot({ path: join(SHOTS, 'failure.png') });
      const notes = await toasts().allInnerTexts();
      console.error(`driver: notifications on screen: ${JSON.stringify(notes)}`);
      console.error(`driver: failure screenshot: ${join(SHOTS, 'failure.png')}`);
    } catch (e) { console.error(`driver: no failure screenshot: ${e}`); }
    if (consoleErrors.length) console.error(`driver: browser console errors:\n  ${consoleErrors.slice(-15).join('\n  ')}`);
    await browser.close().catch(() => {});
    process.exit(1);
  }
  await browser.close();
  console.error(`driver: PASSED in ${((Date.now() - t0) / 1000).toFixed(1)} s; screenshots: ${shots.join(', ')}`);
}

await main();
