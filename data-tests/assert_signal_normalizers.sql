-- The text rules' hard cases: each row is (rule, input, expected), expected null when the
-- rule must reject the input.
with

cases (rule, input, expected) as (
    values
    ('path', 'C:\Users\me\proj\src\foo.py', '/Users/me/proj/src/foo.py'),
    ('path', './tests/test_x.py:12', 'tests/test_x.py'),
    ('path', '/usr/lib/python3.11/site-packages/torch/nn/module.py', 'torch/nn/module.py'),
    ('path', 'src/app.py#L10-L12', 'src/app.py'),
    ('prose_path', 'see src/app.py, and then', 'src/app.py'),
    ('prose_path', 'Dockerfile', null),
    ('prose_path', '.gitignore', null),
    ('prose_path', 'a.b.c', null),
    ('prose_path', 'os.path.join', null),
    ('prose_path', 'version 1.2.3', null),
    ('prose_path', 'https://github.com/o/r/blob/main/x.py', null),
    ('prose_path', 'docs.python.org/3/library/os.html', null),
    ('prose_path', 'C:\proj\src\win.py', '/proj/src/win.py'),
    ('symbol', '`Foo.bar`', 'Foo.bar'),
    ('symbol', '`snake_case()`', 'snake_case'),
    ('symbol', '`Model.forward(x, y)`', 'Model.forward'),
    ('symbol', '`e.g`', null),
    ('symbol', '`config.yaml`', null),
    (
        'commit',
        'fixed in a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0',
        'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0'
    ),
    ('commit', 'see abc1234 for it', 'abc1234'),
    -- a 40-hex word is a commit only where its line says so: a W&B key is 40 hex too
    ('commit', 'my key is a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0 ok', null),
    (
        'commit',
        'cherry-picked https://x/commit/a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0',
        'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0'
    ),
    ('commit', 'deadbeef', null),
    ('commit', 'run 1234567', null),
    ('commit', 'at 0x7f3a2b1c', null),
    ('commit', 'uuid 550e8400-e29b-41d4-a716-446655440000', null),
    ('commit', '1e10000', null),
    (
        'error',
        'ValueError: bad value 42 at 0x7f3a2b1c in /home/u/proj/x.py',
        'ValueError: bad value N at 0x? in x.py'
    ),
    (
        'error',
        'FileNotFoundError: [Errno 2] No such file: ''C:\data\train.csv''',
        'FileNotFoundError: [Errno N] No such file: ''train.csv'''
    ),
    ('error', 'E       KeyError: ''layer.0.weight''', 'KeyError: ''layer.0.weight'''),
    (
        'test',
        'FAILED tests/test_x.py::TestC::test_y[param-1] - boom',
        'tests/test_x.py::TestC::test_y[param-1]'
    ),
    ('test', 'tests\unit\test_w.py::test_z', 'tests/unit/test_w.py::test_z'),
    ('test', '/home/u/proj/tests/test_a.py::test_b', 'tests/test_a.py::test_b')
),

actual as (
    select
        rule,
        input,
        expected,
        case rule
            when 'path' then {{ relore_fn('path_normal_form') }}(input)
            when 'prose_path'
                then (
                    select min(found.p)
                    from {{ relore_fn('prose_paths') }}(cases.input) as found (p)
                )
            when 'symbol'
                then (
                    select min(found.s) from {{ relore_fn('symbols') }}(cases.input) as found (s)
                )
            when 'commit'
                then (
                    select min(found.c)
                    from {{ relore_fn('commit_shas') }}(cases.input) as found (c)
                )
            when 'error' then {{ relore_fn('error_normal_form') }}(input)
            when 'test' then (
                select min(found.test_id) from {{ relore_fn('test_ids') }}(cases.input) as found
            )
        end as actual
    from cases
)

select * from actual
where actual is distinct from expected
