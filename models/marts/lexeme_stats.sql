{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'lexeme'], 'unique': True},
            {'columns': ['lexeme']},
        ],
    )
}}

-- Document frequency of every lexeme of search_vector, per repository: the IDF half of
-- BM25 (serve/ ranks with it). A repository's whole set is replaced whenever corpus_stats
-- refreshed it (delete+insert keyed on repo_id), so both always describe the same corpus.

with

corpus as (
    select * from {{ ref('corpus_stats') }}
),

{% if is_incremental() -%}
    due as (
        select
            corpus.repo_id,
            corpus.refreshed_through
        from corpus
        where not exists (
            select 1
            from {{ this }} as counted
            where
                counted.repo_id = corpus.repo_id
                and counted.refreshed_through = corpus.refreshed_through
        )
    ),
{%- else %}
    due as (
        select
            corpus.repo_id,
            corpus.refreshed_through
        from corpus
    ),
{%- endif %}

counted as (
    select
        due.repo_id,
        stat.word as lexeme,
        stat.ndoc as documents,
        stat.nentry as occurrences,
        due.refreshed_through
    from due
    cross join lateral ts_stat(
        format(
            'select search_vector from %s where repo_id = %s and not is_deleted',
            '{{ ref("documents") }}',
            due.repo_id
        )
    ) as stat
),

final as (
    select * from counted
)

select * from final
