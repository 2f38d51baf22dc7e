"""What the daemon takes as a word of a caller's text: the one term pattern and cap that
search (the query, a traceback's prose) and thread (``--focus``) both read."""

from __future__ import annotations

import re

# a word starts with a letter or digit and may carry the dots, dashes and slashes of a path,
# a dotted name or a version
TERM_RE = re.compile(r"[^\W_][\w.\-/]*")
MAX_TERMS = 32  # the words of one request that count; the rest are ignored
