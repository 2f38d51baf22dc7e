{#-
    What `relored cycle` (extract/schedule.py) calls a complete backfill and a late poll, for
    repo_freshness: a backfill is complete once each of these passes has an `ok` run
    (schedule.BULK_STEPS, in the order a backfill runs them), and a repository whose last
    finished turn is older than poll_behind_after() is behind (schedule.BEHIND_AFTER: the
    hourly loop's hour, and half an hour for the timer's delay and a cycle's own time).
    tests/unit/test_cycle_schedule_listed.py holds the two sides together.
-#}
{% macro backfill_steps() -%}
    {{ return([
        'issues',
        'issue_comments',
        'review_comments',
        'pull_details',
        'reviews',
        'deletions',
    ]) }}
{%- endmacro %}

{% macro poll_behind_after() -%}
    interval '90 minutes'
{%- endmacro %}
