"""The SQL around the search index: the caller's words and filters going in, the page's
text coming out. Ranking itself is the index's (serve/lexical): BM25 over every match.

Going in, one round trip: the caller's text as lexemes (``to_tsvector``, the very parser and
dictionaries ``search_vector`` was built with), each signal filter through the models' own
normaliser functions (the index holds each thread's signals in that form), and the marks the
index is compared with. Values are compared literally as terms, never as patterns:
``--file %`` is a file named ``%``.

Coming out, only the page's documents are read back, with a snippet cut around the words
that matched (in the body; for a review comment that matched only on the code it is anchored
to, its opening words and the hunk's lines holding the words) and how many of the caller's
lexemes each document holds.
"""

from __future__ import annotations

from relore.serve.lexical import source

# A lexeme as a one-lexeme tsquery: quoted, since a lexeme may hold tsquery operators.
QUOTED = r"""('''' || replace(replace({0}, '\', '\\'), '''', '''''') || '''')::tsquery"""


def _resolve(repo: str) -> str:
    """The caller's words and filters resolved for the repository whose id ``repo`` (an SQL
    expression) is."""
    return f"""
with asked as (
    -- what does not depend on the repository, once (a search across a hundred repositories
    -- asks each for its aliases only when there is a path to alias)
    select
        array(
            select n.x
            from unnest(%(file)s::text[]) as v (raw),
                 lateral (select marts.relore_path_normal_form(v.raw) as x) as n
            where n.x is not null) as files,
        array(select p from marts.relore_prose_paths(%(prose)s) as p limit 5) as prose_paths
),
normalized as (
    select
        case when cardinality(asked.files) > 0 then
            (select array_agg(distinct a.path)
             from marts.relore_path_aliases({repo}, asked.files) as a (path))
        end as files,
        (select array_agg(distinct coalesce(l.normal_form, marts.relore_error_normal_form(v.raw)))
         from unnest(%(error)s::text[]) as v (raw)
         left join lateral marts.relore_error_lines(v.raw) as l on true) as errors,
        (select array_agg(distinct marts.relore_test_id_form(v.raw))
         from unnest(%(test)s::text[]) as v (raw)) as tests,
        (select array_agg(distinct coalesce(marts.relore_symbol_form(v.raw), v.raw))
         from unnest(%(symbol)s::text[]) as v (raw)) as symbols,
        -- the files the words name (a path in a description is evidence for a fused page)
        case when cardinality(asked.prose_paths) > 0 then
            (select array_agg(distinct a.path)
             from marts.relore_path_aliases({repo}, asked.prose_paths) as a (path))
        end as named_files
    from asked
)
select
    array(
        select distinct x from unnest(tsvector_to_array(to_tsvector('english', %(text)s))) as x
    ) as lexemes,
    n.files, n.errors, n.tests, n.symbols, n.named_files,
    marks.*
from normalized as n
-- and the marks the search index is compared with (serve/lexical/source.py), in the same
-- round trip
cross join ({source.marks_of(repo)}) as marks
"""


RESOLVE = _resolve("%(repo_id)s::bigint")
# The same for each of several repositories (%(repo_ids)s), a row each, in one round trip.
RESOLVE_EACH = f"""
select r.repo_id as scope_repo_id, resolved.*
from unnest(%(repo_ids)s::bigint[]) as r (repo_id)
cross join lateral ({_resolve("r.repo_id")}) as resolved
"""

