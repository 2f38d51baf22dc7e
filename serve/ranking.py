"""The ranking SQL of search: bounded candidates, then BM25 with the models' corpus statistics.

Postgres' ts_rank has no IDF and reads every matching tsvector, so neither is used to rank.
A query first gathers at most CANDIDATE_CAP admissible matches through the GIN index (the
page says when the cap was reached), then scores only those with BM25: IDF per repository
from ``marts.lexeme_stats`` and ``marts.corpus_stats`` (maintained by dbt), term frequency
recovered exactly from ``ts_rank`` (unnesting tsvectors costs ~17 times more), a title or
path occurrence counting extra, and length normalised by distinct lexemes. The strict pass ranks its conjunction by BM25 alone;
the widened pass ranks by coverage (how many of the caller's terms a document carries)
first, BM25 squashed into [0, 1) breaking ties, so a document never outranks one that
answers more of the query.
"""

from __future__ import annotations

CANDIDATE_CAP = 5000
K1 = 1.2
B = 0.75
# Extra term frequency for a lexeme in the title (weight A: every chunk of a thread carries
# its title) and in a review comment's path (weight C).
TITLE_BONUS = 1.0
PATH_BONUS = 0.5

# The admissible documents: what filters and the trust floor allow, before any text match.
# Machine-authored text is only ever read when asked for by name (trust=machine); it is
# never a lowered floor. Signal filters use values already put through the models' own
# normalizer functions, so both sides of a filter agree.
ADMISSIBLE = """
    not d.is_deleted
    and d.trust_tier = any(%(tiers)s)
    and (%(repo_id)s::bigint is null or d.repo_id = %(repo_id)s)
    and (%(author)s::text is null or lower(d.author_login) = lower(%(author)s))
    and (%(since)s::date is null or d.created_at >= %(since)s::date)
    and (
        %(state)s::text is null
        or (%(state)s = 'merged' and t.is_merged)
        or (%(state)s <> 'merged' and t.state = %(state)s)
    )
    and (%(files)s::text[] is null or exists (
        select 1 from marts.thread_files as f
        where f.repo_id = d.repo_id and f.thread_number = d.thread_number
            and (f.path = any(%(files)s) or exists (
                -- either side may be the longer: an absolute path from a traceback, a
                -- relative one in the index, or the other way round
                select 1 from unnest(%(files)s::text[]) as wanted (path)
                where f.path like '%%/' || wanted.path or wanted.path like '%%/' || f.path
            ))
    ))
    and (%(errors)s::text[] is null or exists (
        select 1 from marts.thread_errors as e
        where e.repo_id = d.repo_id and e.thread_number = d.thread_number
            and e.normal_form = any(%(errors)s)
    ))
    and (%(tests)s::text[] is null or exists (
        select 1 from marts.thread_tests as x
        where x.repo_id = d.repo_id and x.thread_number = d.thread_number
            and (x.test_id = any(%(tests)s) or x.test_name = any(%(tests)s))
    ))
    and (%(symbols)s::text[] is null or exists (
        select 1 from marts.thread_symbols as y
        where y.repo_id = d.repo_id and y.thread_number = d.thread_number
            and (y.symbol = any(%(symbols)s) or exists (
                select 1 from unnest(%(symbols)s::text[]) as wanted (symbol)
                where y.symbol like '%%.' || wanted.symbol
            ))
    ))
"""

_CANDIDATE_COLUMNS = """
        d.repo_id, d.thread_number, d.document_id, d.created_at, d.search_vector
"""

