{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id', 'document_id'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'document_id'], 'unique': True},
            {'columns': ['search_vector'], 'type': 'gin'},
            {'columns': ['repo_id', 'thread_number']},
            {'columns': ['repo_id', 'author_login']},
            {'columns': ['trust_tier']},
            {'columns': ['source_loaded_at']},
            {'columns': ['repo_id', 'written_at']},
        ],
    )
}}

-- The incremental branch reads these (the threads that changed, and the inputs of a tier)
-- depends_on: {{ ref('stg_github__issues') }}
-- depends_on: {{ ref('stg_github__issue_comments') }}
-- depends_on: {{ ref('stg_github__review_comments') }}
-- depends_on: {{ ref('stg_github__reviews') }}
-- depends_on: {{ ref('stg_ops__collaborator_permissions') }}
-- depends_on: {{ ref('machine_accounts') }}

{%- set columns = document_columns() %}

with

{% if is_incremental() -%}
    changes as (
        {{ thread_scope_changes([
            ('stg_github__issues', 'number', 'loaded_at'),
            ('stg_github__issue_comments', 'thread_number', 'loaded_at'),
            ('stg_github__review_comments', 'thread_number', 'loaded_at'),
            ('stg_github__reviews', 'thread_number', 'loaded_at'),
        ], mart_since()) }}
    ),

    permissions as (
        select * from {{ ref('stg_ops__collaborator_permissions') }}
    ),

    machine_accounts as (
        select * from {{ ref('machine_accounts') }}
    ),

    -- The only stored documents whose tier can have moved since the last build: those of
    -- authors whose write access authority checked since then, those of configured
    -- machine accounts not yet stored as machine, and those stored as machine that are not
    -- bots by type (an account taken off the list). Found through the author index, never
    -- by reading the whole mart.
    retier_keys as (
        select
            in_mart.repo_id,
            in_mart.document_id
        from permissions
        inner join {{ this }} as in_mart
            on
                permissions.repo_id = in_mart.repo_id
                and permissions.login = in_mart.author_login
        where permissions.checked_at > {{ mart_since() }}
        union
        select
            in_mart.repo_id,
            in_mart.document_id
        from (select distinct login from machine_accounts) as listed
        inner join {{ this }} as in_mart on listed.login = in_mart.author_login
        where in_mart.trust_tier != 'machine'
        union
        select
            in_mart.repo_id,
            in_mart.document_id
        from {{ this }} as in_mart
        where
            in_mart.trust_tier = 'machine'
            and in_mart.author_type is distinct from 'Bot'
    ),

    retier_candidates as (
        select in_mart.*
        from retier_keys
        inner join {{ this }} as in_mart
            on
                retier_keys.repo_id = in_mart.repo_id
                and retier_keys.document_id = in_mart.document_id
        where not in_mart.is_deleted
    ),

    -- Threads holding a document whose stored tier is no longer what authority and the
    -- machine accounts say: re-derived though no text changed.
    retiered as (
        select
            candidates.repo_id,
            candidates.thread_number,
            max(candidates.source_loaded_at) as changed_at
        from retier_candidates as candidates
        left join permissions
            on
                candidates.repo_id = permissions.repo_id
                and candidates.author_login = permissions.login
        left join lateral (
            select bool_or(true) as is_machine_account
            from machine_accounts
            where
                machine_accounts.login = candidates.author_login
                and (
                    coalesce(machine_accounts.repo, '') = ''
                    or lower(machine_accounts.repo) = lower(candidates.repo)
                )
        ) as machine_account on true
        where
            candidates.trust_tier != {{ trust_tier(
                'candidates.author_type',
                'candidates.author_login',
                'candidates.author_association',
                'machine_account.is_machine_account',
                'permissions.has_write'
            ) }}
        group by candidates.repo_id, candidates.thread_number
    ),

    scope as (
        select
            repo_id,
            thread_number,
            max(changed_at) as changed_at
        from (
            select * from changes
            union all
            select * from retiered
        ) as scoped
        group by repo_id, thread_number
    ),

    -- The scope goes in as arrays (each an init plan, a value to Postgres) so the filter
    -- reaches the view's staging scans; a join on scope alone would derive every document
    -- first. The exists() keeps each (repo_id, thread_number) pair exact.
    derived_documents as (
        select derived.* from {{ ref('int_documents_normalized') }} as derived
        where
            derived.repo_id = any(array(select scope.repo_id from scope))
            and derived.thread_number = any(array(select scope.thread_number from scope))
            and {{ in_thread_scope('scope', 'derived') }}
    ),

    changed as (
        select * from derived_documents
        where
            not {{ unchanged_in_this(
                'derived_documents',
                ['repo_id', 'document_id'],
                ['content_hash', 'trust_tier', 'is_deleted'],
            ) }}
    ),

    -- A document of a re-derived thread that is no longer derived (its chunk went when the
    -- body shrank, a review's body was emptied) stays, flagged deleted. Found by EXCEPT, a
    -- hashed set operation whatever the estimates: a `not exists` over derived_documents
    -- (a CTE, no index) was planned as a nested loop once the derivation's estimate was
    -- small, and re-deriving 500 threads (13,469 documents) compared 90 million pairs.
    vanished_keys as (
        select
            in_mart.repo_id,
            in_mart.document_id
        from {{ this }} as in_mart
        inner join scope
            on
                in_mart.repo_id = scope.repo_id
                and in_mart.thread_number = scope.thread_number
        where not in_mart.is_deleted
        except
        select
            derived_documents.repo_id,
            derived_documents.document_id
        from derived_documents
    ),

    vanished as (
        select
            {%- for column in columns %}
                {%- if column == 'is_deleted' %}
                    true as is_deleted,
                {%- elif column == 'source_loaded_at' %}
                    greatest(in_mart.source_loaded_at, scope.changed_at) as source_loaded_at,
                {%- else %}
                    in_mart.{{ column }},
                {%- endif %}
            {%- endfor %}
            in_mart.search_vector
        from vanished_keys
        inner join {{ this }} as in_mart
            on
                vanished_keys.repo_id = in_mart.repo_id
                and vanished_keys.document_id = in_mart.document_id
        inner join scope
            on
                in_mart.repo_id = scope.repo_id
                and in_mart.thread_number = scope.thread_number
    ),

    written as (
        select * from changed
        union all
        select * from vanished
    ),
{%- else %}
    written as (
        select * from {{ ref('int_documents_normalized') }}
    ),
{%- endif %}

-- A deleted document keeps its keys and flag, never its text: what someone deleted on
-- GitHub (a pasted credential, spam) stays only in raw's history, out of every read. Its
-- search vector is what is left: the path it was anchored to.
shown as (
    select
        {%- for column in columns %}
            {%- if column in ('body_markdown', 'body_text') %}
                case when is_deleted then '' else {{ column }} end as {{ column }},
            {%- elif column in ('title', 'diff_hunk') %}
                case when is_deleted then null else {{ column }} end as {{ column }},
            {%- else %}
                {{ column }},
            {%- endif %}
        {%- endfor %}
        -- built in int_documents_normalized, below its window (in the parallel workers)
        case
            when is_deleted then setweight(to_tsvector('simple', coalesce(path, '')), 'C')
            else search_vector
        end as search_vector
    from written
),

final as (
    select
        *,
        -- when this row was last written (the build's transaction time): the search index
        -- refreshes the threads holding a document written after its mark
        current_timestamp as written_at
    from shown
)

select * from final
