/**
 * VS Code's side of the editor's problems (docs/modes.md "The editor's problems"):
 *
 * - `forwardProblems`: sends the diagnostics the user sees, from every language server
 *   (`vscode.languages.getDiagnostics`), with `agent/didChangeProblems`: a snapshot once the server
 *   runs, then the changed files, debounced (`problemForwarding.ts` decides what and when);
 * - `problemsOfText`: answers the server's `agent/problemsOfText` for the agent's proposed texts, which
 *   are not on disk: each text is opened as an untitled document in the original file's language, so
 *   the same language servers check it; its diagnostics are read once they settle (at most 2 s) and
 *   returned under the original URI. A text no language server reported on is left out of the answer
 *   (not checked), never answered as "no problems". VS Code has no API to close a document that was never shown: the
 *   untitled copy is left to VS Code, which drops it once unused; it never appears as a tab.
 */

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
  const language = await languageOf(original);
  const copy = await vscode.workspace.openTextDocument({ language, content: file.text });
  const key = copy.uri.toString();
  const heard = await settled((listener) =>
    vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((uri) => uri.toString() === key)) {
        listener();
      }
    }),
  );
  return heard ? fileDiagnostics(file.uri, vscode.languages.getDiagnostics(copy.uri)) : undefined;
}

/** The language of the file at `uri`: its open document's, else the one VS Code gives it on opening; `plaintext` for a new file. */
async function languageOf(uri: vscode.Uri): Promise<string> {
  const open = vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri.toString());
  if (open) {
    return open.languageId;
  }
  try {
    return (await vscode.workspace.openTextDocument(uri)).languageId;
  } catch {
    return 'plaintext';
  }
}
