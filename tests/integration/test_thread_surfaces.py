"""What an agent reads first on a thread: the opening post, failures cut around their error
line, snippets that keep the error's last character, and every attempt at a fix (#16).

A small repository landed by the real writer and built by dbt in the shared world: an issue
whose long opening post ends in a traceback, a reply holding a long traceback, a dozen short
replies, and four pull requests claiming to fix the issue (open, merged, two closed unmerged).
"""

from __future__ import annotations

import pytest
from fixtures import corpus_payloads as gh
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import read
from fixtures.reads import search as _search

from relore.contract import render
from relore.extract.landing import RawObject, Repo
from relore.serve import thread
from relore.serve.errors import BadRequest

REPO = Repo(4848, "acme/surfaces")
OWNER = gh.user("acme", 9800, "Organization")
AUTHOR = gh.user("mailer", 9801)
T0 = 1_710_000_000
ISSUE = 1

PROSE = (
    "Parsing a multipart message with the new policy fails in the mail gateway. We read "
    "every part, decode it and hand the text to the indexer. "
) * 14
OPENING = (
    PROSE
    + "\n\nTraceback (most recent call last):\n"
    + '  File "gateway/read.py", line 12, in read_part\n    part.get_param("charset")\n'
    + '  File "/usr/lib/python3.11/email/message.py", line 610, in get_param\n'
    + "KeyError: 'charset'"
)
FRAMES = "".join(
    f'  File "gateway/stage_{i}.py", line {10 + i}, in stage_{i}\n    run_stage_{i}(message)\n'
    for i in range(30)
)
LAST_FRAME = '  File "/usr/lib/python3.11/email/feedparser.py", line 210, in _parse\n'
ERROR = "AttributeError: 'Message' object has no attribute 'get_content'"
TRACEBACK_REPLY = (
    "Same here on 3.11, full log:\n\nTraceback (most recent call last):\n"
    + FRAMES
    + LAST_FRAME
    + ERROR
    + "\n\nAny idea?"
)
SHORT = [f"Still seen on build {n}." for n in range(12)]


def _comment(comment_id: int, number: int, body: str) -> RawObject:
    return indexed.issue_comment(REPO, number, comment_id, body, author=AUTHOR, at=T0 + comment_id)


def _pull(number: int, *, state: str, merged: bool, updated: int) -> RawObject:
    payload = gh.issue(
        REPO.full_name, number=number, issue_id=95_000 + number, title=f"Decode parts ({number})",
        body=f"Fixes #{ISSUE}: decode every part before reading its charset.", author=AUTHOR,
        association="NONE", labels=[], state=state, state_reason=None, locked=False,
        assignees=[], milestone_obj=None, comments=0, created=T0 + number, updated=T0 + updated,
        closed=None if state == "open" else T0 + updated, closed_by=None, reaction_counts={},
        pull={"draft": False, "merged_at": T0 + updated if merged else None},
        issue_type=None, sub_issues=(0, 0), parent=None,
    )  # fmt: skip
    return RawObject("issue", payload["id"], number, payload)


def _land_world(landing: worlds.Landing) -> None:
    repository = gh.repository(REPO.full_name, REPO.repo_id, OWNER, T0, T0, 5)
    issue = gh.plain_issue(
        REPO.full_name, ISSUE, "Multipart messages fail to parse", OPENING,
        issue_id=95_000 + ISSUE, author=AUTHOR, created=T0,
    )  # fmt: skip
    objects = [
        RawObject("repository", REPO.repo_id, None, repository),
        RawObject("issue", issue["id"], ISSUE, issue),
        _comment(96_000, ISSUE, TRACEBACK_REPLY),
        *(_comment(96_001 + i, ISSUE, text) for i, text in enumerate(SHORT)),
        _pull(2, state="open", merged=False, updated=500),
        _pull(3, state="closed", merged=True, updated=400),
        _pull(4, state="closed", merged=False, updated=300),
        _pull(5, state="closed", merged=False, updated=600),
    ]
    landing.land(REPO, objects)


WORLD_PART = worlds.Part(REPO.full_name, land=_land_world)


