{#-
    Markdown as plain text.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_text_functions(s) -%}
    create or replace function {{ s }}.relore_markdown_to_text(markdown text) returns text
language sql immutable parallel safe as $fn$
    select {{ markdown_to_text('markdown') }}
$fn$;

-- `whole` ends with `part` at a `separator` boundary ('/' for paths, '.' for dotted names),
-- compared literally: a caller's value is never a LIKE pattern (% and _ are characters).
create or replace function {{ s }}.relore_ends_with_part(
    whole text, part text, separator text
) returns boolean
language sql immutable parallel safe as $fn$
    select right(whole, length(part) + length(separator)) = separator || part
$fn$;
{%- endmacro %}

{#-
    GitHub-flavoured markdown -> plain text for search and snippets. Deliberately simple:
      - carriage returns dropped (GitHub bodies use CRLF);
      - HTML comments removed (issue templates are full of them);
      - code fence lines (``` / ~~~ with any info string) removed, the code inside kept;
      - images removed, both ![alt](url) and <img ...>;
      - links [text](url) keep their text, drop the url;
      - common HTML tags (<details>, <summary>, <br>, <a ...>, ...) removed, their text kept;
      - heading markers (#), blockquote markers (>) and inline-code backticks removed;
      - trailing spaces trimmed, runs of blank lines collapsed to one, ends trimmed.
    A null body gives null. Called as the function relore_markdown_to_text (above).
-#}
{% macro markdown_to_text(markdown) -%}
    btrim(
        regexp_replace(
            regexp_replace(
                replace(
                    regexp_replace(
                        regexp_replace(
                            regexp_replace(
                                regexp_replace(
                                    regexp_replace(
                                        regexp_replace(
                                            regexp_replace(
                                                regexp_replace(
                                                    replace({{ markdown }}, chr(13), ''),
                                                    '<!--.*?-->', '', 'g'
                                                ),
                                                '^[ \t]*(`{3,}|~{3,})[^\n]*$', '', 'gn'
                                            ),
                                            '<img([[:space:]][^>]*)?/?>', '', 'gi'
                                        ),
                                        '!\[[^]]*\]\([^)]*\)', '', 'g'
                                    ),
                                    '\[([^]]*)\]\([^)]*\)', '\1', 'g'
                                ),
                                '</?(a|b|i|p|br|hr|em|strong|code|pre|kbd|sub|sup|span|div|details|summary|table|thead|tbody|tr|td|th|ul|ol|li|h[1-6]|blockquote)([[:space:]][^>]*)?/?>',
                                '',
                                'gi'
                            ),
                            '^[ \t]{0,3}#{1,6}[ \t]+', '', 'gn'
                        ),
                        '^[ \t]*>(?!>)[ \t]?', '', 'gn'
                    ),
                    '`', ''
                ),
                '[ \t]+$', '', 'gn'
            ),
            '\n{3,}', chr(10) || chr(10), 'g'
        ),
        ' ' || chr(9) || chr(10)
    )
{%- endmacro %}
