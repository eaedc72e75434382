#!/usr/bin/env bash
# Regenerates docs/dashboard.png from a real run. A manual step, not part of CI: it needs Debian's
# Prometheus and Chromium, which nothing else in the project uses:
#
#   apt-get install prometheus chromium
#   bash scripts/dashboard-screenshot.sh [demo flags, e.g. --nodes-per-zone 10]
#
# 1. starts Prometheus (Debian's package) on 127.0.0.1:$PROM_PORT with its own TSDB in a temporary
#    directory, scraping every 1 s the targets in a file_sd file that is empty at first;
# 2. runs the demo (`npm run demo`, --plain, prefix "dash"): the local control plane (started if
#    it is not up, and then stopped again by the demo), 30 simulated kubelets and the controller,
#    which serves /metrics on a plain port; as soon as the demo prints that port it becomes the
#    Prometheus target;
# 3. after the demo, bench/dashboard/render.ts evaluates every panel's query of the chart's
#    dashboard JSON in that Prometheus over the run's window and draws them into one HTML page;
# 4. headless Chromium screenshots the page into docs/dashboard.png (OUT=... to write elsewhere).
#
# KEEP=1 leaves the temporary directory (Prometheus's data, the page) for a look.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
PROM_PORT="${PROM_PORT:-19090}"
OUT="${OUT:-$repo/docs/dashboard.png}"
# The project's Node 24 (the demo needs it) ahead of any older node on PATH.
export PATH="$repo/node_modules/.bin:$PATH"

log() { printf '[dashboard-screenshot] %s\n' "$*" >&2; }
need() { command -v "$1" >/dev/null || { log "$1 not found: apt-get install $2"; exit 1; }; }
need prometheus prometheus
need chromium chromium
need curl curl

work="$(mktemp -d "${TMPDIR:-/tmp}/nlc-dashboard.XXXXXX")"
prom_pid=""
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  if [ "${KEEP:-}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo '[]' >"$work/targets.json"
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node-lifecycle-controller
    file_sd_configs:
      - files: ['$work/targets.json']
        refresh_interval: 1s
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null || { log "Prometheus did not start:"; cat "$work/prometheus.log" >&2; exit 1; }
prom_version="$(prometheus --version 2>&1 | head -n1 | awk '{print $3}')"
log "Prometheus $prom_version on 127.0.0.1:$PROM_PORT (data in $work/data)"

from="$(date +%s)"
set +e
node --import tsx "$repo/packages/sim/src/main.ts" demo --plain --prefix dash "$@" 2>&1 | while IFS= read -r line; do
  printf '%s\n' "$line"
  if [[ "$line" =~ controller\ up:.*http://127\.0\.0\.1:([0-9]+) ]]; then
    printf '[{"targets":["127.0.0.1:%s"],"labels":{"run":"demo"}}]\n' "${BASH_REMATCH[1]}" >"$work/targets.json.tmp"
    mv "$work/targets.json.tmp" "$work/targets.json"
    date +%s >"$work/scrape-from"
    log "Prometheus scrapes 127.0.0.1:${BASH_REMATCH[1]}"
  fi
done
demo_rc="${PIPESTATUS[0]}"
set -e
to="$(date +%s)"
# The window starts when the controller became a target (the fleet's creation before is not drawn).
[ -s "$work/scrape-from" ] && from="$(cat "$work/scrape-from")"
[ "$demo_rc" = 0 ] || { log "the demo failed (exit $demo_rc)"; exit 1; }
samples="$(curl -fsS "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode 'query=count_over_time(up[1h])' | sed -n 's/.*"value":\[[^,]*,"\([0-9]*\)".*/\1/p')"
log "Prometheus scraped the controller ${samples:-0} times between $from and $to"
[ "${samples:-0}" -gt 10 ] || { log "too few scrapes"; exit 1; }

caption="The chart's dashboard JSON: its queries evaluated by Prometheus $prom_version (Debian) scraping \`npm run demo\` every 1 s, $(date -u -d "@$from" '+%Y-%m-%d %H:%M') UTC; drawn by bench/dashboard/render.ts, not Grafana."
size="$(node --import tsx "$repo/bench/dashboard/render.ts" --prometheus "http://127.0.0.1:$PROM_PORT" \
  --from "$from" --to "$to" --step 1 --rate-interval 10s --caption "$caption" --out "$work/dashboard.html")"
read -r width height <<<"$size"
mkdir -p "$(dirname "$OUT")"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --window-size="$width,$height" --screenshot="$OUT" "file://$work/dashboard.html" >"$work/chromium.log" 2>&1 \
  || { log "chromium failed:"; cat "$work/chromium.log" >&2; exit 1; }
log "wrote $OUT (${width}x${height})"
