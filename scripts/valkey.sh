#!/usr/bin/env bash
# A private Valkey server for the shared log (the publisher's --log redis), as the bench starts it:
# its own port and directory, append-only file on, never the machine's shared server on 6379.
# scripts/test-prerequisites.sh installs valkey-server.
#   scripts/valkey.sh start <port> <dir> [appendfsync]   start it (appendfsync: everysec (default), always or no);
#                                                        prints its pid once it answers PING with its data loaded
#   scripts/valkey.sh stop <pidfile>                     SIGTERM (it writes its AOF), SIGKILL after 10 s
set -euo pipefail

HOST=127.0.0.1
SERVER=${VALKEY_SERVER:-/usr/bin/valkey-server}
# How long a start or a stop may take (tenths of a second).
readonly WAIT_TENTHS=100

# Exit 0 once the server answers +PONG (not -LOADING while it reads its AOF back).
pong() {
  local answer
  exec 3<>"/dev/tcp/${HOST}/$1" || return 1
  printf 'PING\r\n' >&3
  IFS= read -r -t 1 answer <&3 || answer=
  exec 3>&-
  [[ $answer == +PONG* ]]
}

case "${1:-}" in
  start)
    port=${2:?usage: $0 start <port> <dir> [appendfsync]}
    dir=${3:?usage: $0 start <port> <dir> [appendfsync]}
    appendfsync=${4:-everysec}
    if [[ $port == 6379 ]]; then
      echo "valkey: 6379 is the machine's shared server, not a private one" >&2
      exit 2
    fi
    case "$appendfsync" in always | everysec | no) ;; *)
      echo "valkey: appendfsync must be always, everysec or no, not ${appendfsync}" >&2
      exit 2
      ;;
    esac
    if [ ! -x "$SERVER" ]; then
      echo "valkey: ${SERVER} is missing: run scripts/test-prerequisites.sh" >&2
      exit 1
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    "$SERVER" --port "$port" --bind "$HOST" --dir "$dir" --appendonly yes --appendfsync "$appendfsync" \
      --save '' --daemonize yes --pidfile "${dir}/valkey.pid" --logfile "${dir}/valkey.log"
    for _ in $(seq 1 "$WAIT_TENTHS"); do
      if pong "$port" 2>/dev/null && [ -s "${dir}/valkey.pid" ]; then
        cat "${dir}/valkey.pid"
        exit 0
      fi
      sleep 0.1
    done
    echo "valkey: did not serve on ${HOST}:${port}; its log: $(tail -n 5 "${dir}/valkey.log" 2>/dev/null)" >&2
    exit 1
    ;;
  stop)
    pidfile=${2:?usage: $0 stop <pidfile>}
    [ -s "$pidfile" ] || exit 0
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || exit 0
    for _ in $(seq 1 "$WAIT_TENTHS"); do
      kill -0 "$pid" 2>/dev/null || exit 0
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    ;;
  *)
    echo "usage: $0 start <port> <dir> [appendfsync] | stop <pidfile>" >&2
    exit 2
    ;;
esac
