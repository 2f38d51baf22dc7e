"""Session state for rule serving, carried by the caller; and the served-events log.

A session is what one agent has been given: rule ids sent, titles listed, notes shown. No
daemon keeps it: every reply to a request naming a session carries ``session_token``, the
session's state signed with a key every daemon shares, and the caller sends it back. Any
worker of any replica then answers the next request as the one that answered the last, and
nothing is written anywhere to remember a session (the database may be a read-only standby).

The token, base64url without padding, at most ``MAX_SESSION_TOKEN_CHARS`` characters::

    version (1) | expires, unix seconds (4) | notes: count (1), each length (1) + ascii
    | sent count (2) | listed count (2) | sent ids | listed ids | HMAC-SHA256, first 16 bytes

A rule id is the first ``ID_BYTES`` (5) bytes of sha256 of its lowercased id: random bytes,
so zlib would only add to them; the ids stay in the order they were first sent. ``listed``
holds only titles listed and not sent (a sent rule is never listed again anyway). The MAC
covers the repository and the session id too, so a token answers for its own (session,
repository) only. A token that is unreadable, signed by another key, for another repository
or session, or past its expiry (``ttl`` after its last use) starts the session afresh, and
the reply says why. When the state would outgrow the cap the token forgets the titles listed
longest ago, then the rules sent longest ago (those may be sent again), and says so.

The key: ``RELORE_SESSION_KEY`` (32+ characters; in Kubernetes from a Secret) when set, else
``$RELORE_HOME/session-key``, created 0600 on first use by a daemon and shared by every
daemon with that home. Replicas must share the key; a new key starts every session afresh.

Every reply that sends something appends one line to the served-events log
(``RELORE_RULES_LOG``, default ``$RELORE_HOME/rules-served.jsonl``), which `relored rules
usage` reads. Each line is one ``write`` to a file opened ``O_APPEND``, so workers and
daemons sharing a local file interleave whole lines. Nothing serves that file back: it is
evidence of use, never of content.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import math
import os
import secrets
import struct
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from relore.contract import patterns, places
from relore.contract.limits import MAX_SESSION_TOKEN_CHARS
from relore.contract.rules.choose import Served, SessionView

DEFAULT_TTL_SECONDS = 2 * 60 * 60
KEY_ENV = "RELORE_SESSION_KEY"
KEY_FILE = "session-key"
MIN_KEY_CHARS = 32
VERSION = 1
ID_BYTES = 5
TAG_BYTES = 16
_HEAD = struct.Struct(">BIB")  # version, expires, note count
_COUNTS = struct.Struct(">HH")  # sent, listed
_DOMAIN = b"relore rules session\0"
_AFRESH = "this reply starts the session afresh, so rules sent before may be sent again"
REJECTED = {  # why a token was not taken, as the reply says it
    "unreadable": f"the session token could not be read; {_AFRESH}",
    "foreign": "the session token was not signed by this service for this repository and "
    f"session (another key, repository or session); {_AFRESH}",
    "expired": f"the session token expired (unused for longer than its lifetime); {_AFRESH}",
}


class SessionKeyError(ValueError):
    """No usable key: said before serving, not on the first request."""


def load_key(env: Mapping[str, str] | None = None) -> bytes:
    """The key every daemon signs with: ``RELORE_SESSION_KEY``, else the home's key file
    (created on first use, 0600; a second process racing to create it reads the winner's)."""
    env = os.environ if env is None else env
    explicit = env.get(KEY_ENV)
    if explicit is not None:
        value = explicit.strip()
        if len(value) < MIN_KEY_CHARS:
            raise SessionKeyError(
                f"{KEY_ENV} must be at least {MIN_KEY_CHARS} characters "
                "(e.g. `openssl rand -hex 32`)"
            )
        return value.encode("utf-8")
    path = places.relore_home(env) / KEY_FILE
    try:
        if not path.exists():
            _create_key(path)
        if path.stat().st_mode & 0o077:
            raise SessionKeyError(f"{path} is readable by others: chmod 600 it")
        value = path.read_text(encoding="ascii").strip()
    except OSError as exc:
        raise SessionKeyError(
            f"cannot read or create the session key {path} ({exc.strerror or exc}); "
            f"set {KEY_ENV} or make $RELORE_HOME writable"
        ) from None
    if len(value) < MIN_KEY_CHARS:
        raise SessionKeyError(f"{path} holds fewer than {MIN_KEY_CHARS} characters")
    return value.encode("ascii")


def _create_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        # whole or absent: never a half-written key; when another daemon made it first,
        # every daemon reads that one
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def rule_key(rule_id: str) -> bytes:
    return hashlib.sha256(rule_id.lower().encode("utf-8")).digest()[:ID_BYTES]


@dataclass(frozen=True)
class State:
    """A session as the token carries it: rule ids hashed, oldest first."""

    sent: tuple[bytes, ...] = ()
    listed: tuple[bytes, ...] = ()
    notes: tuple[str, ...] = ()

    def view(self, rule_ids: Iterable[str]) -> SessionView:
        """The state as ``choose`` reads it, over the rules this request loaded."""
        sent, listed = set(self.sent), set(self.listed)
        view = SessionView(notes=set(self.notes))
        for rule_id in rule_ids:
            key = rule_key(rule_id)
            if key in sent:
                view.sent.add(rule_id)
            elif key in listed:
                view.listed.add(rule_id)
        return view

    def after(self, served: Served) -> State:
        """The state once ``served`` went out (``refresh`` starts over with it)."""
        base = State() if served.refresh else self
        sent = list(base.sent)
        have = set(sent)
        for key in map(rule_key, served.sent):
            if key not in have:
                sent.append(key)
                have.add(key)
        listed = [k for k in base.listed if k not in have]
        for key in map(rule_key, served.listed):
            if key not in have:
                listed.append(key)
                have.add(key)
        notes = list(base.notes) + [n for n in served.notes if n not in base.notes]
        return State(tuple(sent), tuple(listed), tuple(notes))


def _mac(key: bytes, repo: str, session: str, payload: bytes) -> bytes:
    message = b"\0".join((_DOMAIN, repo.encode(), session.encode(), payload))
    return hmac.new(key, message, hashlib.sha256).digest()[:TAG_BYTES]


def encode(key: bytes, repo: str, session: str, state: State, expires: int) -> str:
    notes = [n.encode("ascii")[:255] for n in state.notes][:255]
    payload = b"".join(
        (
            _HEAD.pack(VERSION, expires, len(notes)),
            *(bytes([len(n)]) + n for n in notes),
            _COUNTS.pack(len(state.sent), len(state.listed)),
            *state.sent,
            *state.listed,
        )
    )
    token = payload + _mac(key, repo, session, payload)
    return base64.urlsafe_b64encode(token).rstrip(b"=").decode("ascii")


def decode(key: bytes, repo: str, session: str, token: str, now: float) -> State | str:
    """The token's state, or why it was not taken (a key of ``REJECTED``)."""
    if not patterns.SESSION_TOKEN_RE.fullmatch(token) or len(token) % 4 == 1:
        return "unreadable"
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return "unreadable"
    payload, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
    if len(raw) < _HEAD.size + _COUNTS.size + TAG_BYTES:
        return "unreadable"
    if not hmac.compare_digest(tag, _mac(key, repo, session, payload)):
        return "foreign"
    version, expires, note_count = _HEAD.unpack_from(payload)
    if version != VERSION:
        return "unreadable"
    if expires < now:
        return "expired"
    try:
        at, notes = _HEAD.size, []
        for _ in range(note_count):
            size = payload[at]
            notes.append(payload[at + 1 : at + 1 + size].decode("ascii"))
            at += 1 + size
        sent_count, listed_count = _COUNTS.unpack_from(payload, at)
        at += _COUNTS.size
        ids = [payload[i : i + ID_BYTES] for i in range(at, len(payload), ID_BYTES)]
    except (IndexError, struct.error, UnicodeDecodeError):
        return "unreadable"
    if len(ids) != sent_count + listed_count or any(len(i) != ID_BYTES for i in ids):
        return "unreadable"
    return State(tuple(ids[:sent_count]), tuple(ids[sent_count:]), tuple(notes))


def issue(
    key: bytes,
    repo: str,
    session: str,
    state: State,
    now: float,
    ttl: float = DEFAULT_TTL_SECONDS,
    cap: int = MAX_SESSION_TOKEN_CHARS,
) -> tuple[str, int]:
    """The token for ``state``, within ``cap`` characters, and how many rules sent it forgot
    (titles listed longest ago go first, then rules sent longest ago)."""
    expires = int(now + ttl)
    sent, listed = list(state.sent), list(state.listed)
    token = encode(key, repo, session, state, expires)
    # an id is ID_BYTES * 4/3 characters: drop about the excess at once, then one at a time
    excess = math.ceil((len(token) - cap) * 3 / (4 * ID_BYTES))
    while len(token) > cap and (sent or listed):
        listed_dropped = min(excess, len(listed))
        del listed[:listed_dropped]
        del sent[: excess - listed_dropped]
        token = encode(key, repo, session, State(tuple(sent), tuple(listed), state.notes), expires)
        excess = 1
    return token, len(state.sent) - len(sent)


def full_note(forgot: int) -> str:
    return (
        f"the session token is full (at most {MAX_SESSION_TOKEN_CHARS} characters): it forgot "
        f"the {forgot} rule(s) sent longest ago, which may be sent again"
    )


def log_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    explicit = env.get("RELORE_RULES_LOG")
    if explicit:
        return Path(explicit)
    return places.relore_home(env) / "rules-served.jsonl"


def session_digest(session: str | None) -> str | None:
    """Sessions are logged as a digest: the log counts sessions, it does not name them."""
    if not session:
        return None
    return hashlib.sha256(session.encode("utf-8")).hexdigest()[:12]


_log_lock = threading.Lock()


def append_event(path: Path, repo: str, session: str | None, reply: dict) -> None:
    """One line per reply that sent at least one rule, written whole in one ``write``."""
    if not reply["rules"]:
        return
    event = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "repo": repo,
        "session": session_digest(session),
        "sent": [r["id"] for r in reply["rules"]],
        "eligible": reply["eligible"],
        "tokens": reply["tokens"],
        "mode": reply["mode"],
        "refresh": reply["refresh"],
    }
    line = (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")
    with _log_lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a torn last line after a crash; the rest still counts
    return events
