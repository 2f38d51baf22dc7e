{#-
    Where this build's every-column secret scan reads to, taken after every mart is built
    and before the scan (assert_no_secret_survives_in_any_mart_text) reads them: the oldest
    transaction still running. Every mart row older than the mark was committed before the
    scan began, so once the scan passes, the next build's scan starts here and reads only
    what was written since (by a model or by hand, during this scan or after it).
    The scan reads the schema, not refs: every mart is named below for dbt to run this after
    them (a new mart belongs in this list; tests/unit/test_dbt_test_order.py checks it).
-#}
{{ config(post_hook="{{ record_secret_scan_mark() }}") }}
-- depends_on: {{ ref('corpus_stats') }}
-- depends_on: {{ ref('documents') }}
-- depends_on: {{ ref('lexeme_stats') }}
-- depends_on: {{ ref('pass_checkpoints') }}
-- depends_on: {{ ref('path_aliases') }}
-- depends_on: {{ ref('repo_freshness') }}
-- depends_on: {{ ref('repo_status') }}
-- depends_on: {{ ref('repositories') }}
-- depends_on: {{ ref('repository_files') }}
-- depends_on: {{ ref('repository_names') }}
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
-- depends_on: {{ ref('token_budget') }}
select '{{ invocation_id }}'::text as invocation_id
