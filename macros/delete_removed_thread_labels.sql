{#- thread_labels' post-hook: remove labels that are no longer on their thread. -#}
{% macro delete_removed_thread_labels() -%}
    delete from {{ this }} as thread_labels
    where not exists (
        select 1
        from {{ ref('threads') }} as threads
        where
            threads.repo_id = thread_labels.repo_id
            and threads.number = thread_labels.number
            and threads.labels ? thread_labels.label
    )
{%- endmacro %}
