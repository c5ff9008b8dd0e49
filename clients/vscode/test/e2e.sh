#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code: code-server 4.100.3 (Code 1.100.3, the
# newest that runs on Node 20), driven headless by playwright-core and Debian's Chromium.
# What it checks and the screenshots it keeps: docs/vscode-e2e.md.
#
# Usage: clients/vscode/test/e2e.sh [install|run|run-bundled|all]      (default: all)
#   install      apt packages (when missing; needs root), code-server, playwright-core. Idempotent and cached.
#   run          build the .vsix when missing or older than its sources, then run the test once
#                (driver.mjs; the server is AGENT_LS_PYTHON's agent-ls, set as agentLs.pythonPath).
#   run-bundled  the platform .vsix (agent-ls-linux-x64.vsix) alone: no agentLs.pythonPath, and the
#                python3 first on code-server's PATH is a fresh venv without agent-ls, so the server
#                runs from the .vsix's bundle; driver_bundled.mjs completes the first task.
#
# Environment:
#   AGENT_LS_PYTHON        the Python that runs `-m agent_ls serve` and the scripted model server
#                          (run-bundled: the model server only; the extension never sees it)
#                          (default: <repo>/.venv/bin/python when it exists, else python3 on PATH)
#   AGENT_LS_E2E_CACHE     where code-server is installed (default ~/.cache/agent-ls-e2e)
#   AGENT_LS_E2E_SHOTS     where screenshots go (default clients/vscode/test/e2e/screenshots, kept in git)
#   AGENT_LS_E2E_VSIX      test this .vsix instead of building clients/vscode/agent-ls.vsix
#   AGENT_LS_E2E_ANSWER    the permission answer the driver picks: "Allow once" (default) or "Deny"
#   AGENT_LS_E2E_KEEP=1    keep the run directory (workspace, logs, recorded model requests)
#   AGENT_LS_E2E_HEADED=1  show the browser (needs a display)
#   AGENT_LS_E2E_DRIVER    another scenario's driver in e2e/ (problems_driver.mjs: the editor's problems reach
#                          the model), with AGENT_LS_E2E_MODEL its scripted model (problems_model_server.py)
# Runs as root with no stdin (CI=true). Everything it starts is killed on exit; it exits non-zero on failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(cd "$HERE/.." && pwd)
REPO=$(cd "$EXT/../.." && pwd)
E2E="$HERE/e2e"
CACHE=${AGENT_LS_E2E_CACHE:-$HOME/.cache/agent-ls-e2e}
CODE_SERVER_VERSION=4.100.3
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
CODE_SERVER="$CS_DIR/node_modules/.bin/code-server"
# @vscode/ripgrep (a code-server dependency) downloads this file from GitHub in its postinstall.
RG_CACHE_NAME=vscode-ripgrep-cache-1.15.11
RG_TARBALL=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
APT_PACKAGES=(chromium libkrb5-dev pkg-config make g++ python3)
MODE=${1:-all}
BUNDLED=0; [[ "$MODE" == run-bundled ]] && BUNDLED=1
TARGET=linux-x64

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

pick_python() {
  if [[ -n "${AGENT_LS_PYTHON:-}" ]]; then realpath -s "$AGENT_LS_PYTHON"  # absolute: VS Code spawns it from another directory
  elif [[ -x "$REPO/.venv/bin/python" ]]; then echo "$REPO/.venv/bin/python"
  else command -v python3; fi
}
PYTHON=$(pick_python)

# ---------------------------------------------------------------- install
install_apt() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  [[ $(id -u) -eq 0 ]] || die "missing apt packages: ${missing[*]} (run as root, or install them)"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${missing[@]}" </dev/null >/dev/null \
    || { apt-get update </dev/null >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" </dev/null >/dev/null; } \
    || die "apt-get install ${missing[*]} failed"
}

find_rg() {
  local rg
  for rg in "$(dirname "$PYTHON")/rg" "$(command -v rg || true)"; do
    [[ -n "$rg" && -x "$rg" ]] && { echo "$rg"; return 0; }
  done
  return 1
}

