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

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from relore.contract import stamps
from relore.contract.envelope import one_line, quote
from relore.contract.sanitize import fence
from relore.serve import inputs, repos
from relore.serve.code.git import Budget, BudgetSpent, Git, GitFailed, GitTimeout
from relore.serve.errors import BadRequest, NotFound
from relore.serve.thread import WHOLE_COMMENT, comment_row

REVISIONS_CAP = 20
ORIGIN_CAP = 10
CANDIDATES_CAP = 8
MAX_PICKAXE_WALKS = 3
NEAR_LINES = 10
COMMENTS_CAP = 5
COMMENT_CHARS = 400
LINE_CHARS = 200
MAX_FILE_BYTES = 5_000_000
MAX_ALIASES = 20
# the sources in marts.thread_commits that say "this pull request carried the commit", best
# first; prose mentions a sha without carrying it
CARRYING = ("merge_commit", "head", "subject", "review_anchor")

_FORMAT = "--format=%x01%H%x1f%aI%x1f%cI%x1f%an%x1f%s"
_SUBJECT_PR = re.compile(r"\(#([0-9]{1,9})\)")
_MERGE_PR = re.compile(r"^Merge pull request #([0-9]{1,9})\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_LICENCE = re.compile(
    r"copyright|licen[cs]e|spdx-license|all rights reserved|warrant|\bgnu\b|permissions and",
    re.IGNORECASE,
)
# What starts a comment-only line, by file kind. `#` in C-like files is the preprocessor
# (`#include`: code), a `*` line is the inside of a block comment only where blocks exist
# (never `*args`), and `--`, `;`, `%` are comments only in the languages that say so.
_HASH = r"#"
_SLASHES = r"//|\*(\s|/|$)"
_COMMENT_BY_EXTENSION = {
    **dict.fromkeys(
        ".py .pyi .pyx .sh .bash .zsh .rb .pl .pm .r .yaml .yml .toml .cmake .mk .cfg .conf"
        " .dockerfile .ps1 .nim .jl .ex .exs .tf .coffee".split(),
        _HASH,
    ),
    **dict.fromkeys(
        ".c .h .cc .cpp .cxx .hpp .hh .cu .cuh .m .mm .js .jsx .mjs .cjs .ts .tsx .go .rs"
        " .java .kt .kts .scala .swift .cs .dart .css .scss .less .proto .groovy .gradle"
        " .vue .svelte .zig .sol".split(),
        _SLASHES,
    ),
    ".php": _HASH + "|" + _SLASHES,
    **dict.fromkeys(".sql .lua .hs .elm .ada .adb".split(), r"--"),
    **dict.fromkeys(".ini .lisp .clj .cljs .el .scm .asm .s".split(), r";|#"),
    **dict.fromkeys(".tex .sty .erl .hrl .mat".split(), r"%"),
}
_DEFAULT_COMMENT = _HASH + "|" + _SLASHES


def _comment_re(path: str | None) -> re.Pattern:
    suffix = Path(path or "").suffix.lower()
    if Path(path or "").name.lower() in ("makefile", "dockerfile", "cmakelists.txt"):
        suffix = ".mk"
    return re.compile(r"^\s*(" + _COMMENT_BY_EXTENSION.get(suffix, _DEFAULT_COMMENT) + ")")


# keywords and names too common in any language to say where a line came from
_STOPWORDS = frozenset(
    """
    and as assert async await break case catch class const continue def default del delete
    do elif else enum except export extends false finally for from func function global go
    if impl import in interface is lambda let match mod mut new nil none nonlocal not null
    or package pass print pub raise return self static struct super switch this throw true
    try type typeof use var void while with yield cls args kwargs int str len bool float
    dict list set tuple object string the and for int64 int32 err error fmt
    """.split()
)


@dataclass(frozen=True)
class WhyRequest:
    repo: str
    path: str
    line: int


def parse_request(params) -> WhyRequest:
    return WhyRequest(
        repo=inputs.repo(params),
        path=inputs.path(params),
        line=inputs.line(params),
    )


