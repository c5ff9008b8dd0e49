/**
 * Read-only documents the extension writes itself (e.g. "Agent: Show Loaded Instructions"): a
 * `TextDocumentContentProvider` keyed by path. Setting a path again refreshes an open editor.
 */

import * as vscode from 'vscode';

export class ReadOnlyDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(readonly scheme: string) {}

  /** Stores `text` as the document `<scheme>:/<name>` (`name` without slashes) and returns its URI. */
  set(name: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: this.scheme, path: `/${name.replace(/[\\/]/g, '_')}` });
    const known = this.texts.has(uri.path);
    this.texts.set(uri.path, text);
    if (known) {
      this.changed.fire(uri);
    }
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  dispose(): void {
    this.changed.dispose();
  }
}
