-- The current rule set of each repository, derived whole (marts.rules keeps it
-- incrementally): its latest rules file with the operator's edits applied (the latest tag
-- sets triggers, the latest pin/unpin/tag --always sets always).
--
-- A rule belongs to its repository by repo_id: a file or an edit is landed under the name the
-- operator typed, with the repo_id ops.repos knew then; else the name resolves here, as the
-- repository's current name or a former one GitHub redirected (ops.repo_names). So a file
-- loaded under a name the repository has since left is still its file, and of two files
-- loaded under two of its names the later one is its set. Only a repository never
-- extracted is known by the name alone (repo_id null). `repo` is the current name,
-- lower-cased, once there is one.
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

-- Every name a repository answers to (as marts.repository_names), the current one first.
names as (
    select distinct on (known.repo_name)
        known.repo_name,
        known.repo_id
    from (
        select
            lower(repo) as repo_name,
            repo_id,
            true as is_current
        from ops_repos
        union all
        select
            asked_repo as repo_name,
            repo_id,
            false as is_current
        from {{ ref('stg_ops__repo_names') }}
        where repo_id is not null
    ) as known
    order by known.repo_name asc, known.is_current desc, known.repo_id desc
),

resolved_files as (
    select
        file_rules.*,
        coalesce(file_rules.repo_id, names.repo_id) as resolved_repo_id,
        max(file_rules.source_loaded_at) over (
            partition by
                coalesce(file_rules.repo_id, names.repo_id),
                case
                    when coalesce(file_rules.repo_id, names.repo_id) is null then file_rules.repo
                end
        ) as latest_loaded_at
    from file_rules
    left join names on file_rules.repo = names.repo_name
),

-- Of the files loaded under a repository's several names, the latest.
current_files as (
    select
        coalesce(lower(ops_repos.repo), resolved_files.repo) as repo,
        resolved_files.resolved_repo_id as repo_id,
        resolved_files.rule_id,
        resolved_files.title,
        resolved_files.rule_text,
        resolved_files.scopes,
        resolved_files.is_active,
        resolved_files.triggers,
        resolved_files.is_always,
        resolved_files.created_at,
        resolved_files.first_loaded_at,
        resolved_files.file_position,
        resolved_files.source_path,
        resolved_files.source_loaded_at
    from resolved_files
    left join ops_repos on resolved_files.resolved_repo_id = ops_repos.repo_id
    where resolved_files.source_loaded_at = resolved_files.latest_loaded_at
),

resolved_edits as (
    select
        coalesce(lower(ops_repos.repo), edits.repo) as repo,
        edits.rule_id,
        edits.action,
        edits.triggers,
        edits.is_always,
        edits.edited_at,
        edits.row_id
    from edits
    left join names on edits.repo = names.repo_name
    left join ops_repos on coalesce(edits.repo_id, names.repo_id) = ops_repos.repo_id
),

latest_tags as (
    select distinct on (resolved_edits.repo, resolved_edits.rule_id)
        resolved_edits.repo,
        resolved_edits.rule_id,
        resolved_edits.triggers
    from resolved_edits
    where resolved_edits.action = 'tag'
    order by resolved_edits.repo asc, resolved_edits.rule_id asc, resolved_edits.row_id desc
),

latest_always as (
    select distinct on (resolved_edits.repo, resolved_edits.rule_id)
        resolved_edits.repo,
        resolved_edits.rule_id,
        resolved_edits.is_always
    from resolved_edits
    where resolved_edits.is_always is not null
    order by resolved_edits.repo asc, resolved_edits.rule_id asc, resolved_edits.row_id desc
),

last_edits as (
    select
        resolved_edits.repo,
        resolved_edits.rule_id,
        max(resolved_edits.edited_at) as last_edited_at
    from resolved_edits
    group by resolved_edits.repo, resolved_edits.rule_id
),

edited as (
    select
        current_files.repo,
        current_files.repo_id,
        current_files.rule_id,
        {{ relore_fn('redact') }}(current_files.title) as title,
        {{ relore_fn('redact') }}(current_files.rule_text) as rule_text,
        current_files.scopes,
        current_files.is_active,
        coalesce(latest_tags.triggers, current_files.triggers) as triggers,
        coalesce(latest_always.is_always, current_files.is_always) as is_always,
        coalesce(current_files.created_at, current_files.first_loaded_at) as created_at,
        current_files.file_position,
        current_files.source_path,
        last_edits.last_edited_at,
        greatest(current_files.source_loaded_at, last_edits.last_edited_at) as source_loaded_at
    from current_files
    left join latest_tags
        on
            current_files.repo = latest_tags.repo
            and current_files.rule_id = latest_tags.rule_id
    left join latest_always
        on
            current_files.repo = latest_always.repo
            and current_files.rule_id = latest_always.rule_id
    left join last_edits
        on
            current_files.repo = last_edits.repo
            and current_files.rule_id = last_edits.rule_id
),

final as (
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
)

select * from final
