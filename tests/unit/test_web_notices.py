"""The page at ``/`` says everything ``relore`` says: its script (serve/static/app.js), run
under Node with a hand-written DOM stand-in (tests/fixtures/web_dom.js) against pages the real
daemon served (tests/fixtures/web_pages.json), shows every notice of every page, verbatim, in
an element naming its kind — and the text renderer prints the same sentences.

Node comes from Debian's ``nodejs`` (``.ci/run`` installs it): with ``CI`` set a missing
``node`` fails the test; locally it skips and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest
from fixtures import web_pages

from relore.contract import render
from relore.serve import notices, web

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RENDERERS = {
    "search": render.search_page,
    "thread": render.thread_page,
    "inflight": render.inflight_page,
}
# an inflight page whose issue is indexed is shown under that thread
THREAD_FOR_INFLIGHT = {"inflight-no-pulls": "thread-page-focus"}


def _node() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node:
        return node
    reason = "the page's script runs under Node: apt-get install -y nodejs (.ci/run does this)"
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and node is missing; {reason}", pytrace=False)
    pytest.skip(reason)


def _cases(recorded: dict) -> list[dict]:
    cases = []
    for name, entry in sorted(recorded.items()):
        params = {k: v if isinstance(v, list) else str(v) for k, v in entry["params"].items()}
        if entry["route"] == "search":
            view, answers = "search", {"search": entry["page"]}
        elif entry["route"] == "thread":
            view, answers = "thread", {"thread": entry["page"]}
        else:  # the page shows inflight under the thread, or alone when it is not indexed
            view, answers = "thread", {"inflight": entry["page"]}
            if name in THREAD_FOR_INFLIGHT:
                answers["thread"] = recorded[THREAD_FOR_INFLIGHT[name]]["page"]
        hash_ = f"#/{view}?{urllib.parse.urlencode(params, doseq=True)}"
        cases.append({"name": name, "hash": hash_, "answers": answers})
    return cases


@pytest.fixture(scope="module")
def recorded() -> dict:
    return web_pages.load()


@pytest.fixture(scope="module")
def shown(recorded, tmp_path_factory) -> tuple[list[dict], dict]:
    node = _node()
    cases = _cases(recorded)
    path = tmp_path_factory.mktemp("web") / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    result = subprocess.run(
        [node, str(FIXTURES / "web_dom.js"), str(web.STATIC / "app.js"),
         str(web.STATIC / "index.html"), str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return cases, {r["name"]: r for r in json.loads(result.stdout)}


def test_the_recording_holds_every_notice_kind(recorded):
    kinds = {n["kind"] for entry in recorded.values() for n in entry["page"]["notices"]}
    assert kinds == set(notices.KINDS) - notices.STANDBY_ONLY, (
        "record a page for each kind (tests/fixtures/web_pages.py)"
    )


def test_the_page_shows_every_notice_of_every_page_verbatim_under_its_kind(shown):
    cases, rendered = shown
    for case in cases:
        out = rendered[case["name"]]
        assert not out["errors"], (case["name"], out["errors"])
        said = [n for page in case["answers"].values() for n in page["notices"]]
        assert said, case["name"]
        # the same notices, no more (a stale one left over) and none missing
        assert Counter(n["kind"] for n in out["notices"]) == Counter(n["kind"] for n in said), (
            case["name"],
            out["notices"],
        )
        for notice in said:
            inline = notice["place"] in ("title", "count")
            expected = f" ({notice['text']})" if inline else notice["text"]
            assert any(
                n["kind"] == notice["kind"]
                and n["text"] == expected
                and n["tag"] == ("SPAN" if inline else "P")
                for n in out["notices"]
            ), (case["name"], notice, out["notices"])


def test_every_notice_kind_reaches_the_rendered_page(shown):
    _, rendered = shown
    kinds = {n["kind"] for out in rendered.values() for n in out["notices"]}
    assert kinds == set(notices.KINDS) - notices.STANDBY_ONLY


def test_relore_prints_the_same_sentences_the_page_shows(recorded):
    for name, entry in recorded.items():
        text = RENDERERS[entry["route"]](entry["page"])
        lines = [line.strip() for line in text.split("\n")]
        for notice in entry["page"]["notices"]:
            if notice["place"] in ("title", "count"):
                assert f" ({notice['text']})" in text, (name, notice)
            else:
                assert notice["text"] in lines, (name, notice)


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ({"standby": False}, None),
        ({"standby": True, "receiving": True, "replay_lag_s": 0.0, "behind": False}, None),
        (
            {"standby": True, "receiving": True, "replay_lag_s": 95.5, "behind": True,
             "last_replayed_at": "2026-12-04T10:00:00+00:00"},
            "BEHIND: read from a hot standby 95.5 s behind its primary (last replayed "
            "2026-12-04T10:00:00+00:00); later changes are not on this page",
        ),
        (
            {"standby": True, "receiving": False, "replay_lag_s": 3.0, "behind": True,
             "last_replayed_at": None},
            "BEHIND: read from a hot standby not streaming from its primary (last replayed "
            "never); later changes are not on this page",
        ),
    ],
)  # fmt: skip
def test_a_page_from_a_standby_that_is_behind_says_so_first_and_no_other_does(where, said):
    got = notices.standby_behind(where)
    assert [n["text"] for n in got] == ([said] if said else [])
    assert all(n["place"] == "before" for n in got)


def test_the_label_buttons_show_only_when_the_daemon_says_it_records_labels(recorded, tmp_path):
    """They once showed on every daemon, and on one without RELORE_LABELS_PATH every click
    failed: the search page says ``labelling``, and the page shows the buttons only then."""
    name, entry = next(
        (n, e) for n, e in sorted(recorded.items()) if e["route"] == "search" and e["page"]["hits"]
    )
    params = urllib.parse.urlencode({k: str(v) for k, v in entry["params"].items()})
    cases = [
        {
            "name": f"{name}-{on}",
            "hash": f"#/search?{params}",
            "answers": {"search": {**entry["page"], "labelling": on}},
        }
        for on in (True, False)
    ]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    result = subprocess.run(
        [_node(), str(FIXTURES / "web_dom.js"), str(web.STATIC / "app.js"),
         str(web.STATIC / "index.html"), str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    hits = {r["name"]: r["text"]["hits"] for r in json.loads(result.stdout)}
    assert "relevance:" in hits[f"{name}-True"]
    assert "relevance:" not in hits[f"{name}-False"]