@dataclass
class Commit:
    sha: str
    authored: str
    committed: str
    author: str
    subject: str

    def row(self) -> dict:
        return {
            "sha": self.sha,
            "short": self.sha[:12],
            "date": stamps.date(self.authored),
            "age": stamps.age(self.authored),
            "author": one_line(self.author, 80),
            "subject": one_line(self.subject),
        }


def _commits(text: str) -> list[Commit]:
    found = []
    for record in text.split("\x01")[1:]:
        fields = record.split("\n", 1)[0].split("\x1f")
        if len(fields) == 5 and re.fullmatch(r"[0-9a-f]{40}", fields[0]):
            found.append(Commit(*fields))
    return found


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def subject_number(subject: str) -> int | None:
    """The pull request a commit subject names: GitHub's merge subject, else the last
    ``(#N)`` (a squash merge appends its number last)."""
    merged = _MERGE_PR.match(subject)
    if merged:
        return int(merged.group(1))
    numbers = _SUBJECT_PR.findall(subject)
    return int(numbers[-1]) if numbers else None


# --- the line itself ----------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """The file's lines as git numbers them: split on newlines only."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _comment_states(lines: list[str], upto: int, path: str | None = None) -> list[bool]:
    """For lines[0:upto], whether each holds no code: blank, a line comment, or inside (or
    opening/closing) a ``/* */`` block."""
    comment = _comment_re(path)
    blocks = _SLASHES in comment.pattern  # /* */ blocks exist in this language
    states = []
    in_block = False
    for text in lines[:upto]:
        stripped = text.strip()
        if in_block:
            states.append(True)
            if "*/" in stripped:
                in_block = False
                rest = stripped.split("*/", 1)[1].strip()
                if rest and not rest.startswith(("//", "#")):
                    states[-1] = False
            continue
        if blocks and stripped.startswith("/*"):
            body = stripped[2:]
            if "*/" in body:
                rest = body.split("*/", 1)[1].strip()
                states.append(not rest)
            else:
                in_block = True
                states.append(True)
            continue
        if stripped.startswith("<!--"):
            states.append(True)
            continue
        states.append(not stripped or bool(comment.match(text)))
    return states


def decline_reason(lines: list[str], line: int, path: str | None = None) -> str | None:
    """Why a line has no behaviour to trace, or None when it carries code. ``path`` says
    which comment syntax the file uses."""
    text = lines[line - 1]
    if not text.strip():
        return "blank"
    states = _comment_states(lines, min(len(lines), line + 40), path)
    if not states[line - 1]:
        return None
    # the leading block of comments and blank lines, and whether it is a licence
    lead = 0
    while lead < len(states) and states[lead]:
        lead += 1
    if line <= lead and _LICENCE.search("\n".join(lines[:lead])):
        return "licence header"
    return "comment"


DECLINED = {
    "blank": "line {line} is blank: there is no code on it to trace",
    "licence header": "line {line} is in the licence header: no behaviour to trace (its "
    "history is the header's, and a pickaxe on its words walks the file's whole history "
    "for nothing)",
    "comment": "line {line} is a comment only: no behaviour to trace; blame and the "
    "revision chain say who wrote it",
}


def candidates(text: str, file_text: str) -> list[tuple[str, int]]:
    """The line's words worth a pickaxe, most distinctive first: fewest occurrences in the
    file (a word used once here is more likely to name this line's idea), then longest."""
    words = dict.fromkeys(w for w in _WORD.findall(text) if w.lower() not in _STOPWORDS)
    scored = [(w, file_text.count(w)) for w in words]
    scored.sort(key=lambda item: (item[1], -len(item[0]), item[0]))
    return scored[:CANDIDATES_CAP]


# --- git ------------------------------------------------------------------------------------


