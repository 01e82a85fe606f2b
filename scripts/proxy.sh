#!/usr/bin/env bash
# Starts and stops a caching reverse proxy (nginx or Varnish) in front of the publisher on a
# machine without Docker, from Debian's packages and the templates in docker/.
#
#   scripts/proxy.sh start  nginx|varnish --upstream 127.0.0.1:8080 [--upstream HOST:PORT ...] --port 8081 --dir DIR
#                           [--listen 127.0.0.1] [--access-log FILE] [--varnish-storage malloc,64m]
#   scripts/proxy.sh stop   nginx|varnish --dir DIR
#   scripts/proxy.sh status nginx|varnish --dir DIR
#   scripts/proxy.sh render nginx|varnish --upstream HOST:PORT --port PORT --dir DIR
#   scripts/proxy.sh render nginx|varnish --docker
#
# --upstream: a publisher instance; nginx takes several (instances sharing a log in Valkey or
#   Redis), one `server` of its upstream each; Varnish takes one.
# start: installs the package when the binary is missing (apt-get, as root), renders the template
#   into DIR, checks the configuration (nginx -t, varnishd -C), starts the proxy as a daemon
#   with its pid file in DIR, waits (at most ~10 s) until the port accepts connections and
#   prints the pid on standard output. Everything else goes to standard error.
# stop: SIGTERM (nginx: fast shutdown, so open SSE streams do not hold it), waits for the
#   process to exit (SIGKILL to its process group after ~10 s), removes nothing but the pid file.
#   Stopping a proxy that is not running is not an error.
# status: prints the pid if the proxy runs (exit 0), else exit 1.
# render: prints the configuration that start would use, without starting anything; with
#   --docker, the configuration with the values of docker/docker-compose.yml instead
#   (docker/nginx/nginx.conf is `scripts/proxy.sh render nginx --docker`).
# Exit status: 0 on success, 1 on failure, 2 on a usage error; failures say why on stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly NGINX_TEMPLATE="$ROOT/docker/nginx/nginx.conf.template"
readonly VARNISH_TEMPLATE="$ROOT/docker/varnish/default.vcl.template"
readonly WAIT_TRIES=100 # x 0.1 s
export DEBIAN_FRONTEND=noninteractive

die() {
  printf 'proxy.sh: %s\n' "$*" >&2
  exit 1
}