# The page's documents in the index's order (each of its repository: a page ranked across
# repositories reads its documents in one round trip), with their thread, a snippet around
# the words that matched, and how many of the caller's lexemes each holds.
PAGE = f"""
with wanted as (
    select w.repo_id, w.document_id, w.score, w.position
    from unnest(%(repo_ids)s::bigint[], %(documents)s::text[], %(scores)s::float8[])
        with ordinality as w (repo_id, document_id, score, position)
),
q as (
    select (
        select string_agg({QUOTED.format("x")}::text, ' | ')
        from unnest(%(lexemes)s::text[]) as x
    )::tsquery as query
)
select
    d.repo, d.thread_number as number, t.kind, t.state, t.title, d.url,
    d.document_id, d.document_kind, d.author_login as author, d.trust_tier as trust,
    d.created_at, w.score, d.path,
    (select count(*) from unnest(%(lexemes)s::text[]) as x
     where d.search_vector @@ {QUOTED.format("x")}) as matched_terms,
    -- the fragments around the words, uncut: serve/excerpts.py gives back the punctuation
    -- ts_headline drops at their edges (from body_text) and cuts them to the page's budget
    d.body_text,
    (
        case
            when q.query is null then d.body_text
            -- a review comment that matched on the code it is anchored to, not on what it
            -- says: its opening words, then the hunk's lines that hold the words
            when hunk.lines is not null and not to_tsvector('english', d.body_text) @@ q.query
                then left(d.body_text, %(lead_chars)s) || E'\n…\n' || hunk.lines
            else coalesce(
                ts_headline(
                    'english', d.body_text, q.query,
                    'MaxFragments=2, MaxWords=40, MinWords=12, StartSel="", StopSel="", '
                    'FragmentDelimiter=" … "'
                ),
                d.body_text
            )
        end
    ) as snippet
from wanted as w
join marts.documents as d on d.repo_id = w.repo_id and d.document_id = w.document_id
join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
cross join q
left join lateral (
    select string_agg(l.line, E'\n' order by l.n) as lines
    from (
        select h.line, h.n
        from regexp_split_to_table(d.diff_hunk, E'\n') with ordinality as h (line, n)
        where q.query is not null and to_tsvector('english', h.line) @@ q.query
        order by h.n desc
        limit 4
    ) as l
) as hunk on d.diff_hunk is not null
where not d.is_deleted
order by w.position
"""


# Of some documents (the semantic leg's), those holding fewer than %(holds)s of the caller's
# lexemes: what the words' count left out, so a page's count is the same at every limit.
UNWORDED = f"""
select count(*) as unworded
from marts.documents as d
where d.repo_id = %(repo_id)s and d.document_id = any(%(documents)s::text[])
    and not d.is_deleted
    and (select count(*) from unnest(%(lexemes)s::text[]) as x
         where d.search_vector @@ {QUOTED.format("x")}) < %(holds)s
"""

# A filter-only page's evidence: of each thread's candidate documents, the one that carries
# the signal filtered on (an error line in its normal form, the path, test or symbol in its
# text), newest first; else the thread's newest candidate. And the filter values' lexemes,
# around which the evidence's snippet is cut.
EVIDENCE = """
select array(
    select distinct d.document_id
    from (
        select distinct on (d.thread_number) d.document_id
        from marts.documents as d
        where d.repo_id = %(repo_id)s and d.document_id = any(%(documents)s::text[])
            and not d.is_deleted
        order by d.thread_number,
            (
                exists (select 1 from marts.relore_error_lines(d.body_text) as l
                        where l.normal_form = any(%(errors)s::text[]))
                or exists (select 1 from unnest(%(files)s::text[]) as f (p)
                           where strpos(coalesce(d.path, '') || E'\\n' || d.body_text, f.p) > 0
                               or strpos(d.body_text, regexp_replace(f.p, '^.*/', '')) > 0)
                or exists (select 1 from unnest(%(tests)s::text[]) as t (id)
                           where strpos(d.body_text, regexp_replace(t.id, '^.*::', '')) > 0)
                or exists (select 1 from unnest(%(symbols)s::text[]) as s (name)
                           where strpos(d.body_text, regexp_replace(s.name, '^.*\\.', '')) > 0)
            ) desc,
            d.created_at desc
    ) as d
) as chosen,
array(
    select distinct x from unnest(tsvector_to_array(to_tsvector('english', %(text)s))) as x
) as lexemes
"""
