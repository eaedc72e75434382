#!/usr/bin/env bash
# Runs promtool from Debian's `prometheus` package (the same package scripts/dashboard-screenshot.sh
# uses), installing the package with apt-get first when promtool is missing, as
# scripts/control-plane.sh installs its Debian packages (root, else sudo).
#
#   scripts/promtool.sh test rules test/promtool/x.yaml   any promtool command
#   scripts/promtool.sh --install                         install only, print promtool's path
#   scripts/promtool.sh --print-path                      print the path, installing if needed
#
# NLC_PROMTOOL names another promtool binary (skips the install).
set -euo pipefail

CACHE_DIR="${NLC_CACHE_DIR:-$HOME/.cache/node-lifecycle-controller}"
log() { printf '[promtool.sh] %s\n' "$*" >&2; }

find_promtool() {
  if [ -n "${NLC_PROMTOOL:-}" ]; then echo "$NLC_PROMTOOL"; return 0; fi
  command -v promtool 2>/dev/null && return 0
  # Debian puts it in /usr/bin; a PATH without it (some sudo setups) still finds it here.
  [ -x /usr/bin/promtool ] && { echo /usr/bin/promtool; return 0; }
  return 1
}

install_promtool() {
  local SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { log "promtool missing and apt-get needs root or sudo: apt-get install prometheus"; exit 1; }
    SUDO=sudo
  fi
  mkdir -p "$CACHE_DIR/logs"
  log "installing Debian's prometheus package (for promtool); log: $CACHE_DIR/logs/apt-prometheus.log"
  # Update the package lists only when the package is unknown to apt (a fresh container).
  if ! apt-cache policy prometheus 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    $SUDO apt-get update >"$CACHE_DIR/logs/apt-prometheus.log" 2>&1 \
      || { log "apt-get update failed"; tail -n 20 "$CACHE_DIR/logs/apt-prometheus.log" >&2; exit 1; }
  fi
  # --no-install-recommends: promtool only; the server is not started (policy-rc.d in containers,
  # and the unit is harmless elsewhere).
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus \
    >>"$CACHE_DIR/logs/apt-prometheus.log" 2>&1 \
    || { log "apt-get install prometheus failed"; tail -n 20 "$CACHE_DIR/logs/apt-prometheus.log" >&2; exit 1; }
}

bin="$(find_promtool || true)"
if [ -z "$bin" ]; then
  install_promtool
  bin="$(find_promtool)" || { log "promtool not found after installing prometheus"; exit 1; }
  log "installed $("$bin" --version 2>&1 | head -n 1)"
fi

case "${1:-}" in
  --install | --print-path) echo "$bin" ;;
  *) exec "$bin" "$@" ;;
esac
