"""Every limit a request is checked against at both ends, written once. Stdlib only.

The client refuses a request that breaks one before sending it (exit 2, nothing sent); the
daemon refuses the same request with a 400 and the OpenAPI document states it. Both read
the number from here, so the two ends can never disagree about what is allowed.
"""

from __future__ import annotations

# --- search -----------------------------------------------------------------------------------
MAX_QUERY_CHARS = 2000  # the query, and each --file/--error/--test/--symbol value
# a query that is a pasted traceback (contract/patterns.is_pasted_traceback) may be this long:
# the daemon cuts it to MAX_QUERY_CHARS by serve/excerpts.cut (its lead, the error line and
# the deepest frames) and says so. Sent in the URL: 8,000 characters of a traceback encode to
# about 10 kB, inside the 16 KiB request head uvicorn's h11 reads.
MAX_PASTE_CHARS = 8000
MAX_SIGNAL_VALUES = 5  # values of one signal filter (--file, --error, --test, --symbol)
MAX_HITS = 10  # hits on one search page; --limit may ask for fewer
# repositories one search may name with --repo (--org, or none named, asks every one held)
MAX_SEARCH_REPOS = 20
TRUST_TIERS = ("authoritative", "reported", "machine")
STATES = ("open", "closed", "merged")
QUESTION_KINDS = ("failure", "rationale", "precedent")  # --kind

# --- precedent ------------------------------------------------------------------------------
MAX_PRECEDENT = 5  # pull requests on one precedent page (design.md); --limit may ask for fewer

# --- thread -----------------------------------------------------------------------------------
THREAD_PAGE = 10  # comments on one page; --limit may ask for fewer
MAX_FOCUS_CHARS = 500

# --- rules ------------------------------------------------------------------------------------
MAX_TASK_CHARS = 500  # --task: one sentence about the change
MIN_MAX_TOKENS = 100  # --max-tokens
MAX_RULES_FILES = 50  # FILE... of one rules request
MAX_INCLUDE = 25  # --include values of one rules request
# the signed session state a rules reply carries and the caller sends back (base64url);
# about 600 rule ids: past it the daemon forgets the oldest, and says so
MAX_SESSION_TOKEN_CHARS = 4096

# --- answers from the working clone --------------------------------------------------------
MAX_PATTERN_CHARS = 500  # grep's pattern
CLONE_ROWS = 50  # rows on one grep or copies page; --limit may ask for fewer
MAX_PATH_CHARS = 1000  # a path relative to the clone's root (why, symbol --path, grep --path)
MAX_LINE = 10_000_000  # why's line

# --- the code lens (map/defs/refs over a tree; symbol over the clone) ------------------------
# rows per page: a caller may ask for fewer (--limit) and page on (--offset), never for more
DEFS_CAP = 50
REFS_CAP = 50
MAP_CAP = 40
