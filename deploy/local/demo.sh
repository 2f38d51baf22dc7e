#!/usr/bin/env bash
# make demo: the whole loop on one machine, against a fake GitHub on loopback.
#   embedded Postgres → fake GitHub → relored cycle (the backfill) → relored clone
#   (deploy/local/demo/widgets) → relored rules load → deploy/local/loop.sh, the hourly loop
#   (relored cycle, dbt build, relored embed, relored index, dbt source freshness)
#   → relored serve → relore, every verb
# Safe to run again: the second run lands nothing new and rebuilds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

REPO="${RELORE_DEMO_REPO:-acme/widgets}"
THREADS="${RELORE_DEMO_THREADS:-60}"
PORT="${RELORE_DEMO_PORT:-8080}"
export RELORE_HOME="${RELORE_HOME:-$PWD/.relore}"
mkdir -p "$RELORE_HOME"
LOG="$RELORE_HOME/demo"
mkdir -p "$LOG"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

wait_for() {  # wait_for FILE PATTERN SECONDS
    for _ in $(seq 1 $(($3 * 10))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

fake_pid=""
cleanup() { [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null || true; }
trap cleanup EXIT

step "embedded Postgres"
relored db start

step "fake GitHub serving $REPO ($THREADS generated threads)"
# emptied here, not by the background job's redirection (which may run after wait_for has
# read the last run's "listening on" line, and its port)
: >"$LOG/fake_github.out"
python tests/fixtures/fake_github.py --repo "$REPO" --threads "$THREADS" --seed 7 --port 0 \
    >"$LOG/fake_github.out" 2>"$LOG/fake_github.err" &
fake_pid=$!
wait_for "$LOG/fake_github.out" "listening on" 30 || fail "fake GitHub did not start: $(cat "$LOG/fake_github.err")"
api_url=$(grep -o 'http://127.0.0.1:[0-9]*' "$LOG/fake_github.out" | head -1)
echo "listening on $api_url"

export RELORE_GITHUB_API_URL="$api_url" GITHUB_TOKEN=demo-token
step "relored cycle --repo $REPO (its backfill, within the token's budget)"
relored cycle --repo "$REPO" --quiet

step "relored clone --repo $REPO (a small history this checkout ships: deploy/local/demo/widgets/)"
# Built anew each run from the same patches, dates and author: the same commits, so the
# clone's fetch brings nothing new the second time.
SRC="$LOG/widgets-src"
rm -rf "$SRC"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1  # no template, hook or identity of yours
git init --quiet --initial-branch=main "$SRC"
GIT_COMMITTER_NAME="Ann Author" GIT_COMMITTER_EMAIL=ann@example.com \
    git -C "$SRC" am --quiet --committer-date-is-author-date "$PWD"/deploy/local/demo/widgets/*.patch \
    || fail "could not build the demo's history in $SRC"
relored clone --repo "$REPO" --url "$SRC" 2>"$LOG/clone.err" || { cat "$LOG/clone.err"; fail "relored clone failed"; }
unset GIT_CONFIG_GLOBAL GIT_CONFIG_NOSYSTEM

step "relored rules load --repo $REPO deploy/local/demo/rules.yaml"
relored rules load --repo "$REPO" deploy/local/demo/rules.yaml

step "deploy/local/loop.sh $REPO (what runs hourly: relored cycle, dbt build, embed, index)"
# The daily full check (every row) is for a deployment; the demo builds what changed.
RELORE_FULL_CHECK_HOUR=off DBT_LOG_PATH="$LOG/dbt-logs" deploy/local/loop.sh "$REPO" \
    >"$LOG/loop.out" 2>&1 || { cat "$LOG/loop.out"; fail "the loop failed"; }
grep -E "^(loop\.sh: |$REPO |budget |cycle )" "$LOG/loop.out"
echo "the loop: ok (its output in $LOG/loop.out, dbt's log in $LOG/dbt-logs/dbt.log)"

step "relored serve on 127.0.0.1:$PORT"
bash deploy/local/demo_stop.sh   # the previous demo's daemon
if python - "$PORT" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is not "taken"
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
PY
then :; else
    PORT=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    echo "port ${RELORE_DEMO_PORT:-8080} is taken; using $PORT"
fi
export RELORE_API="http://127.0.0.1:$PORT"
: >"$LOG/serve.log"  # the last run's "listening on" must not answer wait_for
nohup relored serve --port "$PORT" >"$LOG/serve.log" 2>&1 &
echo $! >"$RELORE_HOME/serve.pid"
wait_for "$LOG/serve.log" "listening on" 30 || fail "relored serve did not start: $(cat "$LOG/serve.log")"
for _ in $(seq 1 50); do
    python -c "import urllib.request,sys; urllib.request.urlopen('$RELORE_API/healthz', timeout=1)" 2>/dev/null && break
    sleep 0.2
done

step "relore search \"AttributeError\" --repo $REPO --limit 3"
relore search "AttributeError" --repo "$REPO" --limit 3

QUESTION="my app keeps eating more RAM the longer its reused sockets stay open"
step "relore search \"$QUESTION\" --repo $REPO --limit 3   (in other words than the threads')"
relore search "$QUESTION" --repo "$REPO" --limit 3

step "relore status"
relore status

# The last screen: one answer from each verb (the demo's test checks every one is here).
step "relore thread $REPO#3 --outline"
relore thread "$REPO#3" --outline --limit 3
step "relore inflight $REPO#3   (the pull requests that claim to close it)"
relore inflight "$REPO#3"
step "relore rules importlib/readers.py --repo $REPO --task ..."
relore rules importlib/readers.py --repo "$REPO" --task "open resources by path" --refresh --session demo
step "relore why importlib/readers.py:6 --repo $REPO   (from the clone)"
relore why importlib/readers.py:6 --repo "$REPO"
step "relore symbol WidgetEncoder --repo $REPO"
relore symbol WidgetEncoder --repo "$REPO"
step "relore grep guess_type --repo $REPO"
relore grep guess_type --repo "$REPO" --limit 3
step "relore copies encode_basestring --repo $REPO"
relore copies encode_basestring --repo "$REPO"
step "relore map serve --limit 5   (offline, over this checkout's own tree)"
relore map serve --limit 5
step "relore defs create_app serve"
relore defs create_app serve --limit 3
step "relore refs relore_home --limit 3"
relore refs relore_home --limit 3

BIN="$(dirname "$(command -v relore)")"
cat <<EOF

The daemon keeps running (pid $(cat "$RELORE_HOME/serve.pid"), log $LOG/serve.log).
Put relore and relored on your PATH (this shell and its children), then try:
  . $BIN/activate
  export RELORE_API=$RELORE_API RELORE_HOME=$RELORE_HOME
  relore search "Traceback KeyError" --repo $REPO
  relore search "how to configure" --repo $REPO --json
  relore thread $REPO#1
  relore why json/decoder.py:7 --repo $REPO
  relore status --json
  psql "\$(relored db url --reader)" -c 'select number, kind, display_state, title from marts.threads limit 5'
  (SQL for analysts: docs/analysts.md)
Stop everything with: deploy/local/demo_stop.sh; relored db stop   (make clean also removes $RELORE_HOME)
EOF
