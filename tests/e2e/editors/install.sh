#!/usr/bin/env bash
# Install the real editors the tests in this folder drive: Neovim and Emacs with eglot, from Debian.
# Runs as root with no stdin (CI); idempotent: does nothing when all three are already installed.
#   bash tests/e2e/editors/install.sh
set -euo pipefail
packages=(neovim emacs-nox elpa-eglot)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "editors: already installed: ${packages[*]}"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
nvim --version | head -n 1
emacs --version | head -n 1
