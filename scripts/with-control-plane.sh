#!/usr/bin/env bash
# Runs a command with the local control plane up and KUBECONFIG (and NLC_KUBECONFIG) exported.
# If this script started the control plane it stops it afterwards, unless NLC_KEEP_CLUSTER=1.
# One control plane is shared by every integration test file of a run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cp="$here/control-plane.sh"
started=0
if ! bash "$cp" status >/dev/null 2>&1; then
  bash "$cp" up
  started=1
fi
kc="$(bash "$cp" kubeconfig)"
export KUBECONFIG="$kc" NLC_KUBECONFIG="$kc"
rc=0
"$@" || rc=$?
if [ "$started" = 1 ] && [ "${NLC_KEEP_CLUSTER:-0}" != 1 ]; then bash "$cp" down || true; fi
exit "$rc"
