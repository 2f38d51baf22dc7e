{{ config(**signal_mart_config(['target_repo', 'target_number'], ['target_number'])) }}

-- References from a thread to other threads: `closes` when a pull request's own body uses a
-- closing keyword (closes / fixes / resolves #N, owner/repo#N, an issue or pull URL), else
-- `mentions`. target_number always; target_repo_id and target_thread_id once the target is
-- indexed (a link whose target arrives later is re-derived then).
with

{%- if is_incremental() %}

    newly_indexed_targets as (
        select
            in_mart.repo_id,
            in_mart.thread_number,
            max(targets.source_loaded_at) as changed_at
        from {{ this }} as in_mart
        inner join {{ ref('threads') }} as targets
            on
                in_mart.target_repo = lower(targets.repo)
                and in_mart.target_number = targets.number
        where
            in_mart.target_thread_id is null
            and targets.source_loaded_at > {{ mart_since() }}
        group by in_mart.repo_id, in_mart.thread_number
    ),
{%- endif %}

{{ signal_scope(extra_scope='newly_indexed_targets' if is_incremental() else none) }}

all_threads as (
    select
        repo_id,
        repo,
        number,
        thread_id,
        kind
    from {{ ref('threads') }}
    where not is_deleted
),

found as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        link.target_repo,
        link.target_number,
        lower(scoped_documents.repo) as own_repo,
        case
            when
                link.link_kind = 'closes'
                and scoped_documents.document_kind = 'opening_post'
                and scoped_documents.thread_kind = 'pr'
                then 'closes'
            else 'mentions'
        end as link_kind
    from scoped_documents
    cross join lateral {{ relore_fn('links') }}(
        scoped_documents.body_markdown, scoped_documents.repo
    ) as link
),

signals as (
    select
        found.repo_id,
        found.thread_number,
        found.target_repo,
        found.target_number,
        case when bool_or(found.link_kind = 'closes') then 'closes' else 'mentions' end
            as link_kind,
        min(all_threads.repo_id) as target_repo_id,
        min(all_threads.thread_id) as target_thread_id,
        max(thread_loaded.loaded_at) as source_loaded_at
    from found
    inner join thread_loaded
        on
            found.repo_id = thread_loaded.repo_id
            and found.thread_number = thread_loaded.thread_number
    left join all_threads
        on
            found.target_repo = lower(all_threads.repo)
            and found.target_number = all_threads.number
    where not (found.target_repo = found.own_repo and found.target_number = found.thread_number)
    group by found.repo_id, found.thread_number, found.target_repo, found.target_number
),

{{ replace_thread_sets(
    'signals', 'scope',
    ['target_repo', 'target_number', 'link_kind', 'target_repo_id', 'target_thread_id']
) }}

select * from final
