{#-
    Data tests on a large incremental mart read only the rows written since the test last
    passed. A mart opts in with `meta: {relore_tested_since: <column>}` naming the column its
    model sets to the writing transaction's time on every row it writes (written_at). Then:

    - a row test (not_null, not_null_columns, accepted_values, accepted_range,
      expression_is_true, relationships: the child's side) reads rows with that column
      past the test's mark;
    - a key test (unique, unique_combination_of_columns) reads every row whose key occurs
      among those rows, so a new row that repeats an old row's key still fails;
    - any other generic test reads the whole table.

    The mark is kept per test in relore_build.test_marks with a hash of the test's
    definition (its name and arguments): a new or changed test, a test that never passed and
    a first build read everything, and a test that fails keeps its old mark, so the next
    build reads the failing rows again. `--vars '{relore_tests: full}'` reads every row
    (the nightly run; it also catches a row changed by hand, which no build stamped).
    Marks assume one build at a time, as the loop's lock makes it: on-run-end takes the
    newest stamp in the mart as what its tests saw.
-#}
{% macro postgres__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set scope = relore_test_scope(relation) -%}
    {%- set filters = [] -%}
    {%- if where %}{% do filters.append('(' ~ where ~ ')') %}{% endif -%}
    {%- if scope %}{% do filters.append(scope) %}{% endif -%}
    {%- if filters -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ filters | join(' and ')
            ~ ') as dbt_subquery') -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}

{#- The tested mart's node and its stamp column, or none. -#}
{% macro relore_tested_since(test_node) -%}
    {%- set attached = test_node.attached_node -%}
    {%- if not execute or not attached or attached not in graph.nodes -%}
        {%- do return(none) -%}
    {%- endif -%}
    {%- set mart = graph.nodes[attached] -%}
    {%- set column = (mart.config.meta or {}).get('relore_tested_since') -%}
    {%- do return((mart, column) if column else none) -%}
{%- endmacro %}

{#- What identifies a generic test's definition: its name and arguments. -#}
{% macro relore_test_definition(test_node) -%}
    {%- set metadata = test_node.test_metadata -%}
    {%- do return(local_md5(tojson(
        {'name': metadata.name, 'kwargs': metadata.kwargs or {}},
        sort_keys=true))) -%}
{%- endmacro %}

{% macro relore_test_scope(relation) -%}
    {%- if var('relore_tests', 'changed') == 'full' or not execute -%}
        {%- do return('') -%}
    {%- endif -%}
    {%- set metadata = model.test_metadata if model.test_metadata is defined else none -%}
    {%- set tested = relore_tested_since(model) if metadata else none -%}
    {%- if not tested -%}
        {%- do return('') -%}
    {%- endif -%}
    {#- The mark is read now and written into the test as a literal: the planner can then
        see that few rows are past it and take the mart's (repo_id, written_at) index. -#}
    {%- set marks = adapter.get_relation(
        database=target.database, schema='relore_build', identifier='test_marks') -%}
    {%- if marks is none -%}
        {%- do return('') -%}
    {%- endif -%}
    {%- set found = run_query(
        "select marked_to::text from " ~ marks ~ " where test_id = '"
        ~ model.unique_id ~ "' and definition = '" ~ relore_test_definition(model) ~ "'") -%}
    {%- if found.rows | length == 0 -%}
        {%- do return('') -%}
    {%- endif -%}
    {%- set since = tested[1] ~ " > '" ~ found.rows[0][0] ~ "'::timestamptz" -%}
    {%- set kwargs = metadata.kwargs or {} -%}
    {%- if metadata.name in ('not_null', 'not_null_columns', 'accepted_values',
        'accepted_range', 'expression_is_true', 'relationships') -%}
        {%- do return(since) -%}
    {%- elif metadata.name in ('unique', 'unique_combination_of_columns') -%}
        {%- set keys = [kwargs.column_name] if metadata.name == 'unique'
            else kwargs.combination_of_columns -%}
        {%- do return('(' ~ keys | join(', ') ~ ') in (select ' ~ keys | join(', ')
            ~ ' from ' ~ relation ~ ' where ' ~ since ~ ')') -%}
    {%- endif -%}
    {%- do return('') -%}
{%- endmacro %}

{#-
    on-run-end: move the mark of every scoped test that passed to the newest stamp in its
    mart; a test that failed, errored or was skipped keeps its mark. One statement per mart.
-#}
{% macro record_test_marks(results) -%}
    {%- set passed = {} -%}
    {%- for result in results -%}
        {%- set node = result.node -%}
        {%- if node.resource_type == 'test' and result.status == 'pass'
            and node.test_metadata -%}
            {%- set tested = relore_tested_since(node) -%}
            {%- if tested -%}
                {%- set mart = tested[0] -%}
                {%- set key = mart.unique_id -%}
                {%- if key not in passed -%}
                    {%- do passed.update({key: {'mart': mart, 'column': tested[1], 'rows': []}}) -%}
                {%- endif -%}
                {%- do passed[key]['rows'].append("('" ~ node.unique_id ~ "', '"
                    ~ relore_test_definition(node) ~ "')") -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for key, found in passed.items() -%}
        {%- set mart = adapter.quote(found['mart'].schema) ~ '.'
            ~ adapter.quote(found['mart'].alias) %}
        insert into relore_build.test_marks (test_id, definition, marked_to)
        select
            passed.test_id,
            passed.definition,
            newest.stamp
        from
            (values {{ found['rows'] | join(', ') }}) as passed (test_id, definition),
            (select max({{ found['column'] }}) as stamp from {{ mart }}) as newest
        where newest.stamp is not null
        on conflict (test_id) do update
            set definition = excluded.definition, marked_to = excluded.marked_to
            where
                (relore_build.test_marks.definition, relore_build.test_marks.marked_to)
                is distinct from (excluded.definition, excluded.marked_to);
    {% endfor -%}
    select 'test marks recorded'
{%- endmacro %}
