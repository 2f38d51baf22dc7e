"""The index's fields, and a marts row as an index document.

``text`` is whitespace-separated lexemes exactly as Postgres produced them for
``search_vector`` (source.py builds it in SQL), so the index never tokenises or stems on its
own: the query side asks Postgres for the caller's lexemes too. A lexeme is repeated once per
occurrence times its field's weight, which makes tantivy's BM25 a BM25F over the fields with
integer weights (one term frequency, one length, one saturation).

A thread's signals (the files, error lines, tests and symbols of the signal marts) are
carried by each of its documents as unscored terms, so ``--file``/``--error``/``--test``/
``--symbol`` are one posting list each, intersected with the words. A name that matches by
its tail is indexed by every tail: ``src/pkg/mod.py`` as ``src/pkg/mod.py``, ``pkg/mod.py``
and ``mod.py`` (``file``), ``Foo.bar.baz`` as ``Foo.bar.baz``, ``bar.baz``, ``baz``.
"""

from __future__ import annotations

import tantivy

# Weight per search_vector weight class: A the thread title (opening posts only), B the body,
# C a review comment's path, D its diff hunk.
FIELD_WEIGHTS = {"A": 2, "B": 1, "C": 2, "D": 1}
# In the threads index (a thread as one text) the title counts once: measured on the change,
# paraphrase and why slices (benchmarks/results/intent-slices.md), a doubled title lowered
# every one of them in a whole-thread ranking, where one document's title is one field of many.
THREAD_FIELD_WEIGHTS = {**FIELD_WEIGHTS, "A": 1}
TOKENIZER = "lexemes"
# The generation of this layout: an index written by another is rebuilt, never read.
# 4: each document carries its thread's kind (precedent walks pull requests' words only).
# 5: the shared index of small repositories (each document its member's slot, its thread a key).
LAYOUT = 5

TEXT = "text"
DOCUMENT = "document_id"
THREAD = "thread"
CREATED = "created"
TIER = "tier"
AUTHOR = "author"
STATE = "state"
# the thread's kind as marts.threads has it: 'issue' or 'pr'
KIND = "kind"
# in the shared index, which member repository a document is of (its slot, from 1); a
# repository's own index leaves it out
MEMBER = "member"
# the thread's signals: every tail of each path, each path as stored, error lines in their
# normal form, test ids and names, every tail of each symbol
FILE = "file"
FILE_PATH = "file_path"
ERROR = "error"
TEST = "test"
SYMBOL = "symbol"
SIGNAL_FIELDS = (FILE, FILE_PATH, ERROR, TEST, SYMBOL)
# a value longer than this is not indexed (tantivy's term limit is 65,530 bytes; a caller's
# filter value is far shorter, MAX_QUERY_CHARS)
MAX_TERM_BYTES = 4096


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(TEXT, tokenizer_name=TOKENIZER, index_option="freq")
    builder.add_text_field(DOCUMENT, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_unsigned_field(THREAD, indexed=True, fast=True)
    builder.add_integer_field(CREATED, indexed=True, fast=True)
    builder.add_text_field(TIER, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(AUTHOR, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(STATE, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(KIND, tokenizer_name="raw", index_option="basic")
    builder.add_unsigned_field(MEMBER, indexed=True)
    for name in SIGNAL_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    return builder.build()


SCHEMA = build_schema()


# A thread's value in the THREAD field: its number in a repository's own index; in the shared
# index, its member's slot above SLOT_SHIFT bits and its number below, so two members' thread
# 1 stay two threads in every walk (the per-thread cap, a thread ranking) without a second
# field read. GitHub's numbers are far below 2**40.
SLOT_SHIFT = 40
NUMBER_MASK = (1 << SLOT_SHIFT) - 1


def thread_key(slot: int, number: int) -> int:
    """The THREAD value of thread ``number`` of the member at ``slot`` (0: its own index)."""
    return (slot << SLOT_SHIFT) | number


def analyzer() -> tantivy.TextAnalyzer:
    """Lexemes are already normalised: split on whitespace, nothing else."""
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def thread_states(github_state: str, is_merged: bool) -> list[str]:
    """The state terms a thread answers to: a merged pull request is also closed (GitHub's
    own state, as it lists it), so `--state closed` keeps meaning what it meant."""
    return [github_state, "merged"] if is_merged else [github_state]


def tails(value: str, separator: str) -> list[str]:
    """The value and each part of it after a separator: ``a/b/c`` -> ``a/b/c``, ``b/c``,
    ``c`` (no empty tail)."""
    found = [value] if value else []
    found += [value[i + 1 :] for i, c in enumerate(value) if c == separator and value[i + 1 :]]
    return found


def signal_terms(kind: str, value: str) -> list[tuple[str, str]]:
    """(field, term) pairs one stored signal value is indexed under."""
    if kind == "file":
        return [(FILE, tail) for tail in tails(value, "/")] + [(FILE_PATH, value)]
    if kind == "symbol":
        return [(SYMBOL, tail) for tail in tails(value, ".")]
    return [(ERROR if kind == "error" else TEST, value)]


def document(
    row: dict, signals: dict[str, set[str]] | None = None, slot: int = 0
) -> tantivy.Document:
    """One live document; ``signals``: its thread's (field -> terms), from signal_terms;
    ``slot``: its member's in the shared index (0: a repository's own)."""
    doc = tantivy.Document()
    doc.add_text(TEXT, row["lexemes"] or "")
    doc.add_text(DOCUMENT, row["document_id"])
    doc.add_unsigned(THREAD, thread_key(slot, int(row["thread_number"])))
    if slot:
        doc.add_unsigned(MEMBER, slot)
    doc.add_integer(CREATED, int(row["created"]))
    doc.add_text(TIER, row["trust_tier"])
    if row["author"]:
        doc.add_text(AUTHOR, row["author"])
    for state in thread_states(row["github_state"], row["is_merged"]):
        doc.add_text(STATE, state)
    doc.add_text(KIND, row["kind"])
    _add_signals(doc, signals)
    return doc


def _add_signals(doc: tantivy.Document, signals: dict[str, set[str]] | None) -> None:
    for name, terms in (signals or {}).items():
        for term in terms:
            doc.add_text(name, term)


# Documents of these tiers are a thread's own words in its thread document: a bot's reports
# (the machine tier) would make every CI-commented thread hold every failing test's words.
THREAD_TIERS = ("authoritative", "reported")


def thread_document(
    thread: int,
    lexemes: list[str],
    states: list[str],
    signals: dict[str, set[str]] | None,
    slot: int = 0,
) -> tantivy.Document:
    """A whole thread as one document of the threads index: every one of its documents'
    weighted lexemes (THREAD_TIERS), its state terms and its signals, so BM25 ranks threads
    the way the textbook baseline does and a file or state is the same posting list."""
    doc = tantivy.Document()
    doc.add_text(TEXT, " ".join(lexemes))
    doc.add_unsigned(THREAD, thread_key(slot, thread))
    if slot:
        doc.add_unsigned(MEMBER, slot)
    for state in states:
        doc.add_text(STATE, state)
    _add_signals(doc, signals)
    return doc
