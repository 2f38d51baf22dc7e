"""Numbered schema steps for the ``raw``, ``ops`` and ``semantic`` schemas, each applied once
and recorded.

Long because: the steps are one ordered history, read top to bottom and never edited once
released; the runner (``migrate``) is forty lines beside them.

extract/ owns ``raw`` and ``ops``; ``relored embed`` owns ``semantic``; every derived table
belongs to dbt.
A step is a function taking a cursor; ``migrate`` applies the ones not yet recorded in
``ops.schema_migrations``, each in its own transaction, under an advisory lock so two
processes starting at once do not race.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg import sql

READER_ROLE = "relore_reader"
# Schemas dbt writes and serve reads. Created here so the reader's grants can be made once,
# before dbt has ever run; dbt creates the tables inside them.
SERVED_SCHEMAS = ("marts",)
_LOCK_KEY = 0x7E10_4E00


def _step_1_raw_and_ops(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        create schema if not exists raw;
        create schema if not exists ops;

        -- Every payload exactly as GitHub sent it. Append-only: a changed payload is a new
        -- row, an unchanged one writes nothing, a deletion is a tombstone row.
        create table raw.github_objects (
            row_id        bigint generated always as identity,
            repo_id       bigint      not null,
            repo          text        not null,
            object_type   text        not null,
            object_id     bigint      not null,
            thread_number integer,
            payload       jsonb,
            payload_hash  text        not null,
            is_deleted    boolean     not null default false,
            pass_name     text        not null,
            loaded_at     timestamptz not null default clock_timestamp(),
            primary key (repo_id, row_id),
            check (is_deleted = (payload is null))
        );
        create index github_objects_latest
            on raw.github_objects (repo_id, object_type, object_id, row_id desc);
        create index github_objects_loaded_at on raw.github_objects (loaded_at);

        -- One row per repository ever extracted; repo_id is GitHub's id, stable across renames.
        create table ops.repos (
            repo_id       bigint primary key,
            full_name     text        not null,
            owner_login   text        not null,
            owner_type    text        not null,
            first_seen_at timestamptz not null default clock_timestamp(),
            last_seen_at  timestamptz not null default clock_timestamp()
        );
        create unique index repos_full_name on ops.repos (lower(full_name));

        -- A pass's high-water mark: how far it has committed, and where a walk resumes.
        create table ops.checkpoints (
            repo_id    bigint      not null,
            pass_name  text        not null,
            high_water timestamptz,
            cursor     text,
            updated_at timestamptz not null default clock_timestamp(),
            primary key (repo_id, pass_name)
        );

        -- One row per run of a pass: what it did and how it ended.
        create table ops.pass_runs (
            run_id        bigint generated always as identity,
            repo_id       bigint      not null,
            pass_name     text        not null,
            started_at    timestamptz not null default clock_timestamp(),
            finished_at   timestamptz,
            status        text        not null default 'running'
                check (status in ('running', 'ok', 'failed')),
            requests      integer     not null default 0,
            rows_seen     integer     not null default 0,
            rows_written  integer     not null default 0,
            error         text,
            primary key (repo_id, run_id)
        );
        """
    )


def _step_2_reader_role(cur: psycopg.Cursor) -> None:
    """The serving role: it can log in and SELECT from the served schemas, nothing else."""
    cur.execute(
        f"""
        do $$
        begin
            if not exists (select from pg_roles where rolname = '{READER_ROLE}') then
                create role {READER_ROLE} login nosuperuser nocreatedb nocreaterole noinherit;
            end if;
            -- set by whoever can (the embedded server's superuser made the role read-only
            -- already; a writer with CREATEROLE on another server made it and may alter it)
            if not exists (
                select from pg_db_role_setting as s
                join pg_roles as r on r.oid = s.setrole
                where r.rolname = '{READER_ROLE}' and s.setdatabase = 0
                    and 'default_transaction_read_only=on' = any(s.setconfig)
            ) then
                alter role {READER_ROLE} set default_transaction_read_only = on;
            end if;
        end
        $$;
        """
    )
    for schema in SERVED_SCHEMAS:
        cur.execute(
            f"""
            create schema if not exists {schema};
            revoke create on schema {schema} from public;
            grant usage on schema {schema} to {READER_ROLE};
            grant select on all tables in schema {schema} to {READER_ROLE};
            alter default privileges in schema {schema} grant select on tables to {READER_ROLE};
            """
        )
    cur.execute(f"revoke all on schema raw, ops from {READER_ROLE}")


