"""The semantic leg of a search: the threads whose passages are nearest a question in meaning.

The question is embedded here, in the daemon, by the same encoder that embedded the passages
(``encoder.Encoder``, numpy, no torch), and pgvector's HNSW index finds the nearest vectors
of the repository under that model. A vector counts only while a passage of a live thread
still has its text (the join on ``text_hash``), on the same trust floor and filters as the
lexical leg. A thread is ranked by its nearest passage, and that passage's document is what
the page shows of it.

``Off`` says why the tier did not answer (no pgvector, nothing embedded yet, no encoder); the
search goes on lexically and the page says so.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from relore.serve.semantic import store

DEPTH = 50  # threads the leg offers the fusion
# BLAS threads for a question's one forward pass. Two split a lone text's matrix products
# across both cores and wait on each other at every one: with the index's walks beside it
# (a fused page asks meaning and the words at once) or another request's, one of the two is
# descheduled and the pass took 230-480 ms p50 against 66-80 with one thread (20 change
# descriptions at 1.2M documents, load 5; quiet: ~17 against ~23).
# benchmarks/results/intent-slices.md, #36.
QUERY_THREADS = 1
CANDIDATES = 100  # nearest passages read to find them (a thread has 1.3 on average)
EF_SEARCH = 100

# pgvector, and the tables the tier reads, in one round trip
_STATE = """
select
    exists (select 1 from pg_extension where extname = 'vector') as has_vector,
    to_regclass('semantic.embeddings') is not null and to_regclass('semantic.marks') is not null
        and to_regclass('marts.semantic_passages') is not null as ready
"""

# The nearest passages, then each thread's nearest. A passage exists only for a live
# document of a live thread (the build removes the rest with them), so threads and
# documents are read only to apply a filter the caller named.
_NEAREST = """
with nearest as (
    select e.repo_id, e.text_hash, e.embedding <=> %(query)s::vector as distance
    from semantic.embeddings as e
    where e.repo_id = any(%(repo_ids)s::bigint[]) and e.model_key = %(model_key)s
    order by e.embedding <=> %(query)s::vector
    limit %(candidates)s
),
passages as (
    select
        p.repo_id, p.thread_number, p.document_id, n.distance,
        row_number() over (
            partition by p.repo_id, p.thread_number order by n.distance, p.passage_index
        ) as nearest_in_thread
    from nearest as n
    join marts.semantic_passages as p
        on p.repo_id = n.repo_id and p.text_hash = n.text_hash
    where p.trust_tier = any(%(tiers)s::text[])
)
select p.repo_id, p.thread_number, p.document_id, 1 - p.distance as similarity
from passages as p
{filtered}
where p.nearest_in_thread = 1 {filters}
order by p.distance, p.repo_id, p.thread_number
limit %(depth)s
"""
_FILTERED = (
    "join marts.threads as t on t.repo_id = p.repo_id and t.number = p.thread_number\n"
    "join marts.documents as d on d.repo_id = p.repo_id and d.document_id = p.document_id"
)
_FILTERS = {
    "state": "and %(state)s in (t.state, t.github_state)",  # closed: merged ones too
    "author": "and lower(d.author_login) = lower(%(author)s)",
    "since": "and d.created_at >= %(since)s",
}


def _nearest_sql(filters: dict) -> str:
    named = [clause for name, clause in _FILTERS.items() if filters.get(name)]
    return _NEAREST.format(filtered=_FILTERED if named else "", filters=" ".join(named))


@dataclass(frozen=True)
class Near:
    thread_number: int
    document_id: str
    similarity: float
    repo_id: int = 0


@dataclass(frozen=True)
class Off:
    reason: str


_encoder = None
_encoder_error: str | None = None
_encoder_lock = threading.Lock()


def encoder():
    """The daemon's one encoder, loaded on first use (None, with a reason, when it cannot)."""
    global _encoder, _encoder_error
    with _encoder_lock:
        if _encoder is None and _encoder_error is None:
            try:
                from relore.serve.semantic import encoder as encoders

                # the model RELORE_ENCODER chooses
                _encoder = encoders.load(threads=QUERY_THREADS)
            except ImportError as exc:
                _encoder_error = f"the semantic extra is not installed: {exc.name} is missing"
            except (OSError, ValueError) as exc:  # a model not installed: what installs it
                _encoder_error = f"the encoder could not load: {exc}"
        return _encoder


def encoder_error() -> str | None:
    return _encoder_error


# the model whose vectors this repository holds, when it is not this daemon's
_OTHER_MODEL = """
select model_key from semantic.marks
where repo_id = %(repo_id)s and model_key <> %(model_key)s
order by changed_at desc
limit 1
"""


