#!/usr/bin/env bash
# Generates src/cli/kcm-feature-gates.gen.ts: kube-controller-manager 1.37.2's feature gate registry
# (every gate its --feature-gates knows, with its default, stage and lock at 1.37, and the gates'
# dependencies), read from k8s.io/kubernetes v1.37.2 itself by scripts/k8s-1.37/featuregates (Go),
# so that ours accepts and refuses what kube-controller-manager does without a hand-typed table.
#
# The output is checked in: a fresh checkout builds and runs without Go. test/unit/featuregates.test.ts
# runs this script into a temporary file and fails when the checked-in file differs, and runs the
# same program's `check` mode to compare our parser with kube-controller-manager's on a table of flags.
#
# Usage: scripts/gen-feature-gates.sh [OUT_FILE]   (default src/cli/kcm-feature-gates.gen.ts)
# Exit 2 when Go or the module cache is missing (the test then skips). Builds with -trimpath, as
# scripts/control-plane.sh does, so that the packages it shares with kube-apiserver come from the
# build cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/src/cli/kcm-feature-gates.gen.ts}"
command -v go >/dev/null || { echo "gen-feature-gates: go is not on PATH" >&2; exit 2; }
modcache="$(go env GOMODCACHE)"
[ -d "$modcache/k8s.io/kubernetes@v1.37.2" ] || { echo "gen-feature-gates: k8s.io/kubernetes@v1.37.2 is not in the Go module cache ($modcache)" >&2; exit 2; }
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
go -C "$root/scripts/k8s-1.37" run -trimpath ./featuregates gen >"$tmp"
mv "$tmp" "$out"
