import assert from 'node:assert/strict';
import { test } from 'node:test';

import { choosePython, crashMessage, serverLaunch, StderrTail, startFailureMessage } from '../../src/launch';

test('the interpreter: the setting, then the Python extension, then python3', () => {
  assert.deepEqual(choosePython('/opt/venv/bin/python', '/usr/bin/python3.12', 'linux', '/home/u'), {
    command: '/opt/venv/bin/python',
    source: 'agentLs.pythonPath',
  });
  assert.deepEqual(choosePython('~/venv/bin/python', undefined, 'linux', '/home/u'), {
    command: '/home/u/venv/bin/python',
    source: 'agentLs.pythonPath',
  });
  assert.deepEqual(choosePython('  ', '/usr/bin/python3.12', 'linux', '/home/u'), {
    command: '/usr/bin/python3.12',
    source: 'the Python extension',
  });
  assert.deepEqual(choosePython(undefined, undefined, 'linux', '/home/u'), { command: 'python3', source: 'the default' });
  assert.deepEqual(choosePython('', '', 'win32', 'C:\\Users\\u'), { command: 'python', source: 'the default' });
});

test('a stored API key is handed over on descriptor 3, never in the environment (Windows: the environment)', () => {
  const base = { PATH: '/usr/bin', OPENAI_API_KEY: 'from-shell' };
  assert.deepEqual(serverLaunch(base, 'sk-secret', 'linux'), {
    env: { ...base, AGENT_LS_KEYS_FD: '3' },
    keys: '{"AGENT_LS_API_KEY":"sk-secret"}',
  });
  assert.deepEqual(serverLaunch(base, undefined, 'linux'), { env: base, keys: undefined });
  assert.deepEqual(serverLaunch(base, '', 'darwin'), { env: base, keys: undefined });
  assert.deepEqual(serverLaunch(base, 'sk-secret', 'win32'), { env: { ...base, AGENT_LS_API_KEY: 'sk-secret' }, keys: undefined });
  assert.equal('AGENT_LS_KEYS_FD' in base, false, 'the base environment is not modified');
});

test('stderr tail keeps the end and finds the last line', () => {
  const tail = new StderrTail(20);
  tail.push('first line that is long\n');
  tail.push('second\n\n');
  assert.equal(tail.lastLine(), 'second');
  assert.equal(new StderrTail().lastLine(), '');
});

const python = { command: '/venv/bin/python', source: 'agentLs.pythonPath' } as const;

test('start failure: interpreter not found', () => {
  assert.equal(
    startFailureMessage({ python, spawnErrorCode: 'ENOENT', stderr: new StderrTail() }),
    'Agent: the Python interpreter "/venv/bin/python" was not found (interpreter from agentLs.pythonPath). ' +
      'Set agentLs.pythonPath to a Python that has agent-ls installed.',
  );
});

test('start failure: agent-ls not installed in that interpreter', () => {
  const stderr = new StderrTail();
  stderr.push('/venv/bin/python: No module named agent_ls\n');
  assert.equal(
    startFailureMessage({ python, exitCode: 1, stderr }),
    'Agent: agent-ls is not installed in "/venv/bin/python" (interpreter from agentLs.pythonPath). ' +
      'Install it there ("/venv/bin/python -m pip install ." in an agent-ls checkout), or set agentLs.pythonPath to a Python that has it.',
  );
});

test('start failure: the server crashed while starting', () => {
  const stderr = new StderrTail();
  stderr.push('Traceback (most recent call last):\n  ...\nImportError: cannot import name x\n');
  assert.equal(
    startFailureMessage({ python, exitCode: 1, stderr }),
    'Agent: the server did not start ("/venv/bin/python -m agent_ls serve", exit code 1): ImportError: cannot import name x. See the log for details.',
  );
  assert.equal(
    startFailureMessage({ python, spawnErrorCode: 'EACCES', spawnErrorMessage: 'spawn /venv/bin/python EACCES', stderr: new StderrTail() }),
    'Agent: could not run "/venv/bin/python" (interpreter from agentLs.pythonPath): spawn /venv/bin/python EACCES. Check agentLs.pythonPath.',
  );
});

test('crash message names how it ended and what was lost', () => {
  const stderr = new StderrTail();
  stderr.push('MemoryError\n');
  assert.equal(
    crashMessage(null, 'SIGKILL', stderr),
    'Agent: the server stopped unexpectedly (killed by SIGKILL): MemoryError. Runs in progress and their proposed changes are lost.',
  );
  assert.equal(
    crashMessage(3, null, new StderrTail()),
    'Agent: the server stopped unexpectedly (exit code 3). Runs in progress and their proposed changes are lost.',
  );
});
