{#-
    Index names that say what they index: `<table>__<column>_<column>[__unique][__<type>]`
    and eight hex digits. dbt-postgres names an index by an md5 of its relation, columns and
    the time alone, so `\di` lists only hashes. The digits keep what that hash was for: a
    table model builds its next version (`<table>__dbt_tmp`, whose suffix the name leaves
    out) beside the current one before the swap, and both hold indexes on the same columns
    in the same schema, so each build's names must differ. The name stays within
    Postgres' 63 bytes: the readable part is cut first, never the digits.
-#}
{% macro postgres__get_create_index_sql(relation, index_dict) -%}
    {%- set index_config = adapter.parse_index(index_dict) -%}
    {%- set table = relation.identifier | replace('__dbt_tmp', '') -%}
    {%- set parts = [table, index_config.columns | join('_')] -%}
    {%- if index_config.unique %}{% do parts.append('unique') %}{% endif -%}
    {%- if index_config.type %}{% do parts.append(index_config.type | lower) %}{% endif -%}
    {%- set digits = local_md5(
        relation ~ index_config.columns | join(',') ~ index_config.unique
        ~ index_config.type ~ modules.datetime.datetime.utcnow().isoformat()
    )[:8] -%}
    {%- set index_name = (parts | join('__'))[:54] ~ '_' ~ digits -%}
    create {% if index_config.unique -%} unique {%- endif %} index if not exists
    "{{ index_name }}"
    on {{ relation }} {% if index_config.type -%} using {{ index_config.type }} {%- endif %}
    ({{ index_config.columns | join(', ') }})
{%- endmacro %}