usage() {
  sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

log() {
  printf 'proxy.sh: %s\n' "$*" >&2
}

apt_updated=false
# ensure_command COMMAND PACKAGE: installs PACKAGE from Debian when COMMAND is missing.
ensure_command() {
  local command=$1 package=$2
  command -v "$command" >/dev/null 2>&1 && return 0
  [[ $(id -u) -eq 0 ]] || die "$command is missing; install the Debian package '$package' (as root: apt-get install -y $package)"
  command -v apt-get >/dev/null 2>&1 || die "$command is missing and apt-get is not available to install '$package'"
  if [[ $apt_updated == false ]]; then
    log "apt-get update"
    apt-get update -qq >&2 || die "apt-get update failed"
    apt_updated=true
  fi
  log "apt-get install -y $package"
  # RUNLEVEL=1: the package's service must not start on its default port.
  RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "$package" >&2 \
    || die "apt-get install -y $package failed"
  command -v "$command" >/dev/null 2>&1 || die "$command is still missing after installing '$package'"
}

# sed_escape VALUE: VALUE as a sed replacement for the delimiter |.
sed_escape() {
  printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'
}

# render TEMPLATE NAME=VALUE...: replaces ${NAME} in TEMPLATE (the only form the templates use;
# like envsubst with an explicit SHELL-FORMAT, nothing else is touched) and prints the result.
render_template() {
  local template=$1 pair name value
  shift
  [[ -r $template ]] || die "template not found: $template"
  local args=()
  for pair in "$@"; do
    name=${pair%%=*}
    value=${pair#*=}
    [[ $value != *$'\n'* ]] || die "$name must not contain a newline"
    args+=(-e "s|\\\${$name}|$(sed_escape "$value")|g")
  done
  sed "${args[@]}" "$template"
}

# port_open HOST PORT: whether a TCP connection to HOST:PORT succeeds (within 1 s).
port_open() {
  # shellcheck disable=SC2016 # $1 and $2 are expanded by the inner bash
  timeout 1 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# alive PID NAME: whether PID is a running process whose command mentions NAME.
alive() {
  local pid=$1 name=$2
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # a zombie has exited
  [[ $(ps -o stat= -p "$pid" 2>/dev/null) != Z* ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$name"
}

# group_alive PGID: whether a process of group PGID is still running (zombies have exited: the
# daemons' parent, often the machine's init, may take a moment to reap them).
group_alive() {
  # shellcheck disable=SC2009 # pgrep counts zombies
  ps -o stat= -g "$1" 2>/dev/null | grep -q -v '^Z'
}

read_pid() {
  local file=$1
  [[ -s $file ]] || return 1
  tr -d '[:space:]' <"$file"
}

# ---------------------------------------------------------------------------------------------

proxy="" command="" upstreams=() port="" dir="" listen="127.0.0.1" access_log="off" docker=false
varnish_storage="malloc,64m"

parse_args() {
  [[ $# -ge 2 ]] || usage
  command=$1 proxy=$2
  shift 2
  case $command in start | stop | status | render) ;; *) usage ;; esac
  case $proxy in nginx | varnish) ;; *) usage ;; esac
  if [[ $command == render && $# -eq 1 && $1 == --docker ]]; then
    docker=true
    return 0
  fi
  while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { log "$1 needs a value"; usage; }
    case $1 in
      --upstream) upstreams+=("$2") ;;
      --port) port=$2 ;;
      --dir) dir=$2 ;;
      --listen) listen=$2 ;;
      --access-log) access_log=$2 ;;
      --varnish-storage) varnish_storage=$2 ;;
      *) log "unknown option: $1"; usage ;;
    esac
    shift 2
  done
  [[ -n $dir ]] || { log "--dir is required"; usage; }
  if [[ $command == start || $command == render ]]; then
    [[ ${#upstreams[@]} -gt 0 && -n $port ]] || { log "--upstream and --port are required"; usage; }
    if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
      die "--port must be a TCP port, got '$port'"
    fi
    [[ $proxy == nginx || ${#upstreams[@]} -eq 1 ]] || die "varnish takes one --upstream (its VCL has one backend)"
    local upstream
    for upstream in "${upstreams[@]}"; do
      [[ $upstream =~ ^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]+)$ ]] \
        || die "--upstream must be HOST:PORT, got '$upstream'"
    done
    # Varnish's one backend.
    upstream_host=${BASH_REMATCH[1]}
    upstream_port=${BASH_REMATCH[2]}
  fi
  if [[ $command != render ]]; then
    mkdir -p "$dir" || die "cannot create $dir"
    # Started as root, nginx's workers run as an unprivileged user: they must be able to reach
    # the cache under DIR even when DIR was made private (mktemp -d, mkdtemp: mode 700).
    if [[ $command == start && $(id -u) -eq 0 ]]; then
      chmod a+x "$dir" || die "cannot make $dir traversable"
    fi
  fi
  dir=$(realpath -m -- "$dir") || die "bad --dir: $dir"
  pid_file="$dir/$proxy.pid"
}

listen_address() {
  if [[ $listen == *:* ]]; then printf '[%s]:%s' "$listen" "$port"; else printf '%s:%s' "$listen" "$port"; fi
}

# upstream_servers HOST:PORT...: nginx `server` directives, one per publisher instance, on one line.
upstream_servers() {
  local upstream servers=()
  for upstream in "$@"; do servers+=("server $upstream;"); done
  printf '%s' "${servers[*]}"
}

render_nginx() {
  local access=$access_log
  [[ $access == off ]] || access="$access rdf_stream"
  render_template "$NGINX_TEMPLATE" \
    "PUBLISHER_SERVERS=$(upstream_servers "${upstreams[@]}")" \
    "NGINX_PORT=$(listen_address)" \
    "NGINX_CACHE_DIR=$dir/nginx" \
    "NGINX_PID_FILE=$pid_file" \
    "NGINX_ERROR_LOG=$dir/nginx-error.log" \
    "NGINX_ACCESS_LOG=$access"
}

# The values of docker/docker-compose.yml.
render_docker() {
  case $proxy in
    nginx)
      cat <<'HEADER'
# GENERATED by `scripts/proxy.sh render nginx --docker` from nginx.conf.template, with the values
# of docker-compose.yml: for use without the template machinery (e.g. mounted as
# /etc/nginx/nginx.conf in the nginx:1.27 image, the publisher reachable as publisher:8080).
# Do not edit: change the template and regenerate.

HEADER
      render_template "$NGINX_TEMPLATE" \
        "PUBLISHER_SERVERS=$(upstream_servers publisher:8080)" \
        "NGINX_PORT=8081" \
        "NGINX_CACHE_DIR=/var/cache/nginx/rdf-stream" \
        "NGINX_PID_FILE=/var/run/nginx.pid" \
        "NGINX_ERROR_LOG=/dev/stderr" \
        "NGINX_ACCESS_LOG=off"
      ;;
    varnish)
      render_template "$VARNISH_TEMPLATE" "PUBLISHER_HOST=publisher" "PUBLISHER_PORT=8080"
      ;;
  esac
}

render_varnish() {
  local host=${upstream_host#[}
  host=${host%]}
  render_template "$VARNISH_TEMPLATE" "PUBLISHER_HOST=$host" "PUBLISHER_PORT=$upstream_port"
}

wait_for_port() {
  local pid=$1 i
  for ((i = 0; i < WAIT_TRIES; i++)); do
    if port_open "$listen" "$port"; then
      return 0
    fi
    alive "$pid" "$2" || return 1
    sleep 0.1
  done
  return 1
}

start_nginx() {
  ensure_command nginx nginx
  local conf="$dir/nginx.conf" error_log="$dir/nginx-error.log"
  # Every start begins with an empty cache (varnishd's malloc storage is empty anyway).
  rm -rf "$dir/nginx/cache"
  mkdir -p "$dir/nginx"
  render_nginx >"$conf"
  # -e: the error log used before the configuration is read (nginx >= 1.19.5)
  local early_log=()
  if nginx -h 2>&1 | grep -q -- '-e filename'; then early_log=(-e "$error_log"); fi
  local output
  output=$(nginx -t -q -p "$dir" -c "$conf" "${early_log[@]}" 2>&1) \
    || die "nginx rejected $conf: $output"
  [[ -z $output ]] || log "$output"
  output=$(nginx -p "$dir" -c "$conf" "${early_log[@]}" 2>&1) \
    || die "nginx failed to start: $output (see $error_log)"
  local pid i
  for ((i = 0; i < WAIT_TRIES; i++)); do
    pid=$(read_pid "$pid_file") && alive "$pid" nginx && break
    pid=""
    sleep 0.1
  done
  [[ -n $pid ]] || die "nginx did not write its pid file $pid_file (see $error_log)"
  if ! wait_for_port "$pid" nginx; then
    local tail_log
    tail_log=$(tail -n 5 "$error_log" 2>/dev/null || true)
    stop_proxy >/dev/null 2>&1 || true
    die "nginx (pid $pid) does not accept connections on $(listen_address): $tail_log"
  fi
  printf '%s\n' "$pid"
}

start_varnish() {
  ensure_command varnishd varnish
  local vcl="$dir/default.vcl" workdir="$dir/varnish" output
  render_varnish >"$vcl"
  # backend_idle_timeout (below): idle connections to the publisher are closed before the
  # publisher's own keep-alive timeout (keepAliveTimeoutMs, 65 s by default) closes them under a request.
  # Run as root, varnishd's default jail hands the VCL and its working directory to its own
  # users (varnish, vcache), who cannot reach a DIR under a private directory (mktemp -d is
  # 0700): without a jail (-j none) it runs as the caller, like nginx here (loopback only).
  local jail=()
  if [[ $(id -u) -eq 0 ]]; then jail=(-j none); fi
  output=$(varnishd "${jail[@]}" -C -f "$vcl" -n "$workdir" 2>&1 >/dev/null) \
    || die "varnishd rejected $vcl: $output"
  output=$(varnishd "${jail[@]}" -a "$(listen_address)" -f "$vcl" -n "$workdir" -P "$pid_file" \
    -s "$varnish_storage" -p backend_idle_timeout=4 2>&1) \
    || die "varnishd failed to start: $output"
  local pid i
  for ((i = 0; i < WAIT_TRIES; i++)); do
    pid=$(read_pid "$pid_file") && alive "$pid" varnishd && break
    pid=""
    sleep 0.1
  done
  [[ -n $pid ]] || die "varnishd did not write its pid file $pid_file: $output"
  if ! wait_for_port "$pid" varnishd; then
    stop_proxy >/dev/null 2>&1 || true
    die "varnishd (pid $pid) does not accept connections on $(listen_address)"
  fi
  printf '%s\n' "$pid"
}

start_proxy() {
  local pid
  if pid=$(read_pid "$pid_file") && alive "$pid" "$(binary_name)"; then
    die "$proxy is already running with pid $pid (state in $dir); stop it first"
  fi
  rm -f "$pid_file"
  if port_open "$listen" "$port"; then
    die "port $port on $listen is already in use"
  fi
  case $proxy in
    nginx) start_nginx ;;
    varnish) start_varnish ;;
  esac
}

