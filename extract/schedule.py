"""A cycle of the extract loop: many repositories, one token, one hour's budget.

``relored cycle`` runs one. In order:

1. what is left of the token (``GET /rate_limit``: free);
2. every repository resolved (by ETag: free while it is unchanged);
3. a poll of every repository whose backfill is complete, the least recently polled first,
   spending down to 0 (conditional requests: an idle poll costs nothing), so a backfill never
   delays another repository's poll: a poll that runs out of budget goes first next cycle;
4. with ``--authority``, the write access of each polled repository's new authors (and of
   those not asked for a week), down to the reserve;
5. backfills with what is left, the smallest repository (fewest open issues) first, so a new
   small repository is searchable within the hour, not after the big one; stopping at the
   reserve. A request the
   budget refuses is never sent, so every mark is exactly where the backfill stopped and the
   next cycle resumes there.

A backfill is complete once each bulk pass has run to its end (an ``ok`` run in
``ops.pass_runs``), whoever ran it. Each repository's turn is a row of ``ops.repo_cycles``,
with the budget when the turn ended: what ``relored doctor`` reads to say who is behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import psycopg

from relore.extract import budget as budgets
from relore.extract import passes, runner
from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.landing import Repo
from relore.extract.progress import Progress

BULK_STEPS = ("issues", "issue_comments", "review_comments", "pull_details", "reviews", "deletions")
# A repository none of whose turns finished for this long is behind: the hourly loop's hour,
# and half an hour for the timer's delay and a cycle's own time (``relore status`` and
# ``relored doctor`` both say so; macros/cycle_schedule.sql is the marts' side).
BEHIND_AFTER = timedelta(minutes=90)


@dataclass
class Turn:
    repo: str
    role: str  # poll | backfill
    outcome: str = "waiting"  # done | partial | failed | budget | waiting
    requests: int = 0
    not_modified: int = 0
    written: int = 0
    reason: str | None = None


@dataclass
class CycleReport:
    cycle_id: int
    reserve: int
    turns: list[Turn] = field(default_factory=list)
    budget: dict[str, budgets.Bucket] = field(default_factory=dict)
    requests: int = 0
    not_modified: int = 0
    paced_seconds: float = 0.0

    @property
    def outcome(self) -> str:
        if any(t.outcome == runner.FAILED for t in self.turns):
            return runner.FAILED
        if all(t.outcome == runner.DONE for t in self.turns):
            return runner.DONE
        return runner.PARTIAL

    @property
    def behind(self) -> list[Turn]:
        return [t for t in self.turns if t.outcome != runner.DONE]


def backfilled(conn: psycopg.Connection, repo_id: int) -> bool:
    row = conn.execute(
        "select count(distinct pass_name) from ops.pass_runs "
        "where repo_id = %s and status = 'ok' and pass_name = any(%s)",
        (repo_id, list(BULK_STEPS)),
    ).fetchone()
    return row[0] == len(BULK_STEPS)


def _open_issues(conn: psycopg.Connection, repo_id: int) -> int:
    """The repository's open issues and PRs as GitHub last said: a new repository's size."""
    row = conn.execute(
        "select (payload->>'open_issues_count')::int from raw.github_objects "
        "where repo_id = %s and object_type = 'repository' order by row_id desc limit 1",
        (repo_id,),
    ).fetchone()
    return row[0] if row and row[0] is not None else 0


def _last_poll(conn: psycopg.Connection, repo_id: int) -> datetime:
    row = conn.execute(
        "select max(finished_at) from ops.repo_cycles "
        "where repo_id = %s and role = 'poll' and outcome = 'done'",
        (repo_id,),
    ).fetchone()
    return row[0] or datetime.min.replace(tzinfo=UTC)


def every_repository(conn: psycopg.Connection) -> list[str]:
    return [r[0] for r in conn.execute("select full_name from ops.repos order by full_name")]


def run_cycle(
    conn: psycopg.Connection,
    client: GitHubClient,
    names: list[str],
    options: runner.Options,
    progress: Progress,
    *,
    reserve: int | None = None,
    per_minute: int = budgets.PER_MINUTE,
    authority: bool = False,
) -> CycleReport:
    budget = budgets.Budget(per_minute=per_minute, clock=client.clock, sleep=client.sleep)
    client.budget = budget
    requests_before, not_modified_before = client.stats.requests, client.stats.not_modified
    budget.seed(client.get_json("rate_limit"))
    reserve = budgets.default_reserve(budget.core.limit, len(names)) if reserve is None else reserve
    cycle_id = conn.execute("select nextval('ops.cycle_ids')").fetchone()[0]
    report = CycleReport(cycle_id, reserve)
    polls: list[tuple[Repo, Turn]] = []
    backfills: list[tuple[Repo, Turn]] = []
    for name in names:
        try:
            repo = passes.resolve_repo(conn, client, name)
        except GitHubError as exc:
            spent = budgets.spent_in(exc)
            report.turns.append(Turn(name, "poll", "budget" if spent else runner.FAILED, 0,
                                     reason=str(exc)))  # fmt: skip
            continue
        if backfilled(conn, repo.repo_id):
            polls.append((repo, Turn(repo.full_name, "poll")))
        else:
            backfills.append((repo, Turn(repo.full_name, "backfill")))
    polls.sort(key=lambda pair: _last_poll(conn, pair[0].repo_id))
    backfills.sort(key=lambda pair: _open_issues(conn, pair[0].repo_id))  # the smallest first
    budget.floor = 0
    for repo, turn in polls:
        _take_turn(conn, client, repo, turn, cycle_id, "poll", options, progress)
        report.turns.append(turn)
    budget.floor = reserve
    if authority:
        for repo, turn in polls:
            if turn.outcome == runner.DONE and not budget.refuses("core"):
                _resolve_authority(conn, client, repo, turn, cycle_id, options, progress)
    for repo, turn in backfills:
        if budget.refuses("core"):
            turn.outcome = "waiting"
            turn.reason = f"no budget left above the reserve: {budget.core.describe(budget.clock)}"
            _record(conn, repo, turn, cycle_id, budget, finished=True)
        else:
            _take_turn(conn, client, repo, turn, cycle_id, "backfill", options, progress)
        report.turns.append(turn)
    report.budget = dict(budget.buckets)
    report.requests = client.stats.requests - requests_before
    report.not_modified = client.stats.not_modified - not_modified_before
    report.paced_seconds = budget.paced
    client.budget = None
    return report


def _take_turn(conn, client, repo: Repo, turn: Turn, cycle_id: int, pass_name: str,
               options: runner.Options, progress: Progress) -> None:  # fmt: skip
    budget = client.budget
    budget.stopped = None
    _record(conn, repo, turn, cycle_id, budget)
    run = runner.run(conn, client, repo.full_name, pass_name, options, progress, repo=repo)
    turn.requests, turn.not_modified, turn.written = run.requests, run.not_modified, run.written
    if budget.stopped is not None:
        turn.outcome = "budget"
        turn.reason = f"{run.error or budget.stopped}; the next cycle resumes at the marks"
    else:
        turn.outcome, turn.reason = run.outcome, run.error
    _record(conn, repo, turn, cycle_id, budget, finished=True)


def _resolve_authority(conn, client, repo: Repo, turn: Turn, cycle_id: int,
                       options: runner.Options, progress: Progress) -> None:  # fmt: skip
    """A polled repository's new authors' write access (``--authority``), down to the
    reserve: its requests count in the poll's turn; a failure or the budget's stop is the
    authority pass's own run (ops.pass_runs), never the poll's outcome."""
    client.budget.stopped = None
    run = runner.run(conn, client, repo.full_name, "authority", options, progress, repo=repo)
    turn.requests += run.requests
    turn.not_modified += run.not_modified
    _record(conn, repo, turn, cycle_id, client.budget, finished=True)


def _record(conn, repo: Repo, turn: Turn, cycle_id: int, budget, *, finished=False) -> None:
    core = budget.core
    reset = datetime.fromtimestamp(core.reset, UTC) if core.reset is not None else None
    conn.execute(
        """
        insert into ops.repo_cycles as c (repo_id, cycle_id, full_name, role, outcome,
            finished_at, requests, not_modified, rows_written, reason, budget_limit,
            budget_remaining, budget_reset)
        values (%(repo_id)s, %(cycle)s, %(name)s, %(role)s, %(outcome)s,
            case when %(finished)s then clock_timestamp() end, %(requests)s, %(nm)s,
            %(written)s, %(reason)s, %(limit)s, %(remaining)s, %(reset)s)
        on conflict (repo_id, cycle_id) do update
            set outcome = excluded.outcome, finished_at = excluded.finished_at,
                requests = excluded.requests, not_modified = excluded.not_modified,
                rows_written = excluded.rows_written, reason = excluded.reason,
                budget_limit = excluded.budget_limit,
                budget_remaining = excluded.budget_remaining, budget_reset = excluded.budget_reset
        """,
        {
            "repo_id": repo.repo_id,
            "cycle": cycle_id,
            "name": repo.full_name,
            "role": turn.role,
            "outcome": turn.outcome if finished else "running",
            "finished": finished,
            "requests": turn.requests,
            "nm": turn.not_modified,
            "written": turn.written,
            "reason": (turn.reason or "")[:2000] or None,
            "limit": core.limit,
            "remaining": core.remaining,
            "reset": reset,
        },
    )
