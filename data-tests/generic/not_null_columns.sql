{#-
    Fails for each null in the named columns: one test per model instead of one not_null
    test per column. dbt spends ~50 ms on every test node whatever it reads, so 183 column
    tests cost a build with nothing new about 9 s of node time for nothing; this reads the
    model once. Its rows say which column holds nulls and how many; the failure count is the
    number of nulls, as the column tests would have summed.

    The filter is `c1 is null or c2 is null ...` so that Postgres (17 and later) drops a
    column its table declares NOT NULL (raw and ops) from the plan: a table whose named
    columns are all NOT NULL is never read.
-#}
{% test not_null_columns(model, column_names) %}
{{ config(fail_calc='coalesce(sum(null_rows), 0)') }}

    with

    failing as (
        select {{ column_names | join(', ') }}
        from {{ model }}
        where {{ column_names | join(' is null or ') }} is null
    )

    select
        nulls.column_name,
        count(*) as null_rows
    from failing
    cross join lateral unnest(
        array['{{ column_names | join("', '") }}'],
        array[{{ column_names | join(' is null, ') }} is null]
    ) as nulls (column_name, is_null)
    where nulls.is_null
    group by nulls.column_name

{% endtest %}
