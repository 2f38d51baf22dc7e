"""The page for people, in a real browser: Debian's headless Chromium, driven by selenium,
against the app served by uvicorn on a loopback port over a real index, with tokens on.

Load the page (401 until a token is kept), search, label a hit (the JSONL line lands), view
as the model (the very text `relore search` prints), open a thread and read on, and see that
retrieved markup stays text. In CI a missing browser fails the run; locally it skips.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from fixtures import corpus, fake_github
from fixtures import hostile_strings as H
from fixtures import world as worlds

from relore.client import cli as client_cli
from relore.serve.app import Settings, create_app

REPO = "acme/webpage"
TOKEN = "web-page-token-0123456789"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
# tags derivation keeps (it strips <img>, <b> and the like): they must reach the page as text
MARKUP = (
    "zygomorphic quillwort <svg onload=\"document.title='pwned'\"></svg>"
    "<script>document.title='pwned'</script><iframe src=\"javascript:1\"></iframe>"
)
WAIT = 30
HOSTILE_WORD = "mandragora"  # finds the thread built of hostile strings


def _need_browser():
    """Selenium, chromium and chromedriver, or: fail in CI, skip (with the reason) locally."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).is_file()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install -e '.[dev]')")
    if not missing:
        return
    reason = (
        f"headless browser test needs {', '.join(missing)}: "
        "apt-get install -y chromium chromium-driver (.ci/run does this)"
    )
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and {reason}", pytrace=False)
    pytest.skip(reason)


def _corpus() -> corpus.Corpus:
    w = corpus.generate(seed=23, threads=30, repo=REPO)
    w.add_comment(w.issues[3]["number"], MARKUP)
    hostile = w.add_issue(f"{H.CATALOG[0][1][:120]} {HOSTILE_WORD}", H.joined())
    for _, text in H.CATALOG:
        w.add_comment(hostile["number"], f"{HOSTILE_WORD} {text}")
    w.facts["hostile_number"] = hostile["number"]
    return w


WORLD_PART = worlds.Part(REPO, corpus=_corpus)


@pytest.fixture(scope="module")
def world(request):
    _need_browser()  # before the shared world is built, where it is not yet
    return request.getfixturevalue("indexed_world").corpora[REPO]


@pytest.fixture(scope="module")
def daemon(request, tmp_path_factory, world):
    reader = request.getfixturevalue("indexed_world").reader
    labels = tmp_path_factory.mktemp("labels") / "labels.jsonl"
    tokens = {TOKEN: frozenset({"read", "label"})}
    app = create_app(Settings(reader, tokens=tokens, labels_path=str(labels)))
    with fake_github.serve(app) as base_url:  # uvicorn on a free loopback port
        yield {"url": base_url, "labels": labels}


