import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { ProposalFile } from '../../src/protocol';
import { diffTitle, filePickItems, parseProposalUri, proposalUriParts, sideText } from '../../src/proposalUri';

const file = (over: Partial<ProposalFile> = {}): ProposalFile => ({
  uri: 'file:///work/src/app.py',
  path: 'src/app.py',
  isNew: false,
  baseVersion: 3,
  diff: '',
  added: 2,
  removed: 1,
  originalText: 'old\n',
  proposedText: 'new\n',
  instructions: [],
  ...over,
});

test('proposal URIs keep the path (title, language) and round-trip session and side', () => {
  const parts = proposalUriParts('abc 123', 'src/app.py', 'proposed');
  assert.deepEqual(parts, { scheme: 'agent-ls-proposal', path: '/src/app.py', query: 'session=abc+123&side=proposed' });
  assert.deepEqual(parseProposalUri(parts.path, parts.query), { sessionId: 'abc 123', path: 'src/app.py', side: 'proposed' });
});

test('foreign or damaged URIs are not ours', () => {
  assert.equal(parseProposalUri('/a.py', 'session=s&side=left'), undefined);
  assert.equal(parseProposalUri('/a.py', 'side=original'), undefined);
});

test('sides, titles and picks', () => {
  assert.equal(sideText(file(), 'original'), 'old\n');
  assert.equal(sideText(file(), 'proposed'), 'new\n');
  assert.equal(diffTitle(file()), 'src/app.py (original ↔ proposed)');
  assert.equal(diffTitle(file({ isNew: true })), 'src/app.py (new file ↔ proposed)');
  assert.deepEqual(filePickItems([file(), file({ path: 'b.py', isNew: true, added: 4, removed: 0 })]), [
    { label: 'src/app.py', description: '+2 −1', path: 'src/app.py' },
    { label: 'b.py', description: '+4 −0 · new file', path: 'b.py' },
  ]);
});
