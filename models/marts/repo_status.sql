{{ config(materialized='view') }}

-- Per repository, what the index holds. A view in marts so the SELECT-only reader can see
-- raw's and ops' high-water marks without access to those schemas.
with

ops_repos as (
    select * from {{ ref('stg_ops__repos') }}
),

repo_loads as (
    select * from {{ ref('stg_github__repo_loads') }}
),

threads as (
    select * from {{ ref('threads') }}
),

documents as (
    select * from {{ ref('documents') }}
),

thread_counts as (
    select
        repo_id,
        max(repo) as repo,
        count(*) filter (where not is_deleted) as threads,
        count(*) filter (where not is_deleted and kind = 'issue') as issues,
        count(*) filter (where not is_deleted and kind = 'pr') as prs,
        count(*) filter (where not is_deleted and state = 'open') as open_threads
    from threads
    group by repo_id
),

document_counts as (
    select
        repo_id,
        count(*) filter (where not is_deleted) as documents,
        count(*) filter (
            where not is_deleted and trust_tier = 'authoritative'
        ) as documents_authoritative,
        count(*) filter (where not is_deleted and trust_tier = 'reported') as documents_reported,
        count(*) filter (where not is_deleted and trust_tier = 'machine') as documents_machine,
        count(*) filter (where is_deleted) as documents_deleted,
        max(source_loaded_at) as documents_loaded_at
    from documents
    group by repo_id
),

repos as (
    select
        repo_id,
        repo
    from ops_repos
    union all
    select
        thread_counts.repo_id,
        thread_counts.repo
    from thread_counts
    where not exists (
        select 1 from ops_repos
        where ops_repos.repo_id = thread_counts.repo_id
    )
),

final as (
    select
        repos.repo_id,
        repos.repo,
        coalesce(thread_counts.threads, 0) as threads,
        coalesce(thread_counts.issues, 0) as issues,
        coalesce(thread_counts.prs, 0) as prs,
        coalesce(thread_counts.open_threads, 0) as open_threads,
        coalesce(document_counts.documents, 0) as documents,
        coalesce(document_counts.documents_authoritative, 0) as documents_authoritative,
        coalesce(document_counts.documents_reported, 0) as documents_reported,
        coalesce(document_counts.documents_machine, 0) as documents_machine,
        coalesce(document_counts.documents_deleted, 0) as documents_deleted,
        repo_loads.last_loaded_at,
        document_counts.documents_loaded_at
    from repos
    left join thread_counts on repos.repo_id = thread_counts.repo_id
    left join document_counts on repos.repo_id = document_counts.repo_id
    left join repo_loads on repos.repo_id = repo_loads.repo_id
)

select * from final