install_code_server() {
  if [[ -f "$CS_DIR/.installed" && -x "$CODE_SERVER" ]]; then return 0; fi
  local node_major
  node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || die "node is not installed"
  [[ "$node_major" == 20 ]] || log "warning: code-server $CODE_SERVER_VERSION wants Node 20, this is $(node --version)"
  local rg
  rg=$(find_rg) || die "no ripgrep binary to seed @vscode/ripgrep's cache (pip install ripgrep==14.1.0)"
  local tmp="$CACHE/tmp" stage="$CS_DIR.partial"
  rm -rf "$stage" && mkdir -p "$stage" "$tmp/$RG_CACHE_NAME"
  # Workaround 3: @vscode/ripgrep's postinstall would fetch rg from GitHub; hand it a cached tarball.
  local rgdir; rgdir=$(mktemp -d "$tmp/rg.XXXXXX")
  cp "$rg" "$rgdir/rg"
  tar czf "$tmp/$RG_CACHE_NAME/$RG_TARBALL" -C "$rgdir" rg
  rm -rf "$rgdir"
  echo '{"name": "agent-ls-e2e-code-server", "private": true}' >"$stage/package.json"
  log "npm install code-server@$CODE_SERVER_VERSION (about 1 min; log: $CS_DIR.install.log)"
  # Workarounds 1 and 4: postinstall as root, and node-pty's `npx node-gyp` without a prompt.
  # Workaround 2 (kerberos needs gssapi.h) is the libkrb5-dev apt package.
  if ! (cd "$stage" && TMPDIR="$tmp" npm_config_unsafe_perm=true npm_config_yes=true \
      npm install --foreground-scripts --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" \
      </dev/null >"$CS_DIR.install.log" 2>&1); then
    tail -40 "$CS_DIR.install.log" >&2
    die "npm install code-server@$CODE_SERVER_VERSION failed (full log: $CS_DIR.install.log)"
  fi
  grep -q 'Using cached download' "$CS_DIR.install.log" || log "warning: @vscode/ripgrep did not use the seeded cache"
  rm -rf "$CS_DIR" && mv "$stage" "$CS_DIR" && rm -rf "$tmp"
  "$CODE_SERVER" --version >/dev/null || die "code-server does not start: $CODE_SERVER --version"
  touch "$CS_DIR/.installed"
}

install_playwright() {
  if [[ -f "$E2E/node_modules/playwright-core/package.json" ]] \
     && [[ "$E2E/node_modules/.package-lock.json" -nt "$E2E/package-lock.json" ]]; then return 0; fi
  log "npm ci (playwright-core) in $E2E"
  (cd "$E2E" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund </dev/null >/dev/null) \
    || die "npm ci in $E2E failed"
}

do_install() {
  local t0; t0=$(now)
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"; flock 9   # two runs at once must not install into the same directory
  install_apt
  install_code_server
  install_playwright
  flock -u 9
  log "install done in $(since "$t0") s (code-server $("$CODE_SERVER" --version | head -1 | cut -d' ' -f1), $(/usr/bin/chromium --version 2>/dev/null))"
}

# ---------------------------------------------------------------- run
PIDS=()
RUN_DIR=""
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do
    # Each was started with setsid: kill its whole process group (code-server's extension hosts and
    # the agent-ls server outlive the browser session otherwise).
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  sleep 0.5
  for pid in "${PIDS[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  if [[ -n "$RUN_DIR" ]]; then
    if [[ $rc -ne 0 || "${AGENT_LS_E2E_KEEP:-}" == 1 ]]; then
      log "run directory kept: $RUN_DIR"
      if [[ $rc -ne 0 ]]; then
        for f in "$RUN_DIR"/logs/model-server.log "$RUN_DIR"/logs/code-server.log; do
          [[ -s "$f" ]] && { log "--- tail $f"; tail -30 "$f" >&2; }
        done
        # The extension's output channels and the extension host's log.
        find "$RUN_DIR/user/logs" \( -path '*/exthost*/agent-ls.agent-ls/*' -o -name remoteexthost.log \) -name '*.log' 2>/dev/null \
          | while read -r f; do [[ -s "$f" ]] && { log "--- tail $f"; tail -30 "$f" >&2; }; done
      fi
    else
      rm -rf "$RUN_DIR"
    fi
  fi
  exit $rc
}

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  local t0; t0=$(now)
  until "$@" >/dev/null 2>&1; do
    awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }' && die "$what not ready after ${limit} s"
    sleep 0.1
  done
}

