{#-
    Redaction of secrets a text hides from a plain scan: split by markup (`**ghp_**…`,
    `<b>hf_</b>…`, `` `hf_`… ``, `hf\_…`), a zero-width or other format character inside,
    fullwidth or other compatibility forms (`ｈｆ＿…`), an HTML character reference, a key
    wrapped across lines, or a secret encoded in base64. The same catalog finds them
    (macros/relore_secret_catalog.sql): relore_secret_spans is generated from it and runs on
    the text's normal form; the spans it finds are mapped back to the original text and
    redacted there, so every representation (markdown, text, hunk, title) loses the secret.
    relore_redact calls relore_redact_normal_forms first, only when relore_normal_forms_guard
    holds, and relore_redact_base64 last, only on text holding a base64 blob:
    most text has none of these shapes.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}

{#- Format characters (Unicode Cf) and the fillers that show nothing, dropped from a normal
    form; and compatibility characters that fold (NFKC) to ASCII letters, digits or `_`/`-`
    (fullwidth forms, mathematical alphanumerics, letterlike symbols, enclosed
    alphanumerics, super/subscripts, ligatures), folded. Code point ranges, first to last. -#}
{% macro relore_invisible_ranges() -%}
    {{ return([
        (0xAD, 0xAD), (0x34F, 0x34F), (0x61C, 0x61C), (0x115F, 0x1160), (0x17B4, 0x17B5),
        (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F),
        (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
        (0xFFA0, 0xFFA0), (0xFFF9, 0xFFFB), (0xE0000, 0xE007F),
    ]) }}
{%- endmacro %}

{% macro relore_compat_ranges() -%}
    {{ return([
        (0xAA, 0xAA), (0xB2, 0xB3), (0xB9, 0xBA), (0x1D2C, 0x1D6A), (0x2070, 0x209C),
        (0x2100, 0x214F), (0x2460, 0x24FF), (0xFB00, 0xFB06), (0xFE31, 0xFE34),
        (0xFE4D, 0xFE4F), (0xFE58, 0xFE58), (0xFE63, 0xFE63), (0xFF01, 0xFF5E),
        (0x1D400, 0x1D7FF), (0x1F130, 0x1F189),
    ]) }}
{%- endmacro %}

{#- Ranges as the inside of a regular expression's bracket expression. -#}
{% macro relore_ranges_class(ranges) -%}
    {%- for first, last in ranges -%}
        {{ relore_code_point(first) }}{% if last != first %}-{{ relore_code_point(last) }}{% endif %}
    {%- endfor -%}
{%- endmacro %}

{% macro relore_code_point(n) -%}
    {%- if n > 0xFFFF -%}\U{{ '%08X' | format(n) }}{%- else -%}\u{{ '%04X' | format(n) }}{%- endif -%}
{%- endmacro %}

{#- Ranges as a SQL condition on the code point `c` (an integer expression). -#}
{% macro relore_ranges_test(ranges, c) -%}
    ({%- for first, last in ranges -%}
        {{ c }} between {{ first }} and {{ last }}{{ ' or ' if not loop.last }}
    {%- endfor -%})
{%- endmacro %}

{#- The characters a key is made of, where a wrap or a split can fall: a bracket
    expression, and the same characters as a string (for ltrim and rtrim). -#}
{% macro relore_key_char() -%}
    [A-Za-z0-9_+/=-]
{%- endmacro %}

{% macro relore_key_chars() -%}
    ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=-
{%- endmacro %}

{#- A base64 blob: 20+ characters of the alphabet, padded to a multiple of 4, standing alone. -#}
{% macro relore_base64_blob() -%}
    (?:^|[^A-Za-z0-9+/=_-])((?:[A-Za-z0-9+/]{4}){5,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)(?![A-Za-z0-9+/=_-])
{%- endmacro %}

{#-
    The cheap test relore_redact runs before anything else (as SQL over `input`): true when
    the text may hide a secret in one of the shapes above. Most text fails it:
    - markup between a key character and 8 more with a capital or a digit among them
      (`_**A1b…`, `_</b>A1b…`, `` _`A1b… ``, `f\_A1b…`: a key's body, not `2**32`);
    - an invisible character, a fullwidth or mathematical letter or digit, a numeric
      character reference;
    - a line ending in 16 key characters whose next line starts with 8, a digit and a
      letter among them, or is a few after 40 (a wrapped key).
    One regular expression: PostgreSQL keeps 32 compiled ones per session, and every text
    runs this one, so it stays compiled; each more would push a catalog entry's out.
-#}
{% macro relore_normal_forms_guard(input) -%}
    {%- set k = relore_key_char() -%}
    {%- set invisible = relore_ranges_class(relore_invisible_ranges()) -%}
    {{ input }} ~ (
        '[A-Za-z0-9_-](?:[*`~]+|</?[A-Za-z][^<>\n]*>|\\[_*`~-])(?=[A-Za-z0-9_-]{8})[a-z_-]*[A-Z0-9]|[{{ invisible }}\uFF10-\uFF19\uFF21-\uFF3A\uFF3F\uFF41-\uFF5A\U0001D400-\U0001D7FF]|&#[0-9xX]|{{ k }}{16}\n[ \t>]*(?:(?={{ k }}*[0-9])(?={{ k }}*[A-Za-z]){{ k }}{8}|(?<={{ k }}{40}\n){{ k }}+(?:\n|$))'
    )
{%- endmacro %}

{% macro relore_redaction_forms_functions(s) -%}
    {%- set invisible = relore_ranges_class(relore_invisible_ranges()) -%}
    {%- set compat = relore_ranges_class(relore_compat_ranges()) -%}
    {%- set key_chars = relore_key_chars() -%}
-- Where one catalog entry matches `input`: (start, end) of each match's secret, 1-based,
-- end exclusive, without the groups the entry keeps (`lead` before the secret, `trail`
-- after it; each a group of `pattern`, which must tile the match's start and end). One
-- regexp_matches and one regexp_split_to_array over the pattern wrapped in a group: the
-- same matches in the same order, so the pieces between them give each match's place.
create or replace function {{ s }}.relore_pattern_spans(
    input text, pattern text, flags text, lead integer[], trail integer[], kind text
) returns table (span_start integer, span_end integer, span_kind text)
language plpgsql immutable strict parallel safe as $fn$
declare
    wrapped text := '(' || pattern || ')';
    between_matches text[] := regexp_split_to_array(input, wrapped, replace(flags, 'g', ''));
    found text[];
    k integer := 0;
    at integer := 1;
    g integer;
begin
    for found in select regexp_matches(input, wrapped, flags) loop
        k := k + 1;
        at := at + length(between_matches[k]);
        span_start := at;
        span_end := at + length(found[1]);
        foreach g in array lead loop
            span_start := span_start + coalesce(length(found[g + 1]), 0);
        end loop;
        foreach g in array trail loop
            span_end := span_end - coalesce(length(found[g + 1]), 0);
        end loop;
        span_kind := kind;
        if span_end > span_start then
            return next;
        end if;
        at := at + length(found[1]);
    end loop;
end
$fn$;

-- Every secret the catalog finds in `input`, as spans (relore_pattern_spans): each entry
-- runs on `input` as it is, gated by its own keywords or guard. Spans of two entries may
-- overlap (the plain pass would have run the second on the first's redaction).
create or replace function {{ s }}.relore_secret_spans(input text)
returns table (span_start integer, span_end integer, span_kind text)
language plpgsql immutable strict parallel safe as $fn$
declare
    folded text := lower(input);
begin
    {% for entry in relore_secret_catalog() -%}
        {%- set kept = entry['replace'].split('[REDACTED:' ~ entry['kind'] ~ ']') -%}
        {%- set groups = (kept[0] ~ kept[-1]).split('\\')
            | reject('in', ['1', '2', '3', '4', '']) -%}
        {%- if kept | length != 2 or groups | list | length -%}
            {{ exceptions.raise_compiler_error(
                'catalog entry ' ~ entry['kind'] ~ ': replace must be its label between kept'
                ~ ' groups (\\1 ..), not ' ~ entry['replace']
            ) }}
        {%- endif -%}
        if {% if entry['guard'] -%}
            input ~ '{{ entry['guard'] | replace("'", "''") }}'
        {%- else -%}
            {%- for keyword in entry['keywords'] -%}
                strpos(folded, '{{ keyword | replace("'", "''") }}') > 0{{ ' or ' if not loop.last }}
            {%- endfor -%}
        {%- endif %} then
            return query select * from {{ s }}.relore_pattern_spans(
                input, '{{ entry['pattern'] | replace("'", "''") }}', '{{ entry['flags'] }}',
                array[{{ kept[0].split('\\')[1:] | join(', ') }}]::integer[],
                array[{{ kept[1].split('\\')[1:] | join(', ') }}]::integer[],
                '{{ entry['kind'] }}'
            );
        end if;
    {% endfor -%}
end
$fn$;

-- relore_redact's first step, for text relore_normal_forms_guard lets in:
-- 1. the text's normal form: markup (`*`, `~~`, backticks, HTML tags), invisible
--    characters and a line break inside a wrapped key dropped (a line of 60+ characters
--    ending in 16 key characters, the next starting with 8 holding a digit and a letter,
--    or a short last line of key characters after 40), compatibility characters folded
--    (NFKC), markdown escapes and numeric character references read; each piece
--    remembers where it came from;
-- 2. the catalog's spans in the normal form, merged where they overlap, mapped to the
--    original text and replaced there by [REDACTED:<kind>].
-- relore_redact's plain pass runs after it.
create or replace function {{ s }}.relore_redact_normal_forms(input text) returns text
language plpgsql immutable strict parallel safe as $fn$
declare
    output text := input;
    normal text;
    normal_at integer[];
    normal_len integer[];
    source_at integer[];
    source_len integer[];
    found record;
    merged_start integer;
    merged_end integer;
    merged_kind text;
    spans integer[] := '{}';
    kinds text[] := '{}';
    i integer;
    first_at integer;
    last_at integer;
begin
    -- 1. the normal form, piece by piece. Pieces are told apart by their characters, not
    -- by more regular expressions (each would push a catalog entry's out of the cache).
    with pieces as (
        select found_piece.n, found_piece.m[1] as piece
        from regexp_matches(
            output,
            '\n[ \t>]*|\*+|~~|`+|</?[A-Za-z][A-Za-z0-9-]*(?:[[:space:]][^<>\n]*)?/?>|\\[_*`~\\-]|&#[0-9]+;|&#[xX][0-9a-fA-F]+;|[{{ invisible }}]+|[{{ compat }}]+|[^\n*~`<\\&{{ invisible }}{{ compat }}]+|.',
            'g'
        ) with ordinality as found_piece (m, n)
    ),

    numbered as (
        select n, piece, sum(length(piece)) over (order by n) - length(piece) + 1 as at
        from pieces
    ),

    placed as (
        select
            n,
            piece,
            at,
            ascii(piece) as first_code,
            lag(piece) over (order by n) as before,
            lead(piece) over (order by n) as after,
            lead(piece, 2) over (order by n) as after_next,
            coalesce(
                max(case when left(piece, 1) = chr(10) then at end) over (
                    order by n rows between unbounded preceding and 1 preceding
                ),
                0
            ) as line_break_at
        from numbered
    ),

    -- a numeric character reference's code point, when it is one chr() takes
    referenced as (
        select
            placed.*,
            case
                when left(piece, 2) = '&#' and length(piece) between 4 and 11
                    then case
                        when lower(substr(piece, 3, 1)) = 'x'
                            then ('x' || lpad(substr(piece, 4, length(piece) - 4), 8, '0'))::bit(32)::integer
                        when length(piece) <= 10 then substr(piece, 3, length(piece) - 3)::integer
                    end
            end as code,
            -- the run of key characters the next piece starts with
            left(after, length(after) - length(ltrim(after, '{{ key_chars }}'))) as after_head
        from placed
    ),

    read as (
        select
            n,
            at,
            length(piece) as source_length,
            case
                -- most pieces are plain text: a printable ASCII character that starts no
                -- other piece
                when first_code between 32 and 127 and strpos('*~`<\&', left(piece, 1)) = 0
                    then piece
                when first_code = 10
                    then case
                        -- a line break inside a wrapped key: its line holds 60+ characters
                        -- and ends in 16 key characters; the next line starts with 8 of
                        -- them (a digit and a letter among them), or is a short last line of
                        -- them after a line they filled with 40
                        when
                            at - line_break_at - 1 >= 60
                            and length(before) >= 16
                            and rtrim(right(before, 16), '{{ key_chars }}') = ''
                            and (
                                (
                                    length(after_head) >= 8
                                    and translate(after_head, '0123456789', '') <> after_head
                                    and lower(after_head) <> upper(after_head)
                                )
                                or (
                                    length(before) >= 40
                                    and rtrim(right(before, 40), '{{ key_chars }}') = ''
                                    and after_head = after
                                    and coalesce(left(after_next, 1), chr(10)) = chr(10)
                                )
                            )
                            then ''
                        else piece
                    end
                -- markup: bold or italic stars, strikethrough, backticks, an HTML tag
                when first_code in (42, 96) or piece = '~~' then ''
                when first_code = 60 and length(piece) > 1 then ''
                -- a markdown escape: the character it escapes
                when first_code = 92 and length(piece) = 2 then right(piece, 1)
                when code between 32 and 1114111 and code not between 55296 and 57343
                    then normalize(chr(code), nfkc)
                when {{ relore_ranges_test(relore_invisible_ranges(), 'first_code') }} then ''
                when {{ relore_ranges_test(relore_compat_ranges(), 'first_code') }}
                    then normalize(piece, nfkc)
                else piece
            end as normal_piece
        from referenced
    ),

    kept as (
        select
            n,
            at,
            source_length,
            normal_piece,
            sum(length(normal_piece)) over (order by n) - length(normal_piece) + 1 as normal_piece_at
        from read
        where normal_piece <> ''
    )

    select
        string_agg(normal_piece, '' order by n),
        array_agg(normal_piece_at order by n),
        array_agg(length(normal_piece) order by n),
        array_agg(at order by n),
        array_agg(source_length order by n)
    into normal, normal_at, normal_len, source_at, source_len
    from kept;

    -- most normal forms hold no secret: one plain pass says so (the normal form is its
    -- own normal form, so this recursion stops there)
    if normal is null or normal = output or {{ s }}.relore_redact(normal) = normal then
        return output;
    end if;

    -- 2. the spans, merged, mapped back and replaced from the end
    for found in
        select span_start, span_end, span_kind
        from {{ s }}.relore_secret_spans(normal)
        order by span_start, span_end desc
    loop
        if merged_end is not null and found.span_start < merged_end then
            merged_end := greatest(merged_end, found.span_end);
        else
            if merged_end is not null then
                spans := spans || array[merged_start, merged_end];
                kinds := kinds || merged_kind;
            end if;
            merged_start := found.span_start;
            merged_end := found.span_end;
            merged_kind := found.span_kind;
        end if;
    end loop;
    if merged_end is null then
        return output;
    end if;
    spans := spans || array[merged_start, merged_end];
    kinds := kinds || merged_kind;
    for i in reverse array_length(kinds, 1) .. 1 loop
        -- the source of the span's first character and of its last
        select case when p.nl = p.sl then p.sa + spans[2 * i - 1] - p.na else p.sa end
        into first_at
        from unnest(normal_at, normal_len, source_at, source_len) as p (na, nl, sa, sl)
        where spans[2 * i - 1] >= p.na and spans[2 * i - 1] < p.na + p.nl;
        select case when p.nl = p.sl then p.sa + spans[2 * i] - 1 - p.na + 1 else p.sa + p.sl end
        into last_at
        from unnest(normal_at, normal_len, source_at, source_len) as p (na, nl, sa, sl)
        where spans[2 * i] - 1 >= p.na and spans[2 * i] - 1 < p.na + p.nl;
        output := left(output, first_at - 1) || '[REDACTED:' || kinds[i] || ']'
            || substr(output, last_at);
    end loop;
    return output;
end
$fn$;
-- relore_redact's last step, for text holding a base64 blob (relore_base64_blob): a blob
-- that decodes to mostly printable text holding a secret (relore_redact on the decoded text:
-- a blob inside a blob is read too, each shorter) is redacted whole, labelled with that
-- secret's kind. The blob pattern allows only a well-padded length: decode never fails.
create or replace function {{ s }}.relore_redact_base64(input text) returns text
language plpgsql immutable strict parallel safe as $fn$
declare
    output text := input;
    found record;
begin
    for found in
        select distinct blobs.blob, {{ s }}.relore_redact(decoded.plain) as redacted
        from regexp_matches(output, '{{ relore_base64_blob() }}', 'g') as m
        cross join lateral (select m[1] as blob) as blobs
        cross join lateral (
            select encode(decode(blobs.blob, 'base64'), 'escape') as plain
        ) as decoded
        -- mostly printable: at most one byte in eight escaped (\ooo, a backslash \\)
        where (length(decoded.plain) - length(replace(decoded.plain, '\', ''))) * 8
            <= length(decoded.plain)
    loop
        if strpos(found.redacted, '[REDACTED:') > 0 then
            output := replace(
                output, found.blob,
                '[REDACTED:' || split_part(split_part(found.redacted, '[REDACTED:', 2), ']', 1) || ']'
            );
        end if;
    end loop;
    return output;
end
$fn$;
{%- endmacro %}
