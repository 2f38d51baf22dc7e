"""``relored clone``: a complete working clone per repository, and its rename pairs in ``ops``.

The clone lives in ``$RELORE_CLONES_DIR/<owner>/<name>`` (default ``$RELORE_HOME/clones``).
It is complete — not shallow, not filtered — so nothing the daemon asks of it (blame,
``log -L``, ``log -S``, grep) ever fetches. A first run clones into a temporary directory
and renames it into place, so a half-finished clone never looks like one; a later run
fetches and moves to the remote's HEAD.

Then the clone's history is walked for renames (``git log -M --diff-filter=R``): one row
per (commit, old path, new path) in ``ops.path_renames``. Paths and commit shas only — no
source text reaches the database (invariant 2). dbt chains the pairs into
``marts.path_aliases`` (a file moved twice links all three names). The walk resumes from the
commit it last read when that commit is still an ancestor of HEAD.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit, urlunsplit

from relore.contract.patterns import check_repo
from relore.contract.places import clone_dir
from relore.operate.exits import ExitStatus

# rename detection gives up on a commit with more added x deleted files than this (git's
# default is 1000 for diff, which silently drops renames in large moves)
RENAME_LIMIT = 5000
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_NO_LAZY_FETCH": "1"}


class CloneError(RuntimeError):
    """A clone or fetch that failed, with git's own words."""


def default_url(repo: str) -> str:
    check_repo(repo)
    return f"https://github.com/{repo}"


def without_credentials(url: str) -> str:
    """A URL fit for storing and printing: any user:password@ dropped."""
    parts = urlsplit(url)
    if parts.scheme and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return url


def git_env(extra: dict | None = None) -> dict:
    return {**os.environ, **GIT_ENV, **(extra or {})}


