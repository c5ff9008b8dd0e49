/**
 * Shows `firstStartText.ts`'s line once per workspace, when the server first runs there, and carries
 * out its buttons: "Set API Key…" asks for the hosted model when none is set (`agentLs.model`), then
 * runs "Agent: Set API Key"; "Use a Local Server…" asks for the endpoint and the model and writes
 * `agentLs.baseUrl` and `agentLs.model` to the user settings, which reach the running server live.
 */

import * as vscode from 'vscode';

import {
  firstStartLine,
  HOSTED_MODEL,
  LOCAL_BASE_URL,
  LOCAL_MODEL,
  SET_API_KEY,
  USE_LOCAL_SERVER,
} from './firstStartText';
import { CMD_STATUS, type StatusParams, type StatusResult } from './protocol';
import type { AgentServer } from './server';
import { SECTION } from './settings';

/** The workspaceState key that says the line was shown in this workspace. */
const SHOWN_KEY = 'agentLs.firstStartShown';

export function showOnFirstStart(context: vscode.ExtensionContext, server: AgentServer, log: vscode.LogOutputChannel): void {
  if (context.workspaceState.get<boolean>(SHOWN_KEY)) {
    return;
  }
  const listener = server.onStateChanged((state) => {
    if (state !== 'running' || context.workspaceState.get<boolean>(SHOWN_KEY)) {
      return;
    }
    listener.dispose();
    void context.workspaceState.update(SHOWN_KEY, true);
    void show(server, log);
  });
  context.subscriptions.push(listener);
}

async function show(server: AgentServer, log: vscode.LogOutputChannel): Promise<void> {
  let status: StatusResult | undefined;
  try {
    const params: StatusParams = {};
    status = await server.execute<StatusResult>(CMD_STATUS, params);
  } catch (error) {
    log.warn(`agent.status failed (a server older than the extension?): ${String(error)}`);
    return;
  }
  if (!status) {
    return;
  }
  const line = firstStartLine(status);
  log.info(line.text);
  const shown = line.severity === 'info' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  const picked = await shown(line.text, ...line.actions);
  if (picked === SET_API_KEY) {
    await setApiKey(status.model);
  } else if (picked === USE_LOCAL_SERVER) {
    await useLocalServer();
  }
}

async function setApiKey(model: string | null): Promise<void> {
  if (!model) {
    const chosen = await vscode.window.showInputBox({
      title: 'Agent: the hosted model',
      prompt: 'As <provider>/<model>: openai/gpt-4.1, anthropic/claude-sonnet-4, openrouter/<vendor>/<model>',
      value: HOSTED_MODEL,
      ignoreFocusOut: true,
    });
    if (!chosen?.trim()) {
      return;
    }
    await vscode.workspace.getConfiguration(SECTION).update('model', chosen.trim(), vscode.ConfigurationTarget.Global);
  }
  await vscode.commands.executeCommand('agentLs.setApiKey');
}

async function useLocalServer(): Promise<void> {
  const baseUrl = await vscode.window.showInputBox({
    title: 'Agent: the local server (1/2)',
    prompt: "Its OpenAI-compatible endpoint: Ollama's is http://localhost:11434/v1, llama.cpp's http://localhost:8080/v1",
    value: LOCAL_BASE_URL,
    ignoreFocusOut: true,
  });
  if (!baseUrl?.trim()) {
    return;
  }
  const model = await vscode.window.showInputBox({
    title: 'Agent: the local server (2/2)',
    prompt: 'The model, as ollama/<name> (or openai/<name> for another OpenAI-compatible server)',
    value: LOCAL_MODEL,
    ignoreFocusOut: true,
  });
  if (!model?.trim()) {
    return;
  }
  const config = vscode.workspace.getConfiguration(SECTION);
  await config.update('baseUrl', baseUrl.trim(), vscode.ConfigurationTarget.Global);
  await config.update('model', model.trim(), vscode.ConfigurationTarget.Global);
  void vscode.window.showInformationMessage(`Agent: model ${model.trim()} at ${baseUrl.trim()}.`);
}
