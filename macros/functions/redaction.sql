{#-
    Redaction: the secret catalog (macros/relore_secret_catalog.sql) as functions.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_redaction_functions(s) -%}
-- Redaction: the catalog (macros/relore_secret_catalog.sql) as one function. Its entries
-- run in order, in buckets: a bucket runs only when the text holds one of its entries'
-- keywords (strpos over one lower-cased copy, folded again only after a bucket replaced
-- something) or matches a guard, and an entry of the bucket only when the text holds one of
-- its own. Most text runs no replacement and no regular expression but the guards. Before
-- the catalog, text its guard lets in has its normal form read (a secret split by markup,
-- invisible or fullwidth characters, a line wrap); after it, text holding a base64 blob has
-- the blob decoded (macros/functions/redaction_forms.sql). One round: relore_redact runs
-- it until the text stays as it is.
create or replace function {{ s }}.relore_redact_once(input text) returns text
language plpgsql immutable strict parallel safe as $fn$
declare
    folded text;
    output text := input;
    replaced boolean := true;
begin
    if {{ relore_normal_forms_guard('input') }} then
        output := {{ s }}.relore_redact_normal_forms(input);
    end if;
    {% for bucket in relore_secret_catalog() | batch(relore_secret_bucket_size()) -%}
    if replaced then
        folded := lower(output);
        replaced := false;
    end if;
    if {{ relore_secret_prefilter(bucket, 'folded', 'output') }} then
        {% for entry in bucket -%}
        -- {{ entry['kind'] }}{{ ': ' ~ entry['note'] if entry['note'] }}
        if {% if entry['guard'] -%}
            output ~ '{{ entry['guard'] | replace("'", "''") }}'
        {%- else -%}
            {%- for keyword in entry['keywords'] -%}
                strpos(folded, '{{ keyword | replace("'", "''") }}') > 0{{ ' or ' if not loop.last }}
            {%- endfor -%}
        {%- endif %} then
            output := regexp_replace(
                output, '{{ entry['pattern'] | replace("'", "''") }}',
                '{{ entry['replace'] | replace("'", "''") }}', '{{ entry['flags'] }}'
            );
            replaced := true;
        end if;
        {% endfor -%}
    end if;
    {% endfor -%}
    if output ~ '{{ relore_base64_blob() }}' then
        output := {{ s }}.relore_redact_base64(output);
    end if;
    return output;
end
$fn$;

-- Secrets -> [REDACTED:<kind>]: relore_redact_once until the text stays as it is (at most
-- four rounds; most text takes one, unchanged). A redaction can show what it hid before
-- (a label that ends a split, a decoded blob), and a redacted text must redact to itself:
-- the secret scan reads stored text with this function. Strict: a null (a comment's absent
-- path or hunk) is answered without a call.
create or replace function {{ s }}.relore_redact(input text) returns text
language plpgsql immutable strict parallel safe as $fn$
declare
    output text := {{ s }}.relore_redact_once(input);
    again text;
    rounds integer := 1;
begin
    while output <> input and rounds < 4 loop
        again := {{ s }}.relore_redact_once(output);
        exit when again = output;
        output := again;
        rounds := rounds + 1;
    end loop;
    return output;
end
$fn$;

create or replace function {{ s }}.relore_has_secret(input text) returns boolean
language sql immutable parallel safe as $fn$
    select input is not null and {{ s }}.relore_redact(input) <> input
$fn$;

-- The catalog itself, for tests/ and benchmarks/ (and anyone asking what is redacted).
create or replace function {{ s }}.relore_secret_catalog() returns jsonb
language sql immutable parallel safe as $fn$
    select '{{ tojson(relore_secret_catalog()) | replace("'", "''") }}'::jsonb
$fn$;
{%- endmacro %}
