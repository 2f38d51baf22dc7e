#!/usr/bin/env bash
# Stop the daemon `make demo` started, if it still runs: its pid is $RELORE_HOME/serve.pid
# (default ./.relore, as demo.sh sets it). `make clean` runs this before it removes the home
# (else the daemon outlives its pid file, the next demo moves to another port and a user on
# the default RELORE_API talks to the orphan), and demo.sh before it starts another.
# A pid the system has since given to another process is never signalled.
set -uo pipefail
cd "$(dirname "$0")/../.."
home="${RELORE_HOME:-$PWD/.relore}"
pidfile="$home/serve.pid"
[ -f "$pidfile" ] || exit 0
pid=$(head -c 32 "$pidfile" | tr -d '[:space:]')
case "$pid" in
    '' | *[!0-9]*) rm -f "$pidfile"; exit 0 ;;
esac
if kill -0 "$pid" 2>/dev/null && ps -p "$pid" -o args= 2>/dev/null | grep -q 'relored serve'; then
    kill "$pid"
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null; fi
    echo "stopped the demo's daemon (relored serve, pid $pid)"
fi
rm -f "$pidfile"
