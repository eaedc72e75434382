#!/usr/bin/env bash
# A real local Kubernetes control plane (etcd + kube-apiserver) on loopback. See docs/control-plane.md.
#
#   control-plane.sh install [--with-kcm]   build (or reuse the cached) binaries of the lane
#   control-plane.sh up                     install if needed, start etcd + apiserver, write kubeconfig
#   control-plane.sh down                   stop both, remove the throwaway data
#   control-plane.sh status                 exit 0 when the apiserver is ready
#   control-plane.sh env                    print `export KUBECONFIG=...`
#   control-plane.sh version                print the lane's Kubernetes version (v1.37.2, v1.34.4, ...)
#   control-plane.sh lanes                  print every lane: minor, Kubernetes version, etcd version
#   control-plane.sh bin NAME               print the path of the lane's cached binary NAME
#   control-plane.sh etcd-args              print etcd's durability flags (NLC_ETCD_FSYNC), one per line
#
# NLC_K8S_VERSION picks the lane:
#   1.37 (default), 1.36, 1.35, 1.34
#                   kube-apiserver / kube-controller-manager at the minor's latest patch (v1.37.2,
#                   v1.36.3, v1.35.4, v1.34.4) from the k8s.io/kubernetes Go module (build module:
#                   scripts/k8s-<minor>), and etcd at the version that minor is tested with (its
#                   build/dependencies.yaml: 3.7.0, 3.6.8, 3.6.6, 3.6.5) from etcd's own Go module,
#                   all built with the machine's Go toolchain;
#   1.20            kube-apiserver / kube-controller-manager v1.20.2 from Debian bookworm's source
#                   package (pinned), built with Debian's Go 1.19; Debian's etcd 3.4.
#
# NLC_ETCD_FSYNC=1 starts etcd with fsync on, as production runs it (default 0: --unsafe-no-fsync).
#
# NLC_AUDIT_POLICY_FILE (off by default): an audit policy file; when set, kube-apiserver writes the
# audit log to <state dir>/logs/audit.log (JSON lines) under that policy. The chaos suite
# (test/chaos/) counts the writes that landed from there; other tests run without an audit log.
#
# Every step is idempotent. A failure names the step and the log to read.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${NLC_CACHE_DIR:-$HOME/.cache/node-lifecycle-controller}"
# Every lane: minor, the Kubernetes release it runs, the etcd release that minor is tested with
# ("debian" for the 1.20 lane, which uses Debian's etcd package).
LANES="1.37 v1.37.2 3.7.0
1.36 v1.36.3 3.6.8
1.35 v1.35.4 3.6.6
1.34 v1.34.4 3.6.5
1.20 v1.20.2 debian"
K8S_LANE="${NLC_K8S_VERSION:-1.37}"
K8S_VERSION=""
ETCD_VERSION=""
while read -r lane_minor lane_version lane_etcd; do
  case "$K8S_LANE" in
    "$lane_minor" | "v$lane_minor" | "${lane_version#v}" | "$lane_version")
      K8S_LANE="$lane_minor"; K8S_VERSION="$lane_version"; ETCD_VERSION="$lane_etcd" ;;
  esac
done <<<"$LANES"
if [ -z "$K8S_VERSION" ]; then
  printf '[control-plane] NLC_K8S_VERSION=%s: unknown lane (use %s)\n' "$K8S_LANE" "$(cut -d' ' -f1 <<<"$LANES" | paste -sd' ')" >&2
  exit 2
