# shellcheck shell=bash disable=SC2034  # globals used by the sourcing scripts
# Shared helpers for scripts/run-local, scripts/test and bench/run. Source it; do not run it.
#
# After `common_init`, these are set (every PORTCULLIS_* variable of the environment wins):
#   REPO_ROOT  the repository            VAR_DIR  PORTCULLIS_VAR_DIR, default $REPO_ROOT/var
#   RUN_DIR    sockets and pid files     LOG_DIR  log files          SECRETS_DIR  0700 secrets
#   BUILD_DIR  PORTCULLIS_BUILD_DIR      BIN_DIR  PORTCULLIS_BIN_DIR, default $BUILD_DIR/handlers
#   PORT, LISTEN_ADDR, BASE_URL, WORKERS, DEMO_MCP_PORT, METRICS_PORT

REPO_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

# The worker families; each is a binary portcullis-<family> behind its own unix socket.
PORTCULLIS_FAMILIES=(wellknown oauth api scim sso admin)
# Every pool the local stack runs: the families, and the demo MCP server (contract §12), which
# starts last because it serves a resource registered through the running API.
# The webhook delivery process (portcullis-webhooks) has no socket; it is stopped with the pools.
PORTCULLIS_POOLS=("${PORTCULLIS_FAMILIES[@]}" demo-mcp webhooks)

log()  { printf '[%s] %s\n' "${LOG_TAG:-portcullis}" "$*" >&2; }
warn() { printf '[%s] warning: %s\n' "${LOG_TAG:-portcullis}" "$*" >&2; }
die()  { printf '[%s] error: %s\n' "${LOG_TAG:-portcullis}" "$*" >&2; exit 1; }

# Absolute path of a directory, created if needed.
abs_dir() { mkdir -p "$1" && (cd "$1" && pwd -P); }

common_init() {
  # nginx and mariadbd live in /usr/sbin, which a non-root PATH may lack.
  PATH=$PATH:/usr/sbin:/sbin
  REPO_ROOT=$(cd "$REPO_LIB/../.." && pwd -P)
  VAR_DIR=$(abs_dir "${PORTCULLIS_VAR_DIR:-$REPO_ROOT/var}")
  RUN_DIR=$VAR_DIR/run
  LOG_DIR=$VAR_DIR/log
  SECRETS_DIR=$VAR_DIR/secrets
  local build=${PORTCULLIS_BUILD_DIR:-$REPO_ROOT/build}
  case $build in /*) ;; *) build=$PWD/$build ;; esac
  BUILD_DIR=$build
  BIN_DIR=${PORTCULLIS_BIN_DIR:-$BUILD_DIR/handlers}
  PORT=${PORTCULLIS_PORT:-8080}
  LISTEN_ADDR=${PORTCULLIS_LISTEN_ADDR:-127.0.0.1}
  BASE_URL=${PORTCULLIS_BASE_URL:-http://127.0.0.1:$PORT}
  BASE_URL=${BASE_URL%/}
  # Twice the cores: a libfcgi worker idles through each close handshake (bench/README.md).
  WORKERS=${PORTCULLIS_WORKERS:-$(($(nproc) * 2))}
  DEMO_MCP_PORT=${PORTCULLIS_DEMO_MCP_PORT:-8081}
  # /metrics, loopback only: the stack's port + 2 unless set (scripts/test lists every port a test stack uses).
  METRICS_PORT=${PORTCULLIS_METRICS_PORT:-$((PORT + 2))}
  [[ $PORT =~ ^[0-9]+$ ]] || die "PORTCULLIS_PORT must be a number, got '$PORT'"
  [[ $METRICS_PORT =~ ^[0-9]+$ ]] || die "PORTCULLIS_METRICS_PORT must be a number, got '$METRICS_PORT'"
  [[ $DEMO_MCP_PORT =~ ^[0-9]+$ ]] || die "PORTCULLIS_DEMO_MCP_PORT must be a number, got '$DEMO_MCP_PORT'"
  [[ $DEMO_MCP_PORT != "$PORT" ]] || die "PORTCULLIS_DEMO_MCP_PORT must differ from PORTCULLIS_PORT ($PORT)"
  [[ $WORKERS =~ ^[1-9][0-9]*$ ]] || die "PORTCULLIS_WORKERS must be a positive number, got '$WORKERS'"
}

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# ensure_packages PKG... installs the Debian packages that are not installed yet.
# `apt-get update` runs once per process, and only when something is missing.
ensure_packages() {
  local missing=() p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [[ $status == installed ]] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing missing packages: ${missing[*]}"
  if [[ -z ${_PORTCULLIS_APT_UPDATED:-} ]]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    _PORTCULLIS_APT_UPDATED=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2
}

# What building and running the stack needs (Debian 12).
BUILD_PACKAGES=(build-essential cmake pkg-config libfcgi-dev libjsoncpp-dev libmysqlcppconn-dev liblasso3-dev
  libssl-dev libboost-test-dev libcurl4-openssl-dev)
RUNTIME_PACKAGES=(nginx mariadb-server mariadb-client curl jq openssl util-linux procps liblasso3)
# What bench/ needs besides (never installed for running or testing the service): the load
# generator of bench/run and bench/oauth-grants, and perf for the profiles of bench/compare.
BENCH_PACKAGES=(wrk linux-perf)

# pid_alive PIDFILE NAME: true when the pid in PIDFILE is a live process whose command line
# mentions NAME (so a recycled pid is never taken for ours). Prints the pid.
pid_alive() {
  local file=$1 name=$2 pid
  [[ -s $file ]] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$name" || return 1
  printf '%s\n' "$pid"
}

# wait_pid_gone PID SECONDS: waits until PID has exited; false on timeout.
wait_pid_gone() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    # A zombie has exited already; our parent reaps it (or PID 1 does, eventually).
    [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

# spawn_daemon PIDFILE LOGFILE CMD...: runs CMD in the background in its own session (it
# outlives this shell and ignores the terminal's signals), stdin from /dev/null, stdout and
# stderr appended to LOGFILE, and fd 9 (our lock) closed. PIDFILE gets CMD's pid: the inner
# shell writes its own pid, then execs CMD (setsid may or may not fork, so $! cannot say).
spawn_daemon() {
  local pidfile=$1 logfile=$2 i
  shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016  # $$ and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" \
    </dev/null >>"$logfile" 2>&1 9>&- &
  for ((i = 0; i < 100; i++)); do
    [[ -s $pidfile ]] && return 0
    sleep 0.02
  done
  die "could not start $1 (no pid after 2 s; see $logfile)"
}

# http_code URL: the HTTP status of a GET, 000 when nothing answered.
http_code() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$1" 2>/dev/null || true
}

# random_secret FILE KIND: creates FILE (0600) once with fresh random content.
# KIND is `hex` (48 hex digits, safe in SQL and config) or `base64-32` (a 256-bit key).
random_secret() {
  local file=$1 kind=$2
  [[ -s $file ]] && return 0
  (
    umask 077
    case $kind in
      hex) openssl rand -hex 24 >"$file.tmp" ;;
      base64-32) openssl rand -base64 32 >"$file.tmp" ;;
      *) die "random_secret: unknown kind $kind" ;;
    esac
    mv "$file.tmp" "$file"
  )
}

# tail_logs FILE...: the last lines of each existing file, to explain a failure.
tail_logs() {
  local f
  for f in "$@"; do
    [[ -s $f ]] || continue
    printf -- '--- last lines of %s\n' "$f" >&2
    tail -n 10 "$f" >&2
  done
}
