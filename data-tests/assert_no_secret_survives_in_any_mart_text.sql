-- No string column (text, text array, JSON) of any table or view in marts still holds
-- something relore_redact would redact (the catalog in macros/relore_secret_catalog.sql).
-- A table's rows older than the mark of the last scan that passed (same catalog) are not
-- read again (secret_scan_since); `--vars '{relore_secret_scan: full}'` reads them all.
-- relore_secret_leaks reads the columns from the catalog at run time, so a column added
-- tomorrow is covered today. It reads the schema, not refs: secret_scan_mark names
-- every mart, so dbt runs this after all of them, and marks where this scan reads to.
-- depends_on: {{ ref('secret_scan_mark') }}
select
    leaks.table_name,
    leaks.column_name,
    leaks.leaks
from
    {{ relore_fn('secret_leaks') }}(
        '{{ relore_function_schema() }}', {{ secret_scan_since() }}
    ) as leaks
where leaks.leaks > 0
