{#-
    Every rule that turns text into something stored is ONE SQL function, created by the dbt
    project (on-run-start) in the served schema, so serve/ applies the very same function to a
    caller's --error / --file / --test / --symbol input and the two sides of a filter cannot
    drift. Models call them through relore_fn('name'); the reader role may EXECUTE them.

    This is the catalog: every function, and the file in macros/functions/ that holds it.
    Names and signatures are an interface (serve/, tests/ and benchmarks/ call them).

    redaction.sql (the rules themselves: macros/relore_secret_catalog.sql)
      relore_redact(text)                 secrets -> [REDACTED:<kind>] (idempotent)
      relore_redact_once(text)            one round of it (the catalog, in buckets)
      relore_has_secret(text)             true when relore_redact would change the text
      relore_secret_catalog()             jsonb: the catalog, rules and examples
    redaction_forms.sql (what relore_redact runs first and last on text its guards let in)
      relore_redact_normal_forms(text)    secrets split by markup, invisible or fullwidth
                                          characters or a line wrap, redacted where they
                                          stand in the original text
      relore_redact_base64(text)          base64 blobs whose decoding holds a secret
      relore_secret_spans(text)           table(span_start, span_end, span_kind): the
                                          catalog's secrets in a text, as spans
      relore_pattern_spans(text, pattern, flags, lead, trail, kind)  one entry's spans
    text.sql
      relore_markdown_to_text(text)       the macro markdown_to_text (same file) as a function
      relore_ends_with_part(whole, part, separator)  a literal suffix at a separator boundary
                                          (how --file and --symbol match the longer name)
    chunks.sql
      relore_chunks(text, int)            markdown split on paragraph boundaries, ~N chars each
    paths.sql
      relore_path_normal_form(text)       separators, drive, ./, site-packages, :line suffixes
      relore_path_aliases(repo_id, text[]) setof text: the paths and every other name their
                                          file had (marts.path_aliases, either side longer)
      relore_is_prose_path(text)          the heuristic for a token in prose (never for
                                          GitHub's own file lists or review anchors)
      relore_prose_paths(text)            setof normalised paths found in prose
    symbols.sql
      relore_symbol_form(text)            `Foo.bar()` -> Foo.bar; null when not an identifier
      relore_symbols(markdown)            setof symbols in inline code and `name()` calls
    commits.sql
      relore_commit_mentions(text)        table(sha, said): commit-looking words (7-12 hex, a
                                          commit URL's, 40-hex) and whether the body says each
                                          is a commit (a 40-hex word: its line says commit,
                                          sha, merged ...)
      relore_commit_shas(text)            setof the said ones
    errors.sql
      relore_error_normal_form(text)      one error line: addresses, absolute paths, numbers
      relore_error_lines(text)            table(error_class, normal_form) per error line
    test_ids.sql
      relore_test_id_form(text)           a pytest node id, normalised
      relore_test_ids(text)               table(test_id, test_file, test_name, is_failed)
    links.sql
      relore_links(text, own_repo)        table(link_kind, target_repo, target_number)
    rules.sql
      relore_has_hidden_characters(text)  zero-width or bidi control characters (rules mart)
    audit.sql
      relore_secret_leaks(schema, since)  per string column of a schema (text, arrays, JSON),
                                          values holding a secret (table rows newer than since)

    A new function goes in the file of its concern (or a new one), in this list, and in
    create_relore_functions() below, after the functions its body calls.
-#}

{% macro relore_function_schema() -%}
    {{ var('relore_function_schema', 'marts') }}
{%- endmacro %}

{% macro relore_fn(name) -%}
    {{ relore_function_schema() }}.relore_{{ name }}
{%- endmacro %}

{% macro create_relore_functions() -%}
    {%- set s = relore_function_schema() -%}
    create schema if not exists {{ s }};

    {{ relore_redaction_functions(s) }}

    {{ relore_redaction_forms_functions(s) }}

    {{ relore_text_functions(s) }}

    {{ relore_chunks_functions(s) }}

    {{ relore_paths_functions(s) }}

    {{ relore_symbols_functions(s) }}

    {{ relore_commits_functions(s) }}

    {{ relore_errors_functions(s) }}

    {{ relore_test_ids_functions(s) }}

    {{ relore_links_functions(s) }}

    {{ relore_rules_functions(s) }}

    {{ relore_audit_functions(s) }}

do $grant$
begin
    if exists (select from pg_roles where rolname = 'relore_reader') then
        grant usage on schema {{ s }} to relore_reader;
        grant execute on all functions in schema {{ s }} to relore_reader;
    end if;
end
$grant$;
{%- endmacro %}

{#- `dbt run-operation install_relore_functions`: (re)create the functions without a build. -#}
{% macro install_relore_functions() -%}
    {% do run_query(create_relore_functions()) %}
{%- endmacro %}
