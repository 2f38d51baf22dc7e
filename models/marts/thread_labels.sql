{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id', 'number', 'label'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'number', 'label'], 'unique': True},
            {'columns': ['repo_id', 'label']},
        ],
        post_hook=[
            "{{ delete_removed_thread_labels() }}",
        ],
    )
}}

-- One row per label on a thread, from threads.labels. Incremental: inserts only labels not
-- yet here; the post-hook deletes labels no longer on their thread. A build with nothing new
-- writes nothing.
with

threads as (
    select * from {{ ref('threads') }}
),

current_labels as (
    select
        threads.repo_id,
        threads.number,
        thread_label.label
    from threads
    cross join lateral jsonb_array_elements_text(threads.labels) as thread_label (label)
),

{% if is_incremental() -%}
    added as (
        select * from current_labels
        where not {{ unchanged_in_this('current_labels', ['repo_id', 'number', 'label'], []) }}
    ),
{%- else -%}
    added as (
        select * from current_labels
    ),
{%- endif %}

final as (
    select * from added
)

select * from final
