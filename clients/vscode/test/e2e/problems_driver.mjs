// The editor's problems reach the model, in a real VS Code (code-server; issue 17). Started by ../e2e.sh
// with AGENT_LS_E2E_DRIVER=problems_driver.mjs and AGENT_LS_E2E_MODEL=problems_model_server.py, which set
// E2E_URL, E2E_WORKSPACE, E2E_REQUESTS and E2E_SHOTS as for driver.mjs.
//
// 1. A JSON file with a syntax error is written into the workspace and opened: VS Code's built-in JSON
//    language server reports it (the Problems count in the status bar).
// 2. "Agent: Run Task…" starts the server; the extension forwards the diagnostics (agent/didChangeProblems),
//    the scripted model calls `problems` for the workspace and for the file.
// 3. The model's third request holds the JSON language server's error, as `problems` lines.
// 4. The model edits broken.json (a new error) and calls `problems` on it: the extension checks the proposed
//    text (an untitled JSON document) and the model reads the new error; when it answers, it is told the
//    error again (the re-check of the edited files), and answers once more.
import { chromium } from 'playwright-core';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const need = (name) => {
  const value = process.env[name];
  if (!value) { console.error(`problems_driver: ${name} is not set (run ../e2e.sh)`); process.exit(2); }
  return value;
};
const URL = need('E2E_URL');
const WORKSPACE = need('E2E_WORKSPACE');
const REQUESTS = need('E2E_REQUESTS');
const SHOTS = need('E2E_SHOTS');
const STEP_TIMEOUT = 30_000;
const TASK = 'What problems does the editor report?';
const ANSWER = 'broken.json had a JSON syntax error on line 2.'; // problems_model_server.py

let page;
let step = 'start';
const fail = (message) => { throw new Error(message); };
const readRequests = () => (existsSync(REQUESTS) ? JSON.parse(readFileSync(REQUESTS, 'utf8')) : []);

async function waitUntil(what, predicate, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) fail(`timed out after ${timeout / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function quickOpen(prefix, text) {
  await page.keyboard.press(prefix === '>' ? 'F1' : 'Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`${prefix === '>' ? '>' : ''}${text}`);
  const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: text }).first();
  await row.waitFor({ state: 'visible' });
  await row.click();
}

const toolText = (message) => {
  const whole = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  const inner = /^<tool_result [^>]*trust="data"[^>]*>\n([\s\S]*)\n<\/tool_result>$/.exec(whole);
  return inner ? inner[1] : `(not wrapped as data) ${whole}`;
};

async function scenario() {
  step = '1. a JSON syntax error, reported by the JSON language server';
  writeFileSync(join(WORKSPACE, 'broken.json'), '{\n  "name": "sample",,\n  "version": 1\n}\n');
  await page.goto(`${URL}?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'broken.json' })
    .first().waitFor({ state: 'visible' });
  await quickOpen('', 'broken.json');
  await page.locator('.tabs-container .tab', { hasText: 'broken.json' }).waitFor({ state: 'visible' });
  // The status bar's problems item reads "1" errors once the JSON language server reported.
  const problemsItem = page.locator('#status\\.problems');
  await waitUntil('the JSON error in the status bar', async () =>
    /[1-9]/.test((await problemsItem.innerText().catch(() => '')).split('\n')[0] || ''));
  await page.screenshot({ path: join(SHOTS, 'problems-1-json-error.png') });

  step = '2. Agent: Run Task…';
  await quickOpen('>', 'Agent: Run Task');
  const taskBox = page.locator('.quick-input-widget .quick-input-box input');
  await waitUntil('the task input box', async () => (await taskBox.isVisible()) && (await taskBox.inputValue()) === '');
  await taskBox.fill(TASK);
  await page.keyboard.press('Enter');

  step = '3. the JSON error in the model request';
  const requests = await waitUntil('the third model request', () => {
    const all = readRequests();
    return all.length >= 3 ? all : null;
  }, 90_000);
  const tools = requests[2].messages.filter((m) => m.role === 'tool').map(toolText);
  const [summary, listing] = tools;
  if (!/^broken\.json: [1-9]\d* errors?/m.test(summary || '')) fail(`the summary lacks broken.json: ${summary}`);
  if (!/^broken\.json:2:\d+ error json/m.test(listing || '')) fail(`the listing lacks the JSON error: ${listing}`);
  if (/agent-ls/.test(listing)) fail(`agent-ls's own diagnostics were echoed: ${listing}`);

  step = '4. the proposal checked by the JSON language server';
  const all = await waitUntil('the sixth model request', () => {
    const found = readRequests();
    return found.length >= 6 ? found : null;
  }, 90_000);
  const after = all[4].messages.filter((m) => m.role === 'tool').map(toolText).at(-1) || '';
  if (!after.startsWith('Problems of your proposed broken.json (checked by the editor):')) {
    fail(`the proposal was not checked: ${after}`);
  }
  if (!/^new since your edit: 1:\nbroken\.json:2:\d+ error json/m.test(after)) fail(`no new error named: ${after}`);
  if (!/^gone since your edit: 1$/m.test(after)) fail(`the fixed error is not gone: ${after}`);
  const told = all[5].messages.filter((m) => m.role === 'user').at(-2)?.content || '';
  if (!String(told).startsWith('The editor checked your proposed files.')) fail(`the answer was not re-checked: ${told}`);
  await page.locator('.notifications-toasts .notification-toast', { hasText: ANSWER.slice(0, 30) })
    .first().waitFor({ state: 'visible' });
  // The checked copies' tabs were closed, and their diagnostics went with them.
  await waitUntil('only broken.json open', async () => (await page.locator('.tabs-container .tab').count()) === 1);
  const errors = (await page.locator('#status\\.problems').innerText()).split('\n')[0].trim();
  if (errors !== '1') fail(`the status bar counts ${errors} errors, not broken.json's 1`);
  await page.screenshot({ path: join(SHOTS, 'problems-2-answer.png') });
  console.error(`problems_driver: the model read:\n${summary}\n${listing}\n${after}\n${told}`);
}

mkdirSync(SHOTS, { recursive: true });
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
  console.error(`problems_driver: FAILED in step ${step}: ${err.message || err}`);
  await page.screenshot({ path: join(SHOTS, 'problems-failure.png') }).catch(() => {});
  await browser.close().catch(() => {});
  process.exit(1);
}
await browser.close();
console.error('problems_driver: PASSED');
