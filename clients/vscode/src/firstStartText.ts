/**
 * The one line the extension shows the first time the server starts in a workspace: the model and
 * the sandbox in use (`agent.status`), or, when no model can run, what to do, with a button for each
 * way: an API key for a hosted model, or a local OpenAI-compatible server.
 *
 * Pure: no `vscode` import, so the unit tests run in plain Node.
 */

import type { StatusResult } from './protocol';

export const SET_API_KEY = 'Set API Key…';
export const USE_LOCAL_SERVER = 'Use a Local Server…';
/** What "Use a Local Server…" proposes: Ollama's OpenAI-compatible endpoint and a small coding model. */
export const LOCAL_BASE_URL = 'http://localhost:11434/v1';
export const LOCAL_MODEL = 'ollama/qwen2.5-coder:7b';
export const HOSTED_MODEL = 'openai/gpt-4.1';

export interface FirstStartLine {
  severity: 'info' | 'warning';
  text: string;
  /** Button titles, in order. */
  actions: string[];
}

function sandboxText(status: StatusResult): string {
  return status.sandboxed ? `commands run sandboxed (${status.sandbox})` : `commands run UNSANDBOXED (${status.sandbox})`;
}

/** The line for `status`: `info` with no buttons when a run can start, else `warning` with both buttons. */
export function firstStartLine(status: StatusResult): FirstStartLine {
  const where = status.baseUrl ? ` at ${status.baseUrl}` : '';
  const fix = 'Set an API key for a hosted model, or point agent-ls at a local server (Ollama, llama.cpp).';
  const actions = [SET_API_KEY, USE_LOCAL_SERVER];
  switch (status.modelState) {
    case 'ready':
      return { severity: 'info', text: `Agent: model ${status.model ?? ''}${where}; ${sandboxText(status)}.`, actions: [] };
    case 'noModel':
      return { severity: 'warning', text: `Agent: no model is configured; ${sandboxText(status)}. ${fix}`, actions };
    case 'noApiKey':
      return { severity: 'warning', text: `Agent: ${status.modelDetail}; ${sandboxText(status)}. ${fix}`, actions };
    case 'invalid':
      return {
        severity: 'warning',
        text: `Agent: the model cannot be used: ${status.modelDetail.replace(/\.$/, '')}; ${sandboxText(status)}. ${fix}`,
        actions,
      };
  }
}
