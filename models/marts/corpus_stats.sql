{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id'],
        on_schema_change='fail',
        indexes=[{'columns': ['repo_id'], 'unique': True}],
    )
}}

-- Per repository, the corpus figures BM25 needs beside lexeme_stats: how many live
-- documents there are and their average length (distinct lexemes in search_vector).
-- Refreshed for a repository only when the documents loaded since its last refresh reach
-- relore_stats_drift of the count then (IDF barely moves below that), or when a document
-- was deleted since, so a build with nothing new reads one index range per repository and
-- writes nothing.

with

-- Every repository raw knows of: the extractor's registry and the landed repository objects.
repos as (
    select
        repo_id,
        max(repo) as repo
    from (
        select
            repo_id,
            repo
        from {{ ref('stg_ops__repos') }}
        union all
        select
            repo_id,
            repo
        from {{ ref('stg_github__repositories') }}
    ) as known
    group by repo_id
),

-- Not materialised: referenced three times, Postgres would otherwise write every document
-- to disk (1.2 GB at 1.2 million) to count the few loaded since the last refresh.
documents as not materialized (
    select * from {{ ref('documents') }}
),

{% if is_incremental() -%}
    due as (
        select repos.repo_id
        from repos
        left join {{ this }} as refreshed
            on repos.repo_id = refreshed.repo_id
        where
            refreshed.repo_id is null
            or (
                select count(*)
                from documents
                where
                    documents.repo_id = repos.repo_id
                    and documents.source_loaded_at > refreshed.refreshed_through
            ) >= greatest(1, refreshed.documents * {{ var('relore_stats_drift', 0.02) }})
            -- a deletion is recounted at once: a word only the deleted text held must not
            -- outlive it in lexeme_stats
            or exists (
                select 1
                from documents
                where
                    documents.repo_id = repos.repo_id
                    and documents.source_loaded_at > refreshed.refreshed_through
                    and documents.is_deleted
            )
    ),
{%- else %}
    due as (
        select repo_id from repos
    ),
{%- endif %}

final as (
    select
        documents.repo_id,
        max(repos.repo) as repo,
        count(*) filter (where not documents.is_deleted) as documents,
        coalesce(
            avg(length(documents.search_vector)) filter (where not documents.is_deleted), 0
        )::float8 as avg_length,
        max(documents.source_loaded_at) as refreshed_through
    from documents
    inner join due on documents.repo_id = due.repo_id
    inner join repos on documents.repo_id = repos.repo_id
    group by documents.repo_id
)

select * from final