fi
K8S_MINOR="${K8S_LANE#1.}"
# One state directory per lane, so a 1.20 cluster is never mistaken for the 1.37 one (or back).
STATE_DIR="${NLC_STATE_DIR:-$CACHE_DIR/cluster-$K8S_LANE}"
BIN_DIR="$CACHE_DIR/bin/$K8S_VERSION"
SRC_DIR="$CACHE_DIR/src"
LOG_DIR="$STATE_DIR/logs"
BUILD_LOG_DIR="$CACHE_DIR/logs/$K8S_VERSION"
K8S_VERSION_DIR="kubernetes-1.20.2"
# Debian's source package for the 1.20 lane, pinned: `apt-get source kubernetes` alone takes the
# newest version of any configured suite, and a newer one would not build with this recipe.
DEBIAN_K8S_SOURCE_VERSION="${NLC_DEBIAN_K8S_SOURCE_VERSION:-1.20.5+really1.20.2-1.1+deb12u1}"
# Debian's Go 1.19, by its full path: the machine's own Go (first on PATH) is too new for 1.20's
# vendored code.
GO119_DIR=/usr/lib/go-1.19/bin
K8S_MODULE_DIR="$REPO_DIR/scripts/k8s-$K8S_LANE"   # the build module of a Go-module lane (not 1.20)
GO="${NLC_GO:-go}"   # the Go-module lanes' Go toolchain (the machine's own, first on PATH)
APISERVER_PORT="${NLC_APISERVER_PORT:-6443}"
ETCD_PORT="${NLC_ETCD_PORT:-2379}"
ETCD_PEER_PORT="${NLC_ETCD_PEER_PORT:-2380}"
# NLC_ETCD_FSYNC=1 runs etcd as production does, fsyncing its WAL on every commit (the bench's
# --realistic-etcd). The default 0 keeps --unsafe-no-fsync: throwaway data on a shared 2-core box,
# where fsync turns every Lease renewal into a disk wait and delays what every watcher sees.
ETCD_FSYNC="${NLC_ETCD_FSYNC:-0}"
case "$ETCD_FSYNC" in
  0 | 1) ;;
  *) printf '[control-plane] NLC_ETCD_FSYNC=%s: use 0 (--unsafe-no-fsync, the default) or 1 (fsync on)\n' "$ETCD_FSYNC" >&2; exit 2 ;;
esac

log() { printf '[control-plane] %s\n' "$*" >&2; }
fail() { # fail STEP LOGFILE
  printf '[control-plane] FAILED at step "%s"' "$1" >&2
  if [ -n "${2:-}" ]; then printf '; see %s' "$2" >&2; fi
  printf '\n' >&2
  if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -n 20 "$2" | sed 's/^/    /' >&2; fi
  exit 1
}

# run STEP LOGFILE CMD...: runs CMD with output to LOGFILE, printing a heartbeat every 30 s
# so a first-time build (minutes) visibly makes progress.
run() {
  local step="$1" logfile="$2"; shift 2
  mkdir -p "$(dirname "$logfile")"
  log "$step ..."
  local start=$SECONDS
  ( "$@" ) >"$logfile" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 30); do sleep 1; kill -0 "$pid" 2>/dev/null || break; done
    if kill -0 "$pid" 2>/dev/null; then
      log "  $step: still running ($((SECONDS - start)) s; last: $(tail -n 1 "$logfile" | cut -c1-100))"
    fi
  done
  if ! wait "$pid"; then fail "$step" "$logfile"; fi
  log "  $step: done in $((SECONDS - start)) s"
}

need_root_or_sudo() {
  if [ "$(id -u)" = 0 ]; then echo ""; elif command -v sudo >/dev/null; then echo "sudo"; else
    fail "apt (needs root or sudo)" ""; fi
}

apt_packages() {
  local wanted=(openssl curl ca-certificates)
  if [ "$K8S_LANE" = 1.20 ]; then wanted+=(golang-go etcd-server rsync golang-github-modern-go-reflect2-dev); fi
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  local SUDO; SUDO="$(need_root_or_sudo)"
  mkdir -p "$CACHE_DIR/logs"
  run "apt-get update" "$CACHE_DIR/logs/apt-update.log" $SUDO apt-get update
  run "apt-get install ${missing[*]}" "$CACHE_DIR/logs/apt-install.log" \
    env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
}

# ---------------------------------------------------------------------------------------------
# The 1.20 lane: Debian bookworm's kubernetes source package, Debian's Go 1.19.

