-- A pull request's changed files (`GET /pulls/{n}/files` entries, patch removed by the
-- extractor: no source code in the database). The key is the extractor's hash of number and
-- filename; do not read meaning into it.
{{ config(**staging_table_config('pull_file_id')) }}

with

latest_versions as (
    {{ latest_versions(['pull_file'], 'pull_file_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as pull_file_id,
        thread_number,
        payload ->> 'filename' as filename,
        payload ->> 'previous_filename' as previous_filename,
        payload ->> 'status' as change_status,
        (payload ->> 'additions')::integer as additions,
        (payload ->> 'deletions')::integer as deletions,
        (payload ->> 'changes')::integer as changes,
        payload ->> 'sha' as blob_sha,
        is_deleted,
        row_id as version_row_id,
        loaded_at
    from latest_versions
)

select * from final
