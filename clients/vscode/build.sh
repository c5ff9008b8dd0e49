#!/usr/bin/env bash
# Build the VS Code extension from a clean checkout: install the locked dependencies, typecheck,
# lint, unit-test, bundle, and package clients/vscode/agent-ls.vsix. Fails on the first error.
# Needs Node 20 and npm; reaches only the npm registry (npm ci). Called by CI and test/e2e.sh.
set -euo pipefail
cd "$(dirname "$0")"

step() {
  local started=$SECONDS
  echo "== $*" >&2
  "$@"
  echo "== $* ($((SECONDS - started)) s)" >&2
}

step npm ci --no-audit --no-fund
step npm run typecheck
step npm run lint
step npm test
step npm run build
step npm run package
ls -l agent-ls.vsix >&2