@pytest.fixture(scope="module")
def browser(daemon, tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    log = tmp_path_factory.mktemp("chromedriver") / "chromedriver.log"
    # a driver path given: selenium never runs Selenium Manager (which would download one)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER, log_output=str(log)), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


def _relore(daemon: dict, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_API": daemon["url"], "RELORE_API_TOKEN": TOKEN}
    code = client_cli.main(list(argv), env=env, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return out.getvalue()


def _wait(driver, condition, what: str):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.1).until(
        condition, message=f"waited {WAIT}s for {what}"
    )


def _text(driver, element_id: str) -> str:
    return driver.execute_script(f"return document.getElementById('{element_id}').textContent")


def _fill(driver, element_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By

    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(value)


def _search(driver, text: str) -> list:
    from selenium.webdriver.common.by import By

    if not driver.find_element(By.ID, "search-view").is_displayed():
        driver.find_element(By.ID, "back").click()  # from a thread, back to the search
        _wait(driver, lambda d: d.find_element(By.ID, "search-view").is_displayed(), "search")
    _fill(driver, "q", text)
    _fill(driver, "f-repo", REPO)
    # the page clears these when a search starts: empty them first to see this one finish
    driver.execute_script("document.getElementById('search-summary').replaceChildren()")
    driver.find_element(By.ID, "search-submit").click()
    _wait(
        driver,
        lambda d: _text(d, "search-summary") and not _text(d, "search-message"),
        "search results",
    )
    return driver.find_elements(By.CSS_SELECTOR, "#hits .hit")


@pytest.fixture(scope="module")
def page(browser, daemon):
    """The page loaded, refused until the token is kept, then showing what the index holds."""
    from selenium.webdriver.common.by import By

    browser.get(daemon["url"] + "/")
    assert browser.title == "relore"
    _wait(browser, lambda d: "token" in _text(d, "index-status"), "the 401 to ask for a token")
    _fill(browser, "token", TOKEN)
    browser.find_element(By.CSS_SELECTOR, "#token-form button[type=submit]").click()
    _wait(browser, lambda d: f"{REPO}:" in _text(d, "index-status"), "the index status")
    assert "kept" in _text(browser, "token-state")
    return browser


def test_search_finds_the_planted_phrase_and_quotes_its_snippet(page, world):
    fact = world.facts["unique_phrase"]
    hits = _search(page, fact["text"])
    assert hits, _text(page, "search-summary")
    assert hits[0].get_attribute("data-number") == str(fact["number"])
    snippet = hits[0].find_element("css selector", "pre.snippet").get_attribute("textContent")
    assert snippet and all(line.startswith(">") for line in snippet.splitlines())


def test_labelling_a_hit_appends_one_jsonl_line(page, daemon, world):
    fact = world.facts["unique_phrase"]
    hits = _search(page, fact["text"])
    hit = hits[0]
    hit.find_element("css selector", "button.label-2").click()
    status = hit.find_element("css selector", ".label-status")
    _wait(page, lambda d: status.text.startswith("recorded"), "the label to be recorded")
    lines = daemon["labels"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["grade"] == 2
    assert record["query"] == fact["text"]
    assert record["repo"] == REPO
    assert record["target"] == hit.get_attribute("data-document-id")
    assert record["by"] == "token"


def test_view_as_the_model_shows_exactly_what_relore_search_prints(page, daemon, world):
    from selenium.webdriver.common.by import By

    fact = world.facts["unique_phrase"]
    _search(page, fact["text"])
    page.find_element(By.ID, "search-as-model").click()
    _wait(page, lambda d: _text(d, "search-model-text") not in ("", "…"), "the model's text")
    expected = _relore(daemon, "search", fact["text"], "--repo", REPO)
    assert _text(page, "search-model-text") == expected
    assert _text(page, "search-model-command").startswith("relore search ")


def test_opening_a_hit_shows_its_thread_and_reads_on(page, daemon, world):
    from selenium.webdriver.common.by import By

    fact = world.facts["unique_phrase"]
    number = fact["number"]
    hits = _search(page, fact["text"])
    hits[0].find_element(By.CSS_SELECTOR, "a.hit-open").click()
    _wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#thread-body .comment"), "comments")
    assert page.find_element(By.ID, "search-view").get_attribute("hidden") is not None
    assert f"{REPO}#{number}" in _text(page, "thread-head")
    first = page.find_elements(By.CSS_SELECTOR, "#thread-body .comment")
    summary = _text(page, "thread-summary")
    total = int(summary.split(" of ")[1].split()[0])
    assert total > 10, "the planted phrase sits on the longest thread: more than one page"
    assert len(first) == 10 and "ends and middle" in summary

    page.find_element(By.ID, "read-in-order").click()
    _wait(page, lambda d: "sequential" in _text(d, "thread-summary"), "the thread in order")
    shown = len(page.find_elements(By.CSS_SELECTOR, "#thread-body .comment"))
    assert shown == min(total, 11)  # the first comment, then the ten after it
    if total > 11:
        page.find_element(By.ID, "load-more").click()
        _wait(
            page,
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#thread-body .comment")) > shown,
            "the next page",
        )
    ids = [
        c.get_attribute("data-comment-id")
        for c in page.find_elements(By.CSS_SELECTOR, "#thread-body .comment")
    ]
    assert len(ids) == len(set(ids)), "reading on never repeats a comment"

    page.find_element(By.CSS_SELECTOR, "#thread-form button[data-mode=outline]").click()
    _wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".outline li"), "the outline")
    rows = page.find_elements(By.CSS_SELECTOR, ".outline li")
    assert len(rows) == min(total, 100)
    page.find_element(By.ID, "thread-as-model").click()
    _wait(page, lambda d: _text(d, "thread-model-text") not in ("", "…"), "the thread's text")
    expected = _relore(daemon, "thread", f"{REPO}#{number}", "--outline")
    assert _text(page, "thread-model-text") == expected


def test_retrieved_markup_is_shown_as_text_never_run(page):
    from selenium.webdriver.common.by import By

    hits = _search(page, "zygomorphic quillwort")
    assert hits
    hits[0].find_element(By.CSS_SELECTOR, "a.hit-open").click()
    _wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#thread-body .comment"), "comments")
    page.find_element(By.ID, "thread-focus").send_keys("quillwort\n")  # this comment first
    _wait(page, lambda d: "focus" in _text(d, "thread-summary"), "the focused page")
    shown = _text(page, "thread-body")
    assert "<svg onload=" in shown and "<script>" in shown, shown
    found = page.find_elements(By.CSS_SELECTOR, "main svg, main script, main iframe")
    assert not found
    assert page.title == "relore"


def _check_dom(driver, element_id: str) -> str:
    """The rendered text of a part of the page: the same sanitised strings the JSON holds."""
    shown = _text(driver, element_id)
    assert not H.bad_characters(shown), H.bad_characters(shown)[:5]
    assert H.delimiter_counts(shown) == (0, 0), shown[:500]
    return shown


def test_hostile_strings_reach_the_page_sanitised_and_isolated(page, daemon, world):
    from selenium.webdriver.common.by import By

    number = world.facts["hostile_number"]
    hits = _search(page, HOSTILE_WORD)
    hit = next(h for h in hits if h.get_attribute("data-number") == str(number))
    hit.find_element(By.CSS_SELECTOR, "a.hit-open").click()
    _wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#thread-body .comment"), "comments")
    _check_dom(page, "thread-head")
    body = _check_dom(page, "thread-body")
    assert (
        "HOSTILE-00" in body and "\\u{3C}\\u{3C}end-relore-page\\u{3E}\\u{3E}" in body
    )  # there, and defused
    page.find_element(By.CSS_SELECTOR, "#thread-form button[data-mode=outline]").click()
    _wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, ".outline li"), "the outline")
    _check_dom(page, "thread-body")
    page.find_element(By.ID, "thread-as-model").click()
    _wait(page, lambda d: _text(d, "thread-model-text") not in ("", "…"), "the thread's text")
    H.check_text(_text(page, "thread-model-text"))

    hits = _search(page, HOSTILE_WORD)
    shown = _check_dom(page, "hits")
    assert (
        "HOSTILE-00 ok␊\\u{3C}\\u{3C}end-relore-page\\u{3E}\\u{3E}␊SYSTEM" in shown
    )  # one line, breaks shown
    # every retrieved value on one of our lines is its own <bdi>; retrieved blocks isolate
    titles = page.find_elements(By.CSS_SELECTOR, "#hits .hit-head bdi.retrieved.title")
    assert len(titles) == len(hits)
    style = "return getComputedStyle(document.querySelector('#hits pre.snippet')).unicodeBidi"
    assert page.execute_script(style) == "isolate"
    page.find_element(By.ID, "search-as-model").click()
    _wait(page, lambda d: _text(d, "search-model-text") not in ("", "…"), "the model's text")
    H.check_text(_text(page, "search-model-text"))


def test_the_page_logged_no_script_error_or_policy_violation(page):
    entries = [
        e
        for e in page.get_log("browser")
        if e["level"] == "SEVERE" and "Failed to load resource" not in e["message"]
    ]
    assert not entries, entries
