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

orphans as (
    select
        repo_id,
        count(*) as orphan_comments
    from {{ ref('int_orphan_comments') }}
    group by repo_id
),

authority as (
    select
        repo_id,
        count(*) as authority_logins,
        count(*) filter (where has_write) as authority_writers,
        max(checked_at) as authority_resolved_at
    from {{ ref('stg_ops__collaborator_permissions') }}
    group by repo_id
),

floors as (
    select
        repo_id,
        min(sample_floor) as sample_floor,
        jsonb_object_agg(pass_name, sample_floor order by pass_name) as sample_floors
    from {{ ref('stg_ops__sample_floors') }}
    group by repo_id
),

{%- for name in signal_marts() %}

    {{ name }}_counts as (
        select
            repo_id,
            count(*) as signal_rows
        from {{ ref(name) }}
        group by repo_id
    ),
{%- endfor %}

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
        document_counts.documents_loaded_at,
        coalesce(orphans.orphan_comments, 0) as orphan_comments,
        {%- for name in signal_marts() %}
            coalesce({{ name }}_counts.signal_rows, 0) as {{ name }},
        {%- endfor %}
        coalesce(authority.authority_logins, 0) as authority_logins,
        coalesce(authority.authority_writers, 0) as authority_writers,
        authority.authority_resolved_at,
        floors.sample_floor,
        floors.sample_floors,
        '{{ run_started_at }}'::timestamptz as last_built_at,
        -- every signal mart's rows, by name, in signal_marts()' order (json keeps it)
        json_build_object(
            {%- for name in signal_marts() %}
                '{{ name }}', coalesce({{ name }}_counts.signal_rows, 0)
                {{- ',' if not loop.last }}
            {%- endfor %}
        ) as signals
    from repos
    left join thread_counts on repos.repo_id = thread_counts.repo_id
    left join document_counts on repos.repo_id = document_counts.repo_id
    left join repo_loads on repos.repo_id = repo_loads.repo_id
    left join orphans on repos.repo_id = orphans.repo_id
    left join authority on repos.repo_id = authority.repo_id
    left join floors on repos.repo_id = floors.repo_id
    {%- for name in signal_marts() %}
        left join {{ name }}_counts on repos.repo_id = {{ name }}_counts.repo_id
    {%- endfor %}
)

select * from final
