#!/usr/bin/env bash
# Build the VS Code extension from a clean checkout: install the locked dependencies, typecheck,
# lint, unit-test, bundle, and package two .vsix files. Fails on the first error.
#   agent-ls.vsix             universal: runs the agent-ls installed in the user's Python
#   agent-ls-<target>.vsix    per target in AGENT_LS_VSIX_TARGETS (default linux-x64): also carries
#                             agent-ls and its Python dependencies for CPython 3.11-3.14
#                             (bundle_python.py, bundled/libs), as `vsce package --target <target>`
# Other targets: linux-arm64 alpine-x64 alpine-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64
# (bundle_python.py TARGETS; any machine can build them, pip only downloads wheels).
# Needs Node 20 and npm, and a Python with pip (AGENT_LS_BUNDLE_PYTHON; default the repo's .venv, else
# python3); reaches only the npm registry and PyPI. Called by CI and test/e2e.sh.
set -euo pipefail
cd "$(dirname "$0")"

step() {
  local started=$SECONDS
  echo "== $*" >&2
  "$@"
  echo "== $* ($((SECONDS - started)) s)" >&2
}

package_target() {  # package_target TARGET: bundled/libs for TARGET, then its .vsix
  local target=$1 python=${AGENT_LS_BUNDLE_PYTHON:-}
  [[ -n "$python" ]] || { [[ -x ../../.venv/bin/python ]] && python=../../.venv/bin/python || python=python3; }
  step "$python" bundle_python.py --target "$target"
  # The universal .vsix's ignore rules, plus the bundle.
  { cat .vscodeignore; echo '!bundled/libs/**'; } >"out/vscodeignore.$target"
  step npx vsce package --no-dependencies --allow-missing-repository --target "$target" \
    --ignoreFile "out/vscodeignore.$target" --out "agent-ls-$target.vsix"
  ls -l "agent-ls-$target.vsix" >&2
}

step npm ci --no-audit --no-fund
step npm run typecheck
step npm run lint
step npm test
step npm run build
step npm run package
ls -l agent-ls.vsix >&2
for target in ${AGENT_LS_VSIX_TARGETS:-linux-x64}; do
  package_target "$target"
done
