"""One cutting rule for every page: failures keep their error line, snippets their edges."""

from __future__ import annotations

from relore.contract.render.marks import _plural
from relore.serve import excerpts

TRACEBACK = (
    "It breaks when the worker restarts:\n\nTraceback (most recent call last):\n"
    + "".join(f'  File "w/step_{i}.py", line {i}, in step_{i}\n    go()\n' for i in range(40))
    + '  File "w/last.py", line 9, in finish\n'
    + "RuntimeError: worker exited with code 137\n"
    + "\nthanks"
)


def test_a_cut_traceback_keeps_its_error_line_and_the_frames_above_it():
    text, cut = excerpts.cut(TRACEBACK, 400)
    assert cut and len(text) <= 410
    assert text.startswith("It breaks when the worker restarts")
    assert "RuntimeError: worker exited with code 137" in text
    assert '  File "w/last.py", line 9, in finish' in text
    assert "step_0.py" not in text
    assert text.endswith("…")  # "thanks" followed and was left out


# rich's traceback (accelerate, typer, many Hugging Face reports): a boxed header, frames as
# `│ <path>:<line> in <name> │`, blank box lines, the raising line marked ❱, then the error.
RICH_TRACEBACK = (
    "I ran the trainer and it failed:\n\n"
    + "─" * 30 + " Traceback (most recent call last) " + "─" * 30 + "╮\n"
    + "".join(
        f"│ /usr/lib/python3/site-packages/pkg/mod{i}.py:{100 + i} in fn{i}{' ' * 40}│\n"
        f"│{' ' * 98}│\n"
        f"│ ❱ {100 + i} │   return call{i}(x){' ' * 60}│\n"
        for i in range(6)
    )
    + "╰" + "─" * 98 + "╯\n"
    + "RuntimeError: unscale_() has already been called on this optimizer\n"
)  # fmt: skip


def test_a_cut_rich_traceback_keeps_its_last_frame_above_the_error_line():
    """rich's boxed header was not a traceback header and its frames were not frames: the
    page kept 160 characters of the head, cut inside the first frame's path, and put the
    error line straight after it with nothing to say a part was left out."""
    text, cut = excerpts.cut(RICH_TRACEBACK, 400)
    assert cut and len(text) <= 410
    assert text.startswith("I ran the trainer and it failed:")
    assert "RuntimeError: unscale_() has already been called on this optimizer" in text
    assert "pkg/mod5.py:105 in fn5" in text and "❱ 105" in text
    assert "mod0.py" not in text
    lines = text.split("\n")
    assert "…" in lines[: lines.index(next(x for x in lines if "mod5.py" in x))]
    assert not any(line.strip() and set(line) <= set("│ ") for line in lines), "a blank box line"


def test_a_traceback_cut_before_its_error_line_keeps_its_deepest_frame():
    """A body that ends inside a traceback (an excerpt, a paste cut short) has no error
    line: the page kept its head, the boxed header and one blank box line. The deepest
    frame shown, and the line it marks, say where it failed."""
    cut_short = RICH_TRACEBACK.split("╰")[0]  # the error line never came
    text, cut = excerpts.cut(cut_short, 400)
    assert cut and len(text) <= 410
    assert text.startswith("I ran the trainer and it failed:")
    assert "pkg/mod5.py:105 in fn5" in text and "❱ 105" in text
    assert "mod0.py" not in text


def test_a_deepest_frame_whose_path_rich_wrapped_keeps_the_path_s_head():
    """rich wraps a long path onto a second line (`│ y:884 in from_pretrained │`, as in
    huggingface/diffusers#3466): that tail alone does not say which file."""
    body = (
        "It fails on load:\n"
        + "─" * 30 + " Traceback (most recent call last) " + "─" * 30 + "╮\n"
        + f"│ {'x' * 90} │\n" * 6
        + "│ /home/u/.local/lib/python3.8/site-packages/diffusers/pipelines/pipeline_utils.p │\n"
        + "│ y:884 in from_pretrained" + " " * 60 + "│\n│"
    )  # fmt: skip
    text, cut = excerpts.cut(body, 400)
    assert cut and "pipelines/pipeline_utils.p" in text and "y:884 in from_pretrained" in text


