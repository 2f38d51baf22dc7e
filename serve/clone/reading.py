"""What the clone verbs share: the clone's HEAD, ``git grep``'s arguments, and a line read
from the clone as it goes on a page (cut to ``LINE_CHARS``, quoted)."""

from __future__ import annotations

from relore.contract.envelope import quote
from relore.contract.sanitize import Quoted
from relore.serve.clone.git import Git

LINE_CHARS = 200


async def head_of(git: Git) -> str:
    return (await git.run(["rev-parse", "HEAD"], what="git rev-parse HEAD")).text.strip()


# ``git grep -n -z`` prints ``path NUL line NUL text LF`` for each match: a path may hold a
# newline (git allows any byte but NUL), a line's text never does. It is split as it streams
# (grep_records.py), never by a regex over a cut buffer (one whose cut fell inside a 13 MB line
# once held the daemon for minutes), and never with context (``-A``): its ``--`` separator
# line would be indistinguishable from a path that starts with ``--`` and a newline.
GREP = ("grep", "-n", "-z", "-I", "--no-color", "--full-name")


def cut(text: str, cut: bool = False) -> str:
    """A line shortened to ``LINE_CHARS``; ``cut``: it was longer than ``text`` already."""
    if not cut:
        text = text.rstrip()
    return text if len(text) <= LINE_CHARS and not cut else text[: LINE_CHARS - 1] + "…"


def clone_text(text: str) -> Quoted:
    """A line read from the clone as it goes on a page, quoted: the one place a clone's
    text enters a grep, copies or symbol page."""
    return quote(text)
