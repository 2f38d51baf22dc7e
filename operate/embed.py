"""``relored embed``: the semantic tier's vectors, for the passages that have none yet.

Run after ``dbt build`` (beside ``relored index``). ``marts.semantic_passages`` says what a
thread's passages are, each with ``text_hash`` (sha256 of its exact text); this job embeds
every text whose hash has no vector under the current model in ``semantic.embeddings``, in
batches each committed as it is done (a killed run keeps what it finished and the next one
goes on from there), then retires the vectors no passage references any more (the text
changed, the thread was deleted, the model changed). An unchanged text is never embedded
twice; a run with nothing new embeds nothing and writes nothing.

pgvector is the one thing it needs from the server: the embedded Postgres has it (made by
its superuser at ``relored db start``); on a server of one's own a superuser runs
``CREATE EXTENSION vector`` once. Without it the job says so and stops; the rest of relore
works as before and ``relored doctor`` / ``relore status`` say the tier is off.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import TextIO

import psycopg

from relore.operate.exits import ExitStatus
from relore.serve import repos
from relore.serve.semantic import store

PROGRESS_EVERY_S = 2.0
# texts per transaction: the encoder sorts them by length into its own batches
BATCH = 256

_STORE = """
create table if not exists semantic.embeddings (
    repo_id     bigint      not null,
    -- what made the vector (model, package, weights digest, settings): encoder.model_key
    model_key   text        not null,
    -- sha256 of the exact text embedded (marts.semantic_passages.text_hash)
    text_hash   text        not null,
    embedding   vector({dimension}) not null,
    embedded_at timestamptz not null default clock_timestamp(),
    primary key (repo_id, model_key, text_hash)
);
-- the nearest vectors by cosine distance, approximately, at any size
create index if not exists embeddings_nearest
    on semantic.embeddings using hnsw (embedding vector_cosine_ops);
-- when a repository's vectors last changed (status shows it; none: nothing embedded yet)
create table if not exists semantic.marks (
    repo_id    bigint      not null,
    model_key  text        not null,
    changed_at timestamptz not null,
    primary key (repo_id, model_key)
);
"""

_MISSING_COUNT = """
select count(distinct p.text_hash)
from marts.semantic_passages as p
where p.repo_id = %(repo_id)s
    and not exists (
        select 1 from semantic.embeddings as e
        where e.repo_id = p.repo_id and e.model_key = %(model_key)s
            and e.text_hash = p.text_hash
    )
"""

# the next batch of texts without a vector, in text_hash order after the last one taken
_MISSING = """
select distinct on (p.text_hash) p.text_hash, p.passage_text
from marts.semantic_passages as p
where p.repo_id = %(repo_id)s and p.text_hash > %(after)s
    and not exists (
        select 1 from semantic.embeddings as e
        where e.repo_id = p.repo_id and e.model_key = %(model_key)s
            and e.text_hash = p.text_hash
    )
order by p.text_hash
limit %(limit)s
"""

_RETIRE = """
delete from semantic.embeddings as e
where e.repo_id = %(repo_id)s
    and (
        e.model_key <> %(model_key)s
        or not exists (
            select 1 from marts.semantic_passages as p
            where p.repo_id = e.repo_id and p.text_hash = e.text_hash
        )
    )
