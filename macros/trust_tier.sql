{#-
    How far a text's author speaks for the project:
      machine        a bot account (user type 'Bot', or a login ending in '[bot]');
      authoritative  the repository's owner or a collaborator with write access;
      reported       everyone else (including MEMBER, which GitHub reports before write access
                     is resolved, and NONE / CONTRIBUTOR / FIRST_TIMER ...).
-#}
{% macro trust_tier(user_type, login, author_association) -%}
    case
        when {{ user_type }} = 'Bot' or {{ login }} like '%[bot]' then 'machine'
        when {{ author_association }} in ('OWNER', 'COLLABORATOR') then 'authoritative'
        else 'reported'
    end
{%- endmacro %}
