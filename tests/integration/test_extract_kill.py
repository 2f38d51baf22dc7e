"""A pass killed with SIGKILL mid-walk and run again loses nothing and duplicates nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from fixtures import corpus, fake_github

REPO = "acme/sprockets"
RELORED = str(Path(sys.executable).parent / "relored")


def _slowed(app, path_suffix: str, delay: float):
    """The fake GitHub, with every request to one listing delayed (a slow, real server)."""

    async def slow(scope, receive, send):
        if scope["type"] == "http" and scope["path"].endswith(path_suffix):
            await asyncio.sleep(delay)
        await app(scope, receive, send)

    return slow


def _comment_rows(url: str) -> tuple[int, int]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(distinct object_id), count(*) from raw.github_objects "
            "where object_type = 'issue_comment'"
        ).fetchone()


def test_sigkill_mid_pass_then_rerun_lands_every_comment_exactly_once(db_url):
    world = corpus.generate(seed=5, threads=150, repo=REPO, comments_per_thread=16)
    total = len(world.comments)
    assert total > 800, "the walk must span many pages"
    app = _slowed(fake_github.create_app([world]), "/issues/comments", 0.25)
    with fake_github.serve(app) as base_url:
        env = {
            **os.environ,
            "RELORE_DATABASE_URL": db_url,
            "RELORE_GITHUB_API_URL": base_url,
            "GITHUB_TOKEN": "t",
        }
        argv = [RELORED, "extract", "issue_comments", "--repo", REPO, "--quiet"]
        victim = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while _comment_rows(db_url)[0] < 200:
            assert victim.poll() is None, victim.communicate()
            assert time.monotonic() < deadline, "the pass never got going"
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        landed_at_kill, _ = _comment_rows(db_url)
        assert 200 <= landed_at_kill < total, "killed too late to prove anything"

        rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
    distinct, rows = _comment_rows(db_url)
    assert distinct == total, "a comment was lost"
    assert rows == total, "a comment was landed twice"
    with psycopg.connect(db_url) as conn:
        statuses = [
            r[0]
            for r in conn.execute(
                "select status from ops.pass_runs where pass_name = 'issue_comments' "
                "order by run_id"
            )
        ]
    assert statuses == ["running", "ok"], "the killed run stays visibly unfinished"
