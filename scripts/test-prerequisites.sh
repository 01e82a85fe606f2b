#!/usr/bin/env bash
# What the test suite needs from the machine besides Node and the npm packages: the programs
# its integration tests start for real (never mocks), from Debian's packages.
#
#   scripts/test-prerequisites.sh          install what is missing (as root, with apt-get), start the
#                                          MQTT broker, print what the suite will use
#   scripts/test-prerequisites.sh --check  install nothing: exit 1 with the apt-get line when
#                                          something is missing
#
# `pnpm test` runs it first, and CI (.ci/run) runs the same script, so a green CI proves the
# README's test command on a fresh machine. Nothing is skipped: when a program is missing and
# cannot be installed here (not root, or no apt-get), it stops before any test, with the exact
# command to run.
#
# | program           | Debian package | used by                                                         |
# |-------------------|----------------|-----------------------------------------------------------------|
# | chromium          | chromium       | the live page's browser tests (playwright-core drives it)       |
# | nginx             | nginx          | polling through a real cache (bench), the proxy configurations  |
# | ngx_nchan_module  | libnginx-mod-nchan | the bench's SSE peer (--peer nchan): nginx + nchan for real |
# |   (a file: /usr/lib/nginx/modules/ngx_nchan_module.so, checked as such)                              |
# | envsubst          | gettext-base   | the nginx template rendered as the official nginx image does    |
# | varnishd          | varnish        | the same, through Varnish                                       |
# | mosquitto         | mosquitto      | the MQTT source's tests (a broker on 127.0.0.1:1883, and private ones) |
# | mosquitto_passwd  | mosquitto      | an MQTT broker that requires a password                         |
# | valkey-server     | valkey-server  | the shared log (Redis Streams), private servers with AOF on     |
# |                   |                | (Debian 12: from bookworm-backports, added when missing)        |
# | redis-server      | redis-server   | a server older than 7.2 (Debian 12's 7.0), which the publisher refuses |
# | ss                | iproute2       | the listen backlog the kernel applies                           |
# | pgrep             | procps         | the cluster's worker processes                                  |
#
# Exit status: 0 when everything is there, 1 when something is missing or failed to install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
export DEBIAN_FRONTEND=noninteractive

check_only=false
case "${1:-}" in
  '') ;;
  --check) check_only=true ;;
  *)
    sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

log() { printf 'test-prerequisites: %s\n' "$*" >&2; }

# program → Debian package, in the order the table above gives them.
# An entry with a slash is a file that must exist (an nginx module), not a program on PATH.
readonly nchan_module=/usr/lib/nginx/modules/ngx_nchan_module.so
readonly programs=(chromium nginx "$nchan_module" envsubst varnishd mosquitto mosquitto_passwd valkey-server redis-server ss pgrep)
declare -A package_of=(
  [chromium]=chromium [nginx]=nginx [$nchan_module]=libnginx-mod-nchan [envsubst]=gettext-base [varnishd]=varnish [mosquitto]=mosquitto
  [mosquitto_passwd]=mosquitto [valkey-server]=valkey-server [redis-server]=redis-server [ss]=iproute2 [pgrep]=procps
)

# Debian puts some daemons in /usr/sbin, which is not on every user's PATH.
found() {
  if [[ $1 == */* ]]; then
    [[ -f $1 ]]
    return
  fi
  command -v "$1" >/dev/null 2>&1 || [[ -x "/usr/sbin/$1" || -x "/usr/bin/$1" ]]
}

missing_packages() {
  local program packages=()
  for program in "${programs[@]}"; do
    found "$program" || packages+=("${package_of[$program]}")
  done
  # Unique, in order.
  printf '%s\n' "${packages[@]}" | awk 'NF && !seen[$0]++' | paste -sd' ' -
}

missing=$(missing_packages)
if [[ -n $missing ]]; then
  install_line="apt-get update && apt-get install -y $missing"
  if [[ $check_only == true ]]; then
    log "missing Debian packages: $missing"
    log "install them with: $install_line"
    exit 1
  fi
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "the tests start real programs that this machine lacks (Debian packages: $missing)"
    if command -v apt-get >/dev/null 2>&1; then
      log "install them, then run the tests again: sudo sh -c '$install_line'"
    else
      log "this is not a Debian or Ubuntu machine (no apt-get): install the same programs with your package manager"
    fi
    exit 1
  fi
  log "installing Debian packages: $missing"
  # Valkey is in Debian from 13 (trixie) on; Debian 12 (bookworm) has it in its backports.
  if [[ " $missing " == *" valkey-server "* ]] && grep -qs '^VERSION_CODENAME=bookworm$' /etc/os-release \
    && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    log "adding Debian's bookworm-backports (valkey-server)"
    echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/bookworm-backports.list
  fi
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  # RUNLEVEL=1: the packages' own services (nginx on :80, varnish on :6081, mosquitto on :1883)
  # must not start; the tests start each program themselves, on their own ports.
  # --no-install-recommends for Varnish only: its recommends are a C toolchain's extras, whereas
  # chromium's bring the fonts its pages are drawn with.
  read -r -a wanted <<<"$missing"
  with_recommends=()
  for package in "${wanted[@]}"; do
    [[ $package == varnish ]] && continue
    # Backports are never chosen by default: ask for them by name where they are the source.
    if [[ $package == valkey-server ]] && grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      package=valkey-server/bookworm-backports
    fi
    with_recommends+=("$package")
  done
  if [[ ${#with_recommends[@]} -gt 0 ]]; then
    RUNLEVEL=1 apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${with_recommends[@]}" >/dev/null
  fi
  if [[ " ${wanted[*]} " == *" varnish "* ]]; then
    RUNLEVEL=1 apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends varnish >/dev/null
  fi
  still_missing=$(missing_packages)
  if [[ -n $still_missing ]]; then
    log "apt-get installed, yet these are still missing: $still_missing"
    exit 1
  fi
fi

if [[ $check_only == false ]]; then
  # The MQTT source's tests connect to a broker on 127.0.0.1:1883 (and start private ones).
  "$ROOT/scripts/mosquitto.sh" ensure >&2
fi

version() { "$@" 2>&1 | head -n 1; }
# (Debian's chromium launcher prints a shell warning on stderr before its version.)
log "chromium: $(chromium --version 2>/dev/null | head -n 1)"
log "nginx: $(version nginx -v)"
log "nchan: $(dpkg-query -W -f='${Version}' libnginx-mod-nchan 2>/dev/null || echo "$nchan_module")"
log "varnish: $(version varnishd -V)"
log "mosquitto: $(version /usr/sbin/mosquitto -h | sed -n 1p)"
log "valkey: $(version valkey-server --version)"
log "redis: $(version redis-server --version)"
