/**
 * Proposals in the editor: read-only documents for VS Code's diff editor, and Show / Apply / Discard.
 *
 * Both sides of a diff are virtual documents (`proposalUri.ts`) served from `agent.proposal`: the
 * original side is the text the agent read (your unsaved buffer included), the proposed side what it
 * would write. Applying is the server's `agent.applyProposal`, which sends one `workspace/applyEdit`
 * that VS Code shows in its Refactor Preview.
 */

import * as vscode from 'vscode';

import {
  type ApplyProposalResult,
  CMD_APPLY_PROPOSAL,
  CMD_DISCARD_PROPOSAL,
  CMD_PROPOSAL,
  type DiscardProposalResult,
  type ProposalFile,
  type ProposalResult,
} from './protocol';
import {
  diffTitle,
  filePickItems,
  parseProposalUri,
  PROPOSAL_SCHEME,
  proposalUriParts,
  type Side,
  sideText,
} from './proposalUri';
import type { AgentServer } from './server';

/** Serves `agent-ls-proposal:` documents; one `agent.proposal` request per session until invalidated. */
export class ProposalDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly cache = new Map<string, Promise<ProposalResult | undefined>>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly server: AgentServer) {}

  fetch(sessionId: string): Promise<ProposalResult | undefined> {
    let result = this.cache.get(sessionId);
    if (!result) {
      result = this.server.execute<ProposalResult>(CMD_PROPOSAL, { sessionId });
      this.cache.set(sessionId, result);
      result.catch(() => this.cache.delete(sessionId));
    }
    return result;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseProposalUri(uri.path, uri.query);
    if (!ref) {
      return '';
    }
    const result = await this.fetch(ref.sessionId);
    const file = result?.files.find((candidate) => candidate.path === ref.path);
    return file ? sideText(file, ref.side) : '';
  }

  /** Forget a session's cached proposal (it changed, or was applied or discarded); open diffs refresh. */
  invalidate(sessionId?: string): void {
    if (sessionId === undefined) {
      this.cache.clear();
    } else {
      this.cache.delete(sessionId);
    }
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme !== PROPOSAL_SCHEME) {
        continue;
      }
      const ref = parseProposalUri(document.uri.path, document.uri.query);
      if (ref && (sessionId === undefined || ref.sessionId === sessionId)) {
        this.changed.fire(document.uri);
      }
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function uriFor(sessionId: string, file: ProposalFile, side: Side): vscode.Uri {
  return vscode.Uri.from(proposalUriParts(sessionId, file.path, side));
}

export class ProposalActions {
  constructor(
    private readonly server: AgentServer,
    private readonly documents: ProposalDocuments,
    /** Called when a session's proposal is gone (applied or discarded). */
    private readonly onSettled: (sessionId: string) => void,
  ) {}

  async show(sessionId: string): Promise<void> {
    this.documents.invalidate(sessionId);
    const result = await this.documents.fetch(sessionId);
    if (!result) {
      return;
    }
    const { files } = result;
    const [first] = files;
    if (!first) {
      void vscode.window.showInformationMessage('Agent: there are no proposed changes.');
      return;
    }
    if (files.length === 1) {
      await this.diff(sessionId, first);
      return;
    }
    if ((await vscode.commands.getCommands(true)).includes('vscode.changes')) {
      const added = files.reduce((sum, file) => sum + file.added, 0);
      const removed = files.reduce((sum, file) => sum + file.removed, 0);
      // [label, original, modified]; a new file has no original side (shown as added).
      await vscode.commands.executeCommand(
        'vscode.changes',
        `Agent: proposed changes (+${added} −${removed})`,
        files.map((file) => [
          vscode.Uri.parse(file.uri),
          file.isNew ? undefined : uriFor(sessionId, file, 'original'),
          uriFor(sessionId, file, 'proposed'),
        ]),
      );
      return;
    }
    const picked = await vscode.window.showQuickPick(filePickItems(files), {
      title: 'Agent: Show Proposed Changes',
      placeHolder: 'Choose a file to compare',
    });
    const file = picked && files.find((candidate) => candidate.path === picked.path);
    if (file) {
      await this.diff(sessionId, file);
    }
  }

  /** The diff of one proposed file (`path`: workspace-relative, as `agent.proposal` lists it). */
  async showFile(sessionId: string, path: string): Promise<void> {
    this.documents.invalidate(sessionId);
    const file = (await this.documents.fetch(sessionId))?.files.find((candidate) => candidate.path === path);
    if (file) {
      await this.diff(sessionId, file);
    } else {
      void vscode.window.showInformationMessage(`Agent: ${path} is no longer in the proposed changes.`);
    }
  }

  async apply(sessionId: string): Promise<void> {
    const result = await this.server.execute<ApplyProposalResult>(CMD_APPLY_PROPOSAL, { sessionId });
    if (!result) {
      return;
    }
    if (result.applied) {
      this.documents.invalidate(sessionId);
      if (result.keptFiles.length === 0) {
        this.onSettled(sessionId);
      }
      // "applied 3 of 5 changes in 2 files; 2 changes kept": changes unticked in the preview stay pending.
      void vscode.window.showInformationMessage(`Agent: ${result.message ?? 'applied the proposed changes'}.`);
    } else {
      const reason = (result.failureReason ?? 'the editor did not apply the edit').replace(/\.$/, '');
      void vscode.window.showWarningMessage(`Agent: not applied: ${reason}.`);
    }
  }

  async discard(sessionId: string): Promise<void> {
    const result = await this.server.execute<DiscardProposalResult>(CMD_DISCARD_PROPOSAL, { sessionId });
    if (!result) {
      return;
    }
    this.documents.invalidate(sessionId);
    this.onSettled(sessionId);
    void vscode.window.showInformationMessage(
      result.discarded ? 'Agent: discarded the proposed changes.' : 'Agent: there were no proposed changes to discard.',
    );
  }

  private async diff(sessionId: string, file: ProposalFile): Promise<void> {
    await vscode.commands.executeCommand(
      'vscode.diff',
      uriFor(sessionId, file, 'original'),
      uriFor(sessionId, file, 'proposed'),
      diffTitle(file),
      { preview: false },
    );
  }
}
