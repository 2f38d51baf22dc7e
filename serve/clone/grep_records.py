"""``git grep -n -z`` output, split as it streams: ``path NUL line NUL text LF`` per match.

A path may hold any byte but NUL (a newline too), a line's text never holds a newline (it
may hold a NUL past the first 8,000 bytes git checks for binary files). So the fields are
read in order — up to the first NUL, up to the next NUL, up to the next LF — with
``bytes.find`` from where the last field ended: every byte is looked at once, whatever the
chunks' cuts, and a field is kept only up to its cap (a line of 13 MB is cut while it is
read, never held). A record the output ends inside (git stopped at the output cap, or
killed) is counted once and never handed on. No regular expression runs over the output.

``Splitter(on_match, text_bytes=…)``: ``feed(chunk)`` as the output comes, ``close()`` at
its end; ``on_match`` gets each whole record as a :class:`Match` until it returns False,
after which records are only counted. ``total`` counts matches, ``files`` the files they
are in (git prints a file's matches together), ``partial`` a record the output ended in.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass

# a path longer than this is not one a working tree can hold (PATH_MAX): counted, not shown
PATH_BYTES = 4096
_NUMBER_BYTES = 20
_PATH, _NUMBER, _TEXT = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Match:
    path: str
    line: int
    text: str  # the line's first ``text_bytes`` bytes, decoded (a character cut in two dropped)
    cut: bool  # the line was longer than what was kept


def _decode(raw: bytes | bytearray, cut: bool) -> str:
    if not cut:
        return bytes(raw).decode("utf-8", "replace")
    # a character the cut split in two is left out, not shown as U+FFFD
    return codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(raw), final=False)


class Splitter:
    def __init__(self, on_match: Callable[[Match], bool | None], *, text_bytes: int):
        self.on_match = on_match
        self.text_bytes = text_bytes
        self.listening = True
        self.total = 0
        self.files = 0
        self.partial = False
        self._field = _PATH
        self._path = bytearray()
        self._number = bytearray()
        self._text = bytearray()
        self._path_cut = self._number_bad = self._text_cut = False
        self._started = False  # bytes of a record seen since the last LF
        self._last_path: bytes | None = None

    def feed(self, data: bytes) -> None:
        pos, end = 0, len(data)
        if pos < end:
            self._started = True
        while pos < end:
            if self._field == _TEXT:
                stop = data.find(b"\n", pos)
                upto = end if stop < 0 else stop
                if self.listening:
                    room = self.text_bytes - len(self._text)
                    if room > 0:
                        self._text += data[pos : min(upto, pos + room)]
                    if upto - pos > room:
                        self._text_cut = True
                if stop < 0:
                    return
                self._record()
                pos = stop + 1
                self._started = pos < end
                continue
            stop = data.find(b"\x00", pos)
            upto = end if stop < 0 else stop
            if self._field == _PATH:
                room = PATH_BYTES - len(self._path)
                if room > 0:
                    self._path += data[pos : min(upto, pos + room)]
                if upto - pos > room:
                    self._path_cut = True
            else:
                room = _NUMBER_BYTES - len(self._number)
                if room > 0:
                    self._number += data[pos : min(upto, pos + room)]
                if upto - pos > room:
                    self._number_bad = True
            if stop < 0:
                return
            self._field += 1
            pos = stop + 1

    def close(self) -> None:
        """The output ended: a record it ended inside is a match git began to print, counted
        (so a total read to the output cap stays a lower bound) and never shown."""
        if self._started:
            self.partial = True
            self.total += 1
            if bytes(self._path) != self._last_path:
                self.files += 1
        self._reset()
        self._started = False

    def _record(self) -> None:
        self.total += 1
        path = bytes(self._path)
        if path != self._last_path:
            self.files += 1
            self._last_path = path
        number = bytes(self._number)
        shown = not (self._path_cut or self._number_bad) and number.isdigit()
        if self.listening and shown:
            match = Match(
                path.decode("utf-8", "replace"),
                int(number),
                _decode(self._text, self._text_cut),
                self._text_cut,
            )
            if self.on_match(match) is False:
                self.listening = False
        self._reset()

    def _reset(self) -> None:
        self._field = _PATH
        self._path.clear()
        self._number.clear()
        self._text.clear()
        self._path_cut = self._number_bad = self._text_cut = False
