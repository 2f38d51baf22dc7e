"""One hostile ``grep``/``copies`` request never holds the daemon: clones holding what real
repositories hold (a 13 MB one-line file — a notebook with an embedded image, a minified
bundle —, lines of 100 kB, a ``# Copied from`` marker trailed by 20,000 spaces) are read
while ``/healthz`` goes on answering, and no step of the request holds the event loop over
100 ms (asyncio's debug mode, ``fixtures.loop_watch``).

Real git, real HTTP (uvicorn on a loopback port), a real Postgres behind ``/healthz`` (the
built world's reader: every line the clone prints passes the marts' secret catalog).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx
import pytest
from fixtures import hostile_clone, loop_watch

from relore.contract.version import __version__
from relore.serve.app import Settings, create_app
from relore.serve.clone import reading
from relore.serve.clone.git import Budget, Git
from relore.serve.clone.why import history, lines

HEADERS = {"x-relore-client": __version__}
REPO = hostile_clone.REPO
BIG = 13_000_000


@pytest.fixture(scope="module")
def clones(tmp_path_factory) -> Path:
    """$RELORE_CLONES_DIR with acme/hostile: every file below matches ``needle`` and holds
    ``Copied from`` markers pointing at ``base.Base``."""
    root = tmp_path_factory.mktemp("clones")
    hostile_clone.build(root, BIG, why_lines=True)
    return root


@pytest.fixture
def served(clones, indexed_world, monkeypatch):
    monkeypatch.setenv("RELORE_CLONES_DIR", str(clones))
    # the reader of a built world: clone text passes the marts' secret catalog
    app = create_app(Settings(indexed_world.reader))
    with loop_watch.serving(app) as (base, seen):
        yield base, seen


def _meanwhile(base: str, path: str, params: dict, rounds: int = 20) -> tuple[list, int]:
    """The hostile request, again and again in a thread, while this thread asks ``/healthz``:
    the hostile answers, and how many ``/healthz`` answers (200) were sent after a hostile
    request went out and came back before its answer did."""
    answers: list = []
    overlapped = 0
    with httpx.Client(timeout=120) as hostile, httpx.Client(timeout=120) as health:
        for _ in range(rounds):
            done = threading.Event()

            def ask(done=done):
                try:
                    answers.append(hostile.get(base + path, params=params, headers=HEADERS))
                finally:
                    done.set()

            worker = threading.Thread(target=ask)
            worker.start()
            while not done.is_set():
                healthy = health.get(base + "/healthz")
                assert healthy.status_code == 200, healthy.text
                if not done.is_set():
                    overlapped += 1
            worker.join()
            if overlapped >= 3:
                break
    return answers, overlapped


def test_grep_over_a_13_mb_line_never_holds_the_loop_and_healthz_answers_meanwhile(served):
    base, seen = served
    answers, overlapped = _meanwhile(
        base, "/api/v1/code/grep", {"repo": REPO, "pattern": "needle", "fixed": "1"}
    )
    loop_watch.never_blocked(seen)
    assert overlapped >= 3, "/healthz never answered while the hostile grep ran"
    page = answers[-1].json()
    assert answers[-1].status_code == 200, page
    lines = {m["path"]: m for m in page["matches"]}
    assert lines["bundle.min.js"]["text"].endswith("…")
    assert len(lines["bundle.min.js"]["text"]) <= reading.LINE_CHARS + 2  # "> " quoted
    assert page["total"] == 1 + 1 + 1 + 6 + 1  # base, bundle, notebook, long lines, plain
    assert page["files"] == 5


def test_grep_with_the_output_cut_inside_a_100_kb_line_never_holds_the_loop(served):
    base, seen = served
    answers, overlapped = _meanwhile(
        base, "/api/v1/code/grep", {"repo": REPO, "pattern": "needle", "path": "long_lines.py"}
    )
    loop_watch.never_blocked(seen)
    assert overlapped >= 3
    page = answers[-1].json()
    assert page["total"] == 6 and page["returned"] == 6, page
    assert all(m["text"].endswith("…") for m in page["matches"])


def test_copies_with_markers_trailed_by_20000_spaces_never_holds_the_loop(served):
    base, seen = served
    answers, overlapped = _meanwhile(
        base, "/api/v1/code/copies", {"repo": REPO, "name": "base.Base"}
    )
    loop_watch.never_blocked(seen)
    assert overlapped >= 3
    page = answers[-1].json()
    assert answers[-1].status_code == 200, page
    by_copy = {row["copy"]["name"]: row for row in page["copies"] if row["copy"]}
    assert set(by_copy) == {"Spaced", "Two", "Plain"}, page["copies"]
    assert by_copy["Two"]["with"].endswith("Base->Two")
    assert by_copy["Spaced"]["with"].startswith("> x")
    paths = [row["path"] for row in page["copies"]]
    assert "notebook.py" not in paths  # its marker is followed by more than a name
    assert page["total"] == 3


def test_why_on_a_line_of_20000_distinct_words_never_holds_the_loop(clones):
    """Each candidate word was counted over the whole file, on the loop: 18 s of CPU here."""
    clone = clones / REPO
    text = (clone / "minified.js").read_text()

    async def origin():
        git = Git(clone, Budget())
        return await history.origin_chain(
            git, git.budget, lines.file_lines(text), 1, [], False, ["minified.js"]
        )

    with loop_watch.watching() as seen, asyncio.Runner(debug=True) as runner:
        runner.get_loop().slow_callback_duration = loop_watch.SLOW_S
        found = runner.run(origin())
    loop_watch.never_blocked(seen)
    assert found["candidates"][0]["word"] == "w000000x"