# The caller's text as lexemes (the same parser and dictionaries as search_vector), each as a
# one-lexeme tsquery (quoted: a lexeme may hold tsquery operators), and per repository
# their IDF; a lexeme newer than the last statistics refresh counts as rare.
_QUERY = r"""
with q as (
    select {query} as query
),
lexemes as materialized (
    select
        l.lexeme,
        quoted.term::tsquery as query,
        (quoted.term || ':A')::tsquery as in_title,
        (quoted.term || ':C')::tsquery as in_path
    from (
        select distinct lexeme
        from unnest(tsvector_to_array(to_tsvector('english', %(text)s))) as lexeme
    ) as l
    cross join lateral (
        select '''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''' as term
    ) as quoted
),
idf as materialized (
    select
        c.repo_id, l.lexeme, greatest(c.avg_length, 1) as avg_length,
        ln(1 + (greatest(c.documents - coalesce(s.documents, 0), 0) + 0.5)
            / (coalesce(s.documents, 0) + 0.5)) as idf
    from lexemes as l
    cross join marts.corpus_stats as c
    left join marts.lexeme_stats as s on s.repo_id = c.repo_id and s.lexeme = l.lexeme
    where %(repo_id)s::bigint is null or c.repo_id = %(repo_id)s
),
"""

# With every weight 1 and no normalisation, ts_rank of a one-lexeme query is
# H(tf) / (pi^2 / 6), H(n) = sum of 1/k^2 for k <= n, and pi^2/6 - H(n) ~ 1 / (n + 1/2):
# so tf = round(1 / (pi^2/6 * (1 - rank)) - 1/2), exact for every tf a tsvector can hold (it keeps 256 positions per lexeme).
_TF = """round(1 / greatest(1.6449340668 * (1 - ts_rank('{1,1,1,1}'::float4[],
            c.search_vector, l.query, 0)), 1e-4) - 0.5)"""

# BM25 summed over the query's lexemes each candidate holds; one aggregate over candidates
# x lexemes (a handful), so the planner never joins a per-row subquery back.
_BM25 = f"""coalesce(sum(
            i.idf * tf.freq * {K1 + 1}
            / (tf.freq + {K1} * (1 - {B} + {B} * length(c.search_vector) / i.avg_length))
        ), 0)"""

_FREQUENCIES = f"""
    left join lexemes as l on c.search_vector @@ l.query
    left join idf as i on i.repo_id = c.repo_id and i.lexeme = l.lexeme
    cross join lateral (
        select
            {_TF}
            + case when c.search_vector @@ l.in_title then {TITLE_BONUS} else 0 end
            + case when c.search_vector @@ l.in_path then {PATH_BONUS} else 0 end as freq
    ) as tf"""


# With an --error or --test filter, candidates start from the threads that signal names
# (an index lookup) rather than from every document the text or the recency order reaches:
# a frequent word, or no word at all, would otherwise test the filter on most of the mart.
SIGNAL_DRIVERS = {
    "errors": """select distinct e.repo_id, e.thread_number from marts.thread_errors as e
        where e.normal_form = any(%(errors)s)""",
    "tests": """select distinct x.repo_id, x.thread_number from marts.thread_tests as x
        where x.test_id = any(%(tests)s) or x.test_name = any(%(tests)s)""",
}


# Past this many signalled threads a text query is better served by the GIN index, and a
# filter-only query (newest first) reads the most recently updated threads only.
DRIVER_THREADS = 2000
# A thread's updated_at bounds its newest document: the newest CANDIDATE_CAP documents of a
# common signal sit in its most recently updated threads.
NEWEST_THREADS = 500


def driver_for(normalized: dict) -> str | None:
    """Which signal filter candidates start from, if any."""
    return next((name for name in SIGNAL_DRIVERS if normalized.get(name)), None)


def driver_count_sql(driver: str) -> str:
    return f"select count(*) as n from ({SIGNAL_DRIVERS[driver]} limit {DRIVER_THREADS + 1}) as s"


def _candidates(
    match: str, order: str = "", driver: str | None = None, newest_threads: bool = False
) -> str:
    source = "marts.documents as d"
    if driver:
        signalled = SIGNAL_DRIVERS[driver]
        if newest_threads:
            signalled = f"""select s.repo_id, s.thread_number
        from ({signalled}) as s
        join marts.threads as recent on recent.repo_id = s.repo_id and recent.number = s.thread_number
        order by recent.updated_at desc nulls last
        limit {NEWEST_THREADS}"""
        source = f"""({signalled}) as signalled
    join marts.documents as d
        on d.repo_id = signalled.repo_id and d.thread_number = signalled.thread_number"""
    return f"""
candidates as materialized (
    select {_CANDIDATE_COLUMNS}
    from {source}
    join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
    cross join q
    where {match} {ADMISSIBLE}
    {order}
    limit %(cap)s
),"""


