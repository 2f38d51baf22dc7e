"""The search index: BM25 over every match, from a tantivy index derived from the marts.

``marts.documents`` stays the source of truth. Each repository's live documents are copied
into a tantivy index (one per repository, so IDF and length statistics are per repository,
as every key carries ``repo_id``): each document as the lexemes Postgres' own ``search_vector``
holds (the one normaliser), each repeated by its field weight (BM25F with integer weights),
plus the filters a search applies per document (trust tier, author, date, thread, state).

- ``schema``: the index's fields and how a marts row becomes a document.
- ``source``: the SQL that reads those rows, and the marks that say what changed.
- ``store``: where indexes live, building, refreshing and reading them safely.
- ``query``: a search request as tantivy queries, and the ranked walk with the thread cap.
"""