def _git(args: list[str], cwd: Path | None = None, *, err: TextIO | None = None) -> str:
    """Run git; with ``err``, its progress goes there as it happens."""
    command = ["git", *(["-C", str(cwd)] if cwd else []), *args]
    try:
        fileno = err.fileno() if err is not None else None
    except (AttributeError, OSError, ValueError):
        fileno = None
    stderr = fileno if fileno is not None else subprocess.PIPE
    result = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=stderr, env=git_env(), check=False
    )
    if err is not None and fileno is None and result.stderr:
        err.write(result.stderr.decode("utf-8", "replace"))
    if result.returncode != 0:
        said = (result.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        tail = f": {said[-1]}" if said else " (its output is above)"
        raise CloneError(f"`git {' '.join(args[:2])}` failed with exit {result.returncode}{tail}")
    return result.stdout.decode("utf-8", "surrogateescape")


def _progress(err: TextIO | None) -> list[str]:
    """git's progress meter only for a person watching: its carriage-return redraws are noise
    in a captured log or a pipe (git itself shows it only on a terminal unless told)."""
    try:
        return ["--progress"] if err is not None and err.isatty() else ["--quiet"]
    except (AttributeError, ValueError):
        return ["--quiet"]


@dataclass
class CloneReport:
    repo: str
    path: str
    url: str
    action: str  # cloned | fetched
    head_sha: str
    previous_head: str | None = None
    walked_from: str | None = None
    renames_read: int = 0
    renames_written: int = 0
    aliases: str = "filled"  # filled | skipped
    notes: list[str] = field(default_factory=list)


def ensure_clone(
    repo: str, url: str | None = None, env=None, err: TextIO | None = None
) -> CloneReport:
    """Clone ``repo`` (from ``url``, else GitHub) if there is no clone yet; else fetch and move
    to the remote's HEAD (from ``url`` when given, else from the clone's own origin)."""
    path = clone_dir(repo, env)
    if (path / ".git").is_dir():
        previous = _git(["rev-parse", "HEAD"], path).strip()
        current = _git(["remote", "get-url", "origin"], path).strip()
        if url and current != url:
            _git(["remote", "set-url", "--", "origin", url], path)
        url = url or current
        if err is not None:
            print(f"{repo}: fetching {without_credentials(url)} into {path}", file=err)
        _git(["config", "core.symlinks", "false"], path)
        _git(["fetch", "--prune", *_progress(err), "origin"], path, err=err)
        # the remote's default branch may have moved (main -> trunk): ask it again
        _git(["remote", "set-head", "origin", "--auto"], path)
        remote_head = _git(["symbolic-ref", "refs/remotes/origin/HEAD"], path).strip()
        branch = remote_head.removeprefix("refs/remotes/origin/")
        _git(["checkout", "--quiet", "--force", "-B", branch, remote_head], path)
        action = "fetched"
    else:
        if path.exists() and any(path.iterdir()):
            raise CloneError(f"{path} exists and is not a git clone: move it away first")
        url = url or default_url(repo)
        if err is not None:
            print(f"{repo}: cloning {without_credentials(url)} into {path}", file=err)
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
        try:
            # complete: no --depth, no --filter, so a query never fetches
            # a symlink is checked out as a file holding its target, so nothing the daemon
            # reads from the tree can lead outside the clone
            options = [*_progress(err), "--no-local", "--config", "core.symlinks=false"]
            _git(["clone", *options, "--", url, str(staging)], err=err)
            if path.exists():
                path.rmdir()
            staging.rename(path)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        previous = None
        action = "cloned"
    head = _git(["rev-parse", "HEAD"], path).strip()
    return CloneReport(
        repo=repo,
        path=str(path),
        url=without_credentials(url),
        action=action,
        head_sha=head,
        previous_head=previous,
    )


def _is_ancestor(path: Path, sha: str) -> bool:
    result = subprocess.run(
        ["git", "-C", str(path), "merge-base", "--is-ancestor", sha, "HEAD"],
        capture_output=True,
        env=git_env(),
        check=False,
    )
    return result.returncode == 0


def walk_renames(
    path: Path, since: str | None = None
) -> list[tuple[str, str, int | None, str, str]]:
    """Every rename in HEAD's history (after ``since`` when given): (sha, committed ISO date,
    similarity, old path, new path). Renames inside merge commits' own diffs are not read:
    the commits that made them are in the history and carry them."""
    span = f"{since}..HEAD" if since else "HEAD"
    out = _git(
        [
            "-c",
            f"diff.renameLimit={RENAME_LIMIT}",
            "log",
            "-M",
            "--diff-filter=R",
            "--name-status",
            "-z",
            "--format=%x01%H%x1f%cI",
            span,
            "--",
        ],
        path,
    )
    pairs = []
    for record in out.split("\x01")[1:]:
        header, _, body = record.partition("\x00")
        sha, _, committed = header.partition("\x1f")
        fields = body.lstrip("\n").split("\x00")
        i = 0
        while i < len(fields):
            status = fields[i].strip()
            if status.startswith("R") and i + 2 < len(fields):
                score = status[1:]
                similarity = int(score) if score.isdigit() else None
                pairs.append((sha, committed, similarity, fields[i + 1], fields[i + 2]))
                i += 3
            else:
                i += 1
    return pairs


def record(conn, repo: str, report: CloneReport, repo_id: int, pairs, walked: str) -> int:
    """Rename pairs into ops.path_renames (an unchanged pair writes nothing) and the clone's
    state into ops.clones, in one transaction. Returns the pairs written."""
    with conn.transaction(), conn.cursor() as cur:
        written = 0
        for sha, committed, similarity, old, new in pairs:
            cur.execute(
                """
                insert into ops.path_renames
                    (repo_id, commit_sha, old_path, new_path, similarity, committed_at)
                values (%s, %s, %s, %s, %s, %s)
                on conflict do nothing
                """,
                (repo_id, sha, old, new, similarity, committed or None),
            )
            written += cur.rowcount
        cur.execute(
            """
            insert into ops.clones (repo_id, repo, url, head_sha, walked_sha)
            values (%s, %s, %s, %s, %s)
            on conflict (repo_id) do update set
                repo = excluded.repo,
                url = excluded.url,
                head_sha = excluded.head_sha,
                walked_sha = excluded.walked_sha,
                fetched_at = clock_timestamp()
            """,
            (repo_id, repo, report.url, report.head_sha, walked),
        )
    return written


def run(repo: str, url: str | None, env, out: TextIO, err: TextIO, *, as_json: bool = False) -> int:
    from relore.operate import database

    try:
        report = ensure_clone(repo, url, env, err)
    except CloneError as exc:
        print(f"relored: {exc}", file=err)
        return ExitStatus.ERROR
    db_url = database.ensure_database(env)
    path = Path(report.path)
    with database.connect(db_url, autocommit=True) as conn:
        found = conn.execute(
            "select repo_id from ops.repos where lower(full_name) = lower(%s)", (repo,)
        ).fetchone()
        if found is None:
            report.aliases = "skipped"
            report.notes.append(
                f"{repo} has never been extracted (no repo_id in ops.repos), so its rename "
                f"pairs have nowhere to go: run `relored extract --repo {repo}`, then "
                f"`relored clone --repo {repo}` again"
            )
        else:
            (repo_id,) = found
            state = conn.execute(
                "select walked_sha from ops.clones where repo_id = %s", (repo_id,)
            ).fetchone()
            since = state[0] if state and state[0] else None
            if since == report.head_sha:
                pairs = []
            else:
                if since and not _is_ancestor(path, since):
                    report.notes.append(
                        f"{since[:12]} is no longer in HEAD's history (a force push?): "
                        "walked the whole history again"
                    )
                    since = None
                print(
                    f"{repo}: reading renames from {since[:12] + '..' if since else ''}HEAD",
                    file=err,
                )
                pairs = walk_renames(path, since)
            report.walked_from = since
            report.renames_read = len(pairs)
            report.renames_written = record(conn, repo, report, repo_id, pairs, report.head_sha)
    if as_json:
        print(json.dumps(asdict(report)), file=out)
    else:
        moved = (
            f" (was {report.previous_head[:12]})"
            if report.previous_head and report.previous_head != report.head_sha
            else ""
        )
        print(f"{repo}: {report.action} {report.path} at {report.head_sha[:12]}{moved}", file=out)
        if report.aliases == "filled":
            print(
                f"{repo}: {report.renames_read} rename pairs read, {report.renames_written} new"
                + (
                    "; run `dbt build` to chain them into marts.path_aliases"
                    if report.renames_written
                    else ""
                ),
                file=out,
            )
        for note in report.notes:
            print(f"note: {note}", file=out)
    return ExitStatus.OK if report.aliases == "filled" else ExitStatus.PARTIAL