def strict_sql(has_text: bool, driver: str | None = None, newest_threads: bool = False) -> str:
    """The conjunction of every term, BM25-ranked; with no text, the newest admissible."""
    if not has_text:
        return (
            _QUERY.format(query="null::tsquery")
            + _candidates("", "order by d.created_at desc, d.document_id", driver, newest_threads)
            + """
scored as (
    select c.*, 0 as matched_terms, 0 as score from candidates as c
)"""
            + _SELECT_PAGE
        )
    return (
        _QUERY.format(query="plainto_tsquery('english', %(text)s)")
        + _candidates("d.search_vector @@ q.query and", driver=driver)
        + f"""
scored as (
    select
        c.repo_id, c.document_id, c.thread_number, c.created_at,
        %(n_terms)s as matched_terms, {_BM25} as score
    from candidates as c
    {_FREQUENCIES}
    group by c.repo_id, c.document_id, c.thread_number, c.created_at
)"""
        + _SELECT_PAGE
    )


def widened_sql(driver: str | None = None) -> str:
    """Any term, ranked by coverage of the caller's terms first and BM25 second."""
    return (
        """
with term as (
    select plainto_tsquery('english', w) as query
    from unnest(%(terms)s::text[]) as w
    where numnode(plainto_tsquery('english', w)) > 0
),
"""
        + _QUERY.format(
            query="(select (string_agg(term.query::text, ' | '))::tsquery from term)"
        ).removeprefix("\nwith ")
        + _candidates("q.query is not null and d.search_vector @@ q.query and", driver=driver)
        + f"""
covered as (
    select c.*,
        (select count(*) from term where c.search_vector @@ term.query) as matched_terms
    from candidates as c
),
ranked as (
    select
        c.repo_id, c.document_id, c.thread_number, c.created_at, c.matched_terms,
        {_BM25} as bm25
    from covered as c
    {_FREQUENCIES}
    group by c.repo_id, c.document_id, c.thread_number, c.created_at, c.matched_terms
),
scored as (
    select r.*, r.matched_terms + r.bm25 / (1 + r.bm25) as score from ranked as r
)"""
        + _SELECT_PAGE
    )


# The per-thread cap is a window over the ranked candidates; only the page's rows are
# joined back to their text and thread.
_SELECT_PAGE = """
, capped as (
    select
        s.repo_id, s.document_id, s.thread_number, s.created_at, s.score, s.matched_terms,
        count(*) over () as matches,
        row_number() over (
            partition by s.repo_id, s.thread_number order by s.score desc, s.document_id
        ) as thread_rank
    from scored as s
),
page as (
    select c.*, count(*) over () as total
    from capped as c
    where c.thread_rank <= %(per_thread)s
    order by c.score desc, c.created_at desc, c.document_id
    limit %(limit)s
)
select
    d.repo, p.thread_number as number, t.kind, t.display_state, t.title, d.url,
    p.document_id, d.document_kind, d.author_login as author, d.trust_tier as trust,
    p.created_at, p.score, p.total, p.matches, p.matched_terms, d.path,
    left(
        coalesce(
            ts_headline(
                'english', d.body_text, q.query,
                'MaxFragments=2, MaxWords=40, MinWords=12, StartSel="", StopSel="", '
                'FragmentDelimiter=" … "'
            ),
            d.body_text
        ),
        %(snippet_chars)s
    ) as snippet
from page as p
join marts.documents as d on d.repo_id = p.repo_id and d.document_id = p.document_id
join marts.threads as t on t.repo_id = p.repo_id and t.number = p.thread_number
cross join q
order by p.score desc, p.created_at desc, p.document_id
"""