if ((BUNDLED)); then BUILT="$EXT/agent-ls-$TARGET.vsix"; else BUILT="$EXT/agent-ls.vsix"; fi
VSIX=${AGENT_LS_E2E_VSIX:-$BUILT}
build_vsix() {
  local vsix="$BUILT" sources=("$EXT/src" "$EXT/package.json" "$EXT/bundled/tool")
  # The platform .vsix also carries the server and its dependencies.
  ((BUNDLED)) && sources+=("$REPO/server/agent_ls" "$REPO/pyproject.toml" "$EXT/bundle_python.py")
  if [[ -n "${AGENT_LS_E2E_VSIX:-}" ]]; then
    [[ -f "$VSIX" ]] || die "AGENT_LS_E2E_VSIX=$VSIX does not exist"
    return 0
  fi
  if [[ -f "$vsix" ]] && [[ -z $(find "${sources[@]}" -type f -newer "$vsix" -not -name '*.pyc' -print -quit 2>/dev/null) ]]; then
    return 0
  fi
  [[ -x "$EXT/build.sh" ]] || die "no $vsix and no executable $EXT/build.sh to build it"
  log "building the .vsix: $EXT/build.sh"
  local t0; t0=$(now)
  "$EXT/build.sh" </dev/null >&2 || die "$EXT/build.sh failed"
  [[ -f "$vsix" ]] || die "$EXT/build.sh did not produce $vsix"
  log "vsix built in $(since "$t0") s"
}

