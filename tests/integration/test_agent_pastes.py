"""What an agent pastes, against a running daemon (#37 items 6 and 9): a traceback on stdin or
whole on the command line, and the GitHub URL it has for a thread or one comment of it.

The `relore` the tests run is the installed script, as an agent runs it (a real pipe on
stdin), or ``cli.main`` in process; the daemon is the real app over real HTTP on loopback.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import corpus, fake_github
from fixtures import world as worlds

from relore.client import cli as client_cli
from relore.contract import limits
from relore.serve.app import Settings, create_app

REPO = "acme/pastes"
RELORE = Path(sys.executable).parent / "relore"
WORLD_PART = worlds.Part(REPO, corpus=lambda: corpus.generate(seed=13, threads=24, repo=REPO))


@pytest.fixture(scope="module")
def daemon(indexed_world):
    with fake_github.serve(create_app(Settings(indexed_world.reader))) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def world(indexed_world) -> corpus.Corpus:
    return indexed_world.corpora[REPO]


def _env(api: str, tmp: Path) -> dict:
    return {"RELORE_API": api, "PATH": os.environ["PATH"], "HOME": str(tmp)}


def _relore(api: str, tmp: Path, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    """The installed `relore`, its stdin a pipe holding ``stdin`` (else /dev/null)."""
    done = subprocess.run(
        [str(RELORE), *argv],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_env(api, tmp),
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


def _cli(api: str, tmp: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = client_cli.main(
            list(argv), env=_env(api, tmp), stdout=out, stderr=err, stdin=io.StringIO("")
        )
    return code, out.getvalue(), err.getvalue()


def _bug_traceback(world: corpus.Corpus) -> tuple[int, str]:
    """A bug report's own traceback (its fenced ``pytb`` block) and the issue's number."""
    for issue in world.issues:
        found = re.search(r"Traceback \(most recent.*?(?=\r?\n```)", issue.get("body") or "", re.S)
        if "pull_request" not in issue and found:
            return issue["number"], found.group(0)
    raise AssertionError("the corpus has no bug report with a traceback")


def _deep(traceback: str, frames: int = 30) -> str:
    """The same failure reached through a framework's layers: 31+ frames, 4.6 kB or more."""
    header, rest = traceback.split("\n", 1)
    layers = "".join(
        f'  File "/home/someone/.venv/lib/python3.11/site-packages/framework/layers/'
        f'layer_{i}.py", line {10 + i}, in call_{i}\n'
        f"    return next_layer_{i}(request, *args, **kwargs)\n"
        for i in range(frames)
    )
    return f"{header}\n{layers}{rest}"


def test_a_traceback_piped_to_search_is_its_query(daemon, world, tmp_path):
    number, traceback = _bug_traceback(world)
    for argv in (("search", "--repo", REPO), ("search", "-", "--repo", REPO)):
        code, out, err = _relore(daemon, tmp_path, *argv, stdin=traceback + "\n")
        assert code == 0, err
        assert f"{REPO}#{number} " in out, out


def test_a_31_frame_traceback_is_cut_by_the_daemon_said_and_found(daemon, world, tmp_path):
    number, traceback = _bug_traceback(world)
    deep = _deep(traceback)
    assert limits.MAX_QUERY_CHARS < len(deep) <= limits.MAX_PASTE_CHARS
    piped = _relore(daemon, tmp_path, "search", "--repo", REPO, stdin=deep)
    argued = _cli(daemon, tmp_path, "search", deep, "--repo", REPO)
    for code, out, err in (piped, argued):
        assert code == 0, err
        assert f"cut: the pasted traceback ({len(deep):,} characters)" in out, out
        assert "searched the pasted traceback in parts" in out and " legs" not in out
        assert f"{REPO}#{number} " in out, out


def test_a_paste_at_the_limit_reaches_the_daemon_over_http(daemon, world, tmp_path):
    _, traceback = _bug_traceback(world)
    at = _deep(traceback, frames=80)[-limits.MAX_PASTE_CHARS :]
    at = "Traceback (most recent call last):\n" + at.split("\n", 1)[1]
    assert len(at) <= limits.MAX_PASTE_CHARS
    code, out, err = _cli(daemon, tmp_path, "search", at, "--repo", REPO, "--json")
    assert code == 0, err
    assert json.loads(out)["pasted_chars"] == len(at)


def test_a_log_longer_than_a_paste_on_stdin_is_one_line_saying_what_to_pipe(daemon, tmp_path):
    code, out, err = _relore(daemon, tmp_path, "search", "--repo", REPO, stdin="log line\n" * 2000)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "tail -n" in err, err


def test_no_text_and_no_pipe_is_still_a_filter_only_search(daemon, tmp_path):
    code, out, err = _relore(daemon, tmp_path, "search", "--repo", REPO, "--error", "KeyError")
    assert code == 0, err  # stdin /dev/null: nothing read, the filter searched
    assert "search '' [repo=acme/pastes, error=['KeyError']]" in out, out


def test_a_lone_error_name_is_searched_as_a_word(daemon, tmp_path):
    code, out, err = _cli(daemon, tmp_path, "search", "KeyError", "--repo", REPO, "--json")
    assert code == 0, err
    assert "expanded" not in json.loads(out)


def _comment(api: str, tmp: Path, url: str) -> dict:
    code, out, err = _cli(api, tmp, "thread", url, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_pasted_comment_url_opens_that_comment(daemon, world, tmp_path):
    number = next(
        i["number"] for i in world.issues if "pull_request" not in i and i["comments"] >= 2
    )
    wanted = world.comments_for(number)[1]["id"]
    url = f"https://github.com/{REPO}/issues/{number}#issuecomment-{wanted}"
    page = _comment(daemon, tmp_path, url)
    assert page["mode"] == "comment"
    assert [c["id"] for c in page["comments"]] == [f"issue_comment:{wanted}"]
    pull = next(n for n in world.pull_numbers() if world.review_comments_for(n))
    review = world.review_comments_for(pull)[0]["id"]
    url = f"https://github.com/{REPO}/pull/{pull}/files#discussion_r{review}"
    page = _comment(daemon, tmp_path, url)
    assert [c["id"] for c in page["comments"]] == [f"review_comment:{review}"]
    # the thread itself, from an Enterprise host's URL of the same shape, and inflight too
    code, out, err = _cli(daemon, tmp_path, "thread", f"https://ghe.example/{REPO}/pull/{pull}")
    assert code == 0 and f"{REPO}#{pull}" in out, err
    code, out, err = _cli(
        daemon, tmp_path, "inflight", f"https://github.com/{REPO}/issues/{number}"
    )
    assert code == 0, err
