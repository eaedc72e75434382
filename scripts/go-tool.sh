#!/usr/bin/env bash
# Runs a Go-built lint tool of the project, building it from its Go module on first use, as
# scripts/control-plane.sh builds kube-apiserver: the machine's Go, the Go module proxy, nothing else.
#
#   scripts/go-tool.sh actionlint [ARGS...]     github.com/rhysd/actionlint (checks .github/workflows)
#   scripts/go-tool.sh kubeconform [ARGS...]    github.com/yannh/kubeconform (checks manifests against schemas)
#   scripts/go-tool.sh toxiproxy-server [ARGS...]  github.com/Shopify/toxiproxy/v2 (the chaos suite's TCP
#                                               fault injector, test/chaos/)
#   scripts/go-tool.sh kubeadm [ARGS...]        kubeadm v1.37.2 (k8s.io/kubernetes/cmd/kubeadm), from its build
#                                               module scripts/k8s-1.37/kubeadm (the cut-over test renders
#                                               kube-controller-manager's static Pod with it)
#   scripts/go-tool.sh capi-render FILE...      Cluster API v1.14.2's KubeadmControlPlane webhook and kubeadm
#   scripts/go-tool.sh k3s-render FILE          config conversion / k3s's config parser and argument merge,
#                                               from the build module scripts/cutover (see its go.mod)
#   scripts/go-tool.sh monitoring-check FILE... the chart's ServiceMonitor and PrometheusRule, decoded
#                                               strictly into the Prometheus Operator's Go types
#                                               (scripts/monitoring-check)
#   scripts/go-tool.sh crane [ARGS...]          github.com/google/go-containerregistry (the release dry-run's
#                                               local registry and image push, scripts/release/image.ts)
#   scripts/go-tool.sh cosign [ARGS...]         github.com/sigstore/cosign/v2 (the release dry-run signs and
#                                               verifies the image with a key generated for the run)
#   scripts/go-tool.sh --print-path NAME        prints the binary's path (building it if needed)
#
# Binaries are cached in ~/.cache/node-lifecycle-controller/tools/<name>-<version>/ (NLC_CACHE_DIR
# moves the root), next to the control plane's: a version bump here builds the new one beside the old.
# A tool built from a build module of this repository is cached under a hash of that module's
# go.mod, go.sum and the package's own .go files instead of a version, so any change rebuilds it.
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
    *) echo "" ;;
  esac
}

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# local_tool NAME -> "MODULE-DIR PACKAGE" for a tool built from a build module of this repository
# (`go install pkg@version` cannot build k8s.io/kubernetes: its go.mod replaces the staging modules,
# so the build module carries the replace block, as scripts/k8s-1.37 does for kube-apiserver).
local_tool() {
  case "$1" in
    kubeadm) echo "$REPO_DIR/scripts/k8s-1.37/kubeadm k8s.io/kubernetes/cmd/kubeadm" ;;
    capi-render) echo "$REPO_DIR/scripts/cutover ./capi-render" ;;
    k3s-render) echo "$REPO_DIR/scripts/cutover ./k3s-render" ;;
    monitoring-check) echo "$REPO_DIR/scripts/monitoring-check ." ;;
    *) echo "" ;;
  esac
}

known_tool() {
  [ -n "$(tool_module "$1")" ] || [ -n "$(local_tool "$1")" ] || {
    log "unknown tool $1 (actionlint, kubeconform, toxiproxy-server, crane, cosign, kubeadm, capi-render, k3s-render, monitoring-check)"; exit 2; }
}

