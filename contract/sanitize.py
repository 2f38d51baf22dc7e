"""What a retrieved string may hold when it leaves relore: the one sanitiser, both ends.

Standard library only and self-contained: the daemon applies it to every string of every
response (``contract/envelope.py``), the client's renderer quotes with it. Retrieved text is
anything GitHub or a clone gave us: bodies, titles, logins, labels, branch names, paths,
rule text, source lines.

- **Nothing invisible or steering survives.** C0 controls and DEL become their Control
  Pictures (``\\x1b`` → ``␛``, so an ANSI CSI/OSC sequence is shown whole and inert, e.g.
  ``␛[31m``); C1 controls (``\\x85``, ``\\x9b`` …), line/paragraph separators (U+2028/9) and
  every format character (Unicode category Cf: bidi embeddings, overrides and isolates
  U+202A–202E/U+2066–2069, marks U+200E/F/U+061C, zero-width space/joiners, BOM, soft hyphen,
  tag characters) become a visible ``\\u{…}`` marker. ``\\t`` stays in multi-line text
  (source indentation) and is a space in a single-line field. The one kept format character
  is ZERO WIDTH JOINER between two emoji (family and profession emoji are built that way;
  between letters it is shown).
- **Multi-line text** is split on every break ``str.splitlines()`` knows (``\\n \\r \\r\\n \\v
  \\f \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029``), each line cleaned, and each line quoted
  ``> `` by :func:`quote`: a reader splitting on any of those sees the same lines as one
  splitting on ``\\n``. :func:`quoted_lines` reads a quoted field back into its lines, for the
  envelope's scrub and the renderer alike (one rule: a lone ``\\r`` left inside a quoted
  line is shown ``␍``, never a break, at both).
- **Single-line fields** (titles, paths, logins, labels, branches) are flattened by
  :func:`one_line`/:func:`flat`: a break becomes its picture (``␊``), never a new line.
- **Characters that render blank** but are neither spaces nor controls (the Hangul fillers
  U+115F/U+1160/U+3164/U+FFA0, the braille blank U+2800, variation selectors but the emoji
  ones, the other default-ignorable marks) are shown ``\\u{…}`` too; spaces (U+00A0,
  U+2000–U+200A, U+3000 …) look like spaces and are kept.
- **Fake delimiters** (``<<end-relore-page>>`` in any case or width, with invisible or
  dash characters inside, or spelled with look-alikes: Cyrillic ``е``, ``«»``, ``〈〈``,
  ``ᐸᐸ``, ``≮≮`` …) have their angle brackets shown as markers (``\\u{3C}\\u{3C}end-…``),
  found on a copy folded by ``confusables.FOLD`` (Unicode TR39's skeletons for the
  delimiters' characters, generated from TR39's data).
- **The fence** the renderer puts around single-line retrieved values, ``⟦ ⟧``, can never
  come from retrieved text: both are shown as markers, and so are their look-alikes
  (``〚 〛``).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from relore.contract import confusables

BEGIN = "<<relore-page>>"
END = "<<end-relore-page>>"
FENCE_OPEN, FENCE_CLOSE = "⟦", "⟧"  # around a single-line retrieved value in rendered text
LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines() splits on
FLAT_LIMIT = 4096  # a single-line field longer than this is cut (a path is at most 4096 bytes)

_ZWJ = "\u200d"
_SHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# printable characters shown all the same: the fence, its look-alikes, the blank fillers
_SHOWN_PRINTABLE = frozenset(
    FENCE_OPEN + FENCE_CLOSE + confusables.FENCE_LOOKALIKES + confusables.BLANK_FILLERS
)


def _char_class(chars) -> str:
    """A regex character class of ``chars``, consecutive code points as ranges (a class of
    hundreds of single characters searched 30 times slower)."""
    ranges: list[list[int]] = []
    for code in sorted(map(ord, chars)):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(
        re.escape(chr(lo)) + ("-" + re.escape(chr(hi)) if hi > lo else "") for lo, hi in ranges
    )


class _Look:
    """The searches and the table the look-alike checks use: built on first need (3 ms of
    regex compiling, which a CLI whose text is all ASCII without ``<`` never pays)."""

    __slots__ = ("fold", "irrelevant", "less_than", "notable", "shown_printable")

    def __init__(self) -> None:
        less_than = "<" + confusables.LESS_THAN
        bmp = "".join(c for c in confusables.FOLD if c <= chr(0xFFFF))
        # a printable character shown all the same; ``<`` or a look-alike; either
        self.shown_printable = re.compile(f"[{_char_class(_SHOWN_PRINTABLE)}]")
        self.less_than = re.compile(f"[{_char_class(less_than)}]")
        self.notable = re.compile(f"[{_char_class(less_than + ''.join(_SHOWN_PRINTABLE))}]")
        # A run of what the fold cannot make a delimiter's character of. Every character
        # past the BMP is kept: a class listing them is scanned range by range (40 times
        # slower), one range of them all stays a bitmap.
        self.irrelevant = re.compile(f"[^a-z<>{_char_class(bmp)}\U00010000-\U0010ffff]+")
        self.fold = str.maketrans(confusables.FOLD)  # for str.translate


@functools.cache
def _look() -> _Look:
    return _Look()


class Quoted(str):
    """Retrieved text already split into ``> `` lines: the only kind of string a response
    may carry a line break in (the envelope's structural pass flattens every other one)."""

    __slots__ = ()


def _visible(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # Control Pictures: ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\u{{{code:X}}}"


def _emoji(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk") or ch == "\ufe0f"


_shown_re: re.Pattern | None = None


def _shown_pattern() -> re.Pattern:
    """Every character of the shown categories (and the fence, and tab), as one character
    class built once from this Python's Unicode tables: a search runs at C speed."""
    global _shown_re
    if _shown_re is None:
        ranges: list[list[int]] = []
        for code in range(0x110000):
            if unicodedata.category(chr(code)) in _SHOWN_CATEGORIES:
                if ranges and ranges[-1][1] == code - 1:
                    ranges[-1][1] = code
                else:
                    ranges.append([code, code])
        parts = [
            re.escape(chr(lo)) + ("-" + re.escape(chr(hi)) if hi > lo else "") for lo, hi in ranges
        ]
        _shown_re = re.compile("[" + "".join(parts) + _char_class(_SHOWN_PRINTABLE) + "]")
    return _shown_re


def _plain(text: str) -> bool:
    """Nothing to show: ``str.isprintable()`` is False for every control, format, separator
    (but the space), surrogate and unassigned character — a C-speed first look; the few
    printable characters shown all the same are never ASCII."""
    return text.isprintable() and (text.isascii() or not _look().shown_printable.search(text))


def clean_line(text: str, *, keep_tab: bool = True) -> str:
    """One line: every control, separator and format character made visible (``\\t`` kept
    when ``keep_tab``, else a space). Call on text with no line break left in it."""
    if _plain(text):
        return text

    def shown(ch: str, i: int) -> str:
        if ch == "\t":
            return "\t" if keep_tab else " "
        if ch in _SHOWN_PRINTABLE:
            return _visible(ch)
        if unicodedata.category(ch) not in _SHOWN_CATEGORIES:
            return ch  # unassigned, private use, a space other than U+0020: kept as is
        if ch == _ZWJ and 0 < i < len(text) - 1 and _emoji(text[i - 1]) and _emoji(text[i + 1]):
            return ch
        return _visible(ch)

    if len(text) > 256:  # a long line: one regex pass (its class is built once, ~0.4 s)
        return _shown_pattern().sub(lambda m: shown(m.group(), m.start()), text)
    return "".join(
        ch if ch.isprintable() and ch not in _SHOWN_PRINTABLE else shown(ch, i)
        for i, ch in enumerate(text)
    )


# --- fake delimiters --------------------------------------------------------------------------

_FOLD_DROP = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Pd", "Cs"})
_DROPPED = frozenset("-_\t" + confusables.BLANK_FILLERS)
_TARGETS = tuple(  # the delimiters as the fold spells them
    "".join(confusables.FOLD.get(c, c) for c in d if c not in _DROPPED) for d in (BEGIN, END)
)
_ROUGH_TAIL = _TARGETS[1][len("<<end") :]  # both delimiters end so: "relorepage>>"
_ROUGH = re.compile(r"[^a-z<>]+")


def _has_less_than(text: str) -> bool:
    """Could ``text`` open a delimiter: a ``<`` or one of its look-alikes in it."""
    return "<" in text if text.isascii() else _look().less_than.search(text) is not None


def _untouched(text: str) -> bool:
    """Nothing in ``text`` (a line break aside: the caller knows where they go) for the
    sanitiser to show or defuse: one C-speed look, and one search when it is not ASCII."""
    if not text.replace("\n", "").isprintable():
        return False
    return "<" not in text if text.isascii() else _look().notable.search(text) is None


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` folded by ``confusables.FOLD`` (look-alikes, case, width), with spacing,
    dashes, controls, marks and blank fillers dropped; and for each folded character the
    index it came from."""
    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        piece = confusables.FOLD.get(ch)
        if piece is None:
            if ch in _DROPPED or unicodedata.category(ch) in _FOLD_DROP:
                continue
            piece = ch
        chars.append(piece)
        where.extend([i] * len(piece))
    return "".join(chars), where


def _may_hold_delimiter(text: str) -> bool:
    """A cheap superset of the texts holding a delimiter, in C: a ``<`` look-alike, then the
    text folded (one not ASCII rid first of what the fold leaves alone: translating costs ten
    times a search) with everything but a-z and <> dropped, holding the delimiters' common
    tail. A text's lines hold one only if the text does."""
    if not _has_less_than(text):
        return False
    look = _look()
    rough = text if text.isascii() else look.irrelevant.sub("", text)
    return _ROUGH_TAIL in _ROUGH.sub("", rough.translate(look.fold))


def scrub_delimiters(text: str) -> str:
    """Every spelling of our delimiters has its angle brackets shown as markers (``<`` →
    ``\\u{3C}``; ``«``, ``〈``, fullwidth and small forms … likewise), so nothing retrieved
    reads as one. A marker folds to no angle, so scrubbing twice changes nothing."""
    if not _may_hold_delimiter(text):
        return text
    folded, where = _folded(text)
    hits: set[int] = set()
    for target in _TARGETS:
        start = folded.find(target)
        while start != -1:
            for k in range(start, start + len(target)):
                if folded[k] in "<>":
                    hits.add(where[k])
            start = folded.find(target, start + 1)
    if not hits:
        return text
    return "".join(_visible(ch) if i in hits else ch for i, ch in enumerate(text))


# --- the public shapes ------------------------------------------------------------------------


def lines(text: str | None) -> list[str]:
    """Retrieved multi-line text as clean lines, split on every break splitlines() knows."""
    if not text:
        return []
    return [clean_line(line) for line in scrub_delimiters(text).splitlines()] or [""]


def quote(text: str | None) -> Quoted:
    """Every line of ``text`` cleaned and prefixed ``> `` (``>`` alone for an empty line)."""
    return Quoted("\n".join("> " + line if line else ">" for line in lines(text)))


def quoted_lines(text: str | None) -> list[str]:
    """The lines of a quoted field, as the envelope keeps them and the renderer prints them.

    :func:`quote` leaves no break but ``\\n`` in a :class:`Quoted` string, so ``\\n`` alone
    separates its lines; any other break found inside one (a lone ``\\r`` in a string quoted
    by hand, or one that never passed the scrub) is shown as its picture, never obeyed. Each
    line is cleaned again, so a page prints the same before and after :func:`clean`."""
    if not text:
        return []
    return [clean_line(scrub_delimiters(line)) for line in text.split("\n")]


def flat(text: str, limit: int = FLAT_LIMIT) -> str:
    """A single-line field: breaks and controls shown, not obeyed; spacing kept; bounded."""
    if len(text) <= limit and "\n" not in text and _untouched(text):
        return text
    text = scrub_delimiters(text)
    text = text.replace("\r\n", "\n")  # one break, one picture
    shown = "".join(_visible(ch) if ch in LINE_BREAKS else ch for ch in text)
    shown = clean_line(shown, keep_tab=False)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def one_line(text: str | None, limit: int = 200) -> str:
    """A retrieved title or name for inline use: runs of spaces collapsed, breaks shown as
    pictures, controls made visible, bounded to ``limit`` characters."""
    collapsed = re.sub(r"[ \t]+", " ", text or "").strip(" ")
    return flat(collapsed, limit)


def fence(value: object) -> str:
    """A single-line retrieved value, fenced for a line of relore's own text."""
    return f"{FENCE_OPEN}{value}{FENCE_CLOSE}"


def clean(tree, limit: int = FLAT_LIMIT):
    """Every string in the tree (keys included) made safe: a :class:`Quoted` string keeps its
    lines (each re-cleaned), any other string is flattened to one bounded line."""
    if isinstance(tree, Quoted):
        if _untouched(tree):
            return tree
        lines = tree.split("\n")
        if not _may_hold_delimiter(tree):
            if all(map(_plain, lines)):
                return tree
            return Quoted("\n".join(clean_line(line) for line in lines))
        return Quoted("\n".join(quoted_lines(tree)))
    if isinstance(tree, str):
        return flat(tree, limit)
    if isinstance(tree, dict):
        return {clean(k, limit): clean(v, limit) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return [clean(v, limit) for v in tree]
    return tree
