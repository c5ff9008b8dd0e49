/**
 * VS Code's side of the editor's problems (docs/modes.md "The editor's problems"):
 *
 * - `forwardProblems`: sends the diagnostics the user sees, from every language server
 *   (`vscode.languages.getDiagnostics`), with `agent/didChangeProblems`: a snapshot once the server
 *   runs, then the changed files, debounced (`problemForwarding.ts` decides what and when);
 * - `problemsOfText`: answers the server's `agent/problemsOfText` for the agent's proposed texts, which
 *   are not on disk: each text is written to a file of the same name in a new temporary folder (outside
 *   the workspace, so it is never forwarded back) and shown in a tab of its own without taking the focus,
 *   so the language servers of that file type check it (VS Code's JSON, CSS and HTML servers report only
 *   on documents shown in a tab: pull diagnostics); its diagnostics are read once they settle (at most
 *   2 s) and returned under the original URI; then the tab is closed and the folder deleted. A text no
 *   language server reported on is left out of the answer (not checked), never answered as "no
 *   problems". (An untitled document was tried first: VS Code kept it as a dirty tab that asks to be
 *   saved.)
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import * as vscode from 'vscode';
import { type LanguageClient, NotificationType, RequestType } from 'vscode-languageclient/node';

import { fileDiagnostics, ProblemForwarder, settled } from './problemForwarding';
import {
  AGENT_DID_CHANGE_PROBLEMS,
  AGENT_PROBLEMS_OF_TEXT,
  type DidChangeProblemsParams,
  type FileDiagnostics,
  type ProblemsOfTextParams,
  type ProblemsOfTextResult,
  type TextOfFile,
} from './protocol';

const didChangeProblems = new NotificationType<DidChangeProblemsParams>(AGENT_DID_CHANGE_PROBLEMS);
const problemsOfTextRequest = new RequestType<ProblemsOfTextParams, ProblemsOfTextResult, void>(AGENT_PROBLEMS_OF_TEXT);

/** What `initializationOptions` adds: this client answers `agent/problemsOfText`. */
export const PROBLEMS_OF_TEXT_OPTION = { problemsOfText: true } as const;

function inWorkspace(uri: vscode.Uri): boolean {
  return uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(uri) !== undefined;
}

/** Starts forwarding to the running `client`; dispose to stop (the server stopped). */
export function forwardProblems(client: LanguageClient, log: vscode.LogOutputChannel): vscode.Disposable {
  const forwarder = new ProblemForwarder({
    read: (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)),
    inWorkspace: (uri) => inWorkspace(vscode.Uri.parse(uri)),
    send: (files) => {
      client
        .sendNotification(didChangeProblems, { files })
        .catch((error: unknown) => log.warn(`Could not send the problems to the server: ${String(error)}`));
    },
  });
  forwarder.snapshot(vscode.languages.getDiagnostics().map(([uri, diagnostics]) => [uri.toString(), diagnostics] as const));
  const subscription = vscode.languages.onDidChangeDiagnostics((event) =>
    forwarder.changed(event.uris.map((uri) => uri.toString())),
  );
  const answering = client.onRequest(problemsOfTextRequest, (params) => problemsOfText(params));
  return new vscode.Disposable(() => {
    subscription.dispose();
    answering.dispose();
    forwarder.dispose();
  });
}

/** `agent/problemsOfText`: the problems of each text, checked by the original file's language servers. */
export async function problemsOfText(params: ProblemsOfTextParams): Promise<ProblemsOfTextResult> {
  const files = await Promise.all(params.files.map((file) => problemsOfOneText(file)));
  return { files: files.filter((file): file is FileDiagnostics => file !== undefined) };
}

async function problemsOfOneText(file: TextOfFile): Promise<FileDiagnostics | undefined> {
  const original = vscode.Uri.parse(file.uri);
  const folder = await mkdtemp(join(tmpdir(), 'agent-ls-check-'));
  try {
    const copy = vscode.Uri.file(join(folder, basename(original.path) || 'proposed'));
    await writeFile(copy.fsPath, file.text, 'utf8');
    const key = copy.toString();
    let opened: vscode.TextDocument | undefined;
    const heard = await settled((listener) => {
      const subscription = vscode.languages.onDidChangeDiagnostics((event) => {
        if (event.uris.some((uri) => uri.toString() === key)) {
          listener();
        }
      });
      void vscode.workspace
        .openTextDocument(copy)
        .then((document) => {
          opened = document;
          return vscode.window.showTextDocument(document, { preview: false, preserveFocus: true });
        })
        .then(undefined, () => undefined); // not shown: the servers that check hidden documents still do
      return subscription;
    });
    const found = heard ? fileDiagnostics(file.uri, vscode.languages.getDiagnostics(copy)) : undefined;
    await closeTabs(opened?.uri ?? copy);
    return found;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Closes the tabs showing `uri`, if any (VS Code may show a document the extension only opened). */
async function closeTabs(uri: vscode.Uri): Promise<void> {
  const key = uri.toString();
  const tabs = vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === key);
  if (tabs.length > 0) {
    await vscode.window.tabGroups.close(tabs, true);
  }
}
