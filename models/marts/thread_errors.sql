{{ config(**signal_mart_config(['normal_form'], ['normal_form'])) }}

-- Error lines a thread carries in its title or text (`XxxError: msg`, `Exception: ...`,
-- pytest's `E   ...`; every exception of a chained traceback), in relore_error_normal_form:
-- addresses, absolute paths and numbers outside quotes normalised, so a caller's pasted line
-- meets the stored one.
with

{{ signal_scope() }}

found as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        error_line.error_class,
        error_line.normal_form
    from scoped_documents
    -- the title too: an issue is often named after its error line
    cross join
        lateral {{ relore_fn('error_lines') }}(
            coalesce(scoped_documents.title, '') || E'\n' || scoped_documents.body_text
        ) as error_line
    where error_line.normal_form is not null
),

signals as (
    select
        found.repo_id,
        found.thread_number,
        found.normal_form,
        min(found.error_class) as error_class,
        max(thread_loaded.loaded_at) as source_loaded_at
    from found
    inner join thread_loaded
        on
            found.repo_id = thread_loaded.repo_id
            and found.thread_number = thread_loaded.thread_number
    group by found.repo_id, found.thread_number, found.normal_form
),

{{ replace_thread_sets('signals', 'scope', ['normal_form', 'error_class']) }}

select * from final
