{#-
    The signal marts: the one list of them. Each is a `thread_<x>` mart holding a set of rows
    per thread, on signal_mart_config and signal_scope (macros/replace_thread_sets.sql).
    repo_status counts each (a column per mart, and `signals`, which serve's status shows),
    assert_signals_belong_to_threads checks each, the tests read this list
    (tests/fixtures/signal_marts.py). serve/lexical/source.py indexes each its own way.
-#}
{% macro signal_marts() -%}
    {{ return([
        'thread_files',
        'thread_symbols',
        'thread_commits',
        'thread_errors',
        'thread_tests',
        'thread_links',
    ]) }}
{%- endmacro %}
