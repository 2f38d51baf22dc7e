{#-
    The current version of every object in a slice of raw.github_objects.

    raw is append-only: each changed payload is a new row and a deletion is a tombstone row
    (payload null). The current version of (repo_id, object_type, object_id) is its highest
    row_id. Its `is_deleted` and `loaded_at` come from that row; its payload is the newest
    payload that was not a tombstone, so a deleted object keeps its last known content and
    readers filter on is_deleted (nothing is lost). Staging models call this over one object
    type; it is the one place the "latest version" rule is written.
-#}
{% macro latest_versions(relation) -%}
    select distinct on (repo_id, object_type, object_id)
        repo_id,
        repo,
        object_type,
        object_id,
        thread_number,
        row_id,
        is_deleted,
        loaded_at,
        first_value(payload) over (
            partition by repo_id, object_type, object_id
            order by payload is null, row_id desc
        ) as payload
    from {{ relation }}
    order by repo_id asc, object_type asc, object_id asc, row_id desc
{%- endmacro %}
