"""``git grep -n -z`` output split as it streams (serve/clone/grep_records.py): the same
records whatever the chunks' cuts, a long line cut while it is read, a record the output
ends inside counted once and never shown, and linear work on what once went quadratic."""

from __future__ import annotations

from relore.serve.clone import copies, grep_records

OUTPUT = (
    b"plain.py\x0012\x00needle = 1\n"
    b"new\nline.py\x003\x00x = 'needle'\n"
    b"--\nsep.py\x007\x00a NUL \x00 inside the text, past git's binary check\n"
    b"new\nline.py\x009\x00caf\xc3\xa9 needle\n"
)


def _split(chunks, text_bytes=200, limit=None):
    seen = []

    def keep(match):
        seen.append(match)
        return limit is None or len(seen) < limit

    split = grep_records.Splitter(keep, text_bytes=text_bytes)
    for chunk in chunks:
        split.feed(chunk)
    split.close()
    return split, seen


def test_every_cut_of_the_output_gives_the_same_records():
    whole, expected = _split([OUTPUT])
    assert [(m.path, m.line) for m in expected] == [
        ("plain.py", 12),
        ("new\nline.py", 3),
        ("--\nsep.py", 7),
        ("new\nline.py", 9),
    ]
    assert expected[2].text == "a NUL \x00 inside the text, past git's binary check"
    assert (whole.total, whole.files, whole.partial) == (4, 4, False)
    for at in range(1, len(OUTPUT)):
        split, seen = _split([OUTPUT[:at], OUTPUT[at:]])
        assert seen == expected, at
        assert (split.total, split.files, split.partial) == (4, 4, False)
    split, seen = _split([bytes([b]) for b in OUTPUT])  # a byte at a time
    assert seen == expected


def test_a_long_line_is_cut_while_it_is_read_and_a_split_character_left_out():
    line = "é" * 5_000  # two bytes each: a cut at an odd byte splits one
    data = b"a.py\x001\x00" + line.encode() + b"\nb.py\x002\x00short\n"
    split, seen = _split([data[i : i + 777] for i in range(0, len(data), 777)], text_bytes=101)
    assert seen[0].cut and seen[0].text == "é" * 50
    assert not seen[1].cut and seen[1].text == "short"
    assert split.total == 2


def test_a_record_the_output_ends_inside_is_counted_once_and_never_shown():
    data = OUTPUT + b"last.py\x0099\x00needle and then the output cap"
    split, seen = _split([data])
    assert len(seen) == 4 and split.partial
    assert split.total == 5 and split.files == 5


def test_after_the_page_is_full_records_are_only_counted():
    split, seen = _split([OUTPUT * 3], limit=2)
    assert len(seen) == 2
    assert split.total == 12


def test_a_path_past_path_max_is_counted_not_shown():
    data = b"d/" * grep_records.PATH_BYTES + b"x.py\x001\x00needle\n" + OUTPUT
    split, seen = _split([data])
    assert split.total == 5 and len(seen) == 4


def test_output_cut_inside_a_13_mb_line_is_one_partial_record():
    """The regex this replaced took minutes over a 256 kB cut inside one long line (its cost
    is in benchmarks/serve_bounds.py); here, what the cut leaves is one record, unshown."""
    data = b"bundle.min.js\x001\x00" + b"A" * 13_000_000
    split, seen = _split([data[i : i + 65_536] for i in range(0, len(data), 65_536)])
    assert split.partial and split.total == 1 and seen == []


def test_a_copies_marker_trailed_by_spaces_parses_without_backtracking():
    spaces = " " * 20_000
    assert copies.parse_marker(f"# Copied from a.B with x{spaces}y") == ("a.B", "x")
    assert copies.parse_marker(f"# Copied from a.B with A->B{spaces}") == ("a.B", "A->B")
    assert copies.parse_marker(f"# Copied from a.B{spaces}") is None  # cut: its end unknown
    assert copies.parse_marker("# Copied from a.B   ") == ("a.B", None)
    assert copies.parse_marker("x = 1  // Copied from a.b.C with Foo->Bar") == ("a.b.C", "Foo->Bar")
    assert copies.parse_marker("# Copied from a.B and more") is None
    assert copies.parse_marker("# Copied from a.B.") is None
    assert copies.parse_marker("# Copied from x") is None
    assert copies.parse_marker("# see # Copied from a.B") == ("a.B", None)
