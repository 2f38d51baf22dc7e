-- What documents_history (a dbt snapshot) records of each document: its identity, the
-- columns a version is told apart by, and the text. Ephemeral (no relation: the snapshot
-- inlines it), downstream of the mart it narrows.
{{ config(materialized='ephemeral') }}

with

documents as (
    -- xmin: the transaction that wrote the row, for the snapshot's read mark
    select
        *,
        xmin as written_xid
    from {{ ref('documents') }}
),

final as (
    select
        {%- for column in document_version_columns() %}
            {{ column }},
        {%- endfor %}
        -- the snapshot's scope (not recorded: a version is told apart by what it says)
        written_at,
        written_xid
    from documents
)

select * from final
