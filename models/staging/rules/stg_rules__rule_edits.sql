-- The operator's edits to rules, typed: the triggers a tag sets, the always flag an edit sets.
with

rule_edits as (
    select * from {{ source('rules', 'rule_edits') }}
),

final as (
    select
        rule_edits.repo,
        rule_edits.repo_id,
        rule_edits.rule_id,
        rule_edits.action,
        case
            when rule_edits.triggers is not null
                then array(select jsonb_array_elements_text(rule_edits.triggers))
        end as triggers,
        rule_edits.is_always,
        rule_edits.edited_at,
        rule_edits.row_id
    from rule_edits
)

select * from final