def _step_3_authority_samples_files(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- What GitHub says an author may do in the repository (collaborator permission),
        -- asked because author_association MEMBER/CONTRIBUTOR/NONE does not say it.
        create table ops.collaborator_permissions (
            repo_id    bigint      not null,
            login      text        not null,
            permission text        not null
                check (permission in ('admin', 'maintain', 'write', 'triage', 'read', 'none')),
            role_name  text,
            checked_at timestamptz not null default clock_timestamp(),
            primary key (repo_id, login)
        );

        -- The floor a sample pass started from: high_water says how far a pass reached,
        -- this says where a sampled index begins.
        create table ops.sample_floors (
            repo_id      bigint      not null,
            pass_name    text        not null,
            floor        timestamptz not null,
            kind         text        not null check (kind in ('issue', 'pr')),
            merged_only  boolean     not null default false,
            recorded_at  timestamptz not null default clock_timestamp(),
            primary key (repo_id, pass_name)
        );

        -- How much of a pull request's changed-file list was read: GitHub stops listing at
        -- 3,000 files, so a short list must never read as the whole list.
        create table ops.pull_file_walks (
            repo_id       bigint      not null,
            number        integer     not null,
            files_listed  integer     not null,
            changed_files integer,
            truncated     boolean     not null,
            walked_at     timestamptz not null default clock_timestamp(),
            primary key (repo_id, number)
        );

        -- Payloads that could not be landed as JSONB (NUL, lone surrogates, not JSON):
        -- kept as text with the reason, never silently dropped.
        create table ops.quarantine (
            quarantine_id bigint generated always as identity,
            repo_id       bigint      not null,
            object_type   text        not null,
            object_id     bigint,
            thread_number integer,
            url           text,
            reason        text        not null,
            body          text,
            landed_at     timestamptz not null default clock_timestamp(),
            primary key (repo_id, quarantine_id)
        );
        """
    )


def _step_4_etags(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- The ETag of a walk's first page, so an idle poll asks with If-None-Match and a
        -- 304 (which costs no rate limit) ends the walk.
        create table ops.etags (
            repo_id    bigint      not null,
            url        text        not null,
            etag       text        not null,
            updated_at timestamptz not null default clock_timestamp(),
            primary key (repo_id, url)
        );
        """
    )


def _step_5_rules(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- A repository's rules file as the operator loaded it (parsed, validated JSON).
        -- Append-only with hash dedupe: loading an unchanged file writes nothing. Keyed on
        -- the lower-cased repo name, because rules may be loaded before the repository is
        -- ever extracted; repo_id is filled from ops.repos when it is known at load time.
        create table raw.rule_files (
            row_id       bigint generated always as identity,
            repo         text        not null check (repo = lower(repo)),
            repo_id      bigint,
            path         text        not null,
            payload      jsonb       not null,
            payload_hash text        not null,
            loaded_at    timestamptz not null default clock_timestamp(),
            primary key (repo, row_id)
        );

        -- Operator edits to a rule (pin, unpin, tag): appended, never an UPDATE; dbt
        -- applies the latest of each kind over the loaded file.
        create table raw.rule_edits (
            row_id    bigint generated always as identity,
            repo      text        not null check (repo = lower(repo)),
            repo_id   bigint,
            rule_id   text        not null,
            action    text        not null check (action in ('pin', 'unpin', 'tag')),
            triggers  jsonb,
            is_always boolean,
            edited_at timestamptz not null default clock_timestamp(),
            primary key (repo, row_id),
            check ((action = 'tag') = (triggers is not null))
        );
        """
    )


def _step_6_clones_and_renames(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- The working clone `relored clone` keeps per repository: where it came from (without
        -- credentials), the commit it sits at, and how far the rename walk has read.
        create table ops.clones (
            repo_id     bigint      not null,
            repo        text        not null,
            url         text        not null,
            head_sha    text        not null,
            walked_sha  text,
            cloned_at   timestamptz not null default clock_timestamp(),
            fetched_at  timestamptz not null default clock_timestamp(),
            primary key (repo_id)
        );

        -- Rename pairs read from the clone's history (git log -M --name-status): paths and
        -- commit shas only, never source text. dbt chains them into marts.path_aliases.
        create table ops.path_renames (
            repo_id      bigint      not null,
            commit_sha   text        not null check (commit_sha ~ '^[0-9a-f]{40}$'),
            old_path     text        not null,
            new_path     text        not null,
            similarity   integer     check (similarity between 0 and 100),
            committed_at timestamptz,
            recorded_at  timestamptz not null default clock_timestamp(),
            primary key (repo_id, commit_sha, old_path, new_path),
            check (old_path <> new_path)
        );
        create index path_renames_recorded_at on ops.path_renames (recorded_at);
        """
    )


