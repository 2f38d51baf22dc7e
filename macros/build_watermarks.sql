{#-
    Where each signal mart's last build had read up to, kept apart from the mart itself.

    A signal mart rewrites a thread's set only when the set changed, so its own newest
    source_loaded_at stops moving while documents keep arriving; a window taken from it
    would re-read ever more documents on every build. The watermark is the newest input the
    last build saw (documents, plus the mart's other inputs), written by a post-hook only
    when it moved: a build with nothing new writes nothing here either.
-#}
{% macro create_build_state() -%}
    create schema if not exists relore_build;
    create table if not exists relore_build.watermarks (
        model text primary key,
        watermark timestamptz not null
    );
{%- endmacro %}

{% macro watermark_inputs() -%}
    {{ return([('documents', 'source_loaded_at')] + (config.get('watermark_inputs') or [])) }}
{%- endmacro %}

{#- `since` for a signal mart: its watermark minus the lookback, else its own mark's. -#}
{% macro signal_since() -%}
    coalesce(
        (
            select watermark - {{ var('relore_lookback', "interval '1 hour'") }}
            from relore_build.watermarks
            where model = '{{ this.schema }}.{{ this.identifier }}'
        ),
        {{ mart_since() }}
    )
{%- endmacro %}

{% macro record_watermark() -%}
    insert into relore_build.watermarks (model, watermark)
    select '{{ this.schema }}.{{ this.identifier }}', max(inputs.seen)
    from (
    {%- for name, column in watermark_inputs() %}
        {% if not loop.first %}union all{% endif %}
            select max({{ column }}) as seen from {{ ref(name) }}
    {%- endfor %}
    ) as inputs
    having max(inputs.seen) is not null
    on conflict (model) do update
        set watermark = excluded.watermark
        where relore_build.watermarks.watermark is distinct from excluded.watermark
{%- endmacro %}
