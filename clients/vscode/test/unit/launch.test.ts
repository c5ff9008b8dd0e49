import assert from 'node:assert/strict';
import { test } from 'node:test';

import { choosePython, crashMessage, serverArgs, serverLaunch, StderrTail, startFailureMessage } from '../../src/launch';

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

test('the server runs through the launcher in the extension, which picks an installed agent-ls or the bundle', () => {
  assert.deepEqual(serverArgs('/home/u/.vscode/extensions/agent-ls.agent-ls-0.1.0-linux-x64'), [
    '/home/u/.vscode/extensions/agent-ls.agent-ls-0.1.0-linux-x64/bundled/tool/launch_server.py',
    'serve',
  ]);
});

test('start failure: no python3 at all, from the default or the Python extension', () => {
  assert.equal(
    startFailureMessage({ python: { command: 'python3', source: 'the default' }, spawnErrorCode: 'ENOENT', stderr: new StderrTail() }),
    'Agent: no Python found: "python3" (interpreter from the default) is not on PATH. agent-ls needs Python 3.11 or newer: ' +
      "install one (python.org, or your system's package manager) and select it in the Python extension, or set agentLs.pythonPath to it.",
  );
  assert.match(
    startFailureMessage({ python: { command: '/gone/python', source: 'the Python extension' }, spawnErrorCode: 'ENOENT', stderr: new StderrTail() }),
    /^Agent: no Python found: "\/gone\/python" \(interpreter from the Python extension\)/,
  );
});

const fromPath = { command: 'python3', source: 'the default' } as const;

function launcherSaid(line: string): StderrTail {
  const stderr = new StderrTail();
  stderr.push(`${line}\n`);
  return stderr;
}

test('start failure: a Python older than 3.11 says which it is and how to fix it', () => {
  assert.equal(
    startFailureMessage({ python: fromPath, exitCode: 3, stderr: launcherSaid('agent-ls-launcher: too-old 3.10.12 /usr/bin/python3') }),
    'Agent: "python3" (interpreter from the default) is Python 3.10.12; agent-ls needs Python 3.11 or newer. ' +
      'Install a newer Python and select it in the Python extension, or set agentLs.pythonPath to it.',
  );
});

test('start failure: a Python version the bundle has no wheels for names the bundled versions', () => {
  const stderr = launcherSaid('agent-ls-launcher: no-wheels 3.15.0 /opt/py315/bin/python3 bundled=3.11,3.12,3.13,3.14');
  assert.deepEqual(stderr.launcherStop(), {
    reason: 'no-wheels',
    version: '3.15.0',
    executable: '/opt/py315/bin/python3',
    bundled: ['3.11', '3.12', '3.13', '3.14'],
  });
  assert.equal(
    startFailureMessage({ python: fromPath, exitCode: 3, stderr }),
    'Agent: "python3" (interpreter from the default) is Python 3.15.0, and this extension carries agent-ls\'s dependencies ' +
      'for Python 3.11, 3.12, 3.13, 3.14 only. Select one of those in the Python extension or in agentLs.pythonPath, ' +
      'or install agent-ls into it ("python3 -m pip install agent-ls").',
  );
});

test('start failure: the universal package on a Python without agent-ls points at the platform package', () => {
  assert.equal(
    startFailureMessage({ python, exitCode: 3, stderr: launcherSaid('agent-ls-launcher: no-bundle 3.12.1 /venv/bin/python') }),
    'Agent: agent-ls is not installed in "/venv/bin/python" (interpreter from agentLs.pythonPath), and this package of the ' +
      "extension does not carry it. Install the extension's package for your platform (agent-ls-<platform>.vsix), " +
      'or install agent-ls into it ("/venv/bin/python -m pip install agent-ls").',
  );
  assert.equal(new StderrTail().launcherStop(), undefined);
});
