"""Reading the shared index (``generations.py``): a view of some of its members, searched as
if it were their own index.

A view holds every search to its members (an unscored clause on ``schema.MEMBER``, left out
when it holds every member) and answers the calls the walks make (``search``, ``doc``,
``fast_field_values``, ``doc_freq``, ``num_docs``). A view of one member gives each thread back
as its number, so a search in one repository reads a member as it reads an index of its own;
a view of several gives each thread's key (``schema.thread_key``), which ``Prepared.key``
turns into (repository, number). Statistics (``doc_freq``, ``num_docs``) are the shared
index's: BM25 scores in it with one idf over its members, as a search across them wants.
"""

from __future__ import annotations

from tantivy import Occur, Query

from relore.serve.lexical import schema


class View:
    """The shared index's searcher (its documents' or its threads'), held to ``slots``."""

    def __init__(self, searcher, slots: tuple[int, ...], every: bool):
        self.searcher = searcher
        self.slots = slots
        # every member of the shared index: no clause, and its statistics are the view's
        self.every = every
        # one member: threads come back as numbers
        self.decodes = len(slots) == 1
        clause = None
        if not every:
            members = [Query.term_query(schema.SCHEMA, schema.MEMBER, s) for s in slots]
            either = (
                members[0]
                if len(members) == 1
                else Query.boolean_query([(Occur.Should, q) for q in members])
            )
            clause = Query.const_score_query(either, 0.0)
        self._clause = clause

    def held(self, query: Query) -> Query:
        if self._clause is None:
            return query
        return Query.boolean_query([(Occur.Must, query), (Occur.Must, self._clause)])

    def search(self, query: Query, *args, **kwargs):
        return self.searcher.search(self.held(query), *args, **kwargs)

    def fast_field_values(self, field: str, addresses: list):
        values = self.searcher.fast_field_values(field, addresses)
        if field == schema.THREAD and self.decodes:
            return [v & schema.NUMBER_MASK for v in values]
        return values

    def thread_value(self, number: int) -> int:
        """The THREAD value of this view's thread ``number`` (one member's view)."""
        return schema.thread_key(self.slots[0], number)

    def doc(self, address):
        return self.searcher.doc(address)

    def doc_freq(self, field: str, term) -> int:
        return self.searcher.doc_freq(field, term)

    @property
    def num_docs(self) -> int:
        return self.searcher.num_docs

    def count_held(self) -> int:
        """The documents of this view's members."""
        return self.searcher.search(self.held(Query.all_query()), limit=1, count=True).count


def thread_value(searcher, number: int) -> int:
    """What a searcher's THREAD field holds for thread ``number``."""
    return searcher.thread_value(number) if isinstance(searcher, View) else number


def partial(searcher) -> bool:
    """Whether ``searcher`` is a view of some of the shared index's members only (its
    statistics, the scorer's, are not its members')."""
    return isinstance(searcher, View) and not searcher.every


def held_docs(searcher) -> int:
    """The documents ``searcher`` holds (a view: its members', as their postings count)."""
    if not partial(searcher):
        return searcher.num_docs
    return sum(searcher.searcher.doc_freq(schema.MEMBER, s) for s in searcher.slots)


def held_doc_freq(searcher, field: str, term) -> int:
    """How many of the documents ``searcher`` holds carry ``term``: a view of some members
    counts theirs (one search), where the scorer's ``doc_freq`` is every member's."""
    if not partial(searcher):
        return searcher.doc_freq(field, term)
    if searcher.searcher.doc_freq(field, term) == 0:
        return 0
    found = searcher.search(Query.term_query(schema.SCHEMA, field, term), limit=1, count=True)
    return found.count
