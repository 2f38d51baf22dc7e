"""What ``relored extract [PASS]`` runs, in which order, and how it ends.

A run is a sequence of steps; the first failure stops it. It ends ``done`` (every step
completed), ``partial`` (something was committed before a step failed: the marks say where
to resume) or ``failed`` (nothing was committed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from relore.extract import authority, checkpoints, deletions, passes, repo_names, reviews, threads
from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.landing import Repo, last_row_id
from relore.extract.progress import Progress

PASSES = (
    "auto",
    "backfill",
    "poll",
    "issues",
    "issue_comments",
    "review_comments",
    "pull_details",
    "reviews",
    "authority",
    "thread",
    "sample",
    "sweep",
    "deletions",
)
DONE, PARTIAL, FAILED = "done", "partial", "failed"
LISTING_STEPS = ("issues", "issue_comments", "review_comments")
# Requests a thread fetch may take (head, comments, a pull's object, files, reviews): under a
# cycle's budget a thread starts only with this much room per worker above the floor.
THREAD_MARGIN = 10


@dataclass
class StepReport:
    step: str
    seen: int = 0
    written: int = 0
    high_water: str | None = None
    detail: str | None = None


@dataclass
class RunReport:
    repo: str
    pass_name: str
    outcome: str = DONE
    steps: list[StepReport] = field(default_factory=list)
    error: str | None = None
    error_url: str | None = None
    orphan_comments: int = 0
    orphan_threads: int = 0
    requests: int = 0
    not_modified: int = 0
    # names the links hold that GitHub was asked about (extract/repo_names.py)
    names_asked: int = 0

    @property
    def written(self) -> int:
        return sum(s.written for s in self.steps)


@dataclass
class Options:
    numbers: tuple[int, ...] = ()
    since: datetime | None = None
    kind: str = "issue"
    merged: bool = False
    workers: int = 2


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _listing_step(conn, client, repo, name: str, progress: Progress) -> StepReport:
    listing = next(x for x in passes.listings(repo.full_name) if x.pass_name == name)
    result = passes.run_listing(conn, client, repo, listing, progress)
    return StepReport(name, result.seen, result.written, _iso(result.high_water))


def _thread_step(
    conn,
    client,
    repo,
    pass_name: str,
    todo: list[tuple[int, datetime]],
    fetch,
    options: Options,
    progress: Progress,
    *,
    checkpointed: bool = True,
) -> StepReport:
    """Threads fetched concurrently, landed in order; the mark moves per committed thread."""
    if checkpointed:
        mark, done = checkpoints.mark_and_done(conn, repo.repo_id, pass_name)
        todo = [(n, t) for n, t in todo if not (t == mark and n in done)]
    marks = dict(todo)
    if client.budget is not None:  # a thread starts only if it fits: no half-fetched thread
        fetch = _admitted(fetch, client.budget, THREAD_MARGIN * max(1, options.workers))

    def committed(cur, fetched):
        if checkpointed:
            checkpoints.advance_threads(
                cur, repo.repo_id, pass_name, marks[fetched.number], [fetched.number]
            )

    result = threads.run_threads(
        conn,
        client,
        repo,
        pass_name,
        [n for n, _ in todo],
        fetch=fetch,
        workers=options.workers,
        on_committed=committed,
        progress=lambda r, total: progress.update(
            f"{pass_name}: {r.threads}/{total} threads, {r.written} written", r.threads, total
        ),
    )
    report = StepReport(pass_name, result.threads, result.written)
    report.detail = f"{result.gone} gone upstream" if result.gone else None
    if result.error is not None:
        raise GitHubError(f"thread #{result.failed_number}: {result.error}", url="")
    if checkpointed:
        report.high_water = _iso(checkpoints.high_water(conn, repo.repo_id, pass_name))
    return report


def _admitted(fetch, budget, margin: int):
    def admitted(client, repo, number):
        budget.admit(margin, url=f"{repo.full_name}#{number}")
        return fetch(client, repo, number)

    return admitted


def _pull_details_step(conn, client, repo, options, progress) -> StepReport:
    mark = checkpoints.high_water(conn, repo.repo_id, "pull_details")
    todo = reviews.prs_since(conn, repo, mark)
    return _thread_step(
        conn, client, repo, "pull_details", todo, threads.fetch_pull_details, options, progress
    )


def _sample_step(conn, client, repo, options: Options, progress) -> StepReport:
    if options.since is None:
        raise ValueError("sample needs --since DATE (the floor)")
    pass_name = f"sample:{options.kind}"
    with conn.transaction():
        conn.execute(
            """
            insert into ops.sample_floors (repo_id, pass_name, floor, kind, merged_only)
            values (%s, %s, %s, %s, %s)
            on conflict (repo_id, pass_name) do update
                set floor = least(ops.sample_floors.floor, excluded.floor),
                    merged_only = excluded.merged_only, recorded_at = clock_timestamp()
            """,
            (repo.repo_id, pass_name, options.since, options.kind, options.merged),
        )
    mark = checkpoints.high_water(conn, repo.repo_id, pass_name)
    floor = max(options.since, mark) if mark else options.since
    todo: list[tuple[int, datetime]] = []
    params = {"state": "all", "sort": "created", "direction": "desc", "per_page": 100}
    for page in client.paginate(f"repos/{repo.full_name}/issues", params):
        items = page.items or []
        for item in items:
            created = datetime.fromisoformat(item["created_at"].replace("Z", "+00:00"))
            if created < floor:
                continue
            is_pr = "pull_request" in item
            if (options.kind == "pr") != is_pr:
                continue
            if options.merged and not (item.get("pull_request") or {}).get("merged_at"):
                continue
            todo.append((int(item["number"]), created))
        oldest = items[-1]["created_at"] if items else None
        progress.update(f"{pass_name}: listing, {len(todo)} threads since {floor.date()}")
        if oldest and datetime.fromisoformat(oldest.replace("Z", "+00:00")) < floor:
            break
    todo.sort(key=lambda t: (t[1], t[0]))
    return _thread_step(
        conn, client, repo, pass_name, todo, threads.fetch_thread, options, progress
    )


def orphans(conn, repo: Repo) -> tuple[int, int]:
    """Comments staged under a number whose thread head never arrived: (comments, numbers)."""
    row = conn.execute(
        """
        with heads as (
            select distinct thread_number from raw.github_objects
            where repo_id = %(r)s and object_type = 'issue'
        )
        select count(distinct object_id), count(distinct thread_number)
        from raw.github_objects as c
        where c.repo_id = %(r)s and c.object_type in ('issue_comment', 'review_comment')
            and c.thread_number not in (select thread_number from heads)
        """,
        {"r": repo.repo_id},
    ).fetchone()
    return int(row[0]), int(row[1])


def _consecutive_failures(conn, repo: Repo, step: str) -> int:
    """How many of the pass's latest runs failed in a row having landed nothing: the tell of
    a page that can never be served (the mark stops while the runs keep coming)."""
    rows = conn.execute(
        "select status, rows_written from ops.pass_runs where repo_id = %s and pass_name = %s "
        "order by run_id desc limit 20",
        (repo.repo_id, step),
    ).fetchall()
    count = 0
    for status, written in rows:
        if status != "failed" or written:
            break
        count += 1
    return count


def steps_for(pass_name: str, conn, repo: Repo) -> list[str]:
    # The deletion check comes last: it compares the counts the steps before it landed.
    bulk = ["issues", "issue_comments", "review_comments", "pull_details", "reviews", "deletions"]
    if pass_name == "auto":
        indexed = checkpoints.high_water(conn, repo.repo_id, "issues") is not None
        return bulk if indexed else [*bulk, "authority"]
    if pass_name == "backfill":
        return [*bulk, "authority"]
    if pass_name == "poll":
        return bulk
    return [pass_name]


def run(
    conn: psycopg.Connection,
    client: GitHubClient,
    full_name: str,
    pass_name: str,
    options: Options,
    progress: Progress,
    *,
    repo: Repo | None = None,
) -> RunReport:
    """``repo``: already resolved (a cycle resolves every repository first)."""
    report = RunReport(full_name, pass_name)
    requests_before, not_modified_before = client.stats.requests, client.stats.not_modified
    try:
        repo = repo or passes.resolve_repo(conn, client, full_name)
    except GitHubError as exc:
        report.outcome, report.error, report.error_url = FAILED, str(exc), exc.url
        return report
    report.repo = repo.full_name
    repo_names.record_asked_name(conn, full_name, repo)
    landed_before = last_row_id(conn, repo)
    for step in steps_for(pass_name, conn, repo):
        try:
            report.steps.append(_recorded_step(step, conn, client, repo, options, progress))
        except (GitHubError, ValueError) as exc:
            report.error = f"{step}: {exc}"
            report.error_url = getattr(exc, "url", None) or None
            progressed = report.steps or last_row_id(conn, repo) > landed_before
            report.outcome = PARTIAL if progressed else FAILED
            stuck = _consecutive_failures(conn, repo, step)
            if stuck >= 2:
                report.error += (
                    f"; this pass has failed {stuck} times in a row landing nothing, its mark "
                    "not moving: that page cannot be served, and rerunning will not change it"
                )
            break
        finally:
            progress.done()
    if report.outcome == DONE:
        try:
            report.names_asked = repo_names.resolve_link_names(conn, client, repo)
        except GitHubError as exc:  # a name is asked again next run; the pass stands
            report.error, report.error_url = f"repository names: {exc}", exc.url
    report.orphan_comments, report.orphan_threads = orphans(conn, repo)
    report.requests = client.stats.requests - requests_before
    report.not_modified = client.stats.not_modified - not_modified_before
    return report


def _recorded_step(step: str, conn, client, repo: Repo, options: Options, progress) -> StepReport:
    """A step, with its run recorded in ops.pass_runs (listing walks record their own)."""
    if step in LISTING_STEPS:
        return _run_step(step, conn, client, repo, options, progress)
    name = f"sample:{options.kind}" if step == "sample" else step
    report: StepReport | None = None

    def counts() -> tuple[int, int]:
        return (report.seen, report.written) if report else (0, 0)

    with checkpoints.recorded_run(conn, repo.repo_id, name, client.stats, counts):
        report = _run_step(step, conn, client, repo, options, progress)
    return report


def _run_step(step: str, conn, client, repo: Repo, options: Options, progress) -> StepReport:
    if step in LISTING_STEPS:
        return _listing_step(conn, client, repo, step, progress)
    if step == "pull_details":
        return _pull_details_step(conn, client, repo, options, progress)
    if step == "reviews":
        result = reviews.run_reviews(conn, client, repo, progress)
        return StepReport("reviews", result.prs, result.written, _iso(result.high_water))
    if step == "authority":
        result = authority.run_authority(conn, client, repo, progress)
        return StepReport(
            "authority", result.checked, 0, detail=f"{result.with_write} with write access"
        )
    if step == "thread":
        if not options.numbers:
            raise ValueError("thread needs --number N (one or more)")
        todo = [(n, datetime.min) for n in options.numbers]
        return _thread_step(
            conn,
            client,
            repo,
            "thread",
            todo,
            threads.fetch_thread,
            options,
            progress,
            checkpointed=False,
        )
    if step == "sample":
        return _sample_step(conn, client, repo, options, progress)
    if step == "sweep":
        return _sweep_step(conn, client, repo, options, progress)
    if step == "deletions":
        return _deletions_step(conn, client, repo, options, progress)
    raise ValueError(f"unknown pass {step!r}")


def _deletions_step(
    conn, client, repo: Repo, options: Options, progress, *, everything: bool = False
) -> StepReport:
    result = deletions.check(
        conn, client, repo, everything=everything, workers=options.workers, progress=progress.update
    )
    report = StepReport("deletions", result.reread, result.written)
    report.detail = f"{len(result.suspects)} thread(s) re-read for a lower count" + (
        f", {result.gone} gone upstream" if result.gone else ""
    )
    return report


def _sweep_step(conn, client, repo: Repo, options: Options, progress) -> StepReport:
    """Every indexed thread checked against GitHub: one listing walk refreshes the heads'
    counts (and each pull's, by ETag), a thread the listing lacks is looked up alone
    (deleted, transferred), then every thread holding more than its count is re-read."""
    refreshed = deletions.refresh_counts(conn, client, repo, "sweep", progress.update)
    todo = [(n, datetime.min) for n in refreshed.missing]
    gone = _thread_step(
        conn,
        client,
        repo,
        "sweep",
        todo,
        threads.fetch_head,
        options,
        progress,
        checkpointed=False,
    )
    checked = _deletions_step(conn, client, repo, options, progress, everything=True)
    report = StepReport(
        "sweep", refreshed.listed, refreshed.written + gone.written + checked.written
    )
    report.detail = "; ".join(
        d for d in (gone.detail, f"{refreshed.pulls_asked} pull objects asked", checked.detail) if d
    )
    return report
