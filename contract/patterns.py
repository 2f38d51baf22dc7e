"""The shapes both ends check: one pattern per thing a caller names. Stdlib only.

Each is matched whole (``fullmatch``): ``$`` alone would let a trailing newline through.
"""

from __future__ import annotations

import re

OWNER = r"[A-Za-z0-9_.-]+"
REPO = rf"{OWNER}/{OWNER}"
REPO_RE = re.compile(REPO)
THREAD_REF_RE = re.compile(rf"(?:({REPO})#)?#?([0-9]+)")
SESSION_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
RULE_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SESSION_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]+")  # base64url; length: limits
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")  # `symbol`'s name
DOTTED_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,15}")  # `copies`
MAX_NAME_CHARS = 300
MAX_REF_CHARS = 500  # a thread ref, a pasted URL included
MAX_THREAD_NUMBER = 2**31 - 1  # GitHub's numbers are Postgres integers here

# A pasted GitHub URL: any host (github.com, a GitHub Enterprise server) whose path has the
# shape of an issue or pull request, on the web (`/o/n/issues/N`, `/o/n/pull/N`, a pull's tab
# `/files`, `/commits`, `/checks`) or the API (`/repos/o/n/issues/N`, `/pulls/N`, behind
# Enterprise's `/api/v3`). The fragment may name one comment of the thread.
_URL_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?P<rest>.*)", re.DOTALL)
_LABEL = r"[A-Za-z0-9][A-Za-z0-9-]{0,62}"
_HOST_RE = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?(?::[0-9]{{1,5}})?")
_WEB_PATH_RE = re.compile(
    rf"/(?P<repo>{REPO})/(?:issues|pull)/(?P<number>[0-9]{{1,10}})"
    r"(?:/(?:files|commits|checks|changes))?/?"
)
_API_PATH_RE = re.compile(
    rf"(?:/api/v3)?/repos/(?P<repo>{REPO})/(?:issues|pulls)/(?P<number>[0-9]{{1,10}})/?"
)
_QUERY_RE = re.compile(r"[A-Za-z0-9_.~%=&+-]{0,200}")
_FRAGMENT_RE = re.compile(r"[A-Za-z0-9_.-]{0,200}")
# fragment -> the thread view's comment id (`document_kind:source_id`)
_COMMENT_ANCHORS = (
    (re.compile(r"issuecomment-([0-9]{1,20})"), "issue_comment"),
    (re.compile(r"discussion_r([0-9]{1,20})"), "review_comment"),
    (re.compile(r"pullrequestreview-([0-9]{1,20})"), "review"),
)
# A pasted traceback, as both ends tell one (a query may be longer when it is one:
# contract/limits.MAX_PASTE_CHARS) and serve/excerpts cuts one: Python's header and rich's
# boxed one (`───── Traceback (most recent call last) ─────╮`), a frame's own line: Python's
# `File "…", line N` and rich's `│ path.py:N in name │` (`│ in <cell line: 23>:23 │`).
TRACEBACK_HEADER = re.compile(r"^[\s─━╭┏]*Traceback \(most recent call last\)")
TRACEBACK_FRAME = re.compile(r'^\s*File "|^\s*[│┃]\s+(\S+:\d+ in \S|in <[^>]*>:\d+)')
REF_FORMS = (
    "owner/name#N, N (with --repo), or a GitHub issue or pull request URL: "
    "https://HOST/owner/name/issues/N or /pull/N (/files too), any GitHub or GitHub "
    "Enterprise host; #issuecomment-N, #discussion_rN or #pullrequestreview-N opens that "
    "comment"
)


def is_repo(value: str | None) -> bool:
    """``owner/name`` as GitHub spells one, and never ``.``/``..`` on either side (a path
    built from it would leave its directory)."""
    if not value or not REPO_RE.fullmatch(value):
        return False
    owner, name = value.split("/")
    return owner.strip(".") != "" and name.strip(".") != ""


def is_owner(value: str | None) -> bool:
    """A repository's owner as ``owner/name`` spells it (never ``.`` or ``..``)."""
    return bool(value) and re.fullmatch(OWNER, value) is not None and value.strip(".") != ""


