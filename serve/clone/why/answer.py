"""``GET /api/v1/why``: who wrote a line, which pull request carried it, and what was said.

Blame names one commit. The pull request that carried it comes from the marts: the PR whose
merge or head commit it is (``thread_commits``), else the ``(#N)`` of a squash-merge
subject, else a review anchored on it, else the merge that brought it onto the first-parent
line (found in the clone, mapped the same way). The review comments anchored near the line
(on the file under any of its names) come with it.

Two lists follow, never merged: the line's **revision chain** (``git log -L``: every commit
that changed this line range) and its **origin chain** (``git log -S`` on the most
distinctive word of the line that reaches further back than the revision chain already
does: a block that was rewritten rather than moved loses its range, not its words). Both
are returned even when blame's commit maps to no indexed pull request.

A line with no code on it (blank, comment only, in the licence header) has no behaviour to
trace: it declines the pickaxe and says which. Every subprocess is counted; at most
``MAX_PICKAXE_WALKS`` full-history pickaxe walks run per request, under one deadline, and
the answer's ``budget`` says what was spent and what was cut.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from psycopg_pool import AsyncConnectionPool

from relore.contract.envelope import quote
from relore.contract.sanitize import fence
from relore.serve import inputs
from relore.serve.clone import redaction
from relore.serve.clone.git import Budget, Git, GitFailed
from relore.serve.clone.why.history import (
    MAX_PICKAXE_WALKS,
    Commit,
    blame_row,
    merge_that_carried,
    origin_chain,
    revision_chain,
    subject_number,
)
from relore.serve.clone.why.lines import file_lines
from relore.serve.clone.why.marts import (
    Marts,
    aliases,
    map_commits,
    review_comments,
    short_pull,
)
from relore.serve.errors import BadRequest, NotFound

LINE_CHARS = 200
MAX_FILE_BYTES = 5_000_000
MAX_ALIASES = 20


@dataclass(frozen=True)
class WhyRequest:
    repo: str
    path: str
    line: int


def parse_request(params) -> WhyRequest:
    return WhyRequest(**inputs.parse("why", params))  # as contract/verbs declares it


async def why(pool: AsyncConnectionPool, request: WhyRequest, clone: Path) -> dict:
    budget = Budget(max_pickaxe_walks=MAX_PICKAXE_WALKS)
    git = Git(clone, budget)
    marts = Marts(pool)
    head = (await git.run(["rev-parse", "HEAD"], what="git rev-parse HEAD")).text.strip()
    repo_id = await marts.repo_id(request.repo)
    indexed = repo_id is not None
    try:
        blob = await git.run(
            ["cat-file", "blob", f"HEAD:{request.path}"],
            what="git cat-file",
            keep_bytes=MAX_FILE_BYTES,
        )
    except GitFailed:
        known = await aliases(marts, repo_id, [request.path])
        others = [p for p in known if p != request.path][:MAX_ALIASES]
        raise NotFound(
            f"{request.path} is not a file at HEAD ({head[:12]}) of {request.repo}'s clone"
            + (f"; the same file has also been: {', '.join(map(fence, others))}" if others else "")
        ) from None
    if not blob.complete:
        raise BadRequest(f"{request.path} is over {MAX_FILE_BYTES:,} bytes: not blamed here")
    if "\x00" in blob.text[:8000]:
        raise BadRequest(f"{request.path} is a binary file: it has no lines to blame")
    lines = await asyncio.to_thread(file_lines, blob.text)  # up to 5 MB: off the event loop
    if request.line > len(lines):
        raise BadRequest(
            f"{request.path} has {len(lines)} lines at HEAD ({head[:12]}); line "
            f"{request.line} is past its end"
        )
    porcelain = await git.run(
        [
            "blame",
            "--porcelain",
            "-L",
            f"{request.line},{request.line}",
            "HEAD",
            "--",
            request.path,
        ],
        what="git blame",
        walk="history",
    )
    if not porcelain.text.strip():
        raise GitFailed(["blame"], 0, "blame printed nothing for the line")
    blame = blame_row(porcelain.text)
    revisions, revision_state = await revision_chain(git, request.path, request.line)
    names = list(dict.fromkeys([request.path, blame["filename"] or request.path]))
    known = await aliases(marts, repo_id, names)
    paths = list(dict.fromkeys([*names, *known]))[:MAX_ALIASES]
    origin = await origin_chain(
        git, budget, lines, request.line, revisions, bool(revision_state.get("capped")), paths
    )
    origin_commits: list[Commit] = origin.pop("commits")
    blamed = Commit(blame["sha"], "", "", "", blame["subject"])
    mapped: dict[str, dict] = {}
    carrier: Commit | None = None
    if indexed:
        mapped = await map_commits(marts, repo_id, [blamed, *revisions, *origin_commits])
        if blame["sha"] not in mapped and not blame["boundary"]:
            carrier = await merge_that_carried(git, blame["sha"])
            if carrier is not None:
                via_merge = await map_commits(marts, repo_id, [carrier])
                if carrier.sha in via_merge:
                    mapped[blame["sha"]] = {
                        **via_merge[carrier.sha],
                        "via": f"merge {carrier.sha[:12]} ({via_merge[carrier.sha]['via']})",
                    }
    pull = mapped.get(blame["sha"])
    comments = None
    if pull is not None:
        comments = await review_comments(
            marts, repo_id, pull["number"], paths, {request.line, blame["original_line"]}
        )
    page: dict = {
        "repo": request.repo,
        "path": request.path,
        "line": request.line,
        "head": head,
        "text": lines[request.line - 1].rstrip(),  # redacted, cut and quoted below
        "blame": blame,
        "pull_request": pull,
        "review_comments": comments,
        "revisions": {
            "returned": len(revisions),
            "total": len(revisions) + (1 if revision_state.get("capped") else 0),
            "total_is_lower_bound": bool(revision_state.get("capped")),
            "order": "newest first",
            "commits": [
                {**c.row(), "pull_request": short_pull(mapped.get(c.sha))} for c in revisions
            ],
        },
        "origin": {
            **origin,
            "commits": [
                {**c.row(), "pull_request": short_pull(mapped.get(c.sha))} for c in origin_commits
            ],
        },
        "aliases": [p for p in paths if p != request.path],
    }
    if revision_state.get("timed_out"):
        page["revisions"]["note"] = "git log -L timed out: the revision chain is missing"
    if pull is None:
        page["pull_request_note"] = _no_pull_note(request.repo, indexed, blame, carrier)
    page["budget"] = budget.report()
    await _redact_clone_text(pool, page)
    page["text"] = quote(page["text"][:LINE_CHARS])
    return page


async def _redact_clone_text(pool: AsyncConnectionPool, page: dict) -> None:
    """What the clone said (the line, commit subjects and authors, the pickaxe's words and
    the notes naming them) redacted by the marts' catalog, in one query."""
    commits = [page["blame"], *page["revisions"]["commits"], *page["origin"]["commits"]]
    words = [page["origin"], *page["origin"].get("candidates", [])]
    budget = page["budget"]
    await redaction.places(
        pool,
        [(page, "text")]
        + [(row, key) for row in commits for key in ("subject", "author")]
        + [(row, "word") for row in words]
        + [(page["origin"], "note")]
        + [(budget["notes"], i) for i in range(len(budget["notes"]))]
        + [(budget["timed_out"], i) for i in range(len(budget["timed_out"]))],
    )


def _no_pull_note(repo: str, indexed: bool, blame: dict, carrier: Commit | None) -> str:
    if not indexed:
        return (
            f"{repo} is not indexed here, so no commit maps to a pull request: "
            f"`relored extract --repo {repo}` then `dbt build`"
        )
    number = subject_number(blame["subject"])
    if number is not None:
        return f"the commit names #{number}, which is not an indexed pull request here"
    if carrier is not None:
        return (
            f"merge {carrier.sha[:12]} brought the commit in, and neither maps to an indexed "
            "pull request"
        )
    return (
        "no indexed pull request carries this commit (not a PR's merge or head commit, no "
        "(#N) in its subject, no review anchored on it, no carrying merge): it may have "
        "been pushed directly"
    )
