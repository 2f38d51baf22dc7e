"""``precedent``: the earlier pull requests that made the same kind of change as the one a
caller describes, merged ones first, each with the files it changed and the review comments
that shaped it.

- ``request.py``: what a caller names (the description, ``--file``, the repository, the limit).
- ``rank.py``: the legs (words by BM25 in the search index, files and symbols through the
  threads' signals, meaning through the semantic tier) and their fusion into one order.
- ``read.py``: the SQL that resolves the description and reads the chosen pull requests back.
- ``page.py``: the page, and what it says about itself.
"""

from relore.serve.precedent.page import precedent
from relore.serve.precedent.request import PrecedentRequest, parse_request

__all__ = ["PrecedentRequest", "parse_request", "precedent"]
