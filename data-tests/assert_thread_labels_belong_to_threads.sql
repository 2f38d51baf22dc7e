-- Every thread_labels row names a thread in threads that carries that label.
select
    thread_labels.repo_id,
    thread_labels.number,
    thread_labels.label
from {{ ref('thread_labels') }} as thread_labels
left join {{ ref('threads') }} as threads
    on
        thread_labels.repo_id = threads.repo_id
        and thread_labels.number = threads.number
where threads.number is null or not threads.labels ? thread_labels.label
