-- Every signal row names a thread in threads (no orphan signal rows).
{%- for model_name in signal_marts() + ['semantic_passages'] %}
    select
        '{{ model_name }}' as signal_table,
        signals.repo_id,
        signals.thread_number
    from {{ ref(model_name) }} as signals
    where
        not exists (
            select 1
            from {{ ref('threads') }} as threads
            where
                threads.repo_id = signals.repo_id
                and threads.number = signals.thread_number
        )
    {% if not loop.last %}union all{% endif %}
{%- endfor %}
