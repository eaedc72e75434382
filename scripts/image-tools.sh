#!/usr/bin/env bash
# Provisions the tools that build, run and sign the controller's OCI image without a Docker engine
# (docs/release.md "The image, built and run here"), and prints where they are, one NAME=PATH a line:
#   umoci   Debian's umoci: builds the OCI image layout (layers, config) and unpacks it to a bundle
#   runc    Debian's runc: runs the unpacked image (crun, also in Debian, refuses this machine's
#           hybrid cgroup v1/v2 set-up: "cgroups in hybrid mode not supported")
#   crane   go-containerregistry's crane, from its Go module: a local registry to push to and sign in
#   cosign  sigstore's cosign, from its Go module: signs and verifies with a key made for the run
#
#   scripts/image-tools.sh            install what is missing (apt-get: root or sudo; Go: scripts/go-tool.sh), print the paths
#   scripts/image-tools.sh --check    print the paths of what is there, exit 1 (naming what is missing) without installing
#
# The Debian packages come from the machine's apt sources, as scripts/promtool.sh installs
# prometheus; crane and cosign are built once into ~/.cache/node-lifecycle-controller/tools/
# (cosign's first build fetches and compiles a few hundred modules: about 10 minutes on 2 cores).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_DIR="${NLC_CACHE_DIR:-$HOME/.cache/node-lifecycle-controller}"
log() { printf '[image-tools] %s\n' "$*" >&2; }

check=0
if [ "${1:-}" = "--check" ]; then check=1; fi

# Debian puts runc in /usr/sbin, which a non-root PATH may lack.
find_bin() { command -v "$1" 2>/dev/null || { for d in /usr/sbin /usr/bin /sbin; do [ -x "$d/$1" ] && { echo "$d/$1"; return 0; }; done; return 1; }; }

missing=()
for pkg in umoci runc; do find_bin "$pkg" >/dev/null || missing+=("$pkg"); done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$check" = 1 ]; then log "missing: ${missing[*]} (apt-get install ${missing[*]})"; exit 1; fi
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { log "${missing[*]} missing and apt-get needs root or sudo: apt-get install ${missing[*]}"; exit 1; }
    SUDO=sudo
  fi
  mkdir -p "$CACHE_DIR/logs"
  logfile="$CACHE_DIR/logs/apt-image-tools.log"
  log "installing Debian's ${missing[*]}; log: $logfile"
  # Update the package lists only when apt does not know a package (a fresh container).
  for pkg in "${missing[@]}"; do
    if ! apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
      $SUDO apt-get update >"$logfile" 2>&1 || { log "apt-get update failed"; tail -n 20 "$logfile" >&2; exit 1; }
      break
    fi
  done
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >>"$logfile" 2>&1 \
    || { log "apt-get install ${missing[*]} failed"; tail -n 20 "$logfile" >&2; exit 1; }
fi

echo "umoci=$(find_bin umoci)"
echo "runc=$(find_bin runc)"
if [ "$check" = 1 ]; then
  for tool in crane cosign; do
    # go-tool.sh builds when the binary is missing; --check must not: look in its cache directly.
    mod_version="$(grep -E "^\s+$tool\) echo " "$here/go-tool.sh" | sed -E 's/.*@([^"]+)".*/\1/')"
    path="$CACHE_DIR/tools/$tool-$mod_version/$tool"
    [ -x "$path" ] || { log "missing: $tool (scripts/go-tool.sh --print-path $tool builds it)"; exit 1; }
    echo "$tool=$path"
  done
else
  echo "crane=$(bash "$here/go-tool.sh" --print-path crane)"
  echo "cosign=$(bash "$here/go-tool.sh" --print-path cosign)"
fi
