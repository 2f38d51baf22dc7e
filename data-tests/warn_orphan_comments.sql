{{ config(severity='warn') }}

-- Comments whose thread never landed: excluded from the marts, reported, never a failure
-- (the thread may have been deleted or transferred before the issue walk saw it).
select
    repo_id,
    object_type,
    object_id,
    thread_number
from {{ ref('int_orphan_comments') }}
