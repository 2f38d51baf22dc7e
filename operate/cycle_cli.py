"""``relored cycle``: one cycle of the extract loop over many repositories and one token."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import TextIO

from relore.operate.exits import ExitStatus
from relore.operate.parser import _repo_arg


def add_parser(verbs) -> None:
    cy = verbs.add_parser(
        "cycle",
        help="one cycle of the extract loop: poll every repository, backfill with the rest",
        description="Within the token's budget (GET /rate_limit, free): poll every repository "
        "whose backfill is complete, least recently polled first (an unchanged repository "
        "answers 304s, which cost nothing); then backfill the others with what is left, "
        "stopping before GitHub refuses, at the reserve (default 2 %% of the hourly limit, at "
        "least one request per repository). The next cycle resumes each backfill at its marks. "
        "Run it hourly. Exit status: 0 every repository done, 3 a backfill or poll goes on "
        "next cycle, 1 a repository failed (the others still ran).",
    )
    cy.add_argument(
        "--repo",
        type=_repo_arg,
        action="append",
        default=[],
        help="owner/name (repeatable; default: every repository extracted before)",
    )
    cy.add_argument("--reserve", type=int, help="requests a backfill leaves in the hour's budget")
    cy.add_argument(
        "--authority",
        action="store_true",
        help="after the polls, ask the write access of each polled repository's new authors "
        "(a backfill always does), down to the reserve; needs a token with push access",
    )
    cy.add_argument("--workers", type=int, default=2, help="threads fetched at once (default 2)")
    cy.add_argument("--quiet", action="store_true", help="no progress lines")
    cy.add_argument("--json", action="store_true", help="print the cycle's report as JSON")


def _fresh_as_of(conn, names: list[str]) -> dict[str, datetime | None]:
    rows = conn.execute(
        "select full_name, max(started_at) filter (where outcome = 'done') "
        "from ops.repo_cycles where full_name = any(%s) group by full_name",
        (names,),
    ).fetchall()
    return dict(rows)


def run(args, out: TextIO, err: TextIO, env) -> int:
    from relore.extract import runner, schedule
    from relore.extract.github_client import GitHubClient
    from relore.extract.progress import Progress
    from relore.operate import database

    if args.workers < 1 or args.workers > 8:
        print("relored: --workers must be between 1 and 8", file=err)
        return ExitStatus.USAGE
    url = database.ensure_database(env)
    options = runner.Options(workers=args.workers)
    with database.connect(url, autocommit=True) as conn, GitHubClient(env=env) as client:
        names = list(dict.fromkeys(args.repo)) or schedule.every_repository(conn)
        if not names:
            print("relored cycle: no repository: name one with --repo", file=err)
            return ExitStatus.USAGE
        progress = Progress(None if args.quiet else err, client)
        report = schedule.run_cycle(
            conn, client, names, options, progress, reserve=args.reserve, authority=args.authority
        )
        fresh = _fresh_as_of(conn, [t.repo for t in report.turns])
    if args.json:
        payload = dataclasses.asdict(report)
        payload["outcome"] = report.outcome
        print(json.dumps(payload, default=str), file=out)
    else:
        print(render(report, fresh, client.clock), file=out)
    return {runner.DONE: ExitStatus.OK, runner.PARTIAL: ExitStatus.PARTIAL}.get(
        report.outcome, ExitStatus.ERROR
    )


def render(report, fresh: dict, clock) -> str:
    lines = []
    for t in report.turns:
        as_of = fresh.get(t.repo)
        freshness = f"; fresh as of {as_of.astimezone(UTC):%Y-%m-%d %H:%MZ}" if as_of else ""
        why = f" ({t.reason})" if t.reason and t.outcome != "done" else ""
        lines.append(
            f"{t.repo} {t.role}: {t.outcome}, {t.written} rows written, {t.requests} requests "
            f"({t.not_modified} answered 304){freshness}{why}"
        )
    for name, bucket in report.budget.items():
        if bucket.remaining is not None:
            lines.append(f"budget {name}: {bucket.describe(clock)}")
    lines.append(
        f"cycle {report.cycle_id}: {report.outcome}, {report.requests} requests "
        f"({report.not_modified} answered 304), reserve {report.reserve:,}"
        + (f", {len(report.behind)} behind" if report.behind else "")
    )
    return "\n".join(lines)