do_run() {
  [[ -x "$CODE_SERVER" ]] || die "code-server is not installed; run: $0 install"
  [[ -d "$E2E/node_modules/playwright-core" ]] || die "playwright-core is not installed; run: $0 install"
  "$PYTHON" -c 'import agent_ls' 2>/dev/null || die "$PYTHON cannot import agent_ls (set AGENT_LS_PYTHON)"
  build_vsix
  log "testing $VSIX with $PYTHON"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  local t0; t0=$(now)
  RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/agent-ls-e2e.XXXXXX")
  local ws="$RUN_DIR/sample" user="$RUN_DIR/user" exts="$RUN_DIR/extensions" logs="$RUN_DIR/logs"
  mkdir -p "$user/User" "$exts" "$logs" "$RUN_DIR/config" "$RUN_DIR/data"
  cp -r "$REPO/server/agent_ls/demo/sample" "$ws"
  rm -rf "$ws/__pycache__" "$ws/.pytest_cache"
  # An AGENTS.md: the runs are governed by it (the end notification names it), the model gets its rule,
  # and "Agent: Show Loaded Instructions" lists it. driver.mjs checks for the rule's text.
  printf '# Sample project\n\n- e2e rule: keep the helpers free of dependencies.\n' >"$ws/AGENTS.md"

  # run-bundled: the workspace's Python is a fresh venv, first on code-server's PATH, without agent-ls.
  local code_path=$PATH
  if ((BUNDLED)); then
    local base_python; base_python=$(command -v python3) || die "no python3 on PATH for the workspace venv"
    "$base_python" -m venv "$RUN_DIR/venv" || die "$base_python -m venv failed"
    "$RUN_DIR/venv/bin/python3" -c 'import agent_ls' 2>/dev/null && die "the fresh venv can import agent_ls"
    code_path="$RUN_DIR/venv/bin:$PATH"
    log "workspace Python: $RUN_DIR/venv/bin/python3 ($("$RUN_DIR/venv/bin/python3" --version)), no agent-ls"
  fi

  # The scripted model: an OpenAI-compatible server on a free port (written to model.port).
  setsid "$PYTHON" "$E2E/${AGENT_LS_E2E_MODEL:-model_server.py}" --port-file "$RUN_DIR/model.port" \
    --requests "$RUN_DIR/requests.json" </dev/null >"$logs/model-server.log" 2>&1 &
  PIDS+=($!)
  wait_for 20 "model server" test -s "$RUN_DIR/model.port"
  local model_port; model_port=$(cat "$RUN_DIR/model.port")

  # User settings (machine-scoped agentLs.* cannot come from the workspace).
  local python_path=$PYTHON; ((BUNDLED)) && python_path=""
  MODEL_PORT=$model_port PYTHON_PATH=$python_path "$PYTHON" - "$user/User/settings.json" <<'PY'
import json, os, sys
settings = {
    **({"agentLs.pythonPath": os.environ["PYTHON_PATH"]} if os.environ["PYTHON_PATH"] else {}),
    "agentLs.model": "ollama/e2e-scripted",
    "agentLs.baseUrl": f"http://127.0.0.1:{os.environ['MODEL_PORT']}/v1",
    "files.autoSave": "off",
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "workbench.enableExperiments": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "git.enabled": False,
    "editor.minimap.enabled": False,
    "editor.autoClosingBrackets": "never",
    "editor.autoClosingQuotes": "never",
    "editor.acceptSuggestionOnEnter": "off",
    "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
    "python.experiments.enabled": False,
}
with open(sys.argv[1], "w") as f:
    json.dump(settings, f, indent=2)
PY

  local t_install; t_install=$(now)
  XDG_CONFIG_HOME="$RUN_DIR/config" XDG_DATA_HOME="$RUN_DIR/data" \
    "$CODE_SERVER" --user-data-dir "$user" --extensions-dir "$exts" \
    --install-extension "$VSIX" </dev/null >"$logs/install-extension.log" 2>&1 \
    || { cat "$logs/install-extension.log" >&2; die "code-server --install-extension failed"; }
  log "vsix installed into code-server in $(since "$t_install") s"

  local cs_port; cs_port=$(free_port)
  # The server's sessions go to the run's own folder (XDG_STATE_HOME), never the user's state dir.
  env -u AGENT_LS_PYTHON PATH="$code_path" \
    XDG_CONFIG_HOME="$RUN_DIR/config" XDG_DATA_HOME="$RUN_DIR/data" XDG_STATE_HOME="$RUN_DIR/state" \
    setsid "$CODE_SERVER" --auth none --bind-addr "127.0.0.1:$cs_port" \
    --user-data-dir "$user" --extensions-dir "$exts" \
    --disable-telemetry --disable-update-check --disable-workspace-trust \
    --disable-getting-started-override "$ws" </dev/null >"$logs/code-server.log" 2>&1 &
  PIDS+=($!)
  wait_for 60 "code-server on port $cs_port" \
    "$PYTHON" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$cs_port/healthz', timeout=2)"
  log "code-server ready on port $cs_port in $(since "$t0") s since the run started"

  local t_drive; t_drive=$(now)
  local shots=${AGENT_LS_E2E_SHOTS:-$E2E/screenshots} driver=driver.mjs
  if [[ -n "${AGENT_LS_E2E_DRIVER:-}" ]]; then  # another scenario, with its own scripted model
    driver=$AGENT_LS_E2E_DRIVER; shots=${AGENT_LS_E2E_SHOTS:-$E2E/screenshots/${driver%.mjs}}
  fi
  ((BUNDLED)) && { shots=${AGENT_LS_E2E_SHOTS:-$E2E/screenshots/bundled}; driver=driver_bundled.mjs; }
  E2E_URL="http://127.0.0.1:$cs_port/" E2E_WORKSPACE="$ws" E2E_REQUESTS="$RUN_DIR/requests.json" \
    E2E_SHOTS="$shots" E2E_LOGS="$RUN_DIR/data/logs" \
    timeout -k 5 300 node "$E2E/$driver" </dev/null || die "$driver failed (screenshots so far: $shots)"
  if ((BUNDLED)); then  # the server the extension started: python3 (the venv's) running the .vsix's launcher
    local started="Starting the server: python3 $exts/agent-ls.agent-ls-"
    local line; line=$(grep -rhF -- "$started" "$user/logs" | head -1)
    [[ "$line" == *"/bundled/tool/launch_server.py serve (interpreter from the default"* ]] \
      || die "the server was not started by python3 through the .vsix's launcher: ${line:-no \"$started…\" in the log}"
    grep -q "\"target\": \"$TARGET\"" "$exts"/agent-ls.agent-ls-*/bundled/libs/manifest.json \
      || die "the installed extension has no $TARGET bundle (bundled/libs/manifest.json)"
    log "server: ${line#*Starting the server: }"
  fi
  log "driver passed in $(since "$t_drive") s; run total $(since "$t0") s; screenshots: $shots"
}

case "$MODE" in
  install) do_install ;;
  run|run-bundled) do_run ;;
  all) do_install; do_run ;;
  *) die "usage: $0 [install|run|all]" ;;
esac