enable_deb_src() {
  if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then return 0; fi
  local SUDO; SUDO="$(need_root_or_sudo)"
  log "enabling deb-src for bookworm"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    | $SUDO tee /etc/apt/sources.list.d/nlc-deb-src.sources >/dev/null
  run "apt-get update (deb-src)" "$CACHE_DIR/logs/apt-update-src.log" $SUDO apt-get update
}

fetch_source() {
  if [ -d "$SRC_DIR/$K8S_VERSION_DIR" ] && [ "$(cat "$SRC_DIR/.unpacked" 2>/dev/null)" = "$DEBIAN_K8S_SOURCE_VERSION" ]; then return 0; fi
  enable_deb_src
  mkdir -p "$SRC_DIR"
  rm -f "$SRC_DIR"/kubernetes_*
  run "apt-get source kubernetes=$DEBIAN_K8S_SOURCE_VERSION" "$CACHE_DIR/logs/apt-source.log" \
    bash -c "cd '$SRC_DIR' && apt-get source --download-only 'kubernetes=$DEBIAN_K8S_SOURCE_VERSION'"
  local orig
  orig="$(ls "$SRC_DIR"/kubernetes_*.orig.tar.* 2>/dev/null | head -n1)"
  [ -n "$orig" ] || fail "find kubernetes orig tarball" "$CACHE_DIR/logs/apt-source.log"
  rm -rf "${SRC_DIR:?}/$K8S_VERSION_DIR" "$SRC_DIR/.generated"
  run "unpack $(basename "$orig")" "$CACHE_DIR/logs/unpack.log" tar -C "$SRC_DIR" -xf "$orig"
  [ -d "$SRC_DIR/$K8S_VERSION_DIR" ] || fail "unpack kubernetes source (no $K8S_VERSION_DIR)" "$CACHE_DIR/logs/unpack.log"
  echo "$DEBIAN_K8S_SOURCE_VERSION" >"$SRC_DIR/.unpacked"
}

