-- No string column (text, text array, JSON) of any table or view in marts still holds
-- something relore_redact would redact (the catalog in macros/relore_secret_catalog.sql).
-- A table's rows written before the last build whose scan passed (same catalog) are not
-- read again (secret_scan_since); `--vars '{relore_secret_scan: full}'` reads them all.
-- relore_secret_leaks reads the columns from the catalog at run time, so a column added
-- tomorrow is covered today. It reads
-- the schema, not refs, so every mart is named below for dbt to run it after them (a new
-- mart belongs in this list; tests/unit/test_dbt_test_order.py checks that none is missing).
-- depends_on: {{ ref('corpus_stats') }}
-- depends_on: {{ ref('documents') }}
-- depends_on: {{ ref('lexeme_stats') }}
-- depends_on: {{ ref('pass_checkpoints') }}
-- depends_on: {{ ref('path_aliases') }}
-- depends_on: {{ ref('repo_status') }}
-- depends_on: {{ ref('repository_files') }}
-- depends_on: {{ ref('rules') }}
-- depends_on: {{ ref('semantic_passages') }}
-- depends_on: {{ ref('thread_commits') }}
-- depends_on: {{ ref('thread_errors') }}
-- depends_on: {{ ref('thread_files') }}
-- depends_on: {{ ref('thread_labels') }}
-- depends_on: {{ ref('thread_links') }}
-- depends_on: {{ ref('thread_symbols') }}
-- depends_on: {{ ref('thread_tests') }}
-- depends_on: {{ ref('threads') }}
select
    leaks.table_name,
    leaks.column_name,
    leaks.leaks
from
    {{ relore_fn('secret_leaks') }}(
        '{{ relore_function_schema() }}', {{ secret_scan_since() }}
    ) as leaks
where leaks.leaks > 0
