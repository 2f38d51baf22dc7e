{#-
    How far a text's author speaks for the project:
      machine        a bot (user type 'Bot', a login ending in '[bot]') or a configured machine
                     account (seed machine_accounts: login, optionally per repo);
      authoritative  OWNER or COLLABORATOR, or write access resolved by the authority pass
                     (ops.collaborator_permissions: admin, maintain, write);
      reported       everyone else (MEMBER included: GitHub says MEMBER before write access is
                     resolved; NONE, CONTRIBUTOR, FIRST_TIMER ...).
-#}
{% macro trust_tier(
    user_type, login, author_association, is_machine_account='false', has_write='false'
) -%}
    case
        when
            {{ user_type }} = 'Bot'
            or {{ login }} like '%[bot]'
            or coalesce({{ is_machine_account }}, false)
            then 'machine'
        when
            {{ author_association }} in ('OWNER', 'COLLABORATOR')
            or coalesce({{ has_write }}, false)
            then 'authoritative'
        else 'reported'
    end
{%- endmacro %}
