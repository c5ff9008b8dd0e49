// Small renderers: the modal permission text, the debounce.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Debouncer, type Timers } from '../../src/debounce';
import { answerFor, DENY_WITH_FEEDBACK, modalText, withFeedbackAction } from '../../src/messageRequest';

test('a permission question: first line as the message, the rest as the detail', () => {
  assert.deepEqual(modalText('agent-ls wants to run bash: rm -rf build\n(no rule matched)'), {
    message: 'agent-ls wants to run bash: rm -rf build',
    detail: '(no rule matched)',
  });
  assert.deepEqual(modalText('Apply 2 file(s) (+3 −1)?'), { message: 'Apply 2 file(s) (+3 −1)?' });
});

test('debounce: many triggers, one action after the last', () => {
  const pending = new Map<number, () => void>();
  let next = 0;
  const timers: Timers = {
    set: (callback) => {
      pending.set(++next, callback);
      return next;
    },
    clear: (handle) => pending.delete(handle as number),
  };
  let runs = 0;
  const debouncer = new Debouncer(() => runs++, 1000, timers);
  debouncer.trigger();
  debouncer.trigger();
  debouncer.trigger();
  assert.equal(pending.size, 1);
  const [[handle, callback]] = [...pending.entries()] as [[number, () => void]];
  pending.delete(handle);
  callback();
  assert.equal(runs, 1);
  debouncer.trigger();
  debouncer.dispose();
  assert.equal(pending.size, 0, 'dispose clears a pending trigger');
  assert.equal(runs, 1);
});

test('a permission question gets a deny-with-feedback action right after Deny', () => {
  const asked = [{ title: 'Allow once' }, { title: 'Allow for this session' }, { title: 'Always allow' }, { title: 'Deny' }];
  assert.deepEqual(
    withFeedbackAction(asked).map((action) => action.title),
    ['Allow once', 'Allow for this session', 'Always allow', 'Deny', DENY_WITH_FEEDBACK],
  );
  const apply = [{ title: 'Apply' }, { title: 'Discard' }];
  assert.deepEqual(withFeedbackAction(apply), apply);
});

test('the feedback action answers Deny with the words typed, and plain Deny without words', () => {
  assert.deepEqual(answerFor(DENY_WITH_FEEDBACK, '  use the Makefile target instead '), {
    title: 'Deny',
    feedback: 'use the Makefile target instead',
  });
  assert.deepEqual(answerFor(DENY_WITH_FEEDBACK, undefined), { title: 'Deny' });
  assert.deepEqual(answerFor(DENY_WITH_FEEDBACK, '   '), { title: 'Deny' });
  assert.deepEqual(answerFor('Allow once', 'ignored'), { title: 'Allow once' });
});