def test_a_plain_traceback_cut_before_its_error_line_keeps_its_deepest_frame():
    body = TRACEBACK.split("RuntimeError")[0]
    text, cut = excerpts.cut(body, 300)
    assert cut and '  File "w/last.py", line 9, in finish' in text and "step_0.py" not in text


def test_a_lead_cut_inside_a_line_says_so():
    body = "see below " * 60 + "\nTraceback (most recent call last):\n" + TRACEBACK
    text, cut = excerpts.cut(body, 300)
    lead = text.split("\n")[0]
    assert cut and lead.startswith("see below") and lead.endswith("…")


def test_a_text_without_a_failure_is_cut_at_its_head():
    text, cut = excerpts.cut("word " * 200, 100)
    assert cut and text == ("word " * 20).rstrip() + "…"


def test_a_failure_inside_the_budget_is_a_plain_head_cut():
    body = "ValueError: bad shape\n" + "x " * 300
    text, cut = excerpts.cut(body, 120)
    assert cut and text.startswith("ValueError: bad shape\n")


def test_a_text_that_fits_is_never_cut():
    assert excerpts.cut(TRACEBACK, len(TRACEBACK)) == (TRACEBACK, False)


def test_an_error_line_longer_than_the_budget_still_fits_it():
    body = "intro\n" * 50 + "KeyError: '" + "k" * 5000 + "'"
    text, cut = excerpts.cut(body, 300)
    assert cut and len(text) <= 320 and "KeyError: 'kkk" in text


def test_restored_edges_give_back_the_quote_ts_headline_drops():
    body = "File x.py, line 3\nKeyError: 'charset'"
    # what ts_headline returns for the query charset (PostgreSQL 18)
    assert excerpts.restore_edges("File x.py, line 3\nKeyError: 'charset", body) == body
    two = "see (first) and then 'second' end"
    assert excerpts.restore_edges("first … second", two) == "… (first) … 'second' …"


MAIL_TRACEBACK = (
    "Upgrading to 3.12 broke parsing:\n\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/email/__init__.py", line 37, in message_from_string\n'
    "    return Parser(policy=policy).parsestr(s)\n"
    '  File "/srv/app/mail.py", line 8, in parse\n'
    "    body = msg.get_content()\n"
    "AttributeError: 'Message' object has no attribute 'get_content'"
)


def _pieces(snippet: str) -> list[str]:
    """A snippet's texts between its cut marks."""
    return [p for p in snippet.replace("\n…\n", " … ").split(" … ") if p.strip("… ")]


def test_two_fragments_that_touch_are_the_bodys_own_line_not_a_cut():
    """ts_headline joined `'Message'` and `object` with ` … ` inside an unbroken line."""
    headline = "AttributeError: 'Message … object has no attribute 'get_content"
    shown = excerpts.restore_edges(headline, MAIL_TRACEBACK)
    assert shown.endswith("AttributeError: 'Message' object has no attribute 'get_content'")
    assert shown.startswith("… ")  # the text before it was left out, and says so
    for piece in _pieces(shown):
        assert piece.strip("… ") in MAIL_TRACEBACK, piece


def test_a_cut_at_either_end_is_marked_and_a_word_is_never_split():
    """`> init__` and `…", line`: the fragment began inside `__init__.py` and ended early."""
    headline = 'init__.py", line 37, in message_from_string'
    shown = excerpts.restore_edges(headline, MAIL_TRACEBACK)
    assert '"/usr/lib/python3.12/email/__init__.py", line 37' in shown
    assert shown.startswith("… ")
    # the comment ends with its error line: shown after a marked cut, never left out
    assert shown.endswith("\n…\nAttributeError: 'Message' object has no attribute 'get_content'")
    for piece in _pieces(shown):
        assert piece.strip("… ") in MAIL_TRACEBACK, piece


def test_a_whole_body_shown_has_no_marks():
    body = "KeyError: 'charset'"
    assert excerpts.restore_edges("KeyError: 'charset", body) == body


def test_a_fragment_not_in_the_body_is_left_as_it_is():
    assert excerpts.restore_edges("lead\n…\nhunk", "other text") == "lead\n…\nhunk"


def test_counts_read_as_english():
    assert _plural(2, "directory") == "2 directories"
    assert _plural(1, "repository") == "1 repository"
    assert _plural(3, "day") == "3 days"
