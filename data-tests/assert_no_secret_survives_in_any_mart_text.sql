-- No text column of any table or view in marts still holds something relore_redact would
-- redact (the catalog in macros/relore_functions.sql). relore_secret_leaks reads the columns
-- from the catalog at run time, so a text column added tomorrow is covered today.
select
    leaks.table_name,
    leaks.column_name,
    leaks.leaks
from {{ relore_fn('secret_leaks') }}('{{ relore_function_schema() }}') as leaks
where leaks.leaks > 0