def check_repo(value: str | None) -> tuple[str, str]:
    """``(owner, name)``, or ValueError with the words every surface shows."""
    if not is_repo(value):
        raise ValueError(f"expected owner/name, got {value!r}")
    owner, name = value.split("/")
    return owner, name


def is_session(value: str | None) -> bool:
    return bool(value) and SESSION_RE.fullmatch(value) is not None


def is_session_token(value: str | None) -> bool:
    """What a client may send back as ``session_token``: base64url, within the cap."""
    from relore.contract.limits import MAX_SESSION_TOKEN_CHARS

    return (
        bool(value)
        and len(value) <= MAX_SESSION_TOKEN_CHARS
        and SESSION_TOKEN_RE.fullmatch(value) is not None
    )


def _refused(value: str, why: str = "") -> ValueError:
    shown = repr(value) if len(value) <= 80 else f"{value[:60]!r}… ({len(value)} characters)"
    return ValueError(f"expected {REF_FORMS}; got {shown}{why}")


def parse_thread_ref(value: str) -> tuple[str | None, int, str | None]:
    """``(repo, number, comment)`` of ``owner/name#N``, ``#N``, ``N`` or a pasted GitHub URL
    (:data:`REF_FORMS`): the repository (None for a bare number), the thread's number, and the
    thread view's id of the comment a URL's fragment names (``issue_comment:N``), else None.
    Or ValueError with one line every surface shows. A URL is parsed, never fetched: its host
    is not checked against anything (an Enterprise server's is as good as github.com's), but
    a scheme other than http(s), credentials, a ``.``/``..`` segment, a control character or
    a path of another shape is refused."""
    if not isinstance(value, str):
        raise ValueError(f"expected {REF_FORMS}")
    text = value.strip()
    if len(text) > MAX_REF_CHARS:
        raise ValueError(f"the thread ref is {len(text)} characters; at most {MAX_REF_CHARS}")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("the thread ref contains a control character")
    short = THREAD_REF_RE.fullmatch(text)
    if short:
        return short.group(1), _number(text, short.group(2)), None
    url = _URL_RE.fullmatch(text)
    if not url:
        raise _refused(text)
    scheme = url.group("scheme").lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"a thread ref URL is http(s); refused a {scheme}: URL")
    if not url.group("rest").startswith("//"):
        raise _refused(text)
    rest, _, fragment = url.group("rest")[2:].partition("#")
    rest, _, query = rest.partition("?")
    host, slash, path = rest.partition("/")
    if "@" in host:  # never echoed: it may hold a password
        raise ValueError("a thread ref URL with credentials in it is refused (user@host)")
    if not _HOST_RE.fullmatch(host) or not slash:
        raise _refused(text, ": not a host name and path")
    segments = path.split("/")
    if any(s in (".", "..") or "%" in s or "\\" in s for s in segments):
        raise ValueError("a thread ref URL's path may not hold `.`, `..`, `%` or `\\`")
    if not _QUERY_RE.fullmatch(query) or not _FRAGMENT_RE.fullmatch(fragment):
        raise _refused(text, ": an unexpected query or fragment")
    found = _WEB_PATH_RE.fullmatch("/" + path) or _API_PATH_RE.fullmatch("/" + path)
    if not found or not is_repo(found.group("repo")):
        raise _refused(text, ": not an issue or pull request path")
    comment = None
    for anchor, kind in _COMMENT_ANCHORS:
        named = anchor.fullmatch(fragment)
        if named:
            comment = f"{kind}:{int(named.group(1))}"
    return found.group("repo"), _number(text, found.group("number")), comment


def _number(text: str, digits: str) -> int:
    number = int(digits)
    if not 1 <= number <= MAX_THREAD_NUMBER:
        raise _refused(text, f": no thread is numbered {number}")
    return number


def is_pasted_traceback(text: str) -> bool:
    """More than one line, one of them a traceback's header or a frame's own line."""
    lines = text.splitlines()
    return len(lines) > 1 and any(
        TRACEBACK_HEADER.match(line) or TRACEBACK_FRAME.match(line) for line in lines
    )
