-- A multi-line, chained traceback yields the error line of each exception and nothing from
-- its frames or source lines; a link's kind and target are read from prose and URLs.
with

traceback as (
    select
        'Traceback (most recent call last):' || chr(10)
        || '  File "/srv/app/x.py", line 12, in <module>' || chr(10)
        || '    raise ValueError(f"bad {x}")' || chr(10)
        || 'ValueError: invalid literal for int() with base 10: ''abc''' || chr(10) || chr(10)
        || 'During handling of the above exception, another exception occurred:' || chr(10)
        || chr(10) || 'Traceback (most recent call last):' || chr(10)
        || '  File "C:\proj\y.py", line 3, in main' || chr(10)
        || 'RuntimeError: retry 3 failed' as body
),

errors as (
    select string_agg(found.normal_form, ' | ' order by found.normal_form) as actual
    from traceback
    cross join lateral {{ relore_fn('error_lines') }}(traceback.body) as found
),

links as (
    select
        string_agg(
            found.link_kind || ' ' || found.target_repo || '#' || found.target_number,
            ', ' order by found.target_repo, found.target_number
        ) as actual
    from {{ relore_fn('links') }}(
        'Fixes #12 and other/repo#7; see https://github.com/o/r/pull/5, C#4 and x#1',
        'O/R'
    ) as found
),

checks (actual, expected) as (
    select
        actual,
        'RuntimeError: retry N failed | ValueError: invalid literal for int() with base N: ''abc'''
    from errors
    union all
    select
        actual,
        'mentions o/r#5, closes o/r#12, mentions other/repo#7'
    from links
)

select * from checks
where actual is distinct from expected
