"""Cutting a body to fit a page: one rule for every view that shows part of a text.

A body longer than its budget keeps its lead (what the author says first) and, when it holds
a traceback or a log, the window that ends at its **last error line** with the frames just
above it — the part an agent needs — instead of only its head. Search snippets, thread
comments and the opening post on a thread's first page are all cut here.

Search snippets start as ``ts_headline`` fragments, which end on a word: the punctuation
after a fragment's last word (``KeyError: 'charset'`` → ``'charset``) or before its first is
dropped. ``restore_edges`` puts it back from the body the fragment was cut from.
"""

from __future__ import annotations

import re

from relore.contract import patterns

ELLIPSIS = "…"
# ts_headline's FragmentDelimiter in serve/ranking.py
FRAGMENT_DELIMITER = " … "
# A Python exception line as relore_error_lines reads one (`KeyError: 'x'`,
# `torch.cuda.OutOfMemoryError: …`, pytest's `E   ValueError`); a line naming a failure is
# that, a test runner's FAILED/ERROR line, or a compiler's `error:` / `error[E0308]:`.
PYTHON_ERROR_LINE = re.compile(
    r"^\s*(E\s+)?([A-Za-z_]\w*\.)*[A-Z]\w*(Error|Exception|Warning)(:\s|:?$)"
)
ERROR_LINE = re.compile(
    PYTHON_ERROR_LINE.pattern + r"|^\s*(FAILED|ERROR)\s|^\s*(fatal\s+)?error(\[\w+\])?:\s"
)
# Python's own header and rich's boxed one, and a frame's own line: the contract's, which the
# client reads too (a pasted traceback may be longer than a query: contract/limits.py)
TRACEBACK_HEADER = patterns.TRACEBACK_HEADER
FRAME = patterns.TRACEBACK_FRAME
# A line of nothing but a box's walls and blanks (rich's spacing between frames).
_BOX_ONLY = re.compile(r"^[\s│┃╭╮╰╯─━]*$")
# rich's mark on the line a frame raised at
_MARKER = "❱"
# rich's frame line holding only the tail of a path it wrapped (`│ y:884 in name │`)
_WRAPPED_FRAME = re.compile(r"^\s*[│┃]\s+[^/\s]*:\d+ in \S")
# Of a cut body's budget, at least this share goes to the failure's window.
WINDOW_SHARE = 0.6


def restore_edges(headline: str, body: str) -> str:
    """``ts_headline``'s fragments with the punctuation at their edges given back: each
    fragment is found in ``body`` and widened over the non-space, non-word characters that
    touch it (a closing quote, a bracket, a colon). A fragment not found stays as it is."""
    restored = []
    for fragment in headline.split(FRAGMENT_DELIMITER):
        at = body.find(fragment) if fragment else -1
        if at < 0:
            restored.append(fragment)
            continue
        start, end = at, at + len(fragment)
        while start > 0 and _edge(body[start - 1]):
            start -= 1
        while end < len(body) and _edge(body[end]):
            end += 1
        restored.append(body[start:end])
    return FRAGMENT_DELIMITER.join(restored)


def _edge(char: str) -> bool:
    return not char.isspace() and not char.isalnum() and char != "_"


def cut(text: str, chars: int) -> tuple[str, bool]:
    """``text`` within about ``chars`` characters, and whether it was cut.

    A text that fits is returned whole. Otherwise, when an error line lies past the budget:
    the lead (what comes before the traceback holding it, its ``Traceback`` line included;
    at most ``1 - WINDOW_SHARE`` of the budget, ending ``…`` when cut inside a line), ``…``,
    then the lines ending at the last error line (the frames above it, as many as the rest
    of the budget holds, a box's blank lines left out), then ``…`` if more followed. A
    traceback cut short before any error line (an excerpt, a paste) keeps, past its lead,
    its deepest frame and what follows it (the source line; in rich's box, the line ``❱``
    marks first). Else the head, then ``…``."""
    if len(text) <= chars:
        return text, False
    lines = text.split("\n")
    last = next((i for i in range(len(lines) - 1, -1, -1) if ERROR_LINE.match(lines[i])), None)
    if last is None:
        frame = next((i for i in range(len(lines) - 1, -1, -1) if FRAME.match(lines[i])), None)
        if frame is not None and _reach(lines, frame) > chars:
            return _around(lines, chars, frame, upward=False), True
    elif _reach(lines, last) > chars:
        return _around(lines, chars, last, upward=True), True
    return text[:chars].rstrip() + ELLIPSIS, True


def _reach(lines: list[str], index: int) -> int:
    """How many characters the text runs to the end of line ``index``."""
    return sum(len(line) + 1 for line in lines[: index + 1])


def _around(lines: list[str], chars: int, anchor: int, *, upward: bool) -> str:
    """The lead, then a window of lines at ``anchor``: ending there and growing up (an
    error line and the frames above it), or starting there and growing down (the deepest
    frame of a traceback with no error line)."""
    header = next((i for i in range(anchor, -1, -1) if TRACEBACK_HEADER.match(lines[i])), None)
    lead_end = header + 1 if header is not None else anchor
    whole_lead = "\n".join(lines[:lead_end]).rstrip()
    lead = whole_lead[: int(chars * (1 - WINDOW_SHARE))].rstrip()
    rest = whole_lead[len(lead) :].lstrip(" \t")
    if lead and rest and not rest.startswith("\n"):
        lead += ELLIPSIS  # cut inside a line
    window = [lines[anchor][: chars // 2]]
    first = last = anchor
    if not upward and anchor - 1 >= lead_end and _WRAPPED_FRAME.match(lines[anchor]):
        first -= 1
        window.insert(0, lines[first][: chars // 4])  # the path's head, wrapped above
    room = chars - len(lead) - sum(len(line) + 1 for line in window) - 2 * (len(ELLIPSIS) + 2)
    if upward:
        while first > lead_end and (
            _BOX_ONLY.match(lines[first - 1]) or len(lines[first - 1]) + 1 <= room
        ):
            first -= 1
            if not _BOX_ONLY.match(lines[first]):  # a box's blank line is left out, free
                room -= len(lines[first]) + 1
                window.insert(0, lines[first])
        # begin on a frame's own line, not the source line under it
        while len(window) > 1 and not FRAME.match(window[0]) and any(map(FRAME.match, window)):
            window.pop(0)
            first += 1
    else:
        below = [i for i in range(anchor + 1, len(lines)) if not _BOX_ONLY.match(lines[i])]
        marked = next((i for i in below if _MARKER in lines[i]), None)
        if marked is not None:  # rich's context lines: the one it points at first
            below = [marked] + [i for i in below if i > marked]
        for i in below:
            if len(lines[i]) + 1 > room:
                break
            room -= len(lines[i]) + 1
            window.append(lines[i])
            last = i
    parts = [lead] if lead else []
    if first > lead_end or not lead:
        parts.append(ELLIPSIS)
    parts.append("\n".join(window))
    if any(line.strip() for line in lines[last + 1 :]):
        parts.append(ELLIPSIS)
    return "\n".join(parts)
