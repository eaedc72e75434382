#!/usr/bin/env bash
# Keeps a Go-module lane's build module (scripts/k8s-<minor>/go.mod; 1.37 unless NLC_K8S_MODULE_DIR
# names another, e.g. NLC_K8S_MODULE_DIR=scripts/k8s-1.34) in step with k8s.io/kubernetes.
#
#   k8s-module.sh           rewrite the replace block from k8s.io/kubernetes's own go.mod, then go mod tidy
#   k8s-module.sh --check   exit 1 (printing the difference) when the block is not what it would write
#
# A new lane: a go.mod with the module line, `go`/`godebug` as k8s.io/kubernetes's go.mod, a
# require of go.etcd.io/etcd/server/v3 at the minor's etcd (build/dependencies.yaml) and a require
# block holding k8s.io/kubernetes vX.Y.Z, the two `tool` lines and an empty `replace (\n)`, plus
# etcd/main.go; then run this script on it (it fills the replace block and tidies).
#
# k8s.io/kubernetes requires every staging module (k8s.io/api, k8s.io/client-go, …) at v0.0.0 and
# replaces it with ./staging/src/k8s.io/<name>. A dependency's replace directives are ignored, so the
# build module carries its own `k8s.io/<name> => k8s.io/<name> v0.<minor>.<patch>` for each of them:
# exactly the `=> ./staging/...` lines of that go.mod, derived here so nothing is hand-maintained.
set -euo pipefail
dir="${NLC_K8S_MODULE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/k8s-1.37}"
command -v go >/dev/null || { echo "k8s-module.sh: go is not on PATH" >&2; exit 1; }
version="$(sed -nE 's/^\s*k8s\.io\/kubernetes (v[0-9.]+)( \/\/ indirect)?$/\1/p' "$dir/go.mod" | head -n1)"
[ -n "$version" ] || { echo "k8s-module.sh: no k8s.io/kubernetes requirement in $dir/go.mod" >&2; exit 1; }
staging="v0.${version#v1.}"
modfile="$(go -C "$dir" mod download -json "k8s.io/kubernetes@$version" | sed -nE 's/^\s*"GoMod": "(.*)",?$/\1/p')"
[ -f "$modfile" ] || { echo "k8s-module.sh: go mod download gave no go.mod for k8s.io/kubernetes@$version" >&2; exit 1; }

want="$(mktemp)"; trap 'rm -f "$want" "$want.mod"' EXIT
{
  echo "replace ("
  grep -E '^\s*k8s\.io/[^ ]+ => \./staging/' "$modfile" | awk -v v="$staging" '{print "\t" $1 " => " $1 " " v}'
  echo ")"
} >"$want"
have() { awk '/^replace \(/{on=1} on{print} on&&/^\)/{exit}' "$dir/go.mod"; }

if [ "${1:-}" = "--check" ]; then
  if diff -u <(have) "$want"; then exit 0; fi
  echo "k8s-module.sh: $dir/go.mod's replace block differs from k8s.io/kubernetes@$version's staging list; run bash scripts/k8s-module.sh" >&2
  exit 1
fi
awk -v f="$want" '/^replace \(/{while ((getline l < f) > 0) print l; skip=1; next} skip&&/^\)/{skip=0; next} !skip{print}' "$dir/go.mod" >"$want.mod"
mv "$want.mod" "$dir/go.mod"
go -C "$dir" mod tidy
echo "k8s-module.sh: $dir/go.mod replaces $(grep -c . "$want" | awk '{print $1 - 2}') staging modules with $staging"