def _step_7_deletion_checks(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- A deleted comment never shows in a listing: relore notices it when a thread's
        -- count falls below the live comments it holds, and re-reads that thread whole. This
        -- remembers the head and pull versions each re-read answered, so a count GitHub keeps
        -- differently from its listing is re-read once per new version, not on every poll.
        create table ops.deletion_checks (
            repo_id       bigint      not null,
            thread_number integer     not null,
            head_row_id   bigint,
            pull_row_id   bigint,
            checked_at    timestamptz not null default clock_timestamp(),
            primary key (repo_id, thread_number)
        );
        -- What one thread holds, found without reading the repository's whole history.
        create index github_objects_thread
            on raw.github_objects (repo_id, thread_number, object_type);
        -- A page asked again by ETag answers 304 without its Link header: the next page's URL
        -- is kept beside the ETag, so a walk that rotates through a listing can go on.
        alter table ops.etags add column next_url text;
        """
    )


def _step_8_semantic_schema(cur: psycopg.Cursor) -> None:
    """Where ``relored embed`` keeps vectors, readable by the reader. The table itself needs
    pgvector's type, so the job creates it once the extension is there (semantic.store)."""
    cur.execute(
        f"""
        create schema if not exists semantic;
        revoke create on schema semantic from public;
        grant usage on schema semantic to {READER_ROLE};
        alter default privileges in schema semantic grant select on tables to {READER_ROLE};
        """
    )


def _step_9_repo_names(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- Every repository name a link or an operator used that is not a current name, as
        -- GitHub resolved it (a renamed or transferred repository answers its old name with
        -- a 301 to /repositories/{id}): repo_id and full_name then, null when GitHub knew no
        -- such repository. Keyed by the lowercased name (a Citus reference table: small, and
        -- read by name); asked once per name.
        create table ops.repo_names (
            name        text        primary key,
            repo_id     bigint,
            full_name   text,
            checked_at  timestamptz not null default clock_timestamp(),
            check (name = lower(name))
        );
        create index repo_names_repo_id on ops.repo_names (repo_id);
        """
    )


# What a session of the reader could still write once it turns its read-only default off
# (`set default_transaction_read_only = off`): PUBLIC's TEMPORARY on the database (temporary
# tables, and functions in pg_temp), the server-side large-object writers (it stored 9 MB of
# them) and the advisory locks (a flood of them fills the shared lock table every session
# needs). A grant to PUBLIC reaches every role, so each is revoked from PUBLIC: the database's
# owner (the writer, who runs dbt) keeps TEMPORARY as owner; nothing in relore uses a large
# object; the advisory locks (extract's landing and this module's lock take them) are granted
# back to the database's owner. The functions belong to the bootstrap superuser, so only a
# superuser can revoke them: the embedded server's does it for every database it makes
# (operate/database.py); on your own server a writer that is not one skips it, and `relored
# doctor` names the statements for a superuser to run (docs/operations.md).
LARGE_OBJECT_WRITERS = (  # as regprocedure prints them
    "lo_creat(integer)",
    "lo_create(oid)",
    "lo_from_bytea(oid,bytea)",
    "lo_import(text)",
    "lo_import(text,oid)",
    "lo_export(oid,text)",
    "lo_open(oid,integer)",
    "lowrite(integer,bytea)",
    "lo_put(oid,bigint,bytea)",
    "lo_truncate(integer,integer)",
    "lo_truncate64(integer,bigint)",
    "lo_unlink(oid)",
)
ADVISORY_LOCKS = r"^pg_(try_)?advisory_(xact_)?lock(_shared)?$"  # the takers, not the unlocks
CLOSE_READER_WRITES = """
do $close$
declare
    found record;
    owner text := (
        select pg_get_userbyid(datdba) from pg_database where datname = current_database()
    );
begin
    if pg_has_role(current_user, owner, 'USAGE') then
        execute format('revoke temporary on database %I from public', current_database());
    end if;
    if pg_has_role(current_user, (select nspowner from pg_namespace where nspname = 'public'),
                   'USAGE') then
        revoke create on schema public from public;  -- PostgreSQL before 15 granted it
    end if;
    if not (select rolsuper from pg_roles where rolname = current_user) then
        return;  -- the functions are the bootstrap superuser's
    end if;
    for found in
        select p.oid::regprocedure as fn from pg_proc as p
        where p.pronamespace = 'pg_catalog'::regnamespace
            and (p.oid::regprocedure::text = any({large_objects})
                or p.proname ~ {advisory})
    loop
        execute format('revoke execute on function %s from public', found.fn);
        if found.fn::text !~ '^lo' then
            execute format('grant execute on function %s to %I', found.fn, owner);
        end if;
    end loop;
end
$close$
"""


def close_reader_writes(cur: psycopg.Cursor) -> None:
    """Revoke from PUBLIC what the reader could write with (see ``CLOSE_READER_WRITES``): as
    much as the current role may; idempotent."""
    cur.execute(
        sql.SQL(CLOSE_READER_WRITES).format(
            large_objects=sql.Literal(list(LARGE_OBJECT_WRITERS)),
            advisory=sql.Literal(ADVISORY_LOCKS),
        )
    )


def _step_10_reader_writes_nothing(cur: psycopg.Cursor) -> None:
    close_reader_writes(cur)


def _step_11_repo_cycles(cur: psycopg.Cursor) -> None:
    cur.execute(
        """
        -- A pass stopped before the token's budget ran out (extract/budget.py) is neither
        -- done nor failed: its mark is where the next cycle resumes.
        alter table ops.pass_runs drop constraint pass_runs_status_check;
        alter table ops.pass_runs add constraint pass_runs_status_check
            check (status in ('running', 'ok', 'failed', 'budget'));
        -- One row per repository per cycle of `relored cycle` (extract/schedule.py): what
        -- its turn was, how it ended, and the token's budget when it ended.
        create sequence ops.cycle_ids;
        create table ops.repo_cycles (
            repo_id          bigint      not null,
            cycle_id         bigint      not null,
            full_name        text        not null,
            role             text        not null check (role in ('poll', 'backfill')),
            outcome          text        not null default 'running'
                check (outcome in ('running', 'done', 'partial', 'failed', 'budget', 'waiting')),
            started_at       timestamptz not null default clock_timestamp(),
            finished_at      timestamptz,
            requests         integer     not null default 0,
            not_modified     integer     not null default 0,
            rows_written     bigint      not null default 0,
            reason           text,
            budget_limit     integer,
            budget_remaining integer,
            budget_reset     timestamptz,
            primary key (repo_id, cycle_id)
        );
        """
    )


Step = Callable[[psycopg.Cursor], None]
STEPS: tuple[tuple[int, str, Step], ...] = (
    (1, "raw and ops schemas", _step_1_raw_and_ops),
    (2, "SELECT-only reader role", _step_2_reader_role),
    (3, "authority, sample floors, file walks, quarantine", _step_3_authority_samples_files),
    (4, "first-page ETags", _step_4_etags),
    (5, "rule files and operator rule edits", _step_5_rules),
    (6, "working clones and rename pairs", _step_6_clones_and_renames),
    (7, "deletion checks", _step_7_deletion_checks),
    (8, "semantic schema", _step_8_semantic_schema),
    (9, "former repository names", _step_9_repo_names),
    (10, "reader writes nothing with read-only off", _step_10_reader_writes_nothing),
    (11, "budget-stopped runs, cycles per repository", _step_11_repo_cycles),
)
LATEST = STEPS[-1][0]


def applied_versions(conn: psycopg.Connection) -> list[int]:
    exists = conn.execute("select to_regclass('ops.schema_migrations') is not null").fetchone()
    if not exists or not exists[0]:
        return []
    return [r[0] for r in conn.execute("select version from ops.schema_migrations order by 1")]


def migrate(conn: psycopg.Connection) -> list[int]:
    """Apply every step not yet recorded; return the versions applied by this call."""
    applied_now: list[int] = []
    with conn.transaction():
        conn.execute("select pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        with conn.transaction():
            conn.execute("create schema if not exists ops")
            conn.execute(
                """
                create table if not exists ops.schema_migrations (
                    version    integer primary key,
                    name       text        not null,
                    applied_at timestamptz not null default clock_timestamp()
                )
                """
            )
        done = set(applied_versions(conn))
        for version, name, step in STEPS:
            if version in done:
                continue
            with conn.transaction(), conn.cursor() as cur:
                step(cur)
                cur.execute(
                    "insert into ops.schema_migrations (version, name) values (%s, %s)",
                    (version, name),
                )
            applied_now.append(version)
    finally:
        with conn.transaction():
            conn.execute("select pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied_now
