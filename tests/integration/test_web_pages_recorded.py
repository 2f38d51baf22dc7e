"""The pages the page's Node test renders (tests/fixtures/web_pages.json) are what the real
daemon serves: built here over a real index and compared, notice by notice. With
``RELORE_RECORD_WEB_PAGES=1`` the recording is written anew instead (then commit it)."""

from __future__ import annotations

import os

import pytest
from fixtures import web_pages
from fixtures import world as worlds
from starlette.testclient import TestClient

from relore.contract import render
from relore.serve import notices
from relore.serve.app import Settings, create_app

pytestmark = pytest.mark.slow
WORLD_PARTS = (
    worlds.Part(web_pages.REPO, corpus=web_pages.world),
    worlds.Part(web_pages.OTHER, corpus=web_pages.other_world, land=web_pages.other_cycle),
)

RENDERERS = {
    "search": render.search_page,
    "thread": render.thread_page,
    "inflight": render.inflight_page,
}


@pytest.fixture(scope="module")
def live(indexed_world):
    w = indexed_world.corpora[web_pages.REPO]
    reader = indexed_world.reader
    app = create_app(Settings(reader))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        pages = web_pages.record(client, w)
    if os.environ.get("RELORE_RECORD_WEB_PAGES"):
        web_pages.save(pages)
    return pages


def test_the_recorded_pages_say_what_the_daemon_says(live):
    assert web_pages.said(web_pages.load()) == web_pages.said(live)


def test_the_recording_shows_every_notice_kind(live):
    shown = {kind for said in web_pages.said(live).values() for kind, _, _ in said}
    assert shown == set(notices.KINDS) - notices.STANDBY_ONLY


def test_relore_prints_every_notice_of_every_recorded_page_verbatim(live):
    for name, entry in live.items():
        text = RENDERERS[entry["route"]](entry["page"])
        for notice in entry["page"]["notices"]:
            assert notice["text"] in text, (name, notice["kind"])
