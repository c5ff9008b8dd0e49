/**
 * The palette commands (category "Agent"). Ids are `agentLs.*`: vscode-languageclient registers the
 * server's own `agent.*` command ids, and registering one of those twice fails activation.
 *
 * Each command reads what the editor shows, calls one server command and renders the answer; an
 * error from the server is shown as it is.
 */

import * as path from 'node:path';

import * as vscode from 'vscode';

import type { CommandId } from './commandIds';
import { renderContext } from './contextView';
import { renderInstructions } from './instructionsView';
import { mcpStatusLines, NO_MCP_SERVERS } from './mcpView';
import {
  CMD_CONTEXT,
  CMD_INSTRUCTIONS,
  CMD_LIST_SKILLS,
  CMD_MCP_STATUS,
  CMD_RUN,
  CMD_RUN_SKILL,
  type ContextResult,
  type InstructionsAnswer,
  type ListSkillsResult,
  type McpStatusResult,
} from './protocol';
import type { ProposalActions } from './proposals';
import {
  type EditorFocus,
  FIX_DIAGNOSTICS_SKILL,
  runParams,
  skillParams,
  skillRunLabel,
  wireDiagnostics,
} from './runArgs';
import type { RunTracker } from './runs';
import { API_KEY_SECRET, type AgentServer } from './server';
import { argsPrompt, NO_SKILLS, type SkillPick, skillPicks } from './skills';
import type { ReadOnlyDocuments } from './textDocuments';

export interface CommandDeps {
  server: AgentServer;
  runs: RunTracker;
  proposals: ProposalActions;
  secrets: vscode.SecretStorage;
  log: vscode.LogOutputChannel;
  /** Serves `agent-ls-instructions:` documents ("Show Loaded Instructions"). */
  documents: ReadOnlyDocuments;
  /** Serves `agent-ls-context:` documents ("Show Context"). */
  contextDocuments: ReadOnlyDocuments;
}

interface SkillQuickPickItem extends vscode.QuickPickItem {
  pick: SkillPick;
}

function quickPickItem(pick: SkillPick): SkillQuickPickItem {
  if (pick.type === 'separator') {
    return { label: pick.label, kind: vscode.QuickPickItemKind.Separator, pick };
  }
  return { label: pick.label, description: pick.description, ...(pick.detail ? { detail: pick.detail } : {}), pick };
}


/** The code-review skill that "Agent: Review Current File" runs. */
const REVIEW_SKILL = 'code-review';

function editorFocus(editor: vscode.TextEditor | undefined): EditorFocus | undefined {
  if (!editor) {
    return undefined;
  }
  const { start, end } = editor.selection;
  return {
    uri: editor.document.uri.toString(),
    scheme: editor.document.uri.scheme,
    selection: {
      start: { line: start.line, character: start.character },
      end: { line: end.line, character: end.character },
    },
  };
}

