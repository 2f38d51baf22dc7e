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
    -- One row per dbt invocation: the transaction id it started at and the redaction
    -- catalog it ran with (md5 of relore_redact's definition); `passed` once its secret
    -- scan passed, and `scanned_to`, the oldest transaction still running after every mart
    -- was built, before the scan began (secret_scan_mark). A scan reads only table
    -- rows written from the newest passed mark on, under the same catalog.
    create table if not exists relore_build.secret_scans (
        invocation_id text primary key,
        started_xid xid8 not null,
        catalog text not null,
        passed boolean not null default false,
        started_at timestamptz not null default clock_timestamp()
    );
    alter table relore_build.secret_scans add column if not exists scanned_to xid8;
    -- Per snapshot, taken just before its last read (snapshot_read_mark): the oldest
    -- transaction still running, and the earliest start of a session then in a
    -- transaction that could write its source (null: not known).
    create table if not exists relore_build.snapshot_marks (
        snapshot text primary key,
        read_from xid8 not null,
        read_since timestamptz
    );
    -- Per data test on a mart with a stamp column: the newest stamp it has read and passed
    -- (macros/test_scope.sql), under the test's definition hash.
    create table if not exists relore_build.test_marks (
        test_id text primary key,
        definition text not null,
        marked_to timestamptz not null
    );
    insert into relore_build.secret_scans (invocation_id, started_xid, catalog)
    values (
        '{{ invocation_id }}',
        pg_current_xact_id(),
        md5(pg_get_functiondef('{{ relore_fn("redact") }}(text)'::regprocedure))
    )
    on conflict (invocation_id) do nothing;
{%- endmacro %}

{#-
    `since` for the every-column secret scan: where the newest scan that passed under this
    catalog had read to (null: read everything, as with `--vars
    '{relore_secret_scan: full}'`, a first build, or a changed catalog). A mark from before
    `scanned_to` existed falls back to its build's start, which re-reads that build's rows.
-#}
{% macro secret_scan_since() -%}
    {%- if var('relore_secret_scan', 'changed') == 'full' -%}
        null::xid8
    {%- else -%}
        (
            select max(coalesce(passed_scan.scanned_to, passed_scan.started_xid))
            from relore_build.secret_scans as passed_scan
            inner join relore_build.secret_scans as this_run
                on passed_scan.catalog = this_run.catalog
            where
                passed_scan.passed
                and this_run.invocation_id = '{{ invocation_id }}'
        )
    {%- endif -%}
{%- endmacro %}

{#-
    secret_scan_mark's post-hook: every mart of this build is committed and the scan has
    not begun, so the oldest transaction still running is where the scan reads to. (The
    build's start, the mark before this, made every build re-read all its predecessor wrote:
    after a full build, every row.)
-#}
{% macro record_secret_scan_mark() -%}
    update relore_build.secret_scans
    set scanned_to = pg_snapshot_xmin(pg_current_snapshot())
    where invocation_id = '{{ invocation_id }}'
{%- endmacro %}

{#- on-run-end: mark this invocation's scan passed; keep only rows a later scan needs. -#}
{% macro record_secret_scan(results) -%}
    {%- set passed = [] -%}
    {%- for result in results -%}
        {%- if result.node.name == 'assert_no_secret_survives_in_any_mart_text'
            and result.status == 'pass' -%}
            {%- do passed.append(result) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if passed %}
        update relore_build.secret_scans set passed = true
        where invocation_id = '{{ invocation_id }}';
    {%- endif %}
    delete from relore_build.secret_scans
    where
        invocation_id <> '{{ invocation_id }}'
        and started_at < now() - interval '1 day'
        and started_xid < (
            select coalesce(max(newest.started_xid), '0'::xid8)
            from relore_build.secret_scans as newest
            where newest.passed
        );
{%- endmacro %}

{% macro watermark_inputs() -%}
    {{ return([('documents', 'source_loaded_at')] + (config.get('watermark_inputs') or [])) }}
{%- endmacro %}

{#- `since` for a signal mart: its watermark minus the lookback, else its own mark's. -#}
{% macro signal_since() -%}
    {{ bound_literal(
        "select coalesce((select watermark - " ~ var('relore_lookback', "interval '1 hour'")
        ~ " from relore_build.watermarks where model = '" ~ this.schema ~ "."
        ~ this.identifier ~ "'), (" ~ high_water_query() ~ "))"
    ) }}
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

{#-
    `xid_column` holds a transaction id (32 bits, as xmin) that is `mark` (a 32-bit id as
    a number) or younger: its distance from the mark modulo 2^32 is under 2^31. Not
    age(xmin): age() is parallel-restricted and a filter on it keeps a scan in one
    process. Only meaningful for a mark under 2^30 transactions old (xid_mark_recent).
-#}
{% macro xid_at_or_after(xid_column, mark) -%}
    mod({{ xid_column }}::text::bigint - {{ mark }} + 4294967296, 4294967296) < 2147483648
{%- endmacro %}

{#- Whether a transaction id mark (xid8) is recent enough for xid_at_or_after. -#}
{% macro xid_mark_recent(mark) -%}
    age(xid({{ mark }})) < 1073741824
{%- endmacro %}