# Kubernetes 1.20 vendors github.com/modern-go/reflect2 v1.0.1, whose unsafe map iteration is
# broken under Go >= 1.18 (Debian bookworm ships Go 1.19): kube-apiserver dies with SIGSEGV in
# json-iterator's map encoder on some requests (seen here on a pods/status patch). reflect2 v1.0.2
# fixed it, API-compatible; Debian packages it. Swap its sources into the vendored tree.
patch_vendored_reflect2() {
  local src=/usr/share/gocode/src/github.com/modern-go/reflect2
  local dst="$1/vendor/github.com/modern-go/reflect2"
  [ -f "$src/go_above_118.go" ] || fail "find reflect2 >= 1.0.2 sources in $src (apt package golang-github-modern-go-reflect2-dev)" ""
  if [ -f "$dst/go_above_118.go" ]; then return 0; fi
  log "patching vendored reflect2 v1.0.1 -> Debian's v1.0.2 (Go 1.18+ fix)"
  rm -f "$dst"/*.go "$dst"/*.s
  cp "$src"/*.go "$src"/*.s "$dst"/
}

build_binary_120() { # build_binary_120 NAME
  local name="$1"
  apt_packages
  [ -x "$GO119_DIR/go" ] || fail "find Debian's Go 1.19 at $GO119_DIR/go (apt package golang-go)" ""
  fetch_source
  local tree="$SRC_DIR/$K8S_VERSION_DIR"
  patch_vendored_reflect2 "$tree"
  if [ ! -f "$SRC_DIR/.generated" ]; then
    run "make generated_files (about 1 min)" "$BUILD_LOG_DIR/make-generated.log" env PATH="$GO119_DIR:$PATH" make -C "$tree" generated_files
    touch "$SRC_DIR/.generated"
  fi
  run "make WHAT=cmd/$name (first time: about 5 min on 2 cores)" "$BUILD_LOG_DIR/make-$name.log" env PATH="$GO119_DIR:$PATH" make -C "$tree" WHAT="cmd/$name"
  install_binary "$tree/_output/bin/$name" "$name"
}

# ---------------------------------------------------------------------------------------------
# The Go-module lanes (1.34 to 1.37): k8s.io/kubernetes vX.Y.Z and the minor's etcd as Go modules
# (scripts/k8s-<minor>).

# ldflags as upstream's hack/lib/version.sh sets them, so /version answers the lane's version.
version_ldflags() {
  local ld="-s -w" p
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ld+=" -X '$p.gitVersion=$K8S_VERSION' -X '$p.gitMajor=1' -X '$p.gitMinor=$K8S_MINOR'"
    ld+=" -X '$p.gitTreeState=clean' -X '$p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)'"
  done
  printf '%s' "$ld"
}

go_modules() {
  command -v "$GO" >/dev/null || fail "find the Go toolchain ($GO on PATH; the $K8S_LANE lane needs Go >= 1.21, which fetches the toolchain the module asks for)" ""
  local gov; gov="$("$GO" env GOVERSION 2>/dev/null || true)"
  case "$gov" in
    go1.2[1-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
    *) fail "check the Go toolchain ($GO is ${gov:-unknown}; the $K8S_LANE lane needs Go >= 1.21)" "" ;;
  esac
  [ -f "$K8S_MODULE_DIR/go.mod" ] || fail "find the build module $K8S_MODULE_DIR/go.mod" ""
  # Resolves the build module's requirements (k8s.io/kubernetes, etcd) against the committed go.sum,
  # so a missing proxy fails here, by name; `go build` fetches the packages' remaining modules while
  # it compiles (measured: this step 1-5 s on an empty module cache). GOTOOLCHAIN stays as the machine has it (auto): a module asking for a newer
  # Go than the machine's makes go fetch that toolchain from the module proxy.
  run "go mod download (k8s.io/kubernetes $K8S_VERSION and etcd $ETCD_VERSION from the Go module proxy; go build fetches the rest)" \
    "$BUILD_LOG_DIR/go-mod-download.log" "$GO" -C "$K8S_MODULE_DIR" mod download -x
}

build_binary_gomod() { # build_binary_gomod NAME
  local name="$1" pkg ld=""
  case "$name" in
    kube-apiserver | kube-controller-manager) pkg="k8s.io/kubernetes/cmd/$name"; ld="$(version_ldflags)" ;;
    etcd) pkg="./etcd"; ld="-s -w" ;;
    *) fail "build $name (unknown binary)" "" ;;
  esac
  apt_packages
  go_modules
  mkdir -p "$BIN_DIR"
  # -v prints each package as it compiles, which is the heartbeat's "last:" line.
  run "go build $name $K8S_VERSION (first time: several minutes on 2 cores)" "$BUILD_LOG_DIR/go-build-$name.log" \
    "$GO" -C "$K8S_MODULE_DIR" build -v -trimpath -ldflags "$ld" -o "$BIN_DIR/.$name.building" "$pkg"
  install_binary "$BIN_DIR/.$name.building" "$name"
}

# ---------------------------------------------------------------------------------------------

# Bumped whenever the way we build changes, so a cached binary from an older recipe is rebuilt.
build_id() {
  case "$K8S_LANE" in
    1.20) echo "v1.20.2+reflect2-1.0.2+deb-$DEBIAN_K8S_SOURCE_VERSION" ;;
    # The build module's files are part of the recipe: a changed go.sum rebuilds.
    *) echo "$K8S_VERSION+gomod-1+$(cat "$K8S_MODULE_DIR/go.mod" "$K8S_MODULE_DIR/go.sum" "$K8S_MODULE_DIR/etcd/main.go" | sha256sum | cut -c1-12)" ;;
  esac
}

# install_binary FILE NAME: copy under a temporary name and rename, so the cache never holds a
# half-written binary (a failed or interrupted build leaves only the temporary file, which the next
# build overwrites).
install_binary() {
  local file="$1" name="$2"
  mkdir -p "$BIN_DIR"
  if [ "$file" != "$BIN_DIR/.$name.building" ]; then cp "$file" "$BIN_DIR/.$name.building"; fi
  mv "$BIN_DIR/.$name.building" "$BIN_DIR/$name"
  build_id >"$BIN_DIR/$name.build-id"
  log "cached $BIN_DIR/$name ($(build_id))"
}

binary_cached() { [ -x "$BIN_DIR/$1" ] && [ "$(cat "$BIN_DIR/$1.build-id" 2>/dev/null)" = "$(build_id)" ]; }

build_binary() { # build_binary NAME
  binary_cached "$1" && return 0
  case "$K8S_LANE" in
    1.20) build_binary_120 "$1" ;;
    *) build_binary_gomod "$1" ;;
  esac
}

# etcd: a Go-module lane builds the release its minor is tested with (build/dependencies.yaml);
# the 1.20 lane uses Debian's 3.4.
etcd_bin() {
  if [ "$K8S_LANE" != 1.20 ]; then echo "$BIN_DIR/etcd"; else command -v etcd || echo etcd; fi
}

cmd_install() {
  apt_packages
  build_binary kube-apiserver
  if [ "$K8S_LANE" != 1.20 ]; then build_binary etcd; fi
  if [ "${1:-}" = "--with-kcm" ]; then build_binary kube-controller-manager; fi
}

port_in_use() { # port_in_use PORT -> 0 when something listens on 127.0.0.1:PORT
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

apiserver_ready() {
  [ -f "$STATE_DIR/admin.token" ] || return 1
  curl -sk --max-time 3 -H "Authorization: Bearer $(cat "$STATE_DIR/admin.token")" \
    "https://127.0.0.1:$APISERVER_PORT/readyz" 2>/dev/null | grep -q '^ok$'
}

gen_credentials() {
  mkdir -p "$STATE_DIR/pki"
  if [ ! -f "$STATE_DIR/pki/sa.key" ]; then
    openssl genrsa -out "$STATE_DIR/pki/sa.key" 2048 >"$LOG_DIR/openssl.log" 2>&1 || fail "generate service-account key" "$LOG_DIR/openssl.log"
    openssl rsa -in "$STATE_DIR/pki/sa.key" -pubout -out "$STATE_DIR/pki/sa.pub" >>"$LOG_DIR/openssl.log" 2>&1 || fail "derive service-account public key" "$LOG_DIR/openssl.log"
  fi
  if [ ! -f "$STATE_DIR/admin.token" ]; then
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$STATE_DIR/admin.token"
  fi
  printf '%s,admin,admin-uid,"system:masters"\n' "$(cat "$STATE_DIR/admin.token")" >"$STATE_DIR/tokens.csv"
}

write_kubeconfig() {
  cat >"$STATE_DIR/kubeconfig" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: nlc-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $(cat "$STATE_DIR/admin.token")
contexts:
- name: nlc-local
  context: {cluster: nlc-local, user: admin}
current-context: nlc-local
KCFG
}

etcd_durability_args() { # the flags that set etcd's durability (NLC_ETCD_FSYNC), one per line
  if [ "$ETCD_FSYNC" = 0 ]; then echo --unsafe-no-fsync; fi
}

start_etcd() {
  if pid_alive "$STATE_DIR/etcd.pid"; then return 0; fi
  if port_in_use "$ETCD_PORT"; then fail "start etcd: port $ETCD_PORT is in use by another process (set NLC_ETCD_PORT)" ""; fi
  if port_in_use "$ETCD_PEER_PORT"; then fail "start etcd: peer port $ETCD_PEER_PORT is in use (set NLC_ETCD_PEER_PORT)" ""; fi
  rm -rf "$STATE_DIR/etcd-data"
  log "starting etcd on 127.0.0.1:$ETCD_PORT (fsync $([ "$ETCD_FSYNC" = 1 ] && echo on || echo off))"
  local durability
  mapfile -t durability < <(etcd_durability_args)
  setsid "$(etcd_bin)" --name nlc --data-dir "$STATE_DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "nlc=http://127.0.0.1:$ETCD_PEER_PORT" \
    "${durability[@]}" --quota-backend-bytes 8589934592 \
    >"$LOG_DIR/etcd.log" 2>&1 </dev/null &
  echo $! >"$STATE_DIR/etcd.pid"
  for _ in $(seq 1 100); do
    if curl -s --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; then return 0; fi
    pid_alive "$STATE_DIR/etcd.pid" || fail "start etcd (process exited)" "$LOG_DIR/etcd.log"
    sleep 0.2
  done
  fail "start etcd (not healthy after 20 s)" "$LOG_DIR/etcd.log"
}

start_apiserver() {
  if pid_alive "$STATE_DIR/apiserver.pid"; then return 0; fi
  if port_in_use "$APISERVER_PORT"; then fail "start kube-apiserver: port $APISERVER_PORT is in use by another process (set NLC_APISERVER_PORT)" ""; fi
  log "starting kube-apiserver on https://127.0.0.1:$APISERVER_PORT"
  mkdir -p "$STATE_DIR/certs"
  local lane_flags=()
  # --insecure-port was removed in 1.24; 1.20 needs it set to 0 to serve only the secure port.
  if [ "$K8S_LANE" = 1.20 ]; then lane_flags+=(--insecure-port=0); fi
  # Since 1.3x the lease endpoint reconciler refuses a loopback advertise address ("may not be in
  # the loopback range"). Nothing here uses the `kubernetes` Service's endpoints, so switch it off.
  if [ "$K8S_LANE" != 1.20 ]; then lane_flags+=(--endpoint-reconciler-type=none); fi
  if [ -n "${NLC_AUDIT_POLICY_FILE:-}" ]; then
    [ -f "$NLC_AUDIT_POLICY_FILE" ] || fail "find the audit policy NLC_AUDIT_POLICY_FILE=$NLC_AUDIT_POLICY_FILE" ""
    # Blocking mode: an event is on disk before the response is sent, so a test that reads the log
    # after a write's answer finds it there.
    lane_flags+=(--audit-policy-file="$NLC_AUDIT_POLICY_FILE" --audit-log-path="$LOG_DIR/audit.log"
      --audit-log-mode=blocking --audit-log-format=json --audit-log-maxsize=0)
  fi
  # Supervised: kube-apiserver 1.20 built with Debian's Go 1.19 has been seen to die of a SIGSEGV in
  # the Go runtime's map iteration after hours under load. A crash becomes a short outage (clients
  # reconnect) instead of a dead cluster for the rest of a test run. `down` stops the whole group.
  setsid bash -c 'while :; do "$@"; echo "[control-plane] kube-apiserver exited with status $?; restarting in 1 s" >&2; sleep 1; done' \
    supervise "$BIN_DIR/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" "${lane_flags[@]}" \
    --advertise-address=127.0.0.1 \
    --cert-dir="$STATE_DIR/certs" \
    --token-auth-file="$STATE_DIR/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-key-file="$STATE_DIR/pki/sa.pub" \
    --service-account-signing-key-file="$STATE_DIR/pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 \
    --max-requests-inflight=1000 --max-mutating-requests-inflight=500 \
    --watch-cache=true --event-ttl=1h \
    >"$LOG_DIR/kube-apiserver.log" 2>&1 </dev/null &
  echo $! >"$STATE_DIR/apiserver.pid"
}

wait_ready() {
  local start=$SECONDS
  while [ $((SECONDS - start)) -lt 90 ]; do
    if apiserver_ready; then log "kube-apiserver ready after $((SECONDS - start)) s"; return 0; fi
    pid_alive "$STATE_DIR/apiserver.pid" || fail "wait for kube-apiserver /readyz (process exited)" "$LOG_DIR/kube-apiserver.log"
    sleep 0.5
  done
  fail "wait for kube-apiserver /readyz (not ready after 90 s)" "$LOG_DIR/kube-apiserver.log"
}

bootstrap_objects() {
  # No controller-manager runs, so nothing creates the default ServiceAccount that pods need.
  local kc="$STATE_DIR/kubeconfig"
  for _ in $(seq 1 20); do
    if kubectl --kubeconfig "$kc" -n default get serviceaccount default >/dev/null 2>&1; then return 0; fi
    kubectl --kubeconfig "$kc" -n default create serviceaccount default >>"$LOG_DIR/bootstrap.log" 2>&1 && return 0
    sleep 0.5
  done
  fail "create default ServiceAccount" "$LOG_DIR/bootstrap.log"
}

cmd_up() {
  cmd_install
  mkdir -p "$STATE_DIR" "$LOG_DIR"
  if apiserver_ready && pid_alive "$STATE_DIR/apiserver.pid"; then
    write_kubeconfig
    log "already up: export KUBECONFIG=$STATE_DIR/kubeconfig"
    return 0
  fi
  [ -x "$(command -v "$(etcd_bin)")" ] || fail "find etcd ($(etcd_bin))" ""
  command -v kubectl >/dev/null || fail "find kubectl on PATH" ""
  gen_credentials
  start_etcd
  start_apiserver
  wait_ready
  write_kubeconfig
  bootstrap_objects
  log "up: export KUBECONFIG=$STATE_DIR/kubeconfig"
}

stop_pidfile() { # stop_pidfile FILE NAME — stops the process group the pid leads (setsid)
  local f="$1"
  if pid_alive "$f"; then
    local pid; pid="$(cat "$f")"
    kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null || true
    log "stopped $2 (pid $pid)"
  fi
  rm -f "$f"
}

cmd_down() {
  stop_pidfile "$STATE_DIR/apiserver.pid" kube-apiserver
  stop_pidfile "$STATE_DIR/etcd.pid" etcd
  rm -rf "$STATE_DIR/etcd-data"
  log "down"
}

# stop-apiserver / start-apiserver: used by tests that prove the controller survives an API outage.
cmd_stop_apiserver() { stop_pidfile "$STATE_DIR/apiserver.pid" kube-apiserver; }
cmd_start_apiserver() { start_apiserver; wait_ready; }

cmd_status() {
  local ok=0
  if pid_alive "$STATE_DIR/etcd.pid"; then echo "etcd: running (pid $(cat "$STATE_DIR/etcd.pid"), 127.0.0.1:$ETCD_PORT)"; else echo "etcd: stopped"; ok=1; fi
  if pid_alive "$STATE_DIR/apiserver.pid"; then
    if apiserver_ready; then echo "kube-apiserver: ready (https://127.0.0.1:$APISERVER_PORT)"; else echo "kube-apiserver: running, not ready"; ok=1; fi
  else echo "kube-apiserver: stopped"; ok=1; fi
  echo "lane: $K8S_VERSION (NLC_K8S_VERSION=$K8S_LANE)"
  if binary_cached kube-apiserver; then echo "binary: $BIN_DIR/kube-apiserver (cached)"; else echo "binary: not built yet"; fi
  [ -f "$STATE_DIR/kubeconfig" ] && echo "kubeconfig: $STATE_DIR/kubeconfig"
  return $ok
}

main() {
  local cmd="${1:-}"; shift || true
  case "$cmd" in
    install) cmd_install "$@" ;;
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) echo "export KUBECONFIG=$STATE_DIR/kubeconfig" ;;
    kubeconfig) echo "$STATE_DIR/kubeconfig" ;;
    version) echo "$K8S_VERSION" ;;
    lanes) printf '%s\n' "$LANES" ;;
    bin) echo "$BIN_DIR/${1:?usage: $0 bin NAME}" ;;
    etcd-args) etcd_durability_args ;;
    stop-apiserver) cmd_stop_apiserver ;;
    start-apiserver) cmd_start_apiserver ;;
    *) echo "usage: $0 {install [--with-kcm]|up|down|status|env|kubeconfig|version|lanes|bin NAME|etcd-args|stop-apiserver|start-apiserver} (lane: NLC_K8S_VERSION=$(cut -d' ' -f1 <<<"$LANES" | paste -sd'|'))" >&2; exit 2 ;;
  esac
}

# Sourcing the file (as tests do for single steps) defines the functions without running main.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
