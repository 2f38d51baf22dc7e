{{ config(materialized='view') }}

-- Every name a repository answers to: its current owner/name and each former one GitHub
-- redirected (a rename or a transfer), lowercased as links hold target_repo. A link that
-- names `lvwerra/trl#434` in huggingface/trl is a link to this repository's #434.
with

current_names as (
    select
        repo_id,
        lower(repo) as repo,
        true as is_current
    from {{ ref('stg_ops__repos') }}
),

former_names as (
    select
        resolved.repo_id,
        resolved.asked_repo as repo,
        false as is_current
    from {{ ref('stg_ops__repo_names') }} as resolved
    where
        resolved.repo_id is not null
        and not exists (
            select from current_names
            where
                current_names.repo_id = resolved.repo_id
                and current_names.repo = resolved.asked_repo
        )
),

final as (
    select * from current_names
    union all
    select * from former_names
)

select * from final
