/**
 * The interpreter selected in the Python extension (ms-python.python), when it is installed.
 *
 * Only the few members used here are declared (the extension's published API, as in
 * `@vscode/python-extension`): `environments` since 2023, `settings.getExecutionDetails` before.
 * Anything missing or failing gives undefined, and the caller falls back to `python3`.
 */

import * as vscode from 'vscode';

const PYTHON_EXTENSION = 'ms-python.python';
const ACTIVATE_TIMEOUT_MS = 10_000;

interface EnvironmentPath {
  id: string;
  path: string;
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

async function api(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (!extension) {
    return undefined;
  }
  if (extension.isActive) {
    return extension.exports;
  }
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ACTIVATE_TIMEOUT_MS));
  return Promise.race([Promise.resolve(extension.activate()), timeout]);
}

/** The selected interpreter's executable for the first workspace folder, or undefined. */
export async function selectedInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  try {
    const python = await api();
    if (!python) {
      return undefined;
    }
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (python.environments) {
      const active = python.environments.getActiveEnvironmentPath(resource);
      const resolved = await python.environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) {
        return executable;
      }
    }
    return python.settings?.getExecutionDetails(resource).execCommand?.[0];
  } catch (error) {
    log.warn(`The Python extension did not report an interpreter: ${String(error)}`);
    return undefined;
  }
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onInterpreterChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    return (await api())?.environments?.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    return undefined;
  }
}
