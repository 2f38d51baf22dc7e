-- Every retrievable text unit of every landed thread, derived from staging: what the
-- documents mart holds, before indexing. The mart derives the same rows (macro
-- document_rows) for the threads an incremental build touches; this view is the whole set,
-- for analysts and tests.
with

{{ document_rows() }},

final as (
    select * from derived_documents
)

select * from final
