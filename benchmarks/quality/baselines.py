"""The two baselines, over the same documents relore serves (``marts.documents``).

grep: every document (title, review path, body text, diff hunk: what relore's search vector
holds)
exported as one file, ``<export>/<owner>__<name>/<number>/<document>.txt``. A query is split
on whitespace into terms (surrounding punctuation stripped, case folded, at most 32); each term
is one real ``grep -r -c -i -F -- TERM <repo dir>`` over the item's repository. A document
ranks by how many terms it contains, then by how many of its lines match, then by path. An
issue number (inflight) is one term, ``#N``, with ``-w`` so ``#12`` does not match ``#123``.

websearch_to_tsquery: ``ts_rank(to_tsvector('english', title || path || body || hunk),
websearch_to_tsquery('english', q))`` over the item's repository, documents that match only,
best first; nothing else (no weights, no fallback when the conjunction is empty).

Both index every document, bot-written ones included (neither has a trust floor).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import psycopg

MAX_TERMS = 32
_STRIP = "\"'`()[]{}<>,;:.!?*"


def _slug(repo: str) -> str:
    return repo.lower().replace("/", "__")


def export(url: str, root: Path) -> dict[str, tuple[str, int, str]]:
    """Write one file per document; return path -> (repo, number, document_id)."""
    if root.exists():
        shutil.rmtree(root)
    index = {}
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            """
            select repo, thread_number, document_id, coalesce(title, ''), coalesce(path, ''),
                   coalesce(body_text, '') || E'\n' || coalesce(diff_hunk, '')
            from marts.documents
            where not is_deleted
            order by repo, thread_number, document_id
            """
        ).fetchall()
    for repo, number, document_id, title, path, body in rows:
        folder = root / _slug(repo) / str(number)
        folder.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", document_id) + ".txt"
        target = folder / name
        target.write_text(f"{title}\n{path}\n{body}\n", encoding="utf-8")
        index[str(target)] = (repo, number, document_id)
    return index


def grep_terms(query: str) -> list[str]:
    terms = []
    for raw in query.split():
        term = raw.strip(_STRIP)
        if len(term) < 2 or not re.search(r"[A-Za-z0-9]", term):
            continue
        if term.lower() not in (t.lower() for t in terms):
            terms.append(term)
    return terms[:MAX_TERMS]


def grep_rank(root: Path, index: dict, repo: str, terms: list[str], *, words: bool = False):
    """Documents of ``repo`` ranked by terms contained, then matching lines, then path."""
    folder = root / _slug(repo)
    contains: dict[str, int] = defaultdict(int)
    lines: dict[str, int] = defaultdict(int)
    for term in terms:
        command = ["grep", "-r", "-c", "-i", "-F", *(["-w"] if words else []), "--", term]
        result = subprocess.run(
            [*command, str(folder)], capture_output=True, text=True, check=False
        )
        if result.returncode not in (0, 1):
            raise RuntimeError(f"grep failed: {result.stderr}")
        for line in result.stdout.splitlines():
            path, _, count = line.rpartition(":")
            if int(count) > 0:
                contains[path] += 1
                lines[path] += int(count)
    ranked = sorted(contains, key=lambda p: (-contains[p], -lines[p], p))
    return [(*index[p][:2], index[p][2], contains[p]) for p in ranked]


_TS_RANK = """
with q as (
    select websearch_to_tsquery('english', %(q)s) as query
),
docs as (
    select
        d.repo, d.thread_number, d.document_id,
        to_tsvector(
            'english',
            coalesce(d.title, '') || ' ' || coalesce(d.path, '') || ' ' || coalesce(d.body_text, '')
            || ' ' || coalesce(d.diff_hunk, '')
        ) as vector
    from marts.documents as d
    where not d.is_deleted and lower(d.repo) = lower(%(repo)s)
)
select docs.repo, docs.thread_number, docs.document_id, ts_rank(docs.vector, q.query) as rank
from docs cross join q
where docs.vector @@ q.query
order by rank desc, docs.document_id
limit 200
"""


def ts_rank(conn: psycopg.Connection, repo: str, query: str) -> list[tuple[str, int, str, float]]:
    return [
        (r, n, d, float(rank))
        for r, n, d, rank in conn.execute(_TS_RANK, {"q": query, "repo": repo}).fetchall()
    ]
