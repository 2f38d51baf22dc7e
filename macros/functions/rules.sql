{#-
    Rules (marts.rules): the hidden-character check.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_rules_functions(s) -%}
-- Zero-width and bidi control characters: a rule holding one is never served. The loader's
-- early warning (contract/rules/choose.py HIDDEN_CHARACTERS, before any build) is the same
-- class in Python; tests/integration/test_rules_serving.py runs every code point through
-- both. Null in, null out (as `~`).
create or replace function {{ s }}.relore_has_hidden_characters(input text) returns boolean
language sql immutable parallel safe as $fn$
    select input ~ '[\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]'
$fn$;
{%- endmacro %}
