#!/usr/bin/env bash
# Runs a Go-built lint tool of the project, building it from its Go module on first use, as
# scripts/control-plane.sh builds kube-apiserver: the machine's Go, the Go module proxy, nothing else.
#
#   scripts/go-tool.sh actionlint [ARGS...]     github.com/rhysd/actionlint (checks .github/workflows)
#   scripts/go-tool.sh kubeconform [ARGS...]    github.com/yannh/kubeconform (checks manifests against schemas)
#   scripts/go-tool.sh toxiproxy-server [ARGS...]  github.com/Shopify/toxiproxy/v2 (the chaos suite's TCP
#                                               fault injector, test/chaos/)
#   scripts/go-tool.sh crane [ARGS...]          github.com/google/go-containerregistry (the release dry-run's
#                                               local registry and image push, scripts/release/image.ts)
#   scripts/go-tool.sh cosign [ARGS...]         github.com/sigstore/cosign/v2 (the release dry-run signs and
#                                               verifies the image with a key generated for the run)
#   scripts/go-tool.sh --print-path NAME        prints the binary's path (building it if needed)
#
# Binaries are cached in ~/.cache/node-lifecycle-controller/tools/<name>-<version>/ (NLC_CACHE_DIR
# moves the root), next to the control plane's: a version bump here builds the new one beside the old.
set -euo pipefail

CACHE_DIR="${NLC_CACHE_DIR:-$HOME/.cache/node-lifecycle-controller}"
GO="${NLC_GO:-go}"

log() { printf '[go-tool] %s\n' "$*" >&2; }

# tool_module NAME -> "package@version", pinned so every machine and CI lint with the same rules.
tool_module() {
  case "$1" in
    actionlint) echo "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12" ;;
    kubeconform) echo "github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0" ;;
    # Not a lint tool: the chaos suite runs it between the controller and kube-apiserver. Built
    # the same way so a fresh machine (CI) gets it from the Go module proxy on first use.
    toxiproxy-server) echo "github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0" ;;
    # The release dry-run's image tools (docs/release.md "The image, built and run here"): no
    # registry but the Go module proxy is reachable, so both come from their modules.
    crane) echo "github.com/google/go-containerregistry/cmd/crane@v0.22.1" ;;
    cosign) echo "github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5" ;;
    *) log "unknown tool $1 (actionlint, kubeconform, toxiproxy-server, crane, cosign)"; exit 2 ;;
  esac
}

tool_path() { # tool_path NAME -> the cached binary's path for the pinned version
  local mod; mod="$(tool_module "$1")"
  echo "$CACHE_DIR/tools/$1-${mod##*@}/$1"
}

build_tool() { # build_tool NAME
  local name="$1" mod bin dir
  mod="$(tool_module "$name")"
  bin="$(tool_path "$name")"
  dir="$(dirname "$bin")"
  command -v "$GO" >/dev/null || { log "$name: needs the Go toolchain ($GO on PATH) to build $mod"; exit 1; }
  mkdir -p "$dir/.build" "$CACHE_DIR/logs"
  local logfile="$CACHE_DIR/logs/go-install-$name.log" start=$SECONDS
  log "building $mod (first use; the Go module proxy: about a minute on 2 cores, cosign about 10)"
  # GOBIN into a scratch directory, then rename: the cache never holds a half-written binary.
  # GOFLAGS=-mod=mod: `go install pkg@version` ignores any go.mod around it, but a GOFLAGS of the
  # caller's (-mod=vendor) would make it refuse.
  if ! GOBIN="$dir/.build" GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" install -trimpath -ldflags "-s -w" "$mod" >"$logfile" 2>&1; then
    log "go install $mod failed; see $logfile"
    tail -n 20 "$logfile" >&2
    exit 1
  fi
  # `go install` names the binary after the package's last path element (cmd/server -> server).
  mv "$dir/.build/$(basename "${mod%@*}")" "$bin"
  rmdir "$dir/.build" 2>/dev/null || true
  log "built $bin in $((SECONDS - start)) s"
}

print=0
if [ "${1:-}" = "--print-path" ]; then print=1; shift; fi
name="${1:?usage: $0 [--print-path] actionlint|kubeconform|toxiproxy-server|crane|cosign [ARGS...]}"
shift
bin="$(tool_path "$name")"
[ -x "$bin" ] || build_tool "$name"
if [ "$print" = 1 ]; then echo "$bin"; exit 0; fi
exec "$bin" "$@"
