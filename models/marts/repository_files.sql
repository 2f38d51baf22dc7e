{{ config(materialized='view') }}

-- The files of the repository a thread discussed, for "most discussed files": thread_files
-- holds prose paths too (a traceback's /usr/lib/python3.11/..., a path in a quoted log),
-- which name files the repository never had. Here: GitHub's changed files and review
-- anchors, and a prose path only when it names one of those (by basename, then by whole
-- path parts, either side the longer: a traceback's absolute path into the tree counts).
with

-- the columns read, named: a view on `select *` would pin every column of thread_files
files as (
    select
        repo_id,
        thread_number,
        path,
        source
    from {{ ref('thread_files') }}
),

-- every path the repository is known to have had, in the normal form prose paths are in
known as (
    select distinct
        repo_id,
        {{ relore_fn('path_normal_form') }}(path) as path
    from files
    where source in ('changed_file', 'inline_anchor')
),

known_by_name as (
    select
        repo_id,
        path,
        regexp_replace(path, '^.*/', '') as basename
    from known
    where path is not null
),

definite as (
    select
        repo_id,
        thread_number,
        path,
        source
    from files
    where source in ('changed_file', 'inline_anchor')
),

prose as (
    select
        files.repo_id,
        files.thread_number,
        known_by_name.path,
        files.source
    from files
    inner join known_by_name
        on
            files.repo_id = known_by_name.repo_id
            and regexp_replace(files.path, '^.*/', '') = known_by_name.basename
    where
        files.source = 'prose'
        and (
            files.path = known_by_name.path
            or right(files.path, length(known_by_name.path) + 1) = '/' || known_by_name.path
            or right(known_by_name.path, length(files.path) + 1) = '/' || files.path
        )
),

final as (
    select * from definite
    union
    select * from prose
)

select * from final
