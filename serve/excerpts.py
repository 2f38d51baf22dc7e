"""Cutting a body to fit a page: one rule for every view that shows part of a text.

A body longer than its budget keeps its lead (what the author says first) and, when it holds
a traceback or a log, the window that ends at its **last error line** with the frames just
above it — the part an agent needs — instead of only its head. Search snippets, thread
comments and the opening post on a thread's first page are all cut here.

Search snippets start as ``ts_headline`` fragments, which end on a word: the punctuation
after a fragment's last word (``KeyError: 'charset'`` → ``'charset``) or before its first is
dropped, two fragments that touch are joined with `` … `` as if text were missing, and a cut
at either end is unmarked. ``restore_edges`` makes them the body's own characters again,
with ``…`` exactly where text was left out.
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
    """``ts_headline``'s fragments as the body's own characters, with ``…`` exactly where text
    was left out. Each fragment is found in ``body`` (in order) and widened to whole
    whitespace-delimited words (ts_headline drops a closing quote, a bracket, a colon, the
    ``__`` of ``__init__``); fragments with nothing but blanks between them are one text,
    the body's own blanks between (never `` … `` inside an unbroken line); the body's last
    error line is shown when no fragment holds it (what a comment that ends with it says);
    and a cut before the first, between two, or after the last is marked ``…``. A headline
    holding a fragment not found in the body (a hunk's lines after a lead) is left as it is."""
    if not headline or not body:
        return headline
    spans: list[tuple[int, int]] = []
    after = 0
    for fragment in headline.split(FRAGMENT_DELIMITER):
        at = body.find(fragment, after)
        if at < 0:
            at = body.find(fragment)
        if not fragment or at < 0:
            return headline
        start, end = at, at + len(fragment)
        while start > 0 and not body[start - 1].isspace():
            start -= 1
        while end < len(body) and not body[end].isspace():
            end += 1
        spans.append((start, end))
        after = end
    error = _last_error_line(body)
    if error is not None and not any(s <= error[0] and error[1] <= e for s, e in spans):
        spans.append(error)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and (start <= merged[-1][1] or not body[merged[-1][1] : start].strip()):
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    parts = [ELLIPSIS + " "] if body[: merged[0][0]].strip() else []
    for i, (start, end) in enumerate(merged):
        if i:
            gap = body[merged[i - 1][1] : start]
            parts.append(f"\n{ELLIPSIS}\n" if "\n" in gap else FRAGMENT_DELIMITER)
        parts.append(body[start:end])
    if body[merged[-1][1] :].strip():
        parts.append(" " + ELLIPSIS)
    return "".join(parts)


def _last_error_line(body: str) -> tuple[int, int] | None:
    """Where the body's last error line is (its characters, the line break left out)."""
    found = None
    at = 0
    for line in body.split("\n"):
        if ERROR_LINE.match(line) and line.strip():
            found = (at + len(line) - len(line.lstrip()), at + len(line.rstrip()))
        at += len(line) + 1
    return found


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