# local_tool_id NAME -> a hash of what the tool is built from: the module's go.mod and go.sum, and
# the .go files of a package inside the module (none for kubeadm, which is the module's dependency).
local_tool_id() {
  local dir pkg; read -r dir pkg <<<"$(local_tool "$1")"
  { cat "$dir/go.mod" "$dir/go.sum"; case "$pkg" in .|./*) cat "$dir/${pkg#./}"/*.go ;; esac; } | sha256sum | cut -c1-12
}

tool_path() { # tool_path NAME -> the cached binary's path for the pinned version (or module hash)
  if [ -n "$(local_tool "$1")" ]; then echo "$CACHE_DIR/tools/$1-$(local_tool_id "$1")/$1"; return; fi
  local mod; mod="$(tool_module "$1")"
  echo "$CACHE_DIR/tools/$1-${mod##*@}/$1"
}

# ldflags of a local tool: kubeadm answers `kubeadm version` with the module's k8s.io/kubernetes
# release, as upstream's hack/lib/version.sh stamps it (kubeadm compares it with kubernetesVersion).
local_tool_ldflags() {
  local ld="-s -w"
  if [ "$1" = kubeadm ]; then
    local dir pkg v; read -r dir pkg <<<"$(local_tool "$1")"
    v="$(sed -nE 's/^\s*k8s\.io\/kubernetes (v[0-9.]+)( \/\/ indirect)?$/\1/p' "$dir/go.mod" | head -n1)"
    local minor="${v#v1.}"; minor="${minor%%.*}"
    for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
      ld+=" -X '$p.gitVersion=$v' -X '$p.gitMajor=1' -X '$p.gitMinor=$minor' -X '$p.gitTreeState=clean'"
    done
  fi
  printf '%s' "$ld"
}

build_local_tool() { # build_local_tool NAME
  local name="$1" dir pkg bin
  read -r dir pkg <<<"$(local_tool "$name")"
  bin="$(tool_path "$name")"
  command -v "$GO" >/dev/null || { log "$name: needs the Go toolchain ($GO on PATH) to build $pkg"; exit 1; }
  mkdir -p "$(dirname "$bin")" "$CACHE_DIR/logs"
  local logfile="$CACHE_DIR/logs/go-build-$name.log" start=$SECONDS
  log "building $name ($pkg in ${dir#"$REPO_DIR"/}; first use: the Go module proxy, a few minutes on 2 cores)"
  # -mod=readonly: the committed go.sum decides every module; a missing entry fails here, by name.
  # -buildvcs=false: the tool's main package lies in this repository, whose git state (a dirty tree,
  # or a checkout owned by another user, as in CI containers) must not matter to the build.
  if ! GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 "$GO" -C "$dir" build -trimpath -ldflags "$(local_tool_ldflags "$name")" -o "$bin.building.$$" "$pkg" >"$logfile" 2>&1; then
    log "go build $pkg failed; see $logfile"
    tail -n 20 "$logfile" >&2
    exit 1
  fi
  mv "$bin.building.$$" "$bin"
  log "built $bin in $((SECONDS - start)) s"
}

build_tool() { # build_tool NAME
  local name="$1" mod bin dir
  mod="$(tool_module "$name")"
  bin="$(tool_path "$name")"
  dir="$(dirname "$bin")"
  command -v "$GO" >/dev/null || { log "$name: needs the Go toolchain ($GO on PATH) to build $mod"; exit 1; }
  # A scratch directory and log of this process's own: two first uses at once (CI's image and release
  # tests both ask for cosign on a cold cache) each build, and the later rename wins. They used to
  # share .build: the first to finish moved its binary out and removed the empty directory, and the
  # other's `go install` then had nowhere to write, so it failed and printed no path.
  local build="$dir/.build.$$"
  mkdir -p "$build" "$CACHE_DIR/logs"
  local logfile="$CACHE_DIR/logs/go-install-$name.$$.log" start=$SECONDS
  log "building $mod (first use; the Go module proxy: about a minute on 2 cores, cosign about 10)"
  # GOBIN into a scratch directory, then rename: the cache never holds a half-written binary.
  # GOFLAGS=-mod=mod: `go install pkg@version` ignores any go.mod around it, but a GOFLAGS of the
  # caller's (-mod=vendor) would make it refuse.
  if ! GOBIN="$build" GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" install -trimpath -ldflags "-s -w" "$mod" >"$logfile" 2>&1; then
    log "go install $mod failed; see $logfile"
    tail -n 20 "$logfile" >&2
    rm -rf "$build"
    exit 1
  fi
  # `go install` names the binary after the package's last path element (cmd/server -> server).
  mv "$build/$(basename "${mod%@*}")" "$bin"
  rm -rf "$build"
  mv "$logfile" "$CACHE_DIR/logs/go-install-$name.log"
  log "built $bin in $((SECONDS - start)) s"
}

print=0
if [ "${1:-}" = "--print-path" ]; then print=1; shift; fi
name="${1:?usage: $0 [--print-path] actionlint|kubeconform|toxiproxy-server|crane|cosign|kubeadm|capi-render|k3s-render|monitoring-check [ARGS...]}"
shift
known_tool "$name"
bin="$(tool_path "$name")"
if [ ! -x "$bin" ]; then
  if [ -n "$(local_tool "$name")" ]; then build_local_tool "$name"; else build_tool "$name"; fi
fi
if [ "$print" = 1 ]; then echo "$bin"; exit 0; fi
exec "$bin" "$@"
