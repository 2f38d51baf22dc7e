{{ config(materialized='view') }}

-- Per repository, how fresh the hourly loop (`relored cycle`, extract/schedule.py) keeps it:
-- when its last poll and backfill finished, how far its backfill has got, its latest turn,
-- and whether it is behind and why. A view over ops, read at query time, so the SELECT-only
-- reader sees the cycle that ran a minute ago without a build. `relored doctor` words the
-- same rules over ops (operate/doctor/schedule.py).
with

ops_repos as (
    select * from {{ ref('stg_ops__repos') }}
),

cycles as (
    select * from {{ ref('stg_ops__repo_cycles') }}
),

checkpoints as (
    select * from {{ ref('stg_ops__checkpoints') }}
),

ok_runs as (
    select * from {{ ref('stg_ops__pass_runs') }}
    where status = 'ok'
),

-- the passes a backfill runs, in its order (macros/cycle_schedule.sql)
steps as (
    select
        listed.step_name,
        listed.step_order
    from unnest(array[
        {%- for step in backfill_steps() %}
            '{{ step }}'{{ ',' if not loop.last }}
        {%- endfor %}
    ]) with ordinality as listed (step_name, step_order)
),

backfill as (
    select
        ops_repos.repo_id,
        count(step_state.completed) as steps_done,
        (array_agg(steps.step_name order by steps.step_order) filter (
            where step_state.completed is null
        ))[1] as next_step
    from ops_repos
    cross join steps
    -- an `ok` run of the step, found by the key's repo_id prefix (pass_runs grows hourly)
    left join lateral (
        select true as completed
        from ok_runs
        where ok_runs.repo_id = ops_repos.repo_id and ok_runs.pass_name = steps.step_name
        order by ok_runs.run_id
        limit 1
    ) as step_state on true
    group by ops_repos.repo_id
),

any_cycle as (
    select exists(select from cycles) as cycled
),

judged as (
    select
        any_cycle.cycled,
        ops_repos.repo_id,
        ops_repos.repo,
        last_poll.finished_at as last_poll_at,
        last_backfill.finished_at as last_backfill_at,
        last_done.finished_at as last_done_at,
        {{ backfill_steps() | length }} as backfill_steps,
        backfill.steps_done as backfill_steps_done,
        backfill.next_step is null as backfill_complete,
        backfill.next_step as backfill_step,
        step_mark.high_water as backfill_high_water,
        latest.cycle_id as latest_cycle_id,
        latest.role as latest_role,
        latest.outcome as latest_outcome,
        latest.started_at as latest_started_at,
        latest.finished_at as latest_finished_at,
        {{ relore_fn('redact') }}(latest.reason) as latest_reason,
        -- the first rule that holds; null when no cycle ever ran (the loop runs
        -- `relored extract` by hand, or nothing yet): freshness is then unknown
        case
            when not any_cycle.cycled then null
            when latest.repo_id is null then 'never_cycled'
            when backfill.next_step is not null then 'backfilling'
            when latest.outcome in ('budget', 'waiting', 'failed', 'partial') then latest.outcome
            when
                coalesce(last_done.finished_at, '-infinity')
                < now() - {{ poll_behind_after() }}
                then 'stale'
        end as behind_reason,
        {{ poll_behind_after() }} as behind_after
    from ops_repos
    cross join any_cycle
    left join backfill on ops_repos.repo_id = backfill.repo_id
    left join checkpoints as step_mark
        on
            backfill.repo_id = step_mark.repo_id
            and backfill.next_step = step_mark.pass_name
    left join lateral (
        select
            cycles.repo_id,
            cycles.cycle_id,
            cycles.role,
            cycles.outcome,
            cycles.started_at,
            cycles.finished_at,
            cycles.reason
        from cycles
        where cycles.repo_id = ops_repos.repo_id
        order by cycles.cycle_id desc
        limit 1
    ) as latest on true
    left join lateral (
        select cycles.finished_at from cycles
        where
            cycles.repo_id = ops_repos.repo_id
            and cycles.role = 'poll'
            and cycles.outcome = 'done'
        order by cycles.cycle_id desc
        limit 1
    ) as last_poll on true
    left join lateral (
        select cycles.finished_at from cycles
        where
            cycles.repo_id = ops_repos.repo_id
            and cycles.role = 'backfill'
            and cycles.finished_at is not null
        order by cycles.cycle_id desc
        limit 1
    ) as last_backfill on true
    left join lateral (
        select cycles.finished_at from cycles
        where cycles.repo_id = ops_repos.repo_id and cycles.outcome = 'done'
        order by cycles.cycle_id desc
        limit 1
    ) as last_done on true
),

final as (
    select
        repo_id,
        repo,
        last_poll_at,
        last_backfill_at,
        last_done_at,
        backfill_steps,
        backfill_steps_done,
        backfill_complete,
        backfill_step,
        backfill_high_water,
        latest_cycle_id,
        latest_role,
        latest_outcome,
        latest_started_at,
        latest_finished_at,
        latest_reason,
        case when cycled then behind_reason is not null end as is_behind,
        behind_reason,
        behind_after
    from judged
)

select * from final
