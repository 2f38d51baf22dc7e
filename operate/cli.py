"""``relored``: the operator's command — the database, extract passes, and the service.

The parser is ``parser.py``; this module runs the verb it names."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from typing import TextIO

from relore.extract import runner
from relore.operate.exits import ExitStatus
from relore.operate.parser import build_parser


def _db(args, out: TextIO, env) -> int:
    from relore.operate import database

    url = database.configured_url(env)
    paths = database.EmbeddedPaths(database.relore_home(env))
    if args.action == "url":
        if url is None:
            paths.require_made()
        writer = url or paths.writer_url()
        print(database.reader_url(writer, env) if args.reader else writer, file=out)
        return ExitStatus.OK
    if url is not None:
        if args.action in ("start", "stop"):
            print(
                f"RELORE_DATABASE_URL is set ({database.describe(url)}): "
                f"nothing to {args.action}; relore uses that server",
                file=out,
            )
            return ExitStatus.OK
        version = database.server_version(url)
        report = {"mode": "configured", "url": database.describe(url), "state": "reachable"}
        report["server_version"] = version
    elif args.action == "start":
        database.start_embedded(paths)
        try:
            pgpass = str(database.remember_writer_password(paths, env))
        except OSError as exc:  # the server is up; only plain `dbt` is left without it
            pgpass = (
                f"not written ({exc}): give dbt RELORE_DATABASE_URL=$(relored db url), "
                "or set PGPASSFILE to a writable file and start again"
            )
        report = {
            "mode": "embedded",
            "url": database.describe(paths.writer_url()),
            "state": "running",
            "home": str(paths.home),
            "passwords": str(paths.passwords),
            "pgpass": pgpass,
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
        if paths.made:  # never a URL to a home that does not exist
            report["url"] = database.describe(paths.writer_url())
    if args.json:
        print(json.dumps(report), file=out)
    else:
        print("  ".join(f"{k}: {v}" for k, v in report.items()), file=out)
    return ExitStatus.OK


UNAUTHENTICATED = (
    "relored extract: no GITHUB_TOKEN, so GitHub is asked unauthenticated: 60 requests an hour "
    "per address (a token gets 5,000). Create a token (no scopes needed for a public "
    "repository) at https://github.com/settings/tokens and export GITHUB_TOKEN=..."
)


def _extract(args, out: TextIO, err: TextIO, env) -> int:
    from relore.extract.github_client import GitHubClient
    from relore.extract.progress import Progress
    from relore.operate import database

    if args.workers < 1 or args.workers > 8:
        print("relored: --workers must be between 1 and 8", file=err)
        return ExitStatus.USAGE
    url = database.ensure_database(env)
    options = runner.Options(
        numbers=tuple(args.number),
        since=args.since,
        kind=args.kind,
        merged=args.merged,
        workers=args.workers,
    )
    with database.connect(url, autocommit=True) as conn, GitHubClient(env=env) as client:
        if not client.authenticated:  # said up front, even with --quiet: it bounds the run
            print(UNAUTHENTICATED, file=err)
        progress = Progress(None if args.quiet else err, client)
        report = runner.run(conn, client, args.repo, args.pass_name, options, progress)
    if args.json:
        print(json.dumps(dataclasses.asdict(report)), file=out)
    else:
        for step in report.steps:
            extra = f", {step.detail}" if step.detail else ""
            mark = f", high-water {step.high_water}" if step.high_water else ""
            print(
                f"{report.repo} {step.step}: {step.seen} seen, {step.written} written{mark}{extra}",
                file=out,
            )
        if report.orphan_comments:
            print(
                f"{report.orphan_comments} comments under {report.orphan_threads} numbers whose "
                "thread never arrived (deleted or transferred upstream); they are not indexed",
                file=out,
            )
        print(
            f"{report.outcome}: {report.written} rows written, {report.requests} requests "
            f"({report.not_modified} answered 304)",
            file=out,
        )
    if report.error:
        where = (
            f" ({report.error_url})"
            if report.error_url and report.error_url not in report.error
            else ""
        )
        print(f"relored: {report.outcome}: {report.error}{where}", file=err)
    return {runner.DONE: ExitStatus.OK, runner.PARTIAL: ExitStatus.PARTIAL}.get(
        report.outcome, ExitStatus.ERROR
    )


def _check_encoder(env) -> None:
    """RELORE_ENCODER names a model relore runs, and its files are installed (ValueError, in
    one line, if not); nothing to check with the tier off or without the semantic extra."""
    if env.get("RELORE_SEMANTIC", "").strip().lower() == "off":
        return
    try:
        from relore.serve.semantic import choices
    except ImportError:
        return  # the tier is off and status says the extra is missing
    try:
        choices.installed(choices.chosen(env).key, env)
    except FileNotFoundError as exc:
        raise ValueError(str(exc)) from None


def _serve(args, env) -> int:
    from relore.operate import database
    from relore.serve.lexical import generations, results
    from relore.serve.runner import run

    try:  # said before listening, not on the first search
        results.entries_from_env(env)
        generations.shared_limit(env)
        _check_encoder(env)
    except ValueError as exc:
        print(f"relored: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    reader = database.serving_reader_url(env)
    run(
        reader,
        host=args.host,
        port=args.port,
        env=env,
        trust_network=args.trust_network,
        workers=args.workers,
    )
    return ExitStatus.OK


def main(
    argv: list[str] | None = None, env=None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    env = os.environ if env is None else env
    out = out or sys.stdout
    err = err or sys.stderr
    try:  # argparse prints usage and exits: keep both on the caller's streams
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else ExitStatus.USAGE
    from relore.extract.github_client import GitHubError
    from relore.operate.database import DatabaseError

    try:
        if args.verb == "db":
            return _db(args, out, env)
        if args.verb == "doctor":
            from relore.operate import doctor

            return doctor.main(env, out, as_json=args.json)
        if args.verb == "migrate":
            from relore.operate import database

            url = database.ensure_database(env)
            print(f"migrated {database.describe(url)}", file=out)
            return ExitStatus.OK
        if args.verb == "extract":
            return _extract(args, out, err, env)
        if args.verb == "serve":
            return _serve(args, env)
        if args.verb == "cycle":
            from relore.operate import cycle_cli

            return cycle_cli.run(args, out, err, env)
        if args.verb == "rules":
            from relore.operate import rules_cli

            return rules_cli.run(args, out, err, env)
        if args.verb == "index":
            from relore.operate import index_cli

            return index_cli.run(args.repo, args.full, env, out, err, as_json=args.json)
        if args.verb == "embed":
            from relore.operate import embed

            return embed.run(args.repo, env, out, err, as_json=args.json, replace=args.replace)
        if args.verb == "encoder":
            from relore.operate import models

            return models.run(
                args.model, args.wheels, env, out, err, force=args.force, as_json=args.json
            )
        if args.verb == "clone":
            from relore.operate import clone

            return clone.run(args.repo, args.url, env, out, err, as_json=args.json)
    except (DatabaseError, GitHubError, ValueError) as exc:
        print(f"relored: {exc}", file=err)
        return ExitStatus.ERROR
    except KeyboardInterrupt:
        print("relored: interrupted", file=err)
        return ExitStatus.INTERRUPTED
    return ExitStatus.USAGE


def entry() -> None:
    sys.exit(main())
