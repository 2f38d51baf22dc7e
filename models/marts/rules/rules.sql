{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo', 'rule_id'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'repo', 'rule_id'], 'unique': True},
            {'columns': ['repo', 'rule_id']},
        ],
        post_hook=[
            "delete from {{ this }} as built where not exists (
                select 1 from {{ ref('stg_rules__rules') }} as current_rules
                where current_rules.repo = built.repo
                    and current_rules.rule_id = built.rule_id
            )",
        ],
    )
}}

-- The current rule set of each repository: its latest rules file with the operator's edits
-- applied (the latest tag sets triggers, the latest pin/unpin/tag --always sets always).
-- Incremental: only rules whose columns changed are rewritten, and the post-hook deletes
-- rules no longer in their file, so a build with nothing new writes nothing. repo_id comes
-- from ops.repos at build time: null only while the repository has never been extracted
-- (rules may be loaded first); its unique index includes repo_id like every table (Citus).
with

file_rules as (
    select * from {{ ref('stg_rules__rules') }}
),

edits as (
    select * from {{ ref('stg_rules__rule_edits') }}
),

ops_repos as (
    select * from {{ ref('stg_ops__repos') }}
),

latest_tags as (
    select distinct on (edits.repo, edits.rule_id)
        edits.repo,
        edits.rule_id,
        edits.triggers
    from edits
    where edits.action = 'tag'
    order by edits.repo asc, edits.rule_id asc, edits.row_id desc
),

latest_always as (
    select distinct on (edits.repo, edits.rule_id)
        edits.repo,
        edits.rule_id,
        edits.is_always
    from edits
    where edits.is_always is not null
    order by edits.repo asc, edits.rule_id asc, edits.row_id desc
),

last_edits as (
    select
        edits.repo,
        edits.rule_id,
        max(edits.edited_at) as last_edited_at
    from edits
    group by edits.repo, edits.rule_id
),

edited as (
    select
        file_rules.repo,
        coalesce(file_rules.repo_id, ops_repos.repo_id) as repo_id,
        file_rules.rule_id,
        {{ relore_fn('redact') }}(file_rules.title) as title,
        {{ relore_fn('redact') }}(file_rules.rule_text) as rule_text,
        file_rules.scopes,
        file_rules.is_active,
        coalesce(latest_tags.triggers, file_rules.triggers) as triggers,
        coalesce(latest_always.is_always, file_rules.is_always) as is_always,
        coalesce(file_rules.created_at, file_rules.first_loaded_at) as created_at,
        file_rules.file_position,
        file_rules.source_path,
        last_edits.last_edited_at,
        greatest(file_rules.source_loaded_at, last_edits.last_edited_at) as source_loaded_at
    from file_rules
    left join ops_repos
        on file_rules.repo = lower(ops_repos.repo)
    left join latest_tags
        on
            file_rules.repo = latest_tags.repo
            and file_rules.rule_id = latest_tags.rule_id
    left join latest_always
        on
            file_rules.repo = latest_always.repo
            and file_rules.rule_id = latest_always.rule_id
    left join last_edits
        on
            file_rules.repo = last_edits.repo
            and file_rules.rule_id = last_edits.rule_id
),

flagged as (
    select
        edited.repo,
        edited.repo_id,
        edited.rule_id,
        edited.title,
        edited.rule_text,
        edited.scopes,
        edited.is_active,
        edited.triggers,
        edited.is_always,
        (cardinality(edited.triggers) > 0 or edited.is_always) as is_tagged,
        -- zero-width and bidi control characters: a rule holding one is never served
        {{ relore_fn('has_hidden_characters') }}(
            edited.title || ' ' || edited.rule_text || ' '
            || array_to_string(edited.triggers, ' ')
        ) as has_hidden_characters,
        edited.created_at,
        edited.file_position,
        edited.source_path,
        edited.last_edited_at,
        edited.source_loaded_at
    from edited
),

{% if is_incremental() -%}
    final as (
        select * from flagged
        where not exists (
            select 1
            from {{ this }} as built
            where
                built.repo = flagged.repo
                and built.rule_id = flagged.rule_id
                and (
                    built.repo_id, built.title, built.rule_text, built.scopes,
                    built.is_active, built.triggers, built.is_always,
                    built.is_tagged, built.has_hidden_characters, built.created_at,
                    built.file_position, built.source_path, built.last_edited_at,
                    built.source_loaded_at
                ) is not distinct from (
                    flagged.repo_id, flagged.title, flagged.rule_text, flagged.scopes,
                    flagged.is_active, flagged.triggers, flagged.is_always,
                    flagged.is_tagged, flagged.has_hidden_characters, flagged.created_at,
                    flagged.file_position, flagged.source_path, flagged.last_edited_at,
                    flagged.source_loaded_at
                )
        )
    )
{%- else -%}
    final as (
        select * from flagged
    )
{%- endif %}

select * from final
