-- One row per rule of each repository's current rules file (its latest load), typed out
-- of the landed JSON, with the first time each rule id was ever loaded (its default age).
with

rule_files as (
    select * from {{ source('rules', 'rule_files') }}
),

latest_files as (
    select distinct on (rule_files.repo)
        rule_files.repo,
        rule_files.repo_id,
        rule_files.path,
        rule_files.payload,
        rule_files.loaded_at
    from rule_files
    order by rule_files.repo asc, rule_files.row_id desc
),

first_loads as (
    select
        rule_files.repo,
        file_rule.rule ->> 'id' as rule_id,
        min(rule_files.loaded_at) as first_loaded_at
    from rule_files
    cross join lateral jsonb_array_elements(rule_files.payload -> 'rules') as file_rule (rule)
    group by rule_files.repo, file_rule.rule ->> 'id'
),

current_rules as (
    select
        latest_files.repo,
        latest_files.repo_id,
        file_rule.rule ->> 'id' as rule_id,
        file_rule.rule ->> 'title' as title,
        file_rule.rule ->> 'text' as rule_text,
        array(
            select jsonb_array_elements_text(file_rule.rule -> 'scopes')
        ) as scopes,
        coalesce((file_rule.rule ->> 'active')::boolean, true) as is_active,
        array(
            select jsonb_array_elements_text(coalesce(file_rule.rule -> 'triggers', '[]'))
        ) as triggers,
        coalesce((file_rule.rule ->> 'always')::boolean, false) as is_always,
        (file_rule.rule ->> 'created')::timestamptz as created_at,
        file_rule.file_position,
        latest_files.path as source_path,
        latest_files.loaded_at as source_loaded_at
    from latest_files
    cross join
        lateral jsonb_array_elements(latest_files.payload -> 'rules')
        with ordinality as file_rule (rule, file_position)
),

final as (
    select
        current_rules.repo,
        current_rules.repo_id,
        current_rules.rule_id,
        current_rules.title,
        current_rules.rule_text,
        current_rules.scopes,
        current_rules.is_active,
        current_rules.triggers,
        current_rules.is_always,
        current_rules.created_at,
        first_loads.first_loaded_at,
        current_rules.file_position,
        current_rules.source_path,
        current_rules.source_loaded_at
    from current_rules
    inner join first_loads
        on
            current_rules.repo = first_loads.repo
            and current_rules.rule_id = first_loads.rule_id
)

select * from final