async def _other_model(cur, repo_id: int, model) -> str | None:
    """Why nothing is embedded under this daemon's model when another model's vectors are
    there (None: there are none): which model made them, and what to run."""
    await cur.execute(_OTHER_MODEL, {"repo_id": repo_id, "model_key": model.model_key})
    row = await cur.fetchone()
    if row is None:
        return None
    from relore.serve.semantic.choices import CHOICES

    theirs = row["model_key"]
    mine = model.choice or "a local model"
    by_name = {choice.name: key for key, choice in CHOICES.items()}
    other = by_name.get(theirs.partition("@")[0])
    if other is not None and other != model.choice:
        return (
            f"this repository's vectors were made by {theirs.partition('@')[0]} and this "
            f"daemon encodes questions with {model.name} (RELORE_ENCODER={mine}): restart it "
            f"with RELORE_ENCODER={other}, or run relored embed with RELORE_ENCODER={mine}"
        )
    return (
        f"this repository's vectors were made by {theirs}, not by this daemon's "
        f"{model.model_key}: run relored embed with the daemon's RELORE_ENCODER ({mine})"
    )


def _cache_size() -> int:
    """As many query vectors as RELORE_SEARCH_CACHE keeps results (0: none; relored serve
    refuses a value that is not a count)."""
    try:
        return max(0, int(os.environ.get("RELORE_SEARCH_CACHE", "1024")))
    except ValueError:
        return 1024


@functools.lru_cache(maxsize=_cache_size())
def _query_vector(text: str):
    """A question's vector (a question asked again is not embedded again: ~8 ms each)."""
    return encoder().encode([text])[0]


async def _ready(cur) -> str | None:
    """Why the tier cannot answer in this database (None: it can). Asked before the encoder
    loads, so a database with nothing embedded never loads it."""
    await cur.execute(_STATE)
    found = await cur.fetchone()
    if not found["has_vector"]:
        return "this database has no pgvector; a superuser runs CREATE EXTENSION vector"
    if not found["ready"]:
        return "nothing is embedded yet; run relored embed after dbt build"
    return None


async def state(cur, repo_id: int) -> dict:
    """The tier for one repository as ``status`` shows it: on (how much is embedded) or off
    (and why)."""
    reason = await _ready(cur)
    model = encoder() if reason is None else None
    if reason is None and model is None:
        reason = encoder_error() or "the encoder is not loaded"
    if reason is not None:
        return {"state": "off", "reason": reason}
    await cur.execute(store.COVERAGE, {"repo_id": repo_id, "model_key": model.model_key})
    row = await cur.fetchone()
    if not row["embedded"]:
        other = await _other_model(cur, repo_id, model)
        reason = other or "nothing embedded yet; run relored embed"
    return {
        "state": "on" if row["embedded"] else "off",
        **({} if row["embedded"] else {"reason": reason}),
        "passages": row["passages"],
        "embedded": row["embedded"],
        "embedded_at": row["changed_at"].isoformat() if row["changed_at"] else None,
        "model": model.model_key,
    }


async def nearest(cur, repo_id: int | list[int], text: str, filters: dict) -> list[Near] | Off:
    """The threads nearest ``text`` in the repository (or in any of several: similarity is
    one scale across them), best first; or why there are none."""
    repo_ids = [repo_id] if isinstance(repo_id, int) else list(repo_id)
    reason = await _ready(cur)
    if reason is not None:
        return Off(reason)
    model = encoder()
    if model is None:
        return Off(encoder_error() or "the encoder is not loaded")
    await cur.execute(store.MARK, {"repo_ids": repo_ids, "model_key": model.model_key})
    if await cur.fetchone() is None:
        other = await _other_model(cur, repo_ids[0], model) if len(repo_ids) == 1 else None
        return Off(other or "nothing is embedded for this repository yet; run relored embed")
    vector = await asyncio.to_thread(_query_vector, text)
    since = filters.get("since")
    params = {
        "query": store.vector_literal(vector),
        "repo_ids": repo_ids,
        "model_key": model.model_key,
        "candidates": CANDIDATES,
        "depth": DEPTH,
        "tiers": list(filters["tiers"]),
        "state": filters.get("state"),
        "author": filters.get("author"),
        "since": datetime.fromisoformat(since).replace(tzinfo=UTC) if since else None,
    }
    async with cur.connection.transaction():
        # the index's candidate list as long as the passages read, and filtered scans go on
        # past rows another repository or model holds (pgvector's iterative scan)
        await cur.execute(
            "select set_config('hnsw.ef_search', %s, true),"
            " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            (str(EF_SEARCH),),
        )
        await cur.execute(_nearest_sql(filters), params)
        rows = await cur.fetchall()
    return [
        Near(r["thread_number"], r["document_id"], float(r["similarity"]), r["repo_id"])
        for r in rows
    ]
