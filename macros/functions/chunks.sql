{#-
    Long bodies cut into chunks.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_chunks_functions(s) -%}
    create or replace function {{ s }}.relore_chunks(markdown text, target integer default 1500)
returns table (chunk_index integer, chunk text)
-- rows 1: most bodies are one chunk; a larger estimate (the default is 1,000) makes the planner
-- sort a derivation before its chunks are cut, and cut them above the parallel workers
language plpgsql immutable parallel safe rows 1 as $fn$
declare
    paragraph text;
    buffer text := '';
    piece text;
    cut integer;
    n integer := 0;
begin
    if markdown is null then
        return;
    end if;
    if length(markdown) <= target then
        chunk_index := 0; chunk := markdown; return next;
        return;
    end if;
    foreach paragraph in array regexp_split_to_array(markdown, '\n[ \t]*\n') loop
        paragraph := btrim(paragraph, E'\n');
        continue when btrim(paragraph) = '';
        -- A paragraph longer than a chunk is cut at its last line break (else space) in reach.
        while length(paragraph) > target loop
            piece := left(paragraph, target);
            cut := target + 1 - coalesce(nullif(position(E'\n' in reverse(piece)), 0), target + 1);
            if cut < target / 2 then
                cut := target + 1 - coalesce(nullif(position(' ' in reverse(piece)), 0), 1);
            end if;
            if buffer <> '' then
                chunk_index := n; chunk := buffer; return next;
                n := n + 1; buffer := '';
            end if;
            chunk_index := n; chunk := rtrim(left(paragraph, cut)); return next;
            n := n + 1;
            paragraph := ltrim(substr(paragraph, cut + 1), E' \n');
        end loop;
        if buffer = '' then
            buffer := paragraph;
        elsif length(buffer) + 2 + length(paragraph) <= target then
            buffer := buffer || E'\n\n' || paragraph;
        else
            chunk_index := n; chunk := buffer; return next;
            n := n + 1; buffer := paragraph;
        end if;
    end loop;
    if btrim(buffer) <> '' then
        chunk_index := n; chunk := buffer; return next;
    end if;
end
$fn$;
{%- endmacro %}
