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

BM25 over whole threads: one text per thread, its title once and every document's path,
body text and diff hunk (all its turns), tokenised as ``websearch_to_tsquery`` reads it (Postgres'
``english`` configuration: ``to_tsvector`` per document, a lexeme's term frequency the number
of positions it holds there, summed over the thread; stop words dropped, words stemmed). A
query is the set of its distinct lexemes (``to_tsvector('english', q)``); each thread that
holds any of them scores textbook Okapi BM25, k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5)
/ (n + 0.5)) over the item's repository's threads (N threads, n holding the lexeme), the
length a thread's lexeme count. No field weights, no phrase, no fallback; ties by number.

All three index every document, bot-written ones included (none has a trust floor).
"""

from __future__ import annotations

import math
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


# -- BM25 over whole threads ------------------------------------------------------------------

K1 = 1.2
B = 0.75

_THREAD_TERMS = """
with per_document as (
    select d.repo, d.thread_number, t.lexeme, cardinality(t.positions) as tf
    from marts.documents as d
    cross join lateral unnest(
        to_tsvector(
            'english',
            coalesce(d.path, '') || ' ' || coalesce(d.body_text, '') || ' '
            || coalesce(d.diff_hunk, '')
        )
    ) as t
    where not d.is_deleted
    union all
    -- the title once per thread
    select d.repo, d.thread_number, t.lexeme, cardinality(t.positions) as tf
    from (
        select distinct on (repo, thread_number) repo, thread_number, title
        from marts.documents
        where not is_deleted and title is not null
        order by repo, thread_number, document_id
    ) as d
    cross join lateral unnest(to_tsvector('english', d.title)) as t
)
select lower(repo), thread_number, lexeme, sum(tf)::integer
from per_document
group by 1, 2, 3
"""


class ThreadBM25:
    """Every repository's threads as BM25 documents (built once, held in memory)."""

    def __init__(self, conn: psycopg.Connection):
        self.tf: dict[str, dict[int, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
        for repo, number, lexeme, tf in conn.execute(_THREAD_TERMS):
            self.tf[repo][number][lexeme] = tf
        self.length = {
            repo: {n: sum(terms.values()) for n, terms in threads.items()}
            for repo, threads in self.tf.items()
        }
        self.df: dict[str, dict[str, int]] = {}
        for repo, threads in self.tf.items():
            df: dict[str, int] = defaultdict(int)
            for terms in threads.values():
                for lexeme in terms:
                    df[lexeme] += 1
            self.df[repo] = dict(df)

    def rank(self, conn: psycopg.Connection, repo: str, query: str) -> list[tuple[str, int, float]]:
        """Threads of ``repo`` holding any of the query's lexemes, best first."""
        repo = repo.lower()
        row = conn.execute(
            "select tsvector_to_array(to_tsvector('english', %s))", (query,)
        ).fetchone()
        lexemes = set(row[0])
        threads, df, lengths = (
            self.tf.get(repo, {}),
            self.df.get(repo, {}),
            self.length.get(repo, {}),
        )
        if not threads:
            return []
        n_threads = len(threads)
        average = sum(lengths.values()) / n_threads
        idf = {
            x: math.log(1 + (n_threads - df[x] + 0.5) / (df[x] + 0.5)) for x in lexemes if x in df
        }
        scores: dict[int, float] = {}
        for number, terms in threads.items():
            norm = K1 * (1 - B + B * lengths[number] / average)
            score = 0.0
            for lexeme, weight in idf.items():
                tf = terms.get(lexeme)
                if tf:
                    score += weight * tf * (K1 + 1) / (tf + norm)
            if score > 0:
                scores[number] = score
        ranked = sorted(scores, key=lambda n: (-scores[n], n))
        return [(repo, n, scores[n]) for n in ranked]