function focusDescription(editor: vscode.TextEditor | undefined): string {
  if (!editor || editor.document.uri.scheme !== 'file') {
    return 'No file in focus: the agent starts from the workspace.';
  }
  const file = vscode.workspace.asRelativePath(editor.document.uri);
  const { selection } = editor;
  if (selection.isEmpty) {
    return `Context: ${file}`;
  }
  const last = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line : selection.end.line + 1;
  return `Context: ${file}, lines ${selection.start.line + 1}–${last} selected`;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs a command body; an error (from the server or VS Code) becomes a plain error message. */
function guarded(body: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await body();
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent: ${errorText(error)}`);
    }
  };
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const { server, runs, proposals, secrets, log, documents, contextDocuments } = deps;

  async function withProposal(action: (sessionId: string) => Promise<void>): Promise<void> {
    const sessionId = runs.proposalTarget();
    if (!sessionId) {
      void vscode.window.showInformationMessage('Agent: there are no proposed changes yet. Run a task first.');
      return;
    }
    await action(sessionId);
  }

  let mcpChannel: vscode.OutputChannel | undefined;

  const commands: Record<CommandId, () => Promise<void>> = {
    'agentLs.runTask': async () => {
      const editor = vscode.window.activeTextEditor;
      const task = await vscode.window.showInputBox({
        title: 'Agent: Run Task',
        prompt: focusDescription(editor),
        placeHolder: 'What should the agent do? e.g. Fix the failing test in this file',
        ignoreFocusOut: true,
      });
      const params = runParams(task, editorFocus(editor));
      if (params) {
        await runs.launch({ command: CMD_RUN, params, label: params.task });
      }
    },
    // A plan run (read-only; it ends with a plan shown in the Agent view, where it is approved or revised).
    'agentLs.planTask': async () => {
      const editor = vscode.window.activeTextEditor;
      const task = await vscode.window.showInputBox({
        title: 'Agent: Plan Task (read-only: the agent ends with a plan to approve)',
        prompt: focusDescription(editor),
        placeHolder: 'What should the agent plan? e.g. Add a --json flag to the CLI',
        ignoreFocusOut: true,
      });
      const params = runParams(task, editorFocus(editor));
      if (params) {
        await runs.launch({ command: CMD_RUN, params: { ...params, mode: 'plan' }, label: params.task });
      }
    },
    'agentLs.runSkill': async () => {
      const editor = vscode.window.activeTextEditor;
      const focus = editorFocus(editor);
      const listed = await server.execute<ListSkillsResult>(CMD_LIST_SKILLS, focus?.scheme === 'file' ? { uri: focus.uri } : {});
      if (!listed) {
        return;
      }
      const picks = skillPicks(listed, (file) => vscode.workspace.asRelativePath(file));
      if (picks.length === 0) {
        void vscode.window.showInformationMessage(`Agent: ${NO_SKILLS}`);
        return;
      }
      const picked = await vscode.window.showQuickPick(picks.map(quickPickItem), {
        title: 'Agent: Run Skill on Current File',
        placeHolder: `Choose a skill. ${focusDescription(editor)}`,
        matchOnDescription: true,
        matchOnDetail: true,
      });
      const pick = picked?.pick;
      if (pick?.type === 'skipped') {
        const line = Math.max(0, pick.line);
        await vscode.window.showTextDocument(vscode.Uri.file(pick.path), { selection: new vscode.Range(line, 0, line, 0) });
        return;
      }
      if (pick?.type !== 'skill') {
        return;
      }
      const args = await vscode.window.showInputBox({
        title: `Agent: /${pick.skill.name}`,
        ...argsPrompt(pick.skill),
        ignoreFocusOut: true,
      });
      if (args === undefined) {
        return;
      }
      // fix-diagnostics works from the file's problems; code actions send the one they fix.
      const diagnostics =
        editor && focus?.scheme === 'file' && pick.skill.name === FIX_DIAGNOSTICS_SKILL
          ? wireDiagnostics(vscode.languages.getDiagnostics(editor.document.uri), focus.selection)
          : undefined;
      const params = skillParams(pick.skill.name, focus, { args, withRange: true, ...(diagnostics ? { diagnostics } : {}) });
      await runs.launch({ command: CMD_RUN_SKILL, params, label: skillRunLabel(params) });
    },
    'agentLs.reviewFile': async () => {
      const focus = editorFocus(vscode.window.activeTextEditor);
      if (focus?.scheme !== 'file') {
        void vscode.window.showInformationMessage('Agent: open a file to review first.');
        return;
      }
      const params = skillParams(REVIEW_SKILL, focus);
      await runs.launch({ command: CMD_RUN_SKILL, params, label: skillRunLabel(params) });
    },
    'agentLs.showInstructions': async () => {
      const document = vscode.window.activeTextEditor?.document;
      const file = document?.uri.scheme === 'file' ? document.uri : undefined;
      const result = await server.execute<InstructionsAnswer>(CMD_INSTRUCTIONS, file ? { uri: file.toString() } : {});
      if (!result) {
        return;
      }
      const text = renderInstructions(result, file ? vscode.workspace.asRelativePath(file) : 'the workspace root');
      const uri = documents.set(`Instructions for ${file ? path.basename(file.fsPath) : 'the workspace'}.md`, text);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
    },
    'agentLs.showContext': async () => {
      // The latest run of this window; without one the server takes its own latest session.
      const sessionId = runs.latestSession();
      // Without a session anywhere, the server measures what a new session's first request would hold.
      const result = await server.execute<ContextResult>(CMD_CONTEXT, sessionId ? { sessionId } : {});
      if (!result) {
        return;
      }
      const text = renderContext(result, sessionId ? `session ${sessionId}` : 'the latest session');
      const uri = contextDocuments.set(`Context${sessionId ? ` ${sessionId}` : ''}.md`, text);
      await vscode.workspace.openTextDocument(uri);
      try {
        await vscode.commands.executeCommand('markdown.showPreview', uri);
      } catch {
        // The built-in markdown extension is disabled: the source still reads well (the chart is a code block).
        await vscode.window.showTextDocument(uri, { preview: true });
      }
    },
    'agentLs.showMcpServers': async () => {
      const document = vscode.window.activeTextEditor?.document;
      const uri = document?.uri.scheme === 'file' ? document.uri.toString() : undefined;
      // The server starts what may start without a question (never a prompt): up to its start-up timeout.
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Agent: checking the MCP servers…' },
        () => server.execute<McpStatusResult>(CMD_MCP_STATUS, uri ? { uri } : {}),
      );
      if (!result) {
        return;
      }
      const lines = mcpStatusLines(result);
      if (lines.length === 0) {
        void vscode.window.showInformationMessage(`Agent: ${NO_MCP_SERVERS}`);
        return;
      }
      if (!mcpChannel) {
        mcpChannel = vscode.window.createOutputChannel('Agent: MCP Servers');
        context.subscriptions.push(mcpChannel);
      }
      mcpChannel.replace(lines.join('\n') + '\n');
      mcpChannel.show(true);
    },
    'agentLs.cancel': () => runs.cancelCurrent(),
    'agentLs.showProposal': () => withProposal((sessionId) => proposals.show(sessionId)),
    'agentLs.applyProposal': () => withProposal((sessionId) => proposals.apply(sessionId)),
    'agentLs.discardProposal': () => withProposal((sessionId) => proposals.discard(sessionId)),
    'agentLs.showTranscript': () => {
      log.show(true);
      return Promise.resolve();
    },
    'agentLs.setApiKey': async () => {
      const key = await vscode.window.showInputBox({
        title: 'Agent: Set API Key',
        prompt:
          "Kept in VS Code's secret storage and handed only to the server, over a pipe (never in an environment). " +
          'Leave empty to remove the stored key.',
        placeHolder: 'API key',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) {
        return;
      }
      // SecretStorage.onDidChange restarts the server (extension.ts), in this window and others.
      if (key.trim()) {
        await secrets.store(API_KEY_SECRET, key.trim());
        void vscode.window.showInformationMessage('Agent: API key saved. The server restarts to use it.');
      } else {
        await secrets.delete(API_KEY_SECRET);
        void vscode.window.showInformationMessage('Agent: API key removed. The server restarts without it.');
      }
    },
    'agentLs.restartServer': async () => {
      if (await server.restart()) {
        vscode.window.setStatusBarMessage('Agent: server restarted', 3000);
      }
    },
  };

  for (const [id, body] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, guarded(body)));
  }
}
