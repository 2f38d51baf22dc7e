"""The line ``why`` was asked about: does it hold code, and which of its words are worth a
pickaxe. Pure text: no git, no database.

A line with no code on it (blank, comment only, in the licence header) has no behaviour to
trace and declines the pickaxe, saying which. Comment syntax is chosen by the file's
extension.
"""

from __future__ import annotations

import re
from pathlib import Path

CANDIDATES_CAP = 8

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_LICENCE = re.compile(
    r"copyright|licen[cs]e|spdx-license|all rights reserved|warrant|\bgnu\b|permissions and",
    re.IGNORECASE,
)
# What starts a comment-only line, by file kind. `#` in C-like files is the preprocessor
# (`#include`: code), a `*` line is the inside of a block comment only where blocks exist
# (never `*args`), and `--`, `;`, `%` are comments only in the languages that say so.
_HASH = r"#"
_SLASHES = r"//|\*(\s|/|$)"
_COMMENT_BY_EXTENSION = {
    **dict.fromkeys(
        ".py .pyi .pyx .sh .bash .zsh .rb .pl .pm .r .yaml .yml .toml .cmake .mk .cfg .conf"
        " .dockerfile .ps1 .nim .jl .ex .exs .tf .coffee".split(),
        _HASH,
    ),
    **dict.fromkeys(
        ".c .h .cc .cpp .cxx .hpp .hh .cu .cuh .m .mm .js .jsx .mjs .cjs .ts .tsx .go .rs"
        " .java .kt .kts .scala .swift .cs .dart .css .scss .less .proto .groovy .gradle"
        " .vue .svelte .zig .sol".split(),
        _SLASHES,
    ),
    ".php": _HASH + "|" + _SLASHES,
    **dict.fromkeys(".sql .lua .hs .elm .ada .adb".split(), r"--"),
    **dict.fromkeys(".ini .lisp .clj .cljs .el .scm .asm .s".split(), r";|#"),
    **dict.fromkeys(".tex .sty .erl .hrl .mat".split(), r"%"),
}
_DEFAULT_COMMENT = _HASH + "|" + _SLASHES


def _comment_re(path: str | None) -> re.Pattern:
    suffix = Path(path or "").suffix.lower()
    if Path(path or "").name.lower() in ("makefile", "dockerfile", "cmakelists.txt"):
        suffix = ".mk"
    return re.compile(r"^\s*(" + _COMMENT_BY_EXTENSION.get(suffix, _DEFAULT_COMMENT) + ")")


# keywords and names too common in any language to say where a line came from
_STOPWORDS = frozenset(
    """
    and as assert async await break case catch class const continue def default del delete
    do elif else enum except export extends false finally for from func function global go
    if impl import in interface is lambda let match mod mut new nil none nonlocal not null
    or package pass print pub raise return self static struct super switch this throw true
    try type typeof use var void while with yield cls args kwargs int str len bool float
    dict list set tuple object string the and for int64 int32 err error fmt
    """.split()
)


def file_lines(text: str) -> list[str]:
    """The file's lines as git numbers them: split on newlines only."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _comment_states(lines: list[str], upto: int, path: str | None = None) -> list[bool]:
    """For lines[0:upto], whether each holds no code: blank, a line comment, or inside (or
    opening/closing) a ``/* */`` block."""
    comment = _comment_re(path)
    blocks = _SLASHES in comment.pattern  # /* */ blocks exist in this language
    states = []
    in_block = False
    for text in lines[:upto]:
        stripped = text.strip()
        if in_block:
            states.append(True)
            if "*/" in stripped:
                in_block = False
                rest = stripped.split("*/", 1)[1].strip()
                if rest and not rest.startswith(("//", "#")):
                    states[-1] = False
            continue
        if blocks and stripped.startswith("/*"):
            body = stripped[2:]
            if "*/" in body:
                rest = body.split("*/", 1)[1].strip()
                states.append(not rest)
            else:
                in_block = True
                states.append(True)
            continue
        if stripped.startswith("<!--"):
            states.append(True)
            continue
        states.append(not stripped or bool(comment.match(text)))
    return states


def decline_reason(lines: list[str], line: int, path: str | None = None) -> str | None:
    """Why a line has no behaviour to trace, or None when it carries code. ``path`` says
    which comment syntax the file uses."""
    text = lines[line - 1]
    if not text.strip():
        return "blank"
    states = _comment_states(lines, min(len(lines), line + 40), path)
    if not states[line - 1]:
        return None
    # the leading block of comments and blank lines, and whether it is a licence
    lead = 0
    while lead < len(states) and states[lead]:
        lead += 1
    if line <= lead and _LICENCE.search("\n".join(lines[:lead])):
        return "licence header"
    return "comment"


DECLINED = {
    "blank": "line {line} is blank: there is no code on it to trace",
    "licence header": "line {line} is in the licence header: no behaviour to trace (its "
    "history is the header's, and a pickaxe on its words walks the file's whole history "
    "for nothing)",
    "comment": "line {line} is a comment only: no behaviour to trace; blame and the "
    "revision chain say who wrote it",
}


# a line's first this many distinct words are scored: each is counted over the whole file, so
# a line of 20,000 distinct words (a minified bundle) once cost 18 s of CPU for 1.2 MB
WORDS_SCORED = 64


def candidates(text: str, file_text: str) -> list[tuple[str, int]]:
    """The line's words worth a pickaxe, most distinctive first: fewest occurrences in the
    file (a word used once here is more likely to name this line's idea), then longest.
    Only the line's first ``WORDS_SCORED`` distinct words are scored: linear in the file."""
    words: dict[str, None] = {}
    for found in _WORD.finditer(text):
        word = found.group()
        if word.lower() not in _STOPWORDS:
            words[word] = None
            if len(words) >= WORDS_SCORED:
                break
    scored = [(w, file_text.count(w)) for w in words]
    scored.sort(key=lambda item: (item[1], -len(item[0]), item[0]))
    return scored[:CANDIDATES_CAP]
