{#-
    on-run-end: VACUUM (ANALYZE) every table this build wrote (a table or incremental model
    that succeeded). A freshly written page is not all-visible until a vacuum sets its bit in
    the visibility map, so until autovacuum came by, every index-only read of serve/ fetched
    the heap anyway (~5,000 heap fetches per query at 1.2 million documents), and the planner
    worked from stale row counts. Unchanged pages are skipped through that same map, so a
    table the build did not touch costs little more than its ANALYZE sample.
    One statement (VACUUM cannot share a multi-command string; dbt runs on-run-end hooks
    outside a transaction); skip_locked: a reader's lock never holds up the build.
-#}
{% macro vacuum_built_tables(results) -%}
    {%- set tables = [] -%}
    {%- for result in results -%}
        {%- set node = result.node -%}
        {%- if node.resource_type == 'model' and result.status == 'success'
            and node.config.materialized in ('table', 'incremental') -%}
            {%- do tables.append(adapter.quote(node.schema) ~ '.' ~ adapter.quote(node.alias)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if tables -%}
        vacuum (analyze, skip_locked) {{ tables | join(', ') }}
    {%- else -%}
        select 'nothing built to vacuum'
    {%- endif -%}
{%- endmacro %}
