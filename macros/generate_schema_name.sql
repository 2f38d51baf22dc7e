{#-
    Use a model's custom schema verbatim (`staging`, `intermediate`, `marts`) instead of dbt's
    default `<target schema>_<custom schema>`: serve/ and the reader role's grants name `marts`.
-#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