def _blame(porcelain: str) -> dict:
    head, _, rest = porcelain.partition("\n")
    sha, original_line, *_ = head.split()
    fields: dict[str, str] = {}
    boundary = False
    for row in rest.split("\n"):
        if row.startswith("\t"):
            break
        key, _, value = row.partition(" ")
        if key == "boundary":
            boundary = True
        fields.setdefault(key, value)
    offset = fields.get("author-tz", "+0000")
    sign = -1 if offset.startswith("-") else 1
    tz = timezone(sign * timedelta(hours=int(offset[1:3] or 0), minutes=int(offset[3:5] or 0)))
    authored = datetime.fromtimestamp(int(fields.get("author-time", "0")), tz=UTC).astimezone(tz)
    return {
        "sha": sha,
        "short": sha[:12],
        "author": one_line(fields.get("author", ""), 80),
        "date": stamps.date(authored),
        "age": stamps.age(authored),
        "subject": one_line(fields.get("summary", "")),
        "filename": fields.get("filename"),
        "original_line": int(original_line),
        "boundary": boundary,
    }


async def _revisions(git: Git, path: str, line: int) -> tuple[list[Commit], dict]:
    try:
        out = await git.run(
            ["log", "-L", f"{line},{line}:{path}", "-s", f"-n{REVISIONS_CAP + 1}", _FORMAT, "HEAD"],
            what="git log -L (revision chain)",
            walk="history",
        )
    except GitTimeout:
        return [], {"timed_out": True}
    rows = _commits(out.text)
    capped = len(rows) > REVISIONS_CAP
    return rows[:REVISIONS_CAP], {"capped": capped}


PICKAXE_KEEP_BYTES = 16_000_000  # ~100,000 commits of this format: the origin is the last


async def _pickaxe(git: Git, word: str, paths: list[str]) -> tuple[list[Commit], bool]:
    """The commits that changed how often ``word`` occurs in the file (under every name it
    had), oldest first, and whether the walk's output was read whole. One name follows
    renames itself (``--follow``); ``--follow --reverse`` prints nothing, so git lists
    newest first and the order is turned here."""
    args = ["log", "-S", word, _FORMAT, "HEAD"]
    args += ["--", *paths] if len(paths) > 1 else ["--follow", "--", paths[0]]
    out = await git.run(
        args, what=f"git log -S {word}", walk="pickaxe", keep_bytes=PICKAXE_KEEP_BYTES
    )
    return list(reversed(_commits(out.text))), out.complete


