{#-
    Every version of every document: a row per change of content_hash, trust_tier or
    is_deleted (check strategy), with dbt_valid_from / dbt_valid_to.

    Scoped to what a build can have changed. The documents mart rewrites every document
    of a changed thread and stamps it written_at, so a document whose text, tier or
    deletion changed was written after this snapshot's last new version, less
    relore_history_lookback for a build that overlapped it (incremental_window, `this`
    being the snapshot). Comparing only those, and only with their own open versions
    (compare_source_keys_only, macros/snapshot_scope.sql; a partial index finds them), not
    all of documents against every open version, is what keeps a no-op build cheap at a
    million documents. A document outside the scope is not closed: it is unchanged
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
        compare_source_keys_only=true,
        post_hook=[
            "create index if not exists documents_history__repo_id__document_id__open"
            " on {{ this }} (repo_id, document_id) where dbt_valid_to is null",
            "create index if not exists documents_history__dbt_updated_at"
            " on {{ this }} (dbt_updated_at)",
        ],
    ) }}

    {#- The bound is read now and written in as a literal: the planner then takes the
        documents' (repo_id, written_at) index instead of reading every document. -#}
    {%- set existing = load_relation(this) if execute else none %}
    {%- set since = none %}
    {%- if existing is not none %}
        {%- set since = run_query(
            "select (max(dbt_updated_at) - " ~ var('relore_history_lookback')
            ~ ")::text from " ~ existing).columns[0].values()[0] %}
    {%- endif %}

    select {{ document_version_columns() | join(', ') }}
    from {{ ref('document_versions') }}
    {%- if since is not none %}
        where written_at > '{{ since }}'::timestamptz
    {%- endif %}

{% endsnapshot %}
