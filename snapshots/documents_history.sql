{#-
    Every version of every document: a row per change of content_hash, trust_tier or
    is_deleted (check strategy), with dbt_valid_from / dbt_valid_to.

    Scoped to what a build can have changed. The documents mart rewrites every document
    of a changed thread and stamps it written_at, so a document whose text, tier or
    deletion changed was written since this snapshot's last read: snapshot_scope
    (macros/snapshot_scope.sql) picks the documents whose writing transaction that read
    could not see, by the read mark taken just before it (the oldest transaction then
    running, and the earliest start of a session then able to write documents; without
    that start, the last version less relore_history_lookback). Comparing only those, and
    only with their own open versions (compare_source_keys_only; a partial index finds
    them), not all of documents against every open version, is what keeps a build after
    a full one, and a no-op build, cheap at a million documents. A document outside the
    scope is not closed: it is unchanged (hard deletes are ignored, as before; the mart
    keeps deletions as is_deleted).
    A SQL snapshot, not YAML, for `this`; sqlfluff's jinja templater has no snapshot tag,
    so .sqlfluffignore lists this file (its SQL is one select and one linted macro).
-#}
{% snapshot documents_history %}
    {{ config(
        schema='snapshots',
        unique_key=['repo_id', 'document_id'],
        strategy='check',
        check_cols=['content_hash', 'trust_tier', 'is_deleted'],
        compare_source_keys_only=true,
        pre_hook=["{{ snapshot_read_mark('documents') }}"],
        post_hook=[
            "create index if not exists documents_history__repo_id__document_id__open"
            " on {{ this }} (repo_id, document_id) where dbt_valid_to is null",
            "create index if not exists documents_history__dbt_updated_at"
            " on {{ this }} (dbt_updated_at)",
        ],
    ) }}

    {%- set scope = snapshot_scope('written_at', 'written_xid', var('relore_history_lookback')) %}

    select {{ document_version_columns() | join(', ') }}
    from {{ ref('document_versions') }}
    {%- if scope %}
        where {{ scope }}
    {%- endif %}

{% endsnapshot %}
