"""The page at ``/``: served with a strict policy, self-contained, and its script never turns
retrieved text into markup. (The browser run is tests/integration/test_web_page.py.)"""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from relore.contract import wire
from relore.contract.version import __version__
from relore.serve import web
from relore.serve.app import Settings, create_app


@pytest.fixture
def client():
    # no lifespan: nothing asked here reaches the database
    app = create_app(Settings("postgresql://nobody@/nothing?host=/nonexistent"))
    return TestClient(app, base_url="http://127.0.0.1")


def test_the_page_is_served_with_its_version_and_a_policy_allowing_only_itself(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert f'<meta name="relore-version" content="{__version__}">' in response.text
    assert "{{" not in response.text
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers[wire.VERSION_HEADER] == __version__


@pytest.mark.parametrize("asset", ["app.js", "app.css"])
def test_the_assets_are_served_without_a_token_and_hold_no_data(asset):
    app = create_app(
        Settings("postgresql://nobody@/nothing?host=/x", tokens={"t" * 20: frozenset({"read"})})
    )
    response = TestClient(app, base_url="http://127.0.0.1").get(f"/static/{asset}")
    assert response.status_code == 200
    assert (
        TestClient(app, base_url="http://127.0.0.1").get("/api/v1/status").status_code == 401
    )  # the data stays guarded


def test_nothing_on_the_page_comes_from_another_origin():
    for name in ("index.html", "app.js", "app.css"):
        text = (web.STATIC / name).read_text(encoding="utf-8")
        assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text), name
        assert "@import" not in text and "url(http" not in text, name


def test_the_script_never_parses_text_as_markup():
    script = (web.STATIC / "app.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script, sink
    assert "new Function" not in script


def test_the_script_sends_the_version_it_was_served_with():
    script = (web.STATIC / "app.js").read_text(encoding="utf-8")
    assert '"x-relore-client": VERSION' in script
    assert wire.CLIENT_HEADER == "x-relore-client"


@pytest.mark.parametrize("path", ["search?q=x", "thread?repo=a/b&number=1", "status"])
def test_an_unknown_format_is_a_400_before_any_query(client, path):
    response = client.get(f"/api/v1/{path}&format=xml".replace("status&", "status?"))
    assert response.status_code == 400
    assert "format" in response.json()["error"]


def test_a_nul_anywhere_in_the_query_is_a_400_before_any_route(client):
    for path in ("status?repo=a%00b/c", "search?q=x&author=a%00", "why?repo=a/b&path=a%00"):
        response = client.get(f"/api/v1/{path}")
        assert response.status_code == 400, path
        assert "NUL" in response.json()["error"]
