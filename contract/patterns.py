"""The shapes both ends check: one pattern per thing a caller names. Stdlib only.

Each is matched whole (``fullmatch``): ``$`` alone would let a trailing newline through.
"""

from __future__ import annotations

import re

REPO = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
REPO_RE = re.compile(REPO)
THREAD_REF_RE = re.compile(rf"(?:({REPO})#)?#?([0-9]+)")
SESSION_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
RULE_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SESSION_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]+")  # base64url; length: limits
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")  # `symbol`'s name
DOTTED_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,15}")  # `copies`
MAX_NAME_CHARS = 300


def is_repo(value: str | None) -> bool:
    """``owner/name`` as GitHub spells one, and never ``.``/``..`` on either side (a path
    built from it would leave its directory)."""
    if not value or not REPO_RE.fullmatch(value):
        return False
    owner, name = value.split("/")
    return owner.strip(".") != "" and name.strip(".") != ""


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
