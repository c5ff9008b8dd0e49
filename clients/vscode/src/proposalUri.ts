/**
 * URIs of the read-only documents that show a proposal in VS Code's diff editor.
 *
 * `agent-ls-proposal:/<workspace-relative path>?session=<id>&side=original|proposed`: the path keeps
 * the file name and extension, so the diff editor shows the right title and language.
 *
 * Pure: no `vscode` import; `proposals.ts` turns the parts into a `vscode.Uri`.
 */

import type { ProposalFile } from './protocol';

export const PROPOSAL_SCHEME = 'agent-ls-proposal';

export type Side = 'original' | 'proposed';

export interface UriParts {
  scheme: string;
  path: string;
  query: string;
}

export function proposalUriParts(sessionId: string, path: string, side: Side): UriParts {
  const query = new URLSearchParams({ session: sessionId, side }).toString();
  return { scheme: PROPOSAL_SCHEME, path: '/' + path.replace(/^\/+/, ''), query };
}

export interface ProposalDocumentRef {
  sessionId: string;
  /** Workspace-relative POSIX path, as in `ProposalFile.path`. */
  path: string;
  side: Side;
}

/** The inverse of `proposalUriParts`, or undefined for a URI this extension did not make. */
export function parseProposalUri(path: string, query: string): ProposalDocumentRef | undefined {
  const params = new URLSearchParams(query);
  const sessionId = params.get('session');
  const side = params.get('side');
  if (!sessionId || (side !== 'original' && side !== 'proposed')) {
    return undefined;
  }
  return { sessionId, path: path.replace(/^\/+/, ''), side };
}

/** The text one side of the diff shows; a new file's original side is empty. */
export function sideText(file: ProposalFile, side: Side): string {
  return side === 'original' ? file.originalText : file.proposedText;
}

/** The diff editor's title for one file. */
export function diffTitle(file: ProposalFile): string {
  return `${file.path} (${file.isNew ? 'new file' : 'original'} ↔ proposed)`;
}

export interface FilePickItem {
  label: string;
  description: string;
  path: string;
}

/** Quick pick items when several files changed and the multi-file diff editor is missing. */
export function filePickItems(files: readonly ProposalFile[]): FilePickItem[] {
  return files.map((file) => ({
    label: file.path,
    description: `+${file.added} −${file.removed}${file.isNew ? ' · new file' : ''}`,
    path: file.path,
  }));
}
