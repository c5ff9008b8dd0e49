import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Timers } from '../../src/debounce';
import {
  DEBOUNCE_MS,
  type EditorDiagnostic,
  MAX_WAIT_MS,
  ProblemForwarder,
  QUIET_MS,
  settled,
  wireDiagnostic,
} from '../../src/problemForwarding';
import type { FileDiagnostics } from '../../src/protocol';

/** A clock the test moves by hand. */
class FakeClock implements Timers {
  now = 0;
  private next = 0;
  private readonly due = new Map<number, { at: number; callback: () => void }>();
  set(callback: () => void, delayMs: number): unknown {
    this.next += 1;
    this.due.set(this.next, { at: this.now + delayMs, callback });
    return this.next;
  }
  clear(handle: unknown): void {
    this.due.delete(handle as number);
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const first = [...this.due.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!first) {
        break;
      }
      this.due.delete(first[0]);
      this.now = first[1].at;
      first[1].callback();
    }
    this.now = end;
  }
}

const range = (line: number) => ({ start: { line, character: 4 }, end: { line, character: 9 } });
const pylance: EditorDiagnostic = {
  range: range(2),
  message: '"x" is not defined',
  severity: 0,
  source: 'Pylance',
  code: { value: 'reportUndefinedVariable' },
};
const ruff: EditorDiagnostic = {
  range: range(0),
  message: '`os` imported but unused',
  severity: 1,
  source: 'Ruff',
  code: 'F401',
};
const review: EditorDiagnostic = { range: range(5), message: 'our finding', severity: 1, source: 'agent-ls review' };
const lint: EditorDiagnostic = { range: range(1), message: 'unknown key', severity: 0, source: 'agent-ls' };

const WS = 'file:///ws/';

function forwarder(diagnostics: Map<string, EditorDiagnostic[]>, clock: FakeClock) {
  const sent: FileDiagnostics[][] = [];
  const forwarding = new ProblemForwarder(
    {
      read: (uri) => diagnostics.get(uri) ?? [],
      inWorkspace: (uri) => uri.startsWith(WS),
      send: (files) => sent.push(files),
    },
    clock,
  );
  return { forwarding, sent };
}

test('a diagnostic goes on the wire with LSP severities and the code value', () => {
  assert.deepEqual(wireDiagnostic(pylance), {
    range: range(2),
    message: '"x" is not defined',
    severity: 1,
    source: 'Pylance',
    code: 'reportUndefinedVariable',
  });
  assert.deepEqual(wireDiagnostic({ range: range(0), message: 'm', severity: 3 }), {
    range: range(0),
    message: 'm',
    severity: 4,
    source: null,
    code: null,
  });
});

test('the snapshot sends the workspace files with problems, without agent-ls own diagnostics', () => {
  const clock = new FakeClock();
  const { forwarding, sent } = forwarder(new Map(), clock);
  forwarding.snapshot([
    [`${WS}a.py`, [pylance, review]],
    [`${WS}only-ours.py`, [lint]],
    ['file:///elsewhere/b.py', [ruff]],
    ['untitled:Untitled-1', [ruff]],
    [`${WS}clean.py`, []],
  ]);
  assert.deepEqual(sent, [[{ uri: `${WS}a.py`, diagnostics: [wireDiagnostic(pylance)] }]]);
});

test('changes are gathered and sent once, 300 ms after the last, only the changed workspace files', () => {
  const clock = new FakeClock();
  const diagnostics = new Map([[`${WS}a.py`, [pylance]], [`${WS}b.py`, [ruff]]]);
  const { forwarding, sent } = forwarder(diagnostics, clock);
  forwarding.changed([`${WS}a.py`]);
  clock.advance(DEBOUNCE_MS - 1);
  forwarding.changed([`${WS}b.py`, 'file:///elsewhere/c.py']);
  clock.advance(DEBOUNCE_MS - 1);
  assert.deepEqual(sent, []);
  clock.advance(1);
  assert.deepEqual(sent, [
    [
      { uri: `${WS}a.py`, diagnostics: [wireDiagnostic(pylance)] },
      { uri: `${WS}b.py`, diagnostics: [wireDiagnostic(ruff)] },
    ],
  ]);
  // Fixed since: an empty list clears the file on the server.
  diagnostics.set(`${WS}a.py`, []);
  forwarding.changed([`${WS}a.py`]);
  clock.advance(DEBOUNCE_MS);
  assert.deepEqual(sent[1], [{ uri: `${WS}a.py`, diagnostics: [] }]);
  // Outside the workspace only: nothing is scheduled.
  forwarding.changed(['file:///elsewhere/c.py']);
  clock.advance(DEBOUNCE_MS * 2);
  assert.equal(sent.length, 2);
});

test('dispose drops what was waiting', () => {
  const clock = new FakeClock();
  const { forwarding, sent } = forwarder(new Map([[`${WS}a.py`, [pylance]]]), clock);
  forwarding.changed([`${WS}a.py`]);
  forwarding.dispose();
  clock.advance(DEBOUNCE_MS * 2);
  assert.deepEqual(sent, []);
});

test('diagnostics of a checked text settle 300 ms after their last change, or after 2 s at most', async () => {
  const clock = new FakeClock();
  let listener: (() => void) | undefined;
  let disposed = 0;
  const subscribe = (l: () => void) => {
    listener = l;
    return { dispose: () => (disposed += 1) };
  };
  let done = false;
  const quiet = settled(subscribe, clock).then((heard) => {
    done = true;
    return heard;
  });
  listener!();
  clock.advance(QUIET_MS - 1);
  listener!();
  clock.advance(QUIET_MS - 1);
  await Promise.resolve();
  assert.equal(done, false);
  clock.advance(1);
  assert.equal(await quiet, true);
  assert.equal(clock.now, 2 * QUIET_MS - 1);
  assert.equal(disposed, 1);

  const chatty = settled(subscribe, clock);
  const start = clock.now;
  for (let i = 0; i < 20; i += 1) {
    listener!();
    clock.advance(QUIET_MS / 2);
  }
  assert.equal(await chatty, true);
  assert.equal(clock.now - start >= MAX_WAIT_MS, true);
  assert.equal(disposed, 2);

  // No language server reported on the text: "not checked", after 2 s.
  const silent = settled(subscribe, clock);
  const began = clock.now;
  clock.advance(MAX_WAIT_MS);
  assert.equal(await silent, false);
  assert.equal(clock.now - began, MAX_WAIT_MS);
});