async def _origin(
    git: Git,
    budget: Budget,
    lines: list[str],
    line: int,
    revisions: list[Commit],
    revisions_capped: bool,
    paths: list[str],
) -> dict:
    origin: dict = {"word": None, "declined": None, "returned": 0, "total": 0, "commits": []}
    reason = decline_reason(lines, line, paths[0])
    if reason:
        origin["declined"] = reason
        origin["note"] = DECLINED[reason].format(line=line)
        origin["candidates"] = []
        return origin
    found = candidates(lines[line - 1], "\n".join(lines))
    origin["candidates"] = []
    if not found:
        origin["declined"] = "no word"
        origin["note"] = (
            f"line {line} has no word of three or more letters that is not a keyword: "
            "nothing distinctive to pickaxe"
        )
        return origin
    floor = revisions[-1] if revisions else None
    seen = {c.sha for c in revisions}
    accepted: tuple[str, list[Commit]] | None = None
    for word, in_file in found:
        entry: dict = {"word": word, "in_file": in_file, "walked": False}
        origin["candidates"].append(entry)
        if accepted is not None:
            continue
        if budget.pickaxe_left() <= 0:
            entry["skipped"] = "pickaxe budget spent"
            continue
        try:
            rows, whole = await _pickaxe(git, word, paths)
        except GitTimeout:
            entry["skipped"] = "timed out"
            break
        except BudgetSpent:
            entry["skipped"] = "pickaxe budget spent"
            continue
        entry["walked"] = True
        entry["commits"] = len(rows)
        if not whole:
            # the oldest rows were past what was read: the origin is not known
            entry["cut"] = True
            budget.notes.append(f"git log -S {word}: output over {PICKAXE_KEEP_BYTES:,} bytes")
            rows = []
        if rows:
            entry["oldest"] = {"sha": rows[0].sha[:12], "date": stamps.date(rows[0].authored)}
        reaches = (
            bool(rows)
            and rows[0].sha not in seen
            and (floor is None or _when(rows[0].committed) < _when(floor.committed))
        )
        entry["reaches_further"] = reaches
        if reaches:
            accepted = (word, rows)
    if accepted is None:
        walked = sum(1 for c in origin["candidates"] if c["walked"])
        unwalked = len(origin["candidates"]) - walked
        if any(c.get("skipped") == "timed out" for c in origin["candidates"]):
            note = "the pickaxe timed out before a word reached further back"
        elif any(c.get("skipped") == "pickaxe budget spent" for c in origin["candidates"]):
            note = (
                f"none of the {walked} words walked reaches further back than the revision "
                f"chain; stopped at the budget of {budget.max_pickaxe_walks} pickaxe walks "
                f"({unwalked} candidates not walked)"
            )
        else:
            note = (
                f"none of the {walked} words reaches further back than the revision chain: "
                "the revision chain is this line's history in this file"
            )
        if revisions_capped:
            note += (
                f"; the revision chain was cut at {REVISIONS_CAP}, so its older revisions "
                "were not compared"
            )
        origin["note"] = note
        return origin
    word, rows = accepted
    origin["word"] = word
    origin["order"] = "oldest first: the commit that brought the word in, then each change"
    origin["total"] = len(rows)
    origin["commits"] = rows[:ORIGIN_CAP]  # mapped to rows by the caller
    origin["returned"] = len(origin["commits"])
    return origin


async def _merge_that_carried(git: Git, sha: str) -> Commit | None:
    """The first-parent commit that brought ``sha`` in: the oldest commit on HEAD's
    first-parent line that descends from it. A merge whose first parent is not ``sha``
    carried it; anything else means ``sha`` was committed on the line itself."""
    try:
        first_parent = await git.run(
            [
                "log",
                "--first-parent",
                "--format=%H%x1f%P%x1f%aI%x1f%cI%x1f%an%x1f%s",
                f"{sha}..HEAD",
            ],
            what="git log --first-parent (carrying merge)",
            keep_bytes=16_000_000,
        )
        ancestry = await git.run(
            ["rev-list", "--ancestry-path", f"{sha}..HEAD"],
            what="git rev-list --ancestry-path (carrying merge)",
            keep_bytes=16_000_000,
        )
    except (GitTimeout, GitFailed):
        return None
    if not (first_parent.complete and ancestry.complete):
        return None
    descendants = set(ancestry.text.split())
    for row in reversed(first_parent.text.splitlines()):
        fields = row.split("\x1f")
        if len(fields) != 6 or fields[0] not in descendants:
            continue
        parents = fields[1].split()
        if len(parents) > 1 and parents[0] != sha:
            return Commit(fields[0], fields[2], fields[3], fields[4], fields[5])
        return None
    return None


# --- the marts --------------------------------------------------------------------------------

_ALIASES = """
select distinct a.path
from marts.relore_path_aliases(%(repo_id)s::bigint, %(paths)s::text[]) as a (path)
"""

_CARRIED = """
select c.sha, c.thread_number as number, c.source
from marts.thread_commits as c
join marts.threads as t on t.repo_id = c.repo_id and t.number = c.thread_number
where t.repo_id = %(repo_id)s and t.kind = 'pr' and not t.is_deleted
  and c.sha = any(%(shas)s) and c.source in ('merge_commit', 'head', 'review_anchor')
"""

_PULLS = """
select t.number, t.title, t.display_state, t.merged_at, t.created_at, t.url,
       t.author_login, t.opening_post_trust
from marts.threads as t
where t.repo_id = %(repo_id)s and t.kind = 'pr' and not t.is_deleted
  and t.number = any(%(numbers)s)
"""

