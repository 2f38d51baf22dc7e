{{ config(**signal_mart_config(['test_id'], ['test_id', 'test_name', 'test_file'])) }}

-- pytest node ids a thread names (`tests/test_x.py::TestC::test_y[param]`), in
-- relore_test_id_form; is_failed when any mention was a `FAILED` / `ERROR` line.
with

{{ signal_scope() }}

found as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        test.test_id,
        test.test_file,
        test.test_name,
        test.is_failed
    from scoped_documents
    cross join lateral {{ relore_fn('test_ids') }}(scoped_documents.body_text) as test
),

signals as (
    select
        found.repo_id,
        found.thread_number,
        found.test_id,
        min(found.test_file) as test_file,
        min(found.test_name) as test_name,
        bool_or(found.is_failed) as is_failed,
        max(thread_loaded.loaded_at) as source_loaded_at
    from found
    inner join thread_loaded
        on
            found.repo_id = thread_loaded.repo_id
            and found.thread_number = thread_loaded.thread_number
    group by found.repo_id, found.thread_number, found.test_id
),

{{ replace_thread_sets('signals', 'scope', ['test_id', 'test_file', 'test_name', 'is_failed']) }}

select * from final