def _thread(url: str, **params) -> dict:
    request = thread.parse_request({"repo": REPO.full_name, "number": str(ISSUE), **params})
    return read(url, lambda conn: thread.thread(conn, request))


def test_a_snippet_keeps_the_last_character_of_an_error_line(indexed_world):
    page = _search(indexed_world.url, q="charset", repo=REPO.full_name)
    snippets = [h["snippet"] for h in page["hits"]]
    assert any("KeyError: 'charset'" in s for s in snippets), snippets
    page = _search(indexed_world.url, q="get_content", repo=REPO.full_name)
    snippets = [h["snippet"] for h in page["hits"]]
    assert any("no attribute 'get_content'" in s for s in snippets), snippets


def test_a_threads_first_page_leads_with_its_opening_post_cut_and_disclosed(indexed_world):
    page = _thread(indexed_world.url)
    assert page["opening_post"].startswith("> Parsing a multipart message"), page
    assert page["opening_post_chars"] > 2 * len(page["opening_post"])
    # cut around its failure: the error line survives the cap
    assert "KeyError: 'charset'" in page["opening_post"]
    text = render.thread_page(page)
    chars = page["opening_post_chars"]
    assert f"opening post (cut from {chars:,} chars; whole with --full):" in text
    assert text.index("opening post") < text.index("comments: 10 of 13")


def test_a_later_page_does_not_repeat_the_opening_post(indexed_world):
    first = _thread(indexed_world.url)
    later = _thread(indexed_world.url, after=first["comments"][0]["id"])
    assert later["comments"] and "opening_post" not in later


def test_after_naming_no_comment_is_bad_input_not_an_empty_answer(indexed_world):
    with pytest.raises(BadRequest, match="names no comment of this thread"):
        _thread(indexed_world.url, after="nonsense")


def test_a_cut_traceback_keeps_its_error_line_and_last_frame(indexed_world):
    page = _thread(indexed_world.url)
    reply = next(c for c in page["comments"] if "Same here" in c["text"])
    # body_chars counts the stored plain text (markdown normalised), the cut shows less
    assert reply["body_chars"] > 2 * len(reply["text"])
    assert ERROR in reply["text"] and LAST_FRAME.strip() in reply["text"]
    assert 'stage_0.py"' not in reply["text"]  # the head of the frames gave way


def test_a_single_comment_page_has_no_empty_selection(indexed_world):
    first = _thread(indexed_world.url)
    page = _thread(indexed_world.url, mode="comment", comment=first["comments"][0]["id"])
    assert "comments: 1 of 13\n" in render.thread_page(page) + "\n"
    assert "()" not in render.thread_page(page)


def test_inflight_lists_abandoned_attempts_after_open_and_merged(indexed_world):
    page = read(indexed_world.url, lambda conn: thread.inflight(conn, REPO.full_name, ISSUE))
    assert [(p["number"], p["claim"]) for p in page["pulls"]] == [
        (2, "open"),
        (3, "merged"),
        (5, "abandoned"),  # the newest abandoned attempt first
        (4, "abandoned"),
    ]
    assert page["claims"] == {"open": 1, "merged": 1, "abandoned": 2}
    assert (page["returned"], page["total"]) == (4, 4)
    text = render.inflight_page(page)
    assert "abandoned: closed without merging (tried before; read why) (2):" in text
    assert "merged, opened by" in text and "merged by" not in text


def test_state_filters_speak_the_one_vocabulary_and_closed_keeps_merged(indexed_world):
    """threads.state said closed for a merged pull request while pages said merged; the
    filter keeps GitHub's meaning of closed (merged pull requests are closed there)."""

    def found(state: str) -> dict[int, str]:
        page = _search(indexed_world.url, q="decode", repo=REPO.full_name, state=state)
        return {h["number"]: h["state"] for h in page["hits"]}

    assert found("merged") == {3: "merged"}
    assert found("closed") == {3: "merged", 4: "closed", 5: "closed"}
    opened = found("open")
    assert 2 in opened and not {3, 4, 5} & opened.keys()
    assert set(opened.values()) == {"open"}
