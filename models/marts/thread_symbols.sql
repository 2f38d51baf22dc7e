{{ config(**signal_mart_config(['symbol'], ['symbol'])) }}

-- Identifiers a thread names in code: `Foo.bar`, `snake_case()`, name() calls
-- (relore_symbols over the redacted markdown, in relore_symbol_form).
with

{{ signal_scope() }}

found as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        symbol.symbol
    from scoped_documents
    cross join lateral {{ relore_fn('symbols') }}(scoped_documents.body_markdown) as symbol (symbol)
),

signals as (
    select
        found.repo_id,
        found.thread_number,
        found.symbol,
        max(thread_loaded.loaded_at) as source_loaded_at
    from found
    inner join thread_loaded
        on
            found.repo_id = thread_loaded.repo_id
            and found.thread_number = thread_loaded.thread_number
    group by found.repo_id, found.thread_number, found.symbol
),

{{ replace_thread_sets('signals', 'scope', ['symbol']) }}

select * from final
