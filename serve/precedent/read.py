"""The SQL of a precedent page: the description's paths and symbols found by the models' own
functions (``relore_prose_paths``, ``relore_symbols``), which of the legs' threads are pull
requests and how they ended, and the chosen pull requests read back: their heads, the terms
each carries, the files each changed (the shared ones first, capped, with the total) and the
review comments that shaped it (on a shared file first, then by the words they carry)."""

from __future__ import annotations

from relore.serve.ranking import QUOTED
from relore.serve.thread import WHOLE_COMMENT

# what the description names besides its words (the page treats them as --file/--symbol)
NAMED = """
select
    array(select p from marts.relore_prose_paths(%(text)s) as p limit 5) as paths,
    array(select s from marts.relore_symbols(%(text)s) as s limit 5) as symbols
"""

# of the legs' threads, the pull requests that were closed (merged or not)
PULLS = """
select t.number, t.state
from marts.threads as t
where t.repo_id = %(repo_id)s and t.number = any(%(numbers)s::bigint[])
    and t.kind = 'pr' and not t.is_deleted and t.state in ('merged', 'closed')
"""

HEADS = """
select t.repo, t.number, t.kind, t.state, t.title, t.url, t.author_login,
       t.opening_post_trust, t.created_at, t.merged_at, t.changed_files,
       (select d.document_id from marts.documents as d
        where d.repo_id = t.repo_id and d.thread_number = t.number
            and d.document_kind = 'opening_post' and not d.is_deleted
        order by d.chunk_index limit 1) as opening_document
from marts.threads as t
where t.repo_id = %(repo_id)s and t.number = any(%(numbers)s::bigint[]) and not t.is_deleted
"""

# the description's lexemes each pull request's documents (at the trust floor) hold
CARRIED = f"""
select n.number, array(
    select x from unnest(%(lexemes)s::text[]) as x
    where exists (
        select 1 from marts.documents as d
        where d.repo_id = %(repo_id)s and d.thread_number = n.number and not d.is_deleted
            and d.trust_tier = any(%(tiers)s::text[])
            and d.search_vector @@ {QUOTED.format("x")}
    )
    order by x
) as carried
from unnest(%(numbers)s::bigint[]) as n (number)
"""

# a changed path is shared when it is a named one, ends in one at a '/', or one ends in it
_SHARED = """(
    select coalesce(bool_or(
        {path} = v or marts.relore_ends_with_part({path}, v, '/')
        or marts.relore_ends_with_part(v, {path}, '/')
    ), false)
    from unnest(%(files)s::text[]) as v
)"""

FILES = f"""
with changed as (
    select f.thread_number as number, f.path, f.change_type, {_SHARED.format(path="f.path")} as shared
    from marts.thread_files as f
    where f.repo_id = %(repo_id)s and f.thread_number = any(%(numbers)s::bigint[])
        and f.source = 'changed_file'
),
ranked as (
    select c.*,
        count(*) over (partition by c.number) as total,
        row_number() over (partition by c.number order by c.shared desc, c.path) as position
    from changed as c
)
select number, path, change_type, shared, total
from ranked
where position <= %(cap)s
order by number, position
"""

# review comments and reviews' bodies, a comment whole from its chunks, the best few per
# pull request with a headline around the words
REVIEWS = f"""
with q as (
    select (
        select string_agg({QUOTED.format("x")}::text, ' | ')
        from unnest(%(lexemes)s::text[]) as x
    )::tsquery as query
),
comments as (
    select
        d.thread_number as number,{WHOLE_COMMENT},
        max((select count(*) from unnest(%(lexemes)s::text[]) as x
             where d.search_vector @@ {QUOTED.format("x")})) as matched
    from marts.documents as d
    where d.repo_id = %(repo_id)s and d.thread_number = any(%(numbers)s::bigint[])
        and d.document_kind in ('review_comment', 'review') and not d.is_deleted
        and d.trust_tier = any(%(tiers)s::text[]) and btrim(d.body_text) <> ''
    group by d.thread_number, d.source_document_id
),
ranked as (
    select c.*,
        c.path is not null and {_SHARED.format(path="c.path")} as on_shared,
        count(*) over (partition by c.number) as total
    from comments as c
),
chosen as (
    select r.*,
        row_number() over (
            partition by r.number
            order by r.on_shared desc, r.matched desc, r.trust = 'authoritative' desc,
                r.created_at, r.id
        ) as position
    from ranked as r
)
select
    c.number, c.id, c.kind, c.author, c.trust, c.created_at, c.url, c.path,
    coalesce(c.line, c.original_line) as line,
    c.matched, c.on_shared, c.total, c.body,
    case when q.query is null or c.matched = 0 then c.body
        else coalesce(ts_headline(
            'english', c.body, q.query,
            'MaxFragments=2, MaxWords=30, MinWords=10, StartSel="", StopSel="", '
            'FragmentDelimiter=" … "'
        ), c.body)
    end as headline
from chosen as c
cross join q
where c.position <= %(cap)s
order by c.number, c.position
"""
