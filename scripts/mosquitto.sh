#!/usr/bin/env bash
# The MQTT broker the tests and examples/smart-city.yaml use: Mosquitto on 127.0.0.1:1883.
#   scripts/mosquitto.sh ensure   install it (Debian package) if missing, start it if nothing listens on 1883
#   scripts/mosquitto.sh status   exit 0 when the broker accepts connections
set -euo pipefail

HOST=127.0.0.1
PORT=1883

listening() { (exec 3<>"/dev/tcp/${HOST}/${PORT}") 2>/dev/null; }

case "${1:-}" in
  status)
    listening
    ;;
  ensure)
    if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ]; then
      apt-get update
      DEBIAN_FRONTEND=noninteractive apt-get install -y mosquitto mosquitto-clients
    fi
    if listening; then
      echo "mosquitto: listening on ${HOST}:${PORT}"
      exit 0
    fi
    conf=$(mktemp -d)/mosquitto.conf
    printf 'listener %s %s\nallow_anonymous true\npersistence false\n' "$PORT" "$HOST" >"$conf"
    /usr/sbin/mosquitto -d -c "$conf"
    for _ in $(seq 1 50); do
      if listening; then
        echo "mosquitto: started on ${HOST}:${PORT}"
        exit 0
      fi
      sleep 0.1
    done
    echo "mosquitto: did not start on ${HOST}:${PORT}" >&2
    exit 1
    ;;
  *)
    echo "usage: $0 ensure|status" >&2
    exit 2
    ;;
esac
