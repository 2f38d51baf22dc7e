{#-
    Every version of every document: a row per change of content_hash, trust_tier or
    is_deleted (check strategy), with dbt_valid_from / dbt_valid_to.

    Scoped to what a build can have changed. The documents mart rewrites every document
    of a changed thread and stamps it written_at, so a document whose text, tier or
    deletion changed was written after this snapshot's last new version, less
    relore_history_lookback for a build that overlapped it (incremental_window, `this`
    being the snapshot). Comparing only those, not all of documents against every open version,
    is what keeps a no-op build cheap at a million documents. A document outside the scope is not closed: it is unchanged
    (hard deletes are ignored, as before; the mart keeps deletions as is_deleted).
    A SQL snapshot, not YAML, for `this`; sqlfluff's jinja templater has no snapshot tag,
    so .sqlfluffignore lists this file (its SQL is one select and one linted macro).
-#}
{% snapshot documents_history %}
    {{ config(
        schema='snapshots',
        unique_key=['repo_id', 'document_id'],
        strategy='check',
        check_cols=['content_hash', 'trust_tier', 'is_deleted'],
    ) }}

    {%- set existing = load_relation(this) if execute else none %}

    select {{ document_version_columns() | join(', ') }}
    from {{ ref('document_versions') }}
    {%- if existing is not none %}
        where {{ incremental_window(
            'written_at', 'dbt_updated_at', lookback=var('relore_history_lookback')
        ) }}
    {%- endif %}

{% endsnapshot %}
