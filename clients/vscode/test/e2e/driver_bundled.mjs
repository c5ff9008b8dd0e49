// The second VS Code e2e: the platform .vsix alone, in a workspace whose Python has no agent-ls
// (`e2e.sh run-bundled`, docs/vscode-e2e.md). Same scripted model and first task as driver.mjs:
// the first start names the model and the sandbox, a task from the palette, the permission question,
// the proposal applied through the Refactor Preview, the fix in the editor and on disk.
// Started by ../e2e.sh with E2E_URL, E2E_WORKSPACE, E2E_REQUESTS and E2E_SHOTS (as driver.mjs).
// Exits 1 on the first failure, after a failure screenshot.
import { chromium } from 'playwright-core';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const need = (name) => process.env[name] || (console.error(`driver: ${name} is not set (run ../e2e.sh)`), process.exit(2));
const URL = need('E2E_URL');
const WORKSPACE = need('E2E_WORKSPACE');
const REQUESTS = need('E2E_REQUESTS');
const SHOTS = need('E2E_SHOTS');
const STEP_TIMEOUT = 30_000;
// Must match model_server.py and e2e.sh's settings.
const TASK = 'Fix the mean() function in stats.py';
const MODEL_LINE = 'Agent: model ollama/e2e-scripted at http://127.0.0.1:';
const ASKED = 'wants to run bash: wc -l stats.py';
const BUGGY = '    return sum(values) / (len(values) - 1)';
const FIXED = '    return sum(values) / len(values)';

const original = readFileSync(join(WORKSPACE, 'stats.py'), 'utf8');
const t0 = Date.now();
const mark = (what) => console.error(`[driver-bundled +${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}`);
let page;
let step = 'start';
let shotNumber = 0;
class StepError extends Error {}
const fail = (message) => { throw new StepError(message); };

async function shot(name) {
  await page.mouse.move(1000, 440);
  await page.waitForTimeout(400);
  shotNumber += 1;
  await page.screenshot({ path: join(SHOTS, `${String(shotNumber).padStart(2, '0')}-${name}.png`) });
}
const toasts = () => page.locator('.notifications-toasts .notification-toast');
async function waitUntil(what, predicate, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) fail(`timed out after ${timeout / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function runCommand(label) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${label}`);
  await page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: label }).first().click();
}
async function editorLines(editor) {
  return editor.locator('.view-lines .view-line').evaluateAll((nodes) => nodes
    .map((n) => [parseFloat(n.style.top) || 0, n.textContent.replace(/\u00a0/g, ' ')])
    .sort((a, b) => a[0] - b[0]).map((x) => x[1]));
}
const requests = () => (existsSync(REQUESTS) ? JSON.parse(readFileSync(REQUESTS, 'utf8')) : []);

async function scenario() {
  step = '1. the first start names the model and the sandbox';
  await page.goto(`${URL}?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
  // The server runs from the .vsix's bundle (the workspace Python has no agent-ls), so this line is
  // agent.status answered by it.
  const first = toasts().filter({ hasText: MODEL_LINE }).first();
  await first.waitFor({ state: 'visible', timeout: 60_000 });
  const line = await first.innerText();
  if (!/commands run (sandboxed|UNSANDBOXED) \(/.test(line)) fail(`the first-start line names no sandbox: ${JSON.stringify(line)}`);
  await shot('first-start');
  mark(`first start: ${line.split('\n')[0]}`);
  await first.hover();
  await first.locator('.codicon-notifications-clear').click();

  step = '2. a task from the palette';
  await page.keyboard.press('Control+P');
  const quickOpen = page.locator('.quick-input-widget .quick-input-box input');
  await quickOpen.fill('stats.py');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'stats.py' }).first().waitFor();
  await page.keyboard.press('Enter');
  const tab = page.locator('.tabs-container .tab').filter({ has: page.locator('.label-name', { hasText: /^stats\.py$/ }) });
  await tab.waitFor({ state: 'visible' });
  await runCommand('Agent: Run Task');
  const taskBox = page.locator('.quick-input-widget .quick-input-box input');
  await waitUntil('the task input box', async () => (await taskBox.isVisible()) && (await taskBox.inputValue()) === '');
  await taskBox.fill(TASK);
  await page.keyboard.press('Enter');

  step = '3. the permission question';
  const question = page.locator('.monaco-dialog-box').filter({ hasText: ASKED }).or(toasts().filter({ hasText: ASKED })).first();
  await question.waitFor({ state: 'visible' });
  await shot('permission-question');
  await question.locator('.monaco-button', { hasText: /^Allow once$/ }).click();
  await question.waitFor({ state: 'hidden' });

  step = '4. the end of the run';
  await waitUntil('the 4th model request', () => requests().length >= 4);
  const ended = toasts().filter({ has: page.locator('.monaco-button', { hasText: 'Review Changes' }) }).first();
  await ended.waitFor({ state: 'visible' });
  await shot('run-ended');
  await ended.hover();
  await ended.locator('.codicon-notifications-clear').click();
  mark('run ended with a proposal');

  step = '5. Agent: Apply Proposed Changes through the Refactor Preview';
  await runCommand('Agent: Apply Proposed Changes');
  const preview = page.locator('.bulk-edit-panel');
  await preview.waitFor({ state: 'visible' });
  const boxes = preview.locator('.edit-checkbox');
  await boxes.first().waitFor({ state: 'visible' });
  for (let round = 0; round < 10; round += 1) {
    const count = await boxes.count();
    let unticked = -1;
    for (let i = 0; i < count && unticked < 0; i += 1) if (!(await boxes.nth(i).isChecked())) unticked = i;
    if (unticked < 0) break;
    await boxes.nth(unticked).click();
    await page.waitForTimeout(100);
  }
  await preview.locator('.monaco-button', { hasText: 'Apply' }).first().click();
  await preview.waitFor({ state: 'hidden' });

  step = '6. the fix in the editor and on disk';
  await tab.click();
  const active = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
  await waitUntil('the fix in the stats.py editor', async () => (await editorLines(active)).includes(FIXED));
  await shot('applied');
  await page.keyboard.press('Control+S');
  const expected = original.replace(BUGGY, FIXED);
  await waitUntil('stats.py saved with the fix', () => readFileSync(join(WORKSPACE, 'stats.py'), 'utf8') === expected);
  mark('the fix is applied and saved');
}

mkdirSync(SHOTS, { recursive: true });
for (const f of readdirSync(SHOTS)) if (f.endsWith('.png')) rmSync(join(SHOTS, f));
const browser = await chromium.launch({
  executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
  headless: process.env.AGENT_LS_E2E_HEADED !== '1',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
page = await (await browser.newContext({ viewport: { width: 1280, height: 760 } })).newPage();
page.setDefaultTimeout(STEP_TIMEOUT);
try {
  await scenario();
} catch (err) {
  console.error(`driver-bundled: FAILED in step ${step}: ${err instanceof StepError ? err.message : err.stack || err}`);
  await page.screenshot({ path: join(SHOTS, 'failure.png') }).catch(() => {});
  console.error(`driver-bundled: notifications on screen: ${JSON.stringify(await toasts().allInnerTexts().catch(() => []))}`);
  await browser.close().catch(() => {});
  process.exit(1);
}
await browser.close();
console.error(`driver-bundled: PASSED in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
