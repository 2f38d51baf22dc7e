-- relore_redact against every example and negative of its catalog
-- (macros/relore_secret_catalog.sql): each example redacts to what the catalog says, once is
-- enough (idempotent), and each negative stays as it is. An example its bucket's prefilter
-- stopped would stay unredacted, so this checks every keyword and guard too.
with

cases (kind, input, expected) as (
    values
    {%- for entry in relore_secret_catalog() %}
        {%- for pair in entry['examples'] %}
            ('{{ entry['kind'] }}', '{{ pair[0] | replace("'", "''") }}', '{{ pair[1] | replace("'", "''") }}'),
        {%- endfor %}
        {%- for text in entry['negatives'] %}
            ('{{ entry['kind'] }}', '{{ text | replace("'", "''") }}', '{{ text | replace("'", "''") }}'),
        {%- endfor %}
    {%- endfor %}
    ('none', '', '')
),

checked as (
    select
        kind,
        input,
        expected,
        {{ relore_fn('redact') }}(input) as actual,
        {{ relore_fn('redact') }}({{ relore_fn('redact') }}(input)) as twice
    from cases
)

select * from checked
where
    actual is distinct from expected
    or twice is distinct from actual