"""

_MARK = """
insert into semantic.marks (repo_id, model_key, changed_at)
values (%(repo_id)s, %(model_key)s, clock_timestamp())
on conflict (repo_id, model_key) do update set changed_at = excluded.changed_at
"""


class Unavailable(Exception):
    """The tier cannot run here (no pgvector, no semantic extra, no passages mart)."""


@dataclass
class Report:
    repo: str
    repo_id: int
    embedded: int
    retired: int
    vectors: int
    seconds: float


def ensure_store(conn: psycopg.Connection, dimension: int) -> None:
    """pgvector and the tables, made if missing (the extension only if the role may)."""
    if not store.has_vector(conn):
        try:
            with conn.transaction():
                conn.execute("create extension if not exists vector")
        except psycopg.Error as exc:
            raise Unavailable(
                "the semantic tier needs pgvector in this database, and this role cannot "
                f"create it ({exc.diag.message_primary}): a superuser runs "
                "`CREATE EXTENSION vector;` once (the embedded server has it already)"
            ) from None
    if conn.execute("select to_regclass('marts.semantic_passages')").fetchone()[0] is None:
        raise Unavailable("marts.semantic_passages is not built: run `dbt build` first")
    with conn.transaction():
        conn.execute("create schema if not exists semantic")
        conn.execute(_STORE.format(dimension=int(dimension)))
    column = store.vector_dimension(conn)
    if column != dimension:
        raise Unavailable(
            f"semantic.embeddings holds {column}-dimensional vectors and this model makes "
            f"{dimension} (RELORE_ENCODER chose another model than the stored vectors'): "
            "`relored embed --replace` drops every stored vector and embeds all again, or "
            "set RELORE_ENCODER back"
        )


def embed_repo(conn: psycopg.Connection, encoder, repo: str, repo_id: int, progress=None) -> Report:
    """Embed what ``repo`` lacks, then retire what it no longer references."""
    start = time.monotonic()
    key = {"repo_id": repo_id, "model_key": encoder.model_key}
    missing = conn.execute(_MISSING_COUNT, key).fetchone()[0]
    embedded, after = 0, ""
    while True:
        rows = conn.execute(_MISSING, {**key, "after": after, "limit": BATCH}).fetchall()
        if not rows:
            break
        vectors = encoder.encode([text for _, text in rows])
        with conn.transaction(), conn.cursor() as cur:
            with cur.copy(
                "copy semantic.embeddings (repo_id, model_key, text_hash, embedding) from stdin"
            ) as copy:
                for (text_hash, _), vector in zip(rows, vectors, strict=True):
                    copy.write_row(
                        (repo_id, encoder.model_key, text_hash, store.vector_literal(vector))
                    )
            cur.execute(_MARK, key)
        embedded += len(rows)
        after = rows[-1][0]
        if progress is not None:
            progress(embedded, missing, time.monotonic() - start)
    with conn.transaction():
        retired = conn.execute(_RETIRE, key).rowcount
        if retired:
            conn.execute(_MARK, key)
    vectors = conn.execute(
        "select count(*) from semantic.embeddings where repo_id = %(repo_id)s"
        " and model_key = %(model_key)s",
        key,
    ).fetchone()[0]
    return Report(repo, repo_id, embedded, retired, vectors, round(time.monotonic() - start, 2))


def load_encoder(env=None):
    """The encoder RELORE_ENCODER chooses (all-MiniLM-L6-v2 unless it says mpnet)."""
    try:
        from relore.serve.semantic import encoder
    except ImportError as exc:
        raise Unavailable(
            f"relored embed needs the semantic extra ({exc.name} is missing): "
            "pip install 'relore[semantic]'"
        ) from None
    try:
        return encoder.load(env)
    except FileNotFoundError as exc:  # the chosen model is not installed: what installs it
        raise Unavailable(str(exc)) from None


def replace_store(conn: psycopg.Connection) -> None:
    """Every stored vector dropped, so a model of another dimension can be embedded."""
    with conn.transaction():
        conn.execute("drop table if exists semantic.embeddings, semantic.marks")


def run(
    repo: str | None, env, out: TextIO, err: TextIO, *, as_json: bool, replace: bool = False
) -> int:
    from relore.operate import database

    url = database.ensure_database(env)
    reports = []
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            encoder = load_encoder(env)
            if replace:
                replace_store(conn)
            ensure_store(conn, encoder.dimension)
            targets = repos.targets(conn, repo)
            if targets is None:
                print(f"relored: {repo} is not indexed here (run dbt build first)", file=err)
                return ExitStatus.ERROR
            for repo_id, name in targets:
                shown = [time.monotonic()]

                def progress(done: int, total: int, seconds: float, name=name, shown=shown):
                    if time.monotonic() - shown[0] < PROGRESS_EVERY_S and done < total:
                        return
                    shown[0] = time.monotonic()
                    rate = done / seconds if seconds else 0.0
                    left = f", ~{(total - done) / rate / 60:.1f} min left" if rate else ""
                    print(
                        f"{name}: {done:,} of {total:,} passages embedded ({rate:.1f}/s{left})",
                        file=err,
                        flush=True,
                    )

                reports.append(embed_repo(conn, encoder, name, repo_id, progress))
    except Unavailable as exc:
        print(f"relored: {exc}", file=err)
        return ExitStatus.ENCODER_UNAVAILABLE
    if as_json:
        print(
            json.dumps({"model": encoder.model_key, "repos": [asdict(r) for r in reports]}),
            file=out,
        )
        return ExitStatus.OK
    for r in reports:
        print(
            f"{r.repo}: embedded {r.embedded:,} passages, retired {r.retired:,} vectors, "
            f"{r.vectors:,} held, in {r.seconds:.2f} s",
            file=out,
        )
    if not reports:
        print("nothing to embed: no repository has documents (run dbt build first)", file=out)
    return ExitStatus.OK
