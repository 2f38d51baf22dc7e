"""The index's fields, and a marts row as an index document.

``text`` is whitespace-separated lexemes exactly as Postgres produced them for
``search_vector`` (source.py builds it in SQL), so the index never tokenises or stems on its
own: the query side asks Postgres for the caller's lexemes too. A lexeme is repeated once per
occurrence times its field's weight, which makes tantivy's BM25 a BM25F over the fields with
integer weights (one term frequency, one length, one saturation).
"""

from __future__ import annotations

import tantivy

# Weight per search_vector weight class: A the thread title (opening posts only), B the body,
# C a review comment's path, D its diff hunk.
FIELD_WEIGHTS = {"A": 2, "B": 1, "C": 2, "D": 1}
TOKENIZER = "lexemes"
# The generation of this layout: an index written by another is rebuilt, never read.
LAYOUT = 1

TEXT = "text"
DOCUMENT = "document_id"
THREAD = "thread"
CREATED = "created"
TIER = "tier"
AUTHOR = "author"
STATE = "state"


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(TEXT, tokenizer_name=TOKENIZER, index_option="freq")
    builder.add_text_field(DOCUMENT, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_unsigned_field(THREAD, indexed=True, fast=True)
    builder.add_integer_field(CREATED, indexed=True, fast=True)
    builder.add_text_field(TIER, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(AUTHOR, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(STATE, tokenizer_name="raw", index_option="basic")
    return builder.build()


SCHEMA = build_schema()


def analyzer() -> tantivy.TextAnalyzer:
    """Lexemes are already normalised: split on whitespace, nothing else."""
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def thread_states(state: str, is_merged: bool) -> list[str]:
    """The state terms a thread answers to: a merged pull request is also closed (as GitHub
    lists it), so `--state closed` keeps meaning what it meant."""
    return [state, "merged"] if is_merged else [state]


def document(row: dict) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_text(TEXT, row["lexemes"] or "")
    doc.add_text(DOCUMENT, row["document_id"])
    doc.add_unsigned(THREAD, int(row["thread_number"]))
    doc.add_integer(CREATED, int(row["created"]))
    doc.add_text(TIER, row["trust_tier"])
    if row["author"]:
        doc.add_text(AUTHOR, row["author"])
    for state in thread_states(row["state"], row["is_merged"]):
        doc.add_text(STATE, state)
    return doc