binary_name() {
  case $proxy in nginx) echo nginx ;; varnish) echo varnishd ;; esac
}

stop_proxy() {
  local pid name i
  name=$(binary_name)
  if ! pid=$(read_pid "$pid_file") || ! alive "$pid" "$name"; then
    log "$proxy is not running (no live pid in $pid_file)"
    rm -f "$pid_file"
    return 0
  fi
  # The master (nginx) and the manager (varnishd) stop their workers and children on SIGTERM.
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < WAIT_TRIES; i++)); do
    alive "$pid" "$name" || break
    sleep 0.1
  done
  if alive "$pid" "$name"; then
    log "$proxy (pid $pid) still running after SIGTERM: sending SIGKILL to its process group"
    # Both daemons call setsid(): their process group id is their pid.
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
      alive "$pid" "$name" || break
      sleep 0.1
    done
    ! alive "$pid" "$name" || die "$proxy (pid $pid) did not exit"
  fi
  # Workers or the cache child may outlive their parent by a moment.
  for ((i = 0; i < WAIT_TRIES; i++)); do
    group_alive "$pid" || break
    sleep 0.1
  done
  if group_alive "$pid"; then
    log "processes of group $pid still running: sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file"
  log "$proxy (pid $pid) stopped"
}

status_proxy() {
  local pid
  if pid=$(read_pid "$pid_file") && alive "$pid" "$(binary_name)"; then
    printf '%s\n' "$pid"
    return 0
  fi
  log "$proxy is not running"
  return 1
}

main() {
  parse_args "$@"
  case $command in
    start) start_proxy ;;
    stop) stop_proxy ;;
    status) status_proxy ;;
    render)
      if [[ $docker == true ]]; then
        render_docker
        return 0
      fi
      case $proxy in
        nginx) render_nginx ;;
        varnish) render_varnish ;;
      esac
      ;;
  esac
}

main "$@"
