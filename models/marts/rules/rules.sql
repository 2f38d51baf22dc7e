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
                select 1 from {{ ref('int_rules') }} as current_rules
                where current_rules.repo = built.repo
                    and current_rules.rule_id = built.rule_id
            )",
        ],
    )
}}

-- The current rule set of each repository (int_rules derives it and resolves its repo_id).
-- serve/ reads a repository's rules by repo_id, and by name only for a repository never
-- extracted (repo_id null). Incremental: only rules whose columns changed are rewritten, and
-- the post-hook deletes rules no longer in their file (or moved to the repository's new
-- name), so a build with nothing new writes nothing. Its unique index includes repo_id
-- like every table (Citus).
with

current_rules as (
    select
        repo,
        repo_id,
        rule_id,
        title,
        rule_text,
        scopes,
        is_active,
        triggers,
        is_always,
        is_tagged,
        has_hidden_characters,
        created_at,
        file_position,
        source_path,
        last_edited_at,
        source_loaded_at
    from {{ ref('int_rules') }}
),

{% if is_incremental() -%}
    final as (
        select * from current_rules
        where not {{ unchanged_in_this('current_rules', ['repo', 'rule_id'], [
            'repo_id', 'title', 'rule_text', 'scopes', 'is_active', 'triggers', 'is_always',
            'is_tagged', 'has_hidden_characters', 'created_at', 'file_position', 'source_path',
            'last_edited_at', 'source_loaded_at',
        ]) }}
    )
{%- else -%}
    final as (
        select * from current_rules
    )
{%- endif %}

select * from final
