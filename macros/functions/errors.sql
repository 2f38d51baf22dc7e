{#-
    Error lines: the normal form and the lines of a body.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_errors_functions(s) -%}
    create or replace function {{ s }}.relore_error_normal_form(line text) returns text
language plpgsql immutable parallel safe as $fn$
declare
    body text;
    part text;
    result text := '';
begin
    body := btrim(regexp_replace(coalesce(line, ''), '^[ \t]*(E[ \t]+)?', ''));
    if body = '' then
        return null;
    end if;
    body := regexp_replace(body, '0x[0-9a-fA-F]+', '0x?', 'g');
    -- an absolute path (POSIX or Windows, quoted or not) becomes its basename
    body := regexp_replace(
        body,
        '(?:[A-Za-z]:)?[\\/](?:[^\\/[:space:]''"]+[\\/])+([^\\/[:space:]''":,]+)',
        '\1',
        'g'
    );
    -- numbers become N outside quotes; a quoted value is kept as written
    for part in
        select piece[1]
        from regexp_matches(body, '(''[^'']*''|"[^"]*"|[^''"]+|[''"])', 'g') as piece
    loop
        if length(part) > 1 and left(part, 1) in ('''', '"') then
            result := result || part;
        else
            result := result || regexp_replace(part, '\m[0-9]+(\.[0-9]+)*\M', 'N', 'g');
        end if;
    end loop;
    return left(regexp_replace(result, '[[:space:]]+', ' ', 'g'), 500);
end
$fn$;

create or replace function {{ s }}.relore_error_lines(body text)
returns table (error_class text, normal_form text)
language sql immutable parallel safe as $fn$
    select distinct
        coalesce(found[2], split_part(found[1], ':', 1)),
        {{ s }}.relore_error_normal_form(found[1])
    -- every match holds Error, Exception or Warning: a body with none is not searched
    from regexp_matches(
        case
            when strpos(body, 'Error') > 0 or strpos(body, 'Exception') > 0
                or strpos(body, 'Warning') > 0
                then body
            else ''
        end,
        '^[ \t]*(?:E[ \t]+)?(((?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:[A-Z][A-Za-z0-9_]*(?:Error|Exception|Warning)))(?::[ \t].*|:)?|(?:Exception|Error): .*)$',
        'gn'
    ) as found
    where found[1] is not null
$fn$;
{%- endmacro %}