_REVIEW_COMMENTS = (
    """
select"""
    + WHOLE_COMMENT
    + """
from marts.documents as d
where d.repo_id = %(repo_id)s and d.thread_number = %(number)s
  and d.document_kind = 'review_comment' and not d.is_deleted
  and d.path = any(%(paths)s)
group by d.source_document_id
"""
)


class _Marts:
    """The marts, a connection borrowed per query: a request never holds one of the pool's
    few connections while git walks history."""

    def __init__(self, pool: AsyncConnectionPool):
        self.pool = pool

    async def rows(self, sql: str, params: dict) -> list[dict]:
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()


async def _aliases(marts: _Marts, repo_id: int | None, paths: list[str]) -> list[str]:
    if repo_id is None:  # not indexed: no other names known (null would be every repo's)
        return sorted({p for p in paths if p is not None})
    rows = await marts.rows(_ALIASES, {"repo_id": repo_id, "paths": paths})
    return sorted(r["path"] for r in rows)


async def _map_commits(marts: _Marts, repo_id: int, commits: list[Commit]) -> dict[str, dict]:
    """sha -> the pull request that carried it, with how we know (``via``)."""
    shas = sorted({c.sha for c in commits})
    if not shas:
        return {}
    by_sha: dict[str, list[tuple[str, int]]] = {}
    for row in await marts.rows(_CARRIED, {"repo_id": repo_id, "shas": shas}):
        by_sha.setdefault(row["sha"], []).append((row["source"], row["number"]))
    subjects = {c.sha: subject_number(c.subject) for c in commits}
    numbers = sorted(
        {n for pairs in by_sha.values() for _, n in pairs}
        | {n for n in subjects.values() if n is not None}
    )
    if not numbers:
        return {}
    pulls = {
        row["number"]: row
        for row in await marts.rows(_PULLS, {"repo_id": repo_id, "numbers": numbers})
    }
    mapped = {}
    for sha in shas:
        options = list(by_sha.get(sha, []))
        if subjects.get(sha) is not None:
            options.append(("subject", subjects[sha]))
        options = [(s, n) for s, n in options if n in pulls]
        if not options:
            continue
        source, number = min(options, key=lambda item: CARRYING.index(item[0]))
        mapped[sha] = {**_pull(pulls[number]), "via": source}
    return mapped


