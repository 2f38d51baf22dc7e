{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id'],
        on_schema_change='fail',
        indexes=[{'columns': ['repo_id'], 'unique': True}],
    )
}}

-- The house's list of repositories: one row per repository relore holds, with owner/name as
-- the extract resolved it (GitHub follows a rename; ops.repos keeps the name it answered),
-- every former name GitHub redirects (ops.repo_names), its thread counts and when its
-- newest landing reached the marts. serve/ resolves a caller's owner/name here (current
-- name first, then a former one) and lists the repositories from here. Incremental: a
-- repository's row is rewritten only when a column changed, so a build with nothing new
-- writes nothing.
with

ops_repos as (
    select * from {{ ref('stg_ops__repos') }}
),

landed_repos as (
    select * from {{ ref('stg_github__repositories') }}
    where not is_deleted
),

thread_counts as (
    select
        repo_id,
        count(*) filter (where not is_deleted) as threads,
        count(*) filter (where not is_deleted and kind = 'issue') as issues,
        count(*) filter (where not is_deleted and kind = 'pr') as prs,
        count(*) filter (where not is_deleted and state = 'open') as open_threads,
        max(source_loaded_at) as last_landed_at
    from {{ ref('threads') }}
    group by repo_id
),

corpus as (
    select * from {{ ref('corpus_stats') }}
),

former_names as (
    select
        repo_id,
        array_agg(repo order by repo) as former_names
    from {{ ref('repository_names') }}
    where not is_current
    group by repo_id
),

-- Every repository: the extractor's registry, and a repository landed without it.
repos as (
    select
        repo_id,
        repo,
        owner_login
    from ops_repos
    union all
    select
        landed_repos.repo_id,
        coalesce(landed_repos.full_name, landed_repos.repo) as repo,
        landed_repos.owner_login
    from landed_repos
    where not exists (
        select 1
        from ops_repos
        where ops_repos.repo_id = landed_repos.repo_id
    )
),

derived as (
    select
        repos.repo_id,
        repos.repo,
        repos.owner_login,
        coalesce(former_names.former_names, cast(array[] as text[])) as former_names,
        coalesce(thread_counts.threads, 0) as threads,
        coalesce(thread_counts.issues, 0) as issues,
        coalesce(thread_counts.prs, 0) as prs,
        coalesce(thread_counts.open_threads, 0) as open_threads,
        coalesce(corpus.documents, 0) as documents,
        thread_counts.last_landed_at
    from repos
    left join former_names on repos.repo_id = former_names.repo_id
    left join thread_counts on repos.repo_id = thread_counts.repo_id
    left join corpus on repos.repo_id = corpus.repo_id
),

{% if is_incremental() -%}
    final as (
        select * from derived
        where not {{ unchanged_in_this('derived', ['repo_id'], [
            'repo', 'owner_login', 'former_names', 'threads', 'issues', 'prs', 'open_threads',
            'documents', 'last_landed_at',
        ]) }}
    )
{%- else -%}
    final as (
        select * from derived
    )
{%- endif %}

select * from final
