/**
 * The `agentLs` settings the server reads, as sent in `initializationOptions` and
 * `workspace/didChangeConfiguration` (both as `{agentLs: {...}}`; docs/configuration.md).
 *
 * `agentLs.pythonPath` is the client's own (it picks the process) and is not sent. Unset or empty
 * values are left out. The server merges what it receives over what it has, and an unset or empty
 * value never overrides, so a setting the user clears cannot reach a running server: that change
 * restarts it instead (`clearsValue`).
 *
 * Pure: no `vscode` import.
 */

export const SECTION = 'agentLs';

/** Forwarded as they are; the server validates them and logs a warning for an invalid value. */
export const SERVER_SETTING_KEYS = [
  'model',
  'baseUrl',
  'models',
  'maxTurns',
  'maxTokens',
  'maxCostUsd',
  'permissions',
  'trace',
  'mcp',
] as const;

export type ServerSettings = Partial<Record<(typeof SERVER_SETTING_KEYS)[number], unknown>>;

/**
 * The settings payload for the server.
 *
 * @param get reads one key of the `agentLs` section (VS Code's `WorkspaceConfiguration.get`).
 * @returns `{agentLs: {...}}` with only the keys that have a value.
 */
export function serverSettings(get: (key: string) => unknown): { agentLs: ServerSettings } {
  const settings: ServerSettings = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = get(key);
    if (value !== undefined && value !== null && value !== '') {
      settings[key] = value;
    }
  }
  return { agentLs: settings };
}

/** What `WorkspaceConfiguration.inspect` reports of one setting, per scope. */
export interface SettingScopes {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

const REPLAY_PREFIX = 'replay:';

function isReplay(value: unknown): boolean {
  return typeof value === 'string' && value.trim().startsWith(REPLAY_PREFIX);
}

/**
 * `agentLs.model` as the server may get it. A `replay:` model set by the workspace's (or a folder's)
 * `.vscode/settings.json` is ignored: a cloned repository would otherwise pick a script on disk that
 * writes every tool call and answer (issue 11.2; the server ignores the same in an untrusted
 * `agent-ls.toml`). The user's own value then applies.
 *
 * @param scopes the setting's values per scope (`config.inspect('model')`).
 * @param effective the value VS Code resolved (`config.get('model')`).
 * @returns the value to use, and a warning when a workspace value was ignored.
 */
export function modelSetting(scopes: SettingScopes | undefined, effective: unknown): { value: unknown; ignored?: string } {
  const fromWorkspace = [scopes?.workspaceFolderValue, scopes?.workspaceValue].find((v) => v !== undefined);
  if (typeof fromWorkspace !== 'string' || !isReplay(fromWorkspace)) {
    return { value: effective };
  }
  return {
    value: typeof scopes?.globalValue === 'string' ? scopes.globalValue : undefined,
    ignored:
      `agentLs.model = "${fromWorkspace}" from the workspace settings is ignored: a workspace may not ` +
      'choose a replay script as the model; set agentLs.model in your user settings instead.',
  };
}

/** Changes to these settings restart the server; the others reach it live. */
export const RESTART_SETTINGS: readonly string[] = [`${SECTION}.pythonPath`];

/**
 * Whether going from `previous` to `next` removes a value (at any depth), which
 * `workspace/didChangeConfiguration` cannot express to this server.
 */
export function clearsValue(previous: unknown, next: unknown): boolean {
  if (!isObject(previous)) {
    return false;
  }
  if (!isObject(next)) {
    return Object.keys(previous).length > 0;
  }
  return Object.entries(previous).some(([key, value]) => !(key in next) || clearsValue(value, next[key]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