def _pull(row: dict) -> dict:
    return {
        "number": row["number"],
        "title": one_line(row["title"]),
        "state": row["display_state"],
        "author": row["author_login"],
        "trust": row["opening_post_trust"],
        "url": row["url"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
        **({"merged_date": stamps.date(row["merged_at"])} if row.get("merged_at") else {}),
    }


def _short_pull(pull: dict | None) -> dict | None:
    if pull is None:
        return None
    keep = ("number", "title", "state", "url", "via")
    return {k: pull[k] for k in keep if k in pull}


async def _review_comments(
    marts: _Marts, repo_id: int, number: int, paths: list[str], lines: set[int]
) -> dict:
    rows = await marts.rows(
        _REVIEW_COMMENTS, {"repo_id": repo_id, "number": number, "paths": paths}
    )
    near = []
    for row in rows:
        anchors = {a for a in (row["line"], row["original_line"]) if a is not None}
        if not anchors:
            continue
        distance = min(abs(a - wanted) for a in anchors for wanted in lines)
        if distance <= NEAR_LINES:
            near.append((distance, row))
    near.sort(key=lambda item: (item[0], item[1]["created_at"], item[1]["id"]))
    chosen = near[:COMMENTS_CAP]
    comments = []
    for distance, row in chosen:
        comments.append(
            {
                **comment_row(row, chars=COMMENT_CHARS),
                "path": row["path"],
                "line": row["line"] if row["line"] is not None else row["original_line"],
                "distance": distance,
            }
        )
    return {
        "window": NEAR_LINES,
        "returned": len(comments),
        "total": len(near),
        "on_file": len(rows),
        "comments": comments,
    }


# --- the answer -------------------------------------------------------------------------------


async def why(pool: AsyncConnectionPool, request: WhyRequest, clone: Path) -> dict:
    budget = Budget(max_pickaxe_walks=MAX_PICKAXE_WALKS)
    git = Git(clone, budget)
    marts = _Marts(pool)
    head = (await git.run(["rev-parse", "HEAD"], what="git rev-parse HEAD")).text.strip()
    found = await marts.rows(repos.FIND, {"repo": request.repo})
    repo_id = found[0]["repo_id"] if found else None
    indexed = repo_id is not None
    try:
        blob = await git.run(
            ["cat-file", "blob", f"HEAD:{request.path}"],
            what="git cat-file",
            keep_bytes=MAX_FILE_BYTES,
        )
    except GitFailed:
        known = await _aliases(marts, repo_id, [request.path])
        others = [p for p in known if p != request.path][:MAX_ALIASES]
        raise NotFound(
            f"{request.path} is not a file at HEAD ({head[:12]}) of {request.repo}'s clone"
            + (f"; the same file has also been: {', '.join(map(fence, others))}" if others else "")
        ) from None
    if not blob.complete:
        raise BadRequest(f"{request.path} is over {MAX_FILE_BYTES:,} bytes: not blamed here")
    if "\x00" in blob.text[:8000]:
        raise BadRequest(f"{request.path} is a binary file: it has no lines to blame")
    lines = _lines(blob.text)
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
    blame = _blame(porcelain.text)
    revisions, revision_state = await _revisions(git, request.path, request.line)
    names = list(dict.fromkeys([request.path, blame["filename"] or request.path]))
    known = await _aliases(marts, repo_id, names)
    paths = list(dict.fromkeys([*names, *known]))[:MAX_ALIASES]
    origin = await _origin(
        git, budget, lines, request.line, revisions, bool(revision_state.get("capped")), paths
    )
    origin_commits: list[Commit] = origin.pop("commits")
    blamed = Commit(blame["sha"], "", "", "", blame["subject"])
    mapped: dict[str, dict] = {}
    carrier: Commit | None = None
    if indexed:
        mapped = await _map_commits(marts, repo_id, [blamed, *revisions, *origin_commits])
        if blame["sha"] not in mapped and not blame["boundary"]:
            carrier = await _merge_that_carried(git, blame["sha"])
            if carrier is not None:
                via_merge = await _map_commits(marts, repo_id, [carrier])
                if carrier.sha in via_merge:
                    mapped[blame["sha"]] = {
                        **via_merge[carrier.sha],
                        "via": f"merge {carrier.sha[:12]} ({via_merge[carrier.sha]['via']})",
                    }
    pull = mapped.get(blame["sha"])
    comments = None
    if pull is not None:
        comments = await _review_comments(
            marts, repo_id, pull["number"], paths, {request.line, blame["original_line"]}
        )
    page: dict = {
        "repo": request.repo,
        "path": request.path,
        "line": request.line,
        "head": head,
        "text": quote(lines[request.line - 1].rstrip()[:LINE_CHARS]),
        "blame": blame,
        "pull_request": pull,
        "review_comments": comments,
        "revisions": {
            "returned": len(revisions),
            "total": len(revisions) + (1 if revision_state.get("capped") else 0),
            "total_is_lower_bound": bool(revision_state.get("capped")),
            "order": "newest first",
            "commits": [
                {**c.row(), "pull_request": _short_pull(mapped.get(c.sha))} for c in revisions
            ],
        },
        "origin": {
            **origin,
            "commits": [
                {**c.row(), "pull_request": _short_pull(mapped.get(c.sha))} for c in origin_commits
            ],
        },
        "aliases": [p for p in paths if p != request.path],
    }
    if revision_state.get("timed_out"):
        page["revisions"]["note"] = "git log -L timed out: the revision chain is missing"
    if pull is None:
        page["pull_request_note"] = _no_pull_note(request.repo, indexed, blame, carrier)
    page["budget"] = budget.report()
    return page


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
