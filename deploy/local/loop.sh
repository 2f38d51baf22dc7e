#!/usr/bin/env bash
# relore's hourly loop: one `relored cycle` over every repository (each polled within the
# token's budget, least recently polled first; backfills with what is left, down to a
# reserve, resuming next hour where they stopped; `--authority` asks the write access of
# new authors unless RELORE_AUTHORITY=0), then one `dbt build`, `relored embed` (the
# semantic tier), `relored index` (the search index on this host; RELORE_INDEX=0 skips
# it), then `dbt source freshness`.
# The systemd timer, the cron line and the Kubernetes CronJob all run this script.
#
#   deploy/local/loop.sh [--dry-run] owner/name [owner/name ...]
#   RELORE_REPOS="owner/name other/repo" deploy/local/loop.sh
#
# Run it from the dbt project directory (the repository root, or the image's WORKDIR), or
# set RELORE_DBT_PROJECT_DIR. With no RELORE_DATABASE_URL it starts the embedded Postgres
# under $RELORE_HOME (idempotent). RELORE_AUTHORITY=0 leaves new authors' write access
# unasked (it needs a token with push access; a backfill still asks once). --dry-run prints
# the commands and runs none.
# RELORE_FRESHNESS_STRICT=1 makes a stale `dbt source freshness` fail the run.
# Once a day, the run starting in hour RELORE_FULL_CHECK_HOUR (UTC, 0-23; default 3; `off`
# never) builds with its data tests and secret scan reading every row, not only what builds
# wrote since they last passed: a mart row changed by hand is caught within a day. The dbt
# unit tests (fixed inputs, no data read) check the SQL, which only changes with a deploy:
# the other runs leave them out (1-2 s of every build) and the daily run keeps them, so a
# Postgres or dbt upgrade on the host is checked within a day too.
#
# Exit status: 0 all done; 3 a backfill or poll goes on next cycle (the budget ran out, or a
# pass stopped part-way: what landed was built; the next run resumes from the marks); 1 a
# step failed (the others still ran: one repository's failure does not keep the rest
# stale); 2 usage. `relore status` and `relored doctor` say which repository is behind.
set -euo pipefail

dry_run=0
if [ "${1:-}" = "--dry-run" ]; then
    dry_run=1
    shift
fi
repos=("$@")
if [ "${#repos[@]}" -eq 0 ] && [ -n "${RELORE_REPOS:-}" ]; then
    read -r -a repos <<<"$RELORE_REPOS"
fi
if [ "${#repos[@]}" -eq 0 ]; then
    echo "usage: loop.sh [--dry-run] owner/name [owner/name ...]  (or set RELORE_REPOS)" >&2
    exit 2
fi
for repo in "${repos[@]}"; do
    case "$repo" in
    */*) ;;
    *)
        echo "loop.sh: expected owner/name, got '$repo'" >&2
        exit 2
        ;;
    esac
done

check_hour="${RELORE_FULL_CHECK_HOUR-3}"
case "$check_hour" in
off | [0-9] | [01][0-9] | 2[0-3]) ;;
*)
    echo "loop.sh: RELORE_FULL_CHECK_HOUR must be an hour 0-23 (UTC) or off, got '$check_hour'" >&2
    exit 2
    ;;
esac

cd "${RELORE_DBT_PROJECT_DIR:-.}"
if [ ! -f dbt_project.yml ]; then
    echo "loop.sh: no dbt_project.yml in $PWD: run from the dbt project or set RELORE_DBT_PROJECT_DIR" >&2
    exit 2
fi

status=0
worst() { # keep the worst exit status: 1 (failed) over 3 (partial) over 0
    if [ "$1" -eq 1 ] || { [ "$1" -eq 3 ] && [ "$status" -eq 0 ]; }; then status=$1; fi
}
run() { # print the command, run it unless --dry-run; return its exit status
    echo "+ $*" >&2
    [ "$dry_run" -eq 1 ] && return 0
    "$@"
}
stamp() { echo "loop.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) $*" >&2; }

if [ -z "${RELORE_DATABASE_URL:-}" ]; then
    run relored db start
fi

cycle_args=()
for repo in "${repos[@]}"; do
    cycle_args+=(--repo "$repo")
done
if [ "${RELORE_AUTHORITY:-1}" != "0" ]; then
    cycle_args+=(--authority)
fi
stamp "relored cycle over ${#repos[@]} repositories"
rc=0
run relored cycle "${cycle_args[@]}" --quiet || rc=$?
case "$rc" in
0) ;;
3) stamp "relored cycle: some repositories go on next cycle (relore status says which)"; worst 3 ;;
*)
    stamp "relored cycle failed (exit $rc): what landed is still built"
    worst 1
    ;;
esac

if [ "$check_hour" != "off" ] && [ "$((10#$check_hour))" -eq "$((10#$(date -u +%H)))" ]; then
    build_args=(--vars "{relore_secret_scan: full, relore_tests: full}")
    stamp "dbt build, every row checked (RELORE_FULL_CHECK_HOUR=$check_hour)"
else
    build_args=(--exclude-resource-type unit_test)
    stamp "dbt build"
fi
if ! run dbt build "${build_args[@]}"; then
    stamp "dbt build failed: the marts keep their last good state"
    exit 1
fi
# The semantic tier's vectors, for what the build wrote: a run with nothing new embeds
# nothing. Exit 3 is the tier being off here (no pgvector, no semantic extra): said, and
# not a failure of the loop; lexical search serves as before.
stamp "relored embed"
rc=0
run relored embed || rc=$?
case "$rc" in
0) ;;
3) stamp "relored embed: the semantic tier is off here (relored doctor says why)" ;;
*)
    stamp "relored embed failed (exit $rc): searches go on without the newest vectors"
    worst 1
    ;;
esac
# The search index beside a daemon on this host (RELORE_INDEX_DIR, RELORE_HOME): refreshed
# now, not on the first search. Where the daemons keep their own (each Kubernetes pod
# builds its index before it is ready), RELORE_INDEX=0 skips it.
if [ "${RELORE_INDEX:-1}" != "0" ]; then
    stamp "relored index"
    rc=0
    run relored index || rc=$?
    [ "$rc" -eq 0 ] || { stamp "relored index failed (exit $rc)"; worst 1; }
fi
stamp "dbt source freshness"
# A report, not a gate: a quiet repository lands nothing new (unchanged payloads write no
# rows), so raw can look stale while every extract succeeds. `relored doctor` tells the two
# apart (it reads the pass runs); set RELORE_FRESHNESS_STRICT=1 to fail the loop on it.
if ! run dbt source freshness; then
    stamp "dbt source freshness: raw is older than error_after"
    [ "${RELORE_FRESHNESS_STRICT:-0}" = "1" ] && worst 1
fi
stamp "done (exit $status)"
exit "$status"
