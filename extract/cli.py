"""``relored``: the operator's command — the database, extract passes, and the service."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import TextIO

from relore.client.version import __version__

_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _repo_arg(value: str) -> str:
    if not _REPO_RE.match(value):
        raise argparse.ArgumentTypeError(f"expected owner/name, got {value!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relored",
        description="Operate relore: the database, GitHub extract passes, the read service.",
    )
    parser.add_argument("--version", action="version", version=f"relored {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    db = verbs.add_parser("db", help="the embedded Postgres (or the configured server)")
    db.add_argument("action", choices=["start", "stop", "status", "url"])
    db.add_argument("--json", action="store_true", help="machine-readable output")

    verbs.add_parser("migrate", help="create or upgrade the raw and ops schemas and roles")

    ext = verbs.add_parser("extract", help="land a repository's GitHub history into raw")
    ext.add_argument(
        "pass_name",
        nargs="?",
        default="all",
        choices=["all", "issues", "issue_comments"],
        metavar="PASS",
        help="all (default): the repository, issues and PRs, issue comments",
    )
    ext.add_argument("--repo", required=True, type=_repo_arg, help="owner/name")
    ext.add_argument("--quiet", action="store_true", help="no progress lines")
    ext.add_argument("--json", action="store_true", help="print the pass results as JSON")

    srv = verbs.add_parser("serve", help="serve the read API over the marts")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8080)
    return parser


def _db(args, out: TextIO, env) -> int:
    from relore.extract import database

    url = database.configured_url(env)
    paths = database.EmbeddedPaths(database.relore_home(env))
    if args.action == "url":
        print(url or paths.url(), file=out)
        return EXIT_OK
    if url is not None:
        if args.action in ("start", "stop"):
            print(
                f"RELORE_DATABASE_URL is set ({database.describe(url)}): "
                f"nothing to {args.action}; relore uses that server",
                file=out,
            )
            return EXIT_OK
        version = database.server_version(url)
        report = {"mode": "configured", "url": database.describe(url), "state": "reachable"}
        report["server_version"] = version
    elif args.action == "start":
        database.start_embedded(paths)
        report = {
            "mode": "embedded",
            "url": paths.url(),
            "state": "running",
            "home": str(paths.home),
        }
    elif args.action == "stop":
        stopped = database.stop_embedded(paths)
        report = {"mode": "embedded", "state": "stopped" if stopped else "not running"}
    else:
        report = {
            "mode": "embedded",
            "state": database.embedded_status(paths),
            "home": str(paths.home),
        }
        report["url"] = paths.url()
    if args.json:
        print(json.dumps(report), file=out)
    else:
        print("  ".join(f"{k}: {v}" for k, v in report.items()), file=out)
    return EXIT_OK


def _extract(args, out: TextIO, err: TextIO, env) -> int:
    from relore.extract import database, passes
    from relore.extract.github_client import GitHubClient

    url = database.ensure_database(env)
    progress = (lambda _: None) if args.quiet else (lambda line: print(line, file=err, flush=True))
    with database.connect(url, autocommit=True) as conn, GitHubClient(env=env) as client:
        if args.pass_name == "all":
            results = passes.extract_repo(conn, client, args.repo, progress)
        else:
            repo = passes.resolve_repo(conn, client, args.repo)
            listing = next(
                x for x in passes.listings(repo.full_name) if x.pass_name == args.pass_name
            )
            results = [passes.run_listing(conn, client, repo, listing, progress)]
    rows = [
        {
            "pass": r.pass_name,
            "pages": r.pages,
            "seen": r.seen,
            "written": r.written,
            "high_water": r.high_water.isoformat() if r.high_water else None,
        }
        for r in results
    ]
    if args.json:
        print(
            json.dumps({"repo": args.repo, "passes": rows, "requests": client.stats.requests}),
            file=out,
        )
    else:
        for r in rows:
            print(
                f"{args.repo} {r['pass']}: {r['seen']} seen, {r['written']} written, "
                f"high-water {r['high_water'] or '-'}",
                file=out,
            )
        print(f"{client.stats.requests} requests, {client.stats.retries} retries", file=out)
    return EXIT_OK


def _serve(args, env) -> int:
    from relore.extract import database
    from relore.serve.app import run

    writer = database.ensure_database(env)
    run(database.reader_url(writer, env), host=args.host, port=args.port, env=env)
    return EXIT_OK


def main(
    argv: list[str] | None = None, env=None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    env = os.environ if env is None else env
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    from relore.extract.database import DatabaseError
    from relore.extract.github_client import GitHubError

    try:
        if args.verb == "db":
            return _db(args, out, env)
        if args.verb == "migrate":
            from relore.extract import database

            url = database.ensure_database(env)
            print(f"migrated {database.describe(url)}", file=out)
            return EXIT_OK
        if args.verb == "extract":
            return _extract(args, out, err, env)
        if args.verb == "serve":
            return _serve(args, env)
    except (DatabaseError, GitHubError) as exc:
        print(f"relored: {exc}", file=err)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("relored: interrupted", file=err)
        return 130
    return EXIT_USAGE


def entry() -> None:
    sys.exit(main())
