"""A page's ``text`` is its row's line as ``str.splitlines()`` numbers the file's decoded
text, whether the file is split as bytes (only "\\n" ends its lines) or decoded whole."""

from __future__ import annotations

import pytest
from fixtures.code_tree import write_tree

from relore.lens import index

BODIES = {
    "plain": b"def f():\n    return 1\n\n\nf()\n",
    "no_final_newline": b"a = 1\nb = 2",
    "empty": b"",
    "only_newlines": b"\n\n\n",
    "crlf": b"a = 1\r\nb = 2\r\n",
    "lone_cr": b"a = 1\rb = 2\nc = 3\n",
    "form_feed": b"a = 1\n\x0c\nb = 2\n",
    "vertical_tab_and_separators": b"a\x0bb\x1cc\x1dd\x1ee\nf\n",
    "next_line": "a = '\x85'\nb = 2\n".encode(),
    "line_separators": "a = '\u2028'\nb = '\u2029'\nc\n".encode(),
    "invalid_utf8": b"a = '\xff\xfe'\nb = '\xe2\x80'\nc = '\xc2'\n",
    "invalid_before_newline": b"x\xe2\n\xa8y\n",
    "lone_0x85_byte": b"a\x85b\nc\n",
    "padded": b"   \tx = 1   \n\t\n",
    "long": b"y = '" + b"z" * 500 + b"'\nw\n",
    "many_lines": b"".join(b"line %d\n" % i for i in range(40)),
    "non_ascii_split_as_bytes": "s = 'ü ß'\nt = 2\n".encode(),
    "non_ascii_holding_0xa9": "s = 'é ©'\nt = 2\n".encode(),
}


def _reference(data: bytes, line: int) -> str:
    """The rule the page kept before files were split as bytes."""
    lines = data.decode("utf-8", "replace").splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    chars = index.TEXT_CHARS
    return text if len(text) <= chars else text[: chars - 1] + "…"


@pytest.mark.parametrize("case", sorted(BODIES))
def test_a_rows_text_is_its_line_as_splitlines_numbers_the_decoded_file(tmp_path, case):
    data = BODIES[case]
    write_tree(tmp_path, {"m.py": data})
    asked = list(range(-1, data.count(b"\n") + data.count(b"\r") + 4))
    # in order, backwards, and the middle first: a file is split only as far as asked
    for order in (asked, asked[::-1], asked[len(asked) // 2 :] + asked[: len(asked) // 2]):
        lines = index._Lines(str(tmp_path))
        for line in order:
            assert lines("m.py", line) == _reference(data, line), (case, line)


def test_a_file_gone_before_its_line_is_read_shows_nothing(tmp_path):
    assert index._Lines(str(tmp_path))("gone.py", 1) == ""
