"""A traceback as an agent pastes it (#37 item 6): whole, 31 frames, 4.6 kB.

Refused at the query's 2,000 characters it was never searched; now the client sends a pasted
traceback up to ``MAX_PASTE_CHARS`` and the daemon cuts it by the one cutting rule
(``serve/excerpts.cut``: its lead, then the error line and the deepest frames above it),
saying so. Text that is not a traceback keeps ``MAX_QUERY_CHARS``. The page says in words a
reader follows how a traceback was searched; a one-word query is searched as a word.
"""

from __future__ import annotations

import argparse

import pytest
from starlette.datastructures import QueryParams

from relore.client import argtypes
from relore.client.definition import build_parser
from relore.contract import limits
from relore.serve import notices, search
from relore.serve.errors import BadRequest

DEEPEST = '  File "/usr/lib/python3.11/email/feedparser.py", line 210, in _parse\n'
ERROR = "AttributeError: 'Message' object has no attribute 'get_content'"


def traceback(frames: int = 31) -> str:
    """A normal deep traceback: a framework's layers, then the library frame that raised."""
    layers = "".join(
        f'  File "/home/someone/.venv/lib/python3.11/site-packages/framework/layers/'
        f'layer_{i}.py", line {10 + i}, in call_{i}\n'
        f"    return next_layer_{i}(request, *args, **kwargs)\n"
        for i in range(frames - 1)
    )
    return (
        "Traceback (most recent call last):\n"
        + layers
        + DEEPEST
        + "    msg.get_content()\n"
        + ERROR
    )


def test_a_31_frame_traceback_is_taken_whole_and_cut_by_the_daemon_to_what_search_needs():
    pasted = traceback()
    assert len(pasted) > limits.MAX_QUERY_CHARS  # 4.6 kB, as in the issue
    args = build_parser(verb="search").parse_args(["search", pasted, "--repo", "o/n"])
    assert args.q == pasted  # sent whole: the daemon owns the cut and says so
    request = search.parse_request(QueryParams({"q": pasted, "repo": "o/n"}))
    assert len(request.text) <= limits.MAX_QUERY_CHARS < request.pasted_chars == len(pasted)
    assert ERROR in request.text and DEEPEST.strip() in request.text
    assert "layer_0.py" not in request.text  # the outermost frames gave way
    assert request.text.startswith("Traceback (most recent call last):")


def test_the_paste_limit_is_one_number_at_both_ends_and_plain_text_keeps_the_query_limit():
    at = (traceback(200) * 4)[: limits.MAX_PASTE_CHARS]
    over = (traceback(200) * 4)[: limits.MAX_PASTE_CHARS + 1]
    argtypes.query(at)
    search.parse_request(QueryParams({"q": at}))
    with pytest.raises(argparse.ArgumentTypeError, match="at most"):
        argtypes.query(over)
    with pytest.raises(BadRequest, match="at most"):
        search.parse_request(QueryParams({"q": over}))
    prose = "word " * (limits.MAX_QUERY_CHARS // 5 + 1)  # not a traceback: 2,000 as before
    with pytest.raises(argparse.ArgumentTypeError, match=f"at most {limits.MAX_QUERY_CHARS}"):
        argtypes.query(prose)
    with pytest.raises(BadRequest, match=f"at most {limits.MAX_QUERY_CHARS}"):
        search.parse_request(QueryParams({"q": prose}))


@pytest.mark.parametrize("word", ["KeyError", "ValueError", "E   ValueError", "RuntimeWarning"])
def test_a_lone_error_name_is_searched_as_a_word_not_split(word):
    assert not search.looks_like_a_failure(word)


@pytest.mark.parametrize(
    "pasted", ["KeyError: 'charset'", "ValueError: the widget pipeline stalled", traceback(3)]
)
def test_an_error_line_or_a_traceback_is_still_split(pasted):
    assert search.looks_like_a_failure(pasted)


def _expanded_page(query: str, **extra) -> dict:
    legs = [
        {"leg": "error", "returned": 2, "widened": False},
        {"leg": "file", "returned": 1, "widened": False},
        {"leg": "text", "returned": 4, "widened": True},
    ]
    return {"query": query, "hits": [{}], "expanded": True, "legs": legs, **extra}


def test_the_expanded_notice_says_how_the_paste_was_searched_in_a_readers_words():
    said = {n["kind"]: n["text"] for n in notices.search(_expanded_page(traceback(3)))}
    text = said["expanded"]
    assert "leg" not in text, text
    for part in ("traceback", "error line", "file paths", "words", "2", "1", "4"):
        assert part in text, (part, text)
    one_line = {n["kind"]: n["text"] for n in notices.search(_expanded_page("KeyError: 'x'"))}
    assert "error line" in one_line["expanded"] and "traceback" not in one_line["expanded"]
    assert "leg" not in " ".join(n["text"] for n in notices.search(_expanded_page("x: y")))


def test_a_cut_traceback_is_said_on_the_page():
    page = _expanded_page(traceback(3), pasted_chars=4612)
    said = [(n["kind"], n["text"]) for n in notices.search(page)]
    assert [k for k, _ in said][:2] == ["query_cut", "expanded"], said
    text = said[0][1]
    assert "4,612" in text and "cut" in text and "error line" in text, text
