"""Relevance labels: appended to a JSONL file for the evaluation set, never read back.

This is the one thing the service writes, and it is not evidence: nothing retrieves it,
which is the invariant (an agent's judgement must never become what the next agent reads).
It needs a configured path (``RELORE_LABELS_PATH``) and, when tokens are configured, a
token with the ``label`` scope. A label is ``application/json`` (a form a hostile page can
post without asking is 415), from no browser origin but the daemon's own (403), and at most
``MAX_BODY`` bytes, refused (413) from its ``Content-Length`` before it is read, or as soon
as a body without one streams past the limit. A body nested deeper than ``MAX_DEPTH`` is a
400 before it is parsed (8,000 levels once made the parser's recursion a 500).
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from relore.serve.errors import BadRequest, Forbidden, TooLarge, UnsupportedMediaType

MAX_BODY = 16_384
# a label is a flat object: deeper nesting is refused (400) before the parser recurses into it
MAX_DEPTH = 8
GRADES = (0, 1, 2)
_lock = threading.Lock()


def check(request) -> None:
    """Refuse a request a label may not come in (415, 403, 400, 413), before its body."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise UnsupportedMediaType("a label is posted as application/json")
    origin = request.headers.get("origin")
    # the page's own origin names the Host it was served from (the scheme is left out:
    # behind a TLS proxy the page is https and the daemon sees http)
    own = request.headers.get("host", "").lower()
    if origin is not None and urlsplit(origin.strip()).netloc.lower() != own:
        raise Forbidden("labels are not accepted from another origin")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.strip().isdigit():
            raise BadRequest("Content-Length must be a whole number")
        if int(length) > MAX_BODY:
            raise TooLarge(f"a label is at most {MAX_BODY} bytes")


async def read_body(request) -> bytes:
    """The body, read no further than ``MAX_BODY`` bytes."""
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY:
            raise TooLarge(f"a label is at most {MAX_BODY} bytes")
    return bytes(body)


def nesting(body: bytes, cap: int) -> int:
    """How deep ``body``'s arrays and objects nest, counted outside strings in one pass,
    stopping once past ``cap``: what a JSON parser would recurse into, without recursing."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > cap:
                    break
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def parse(body: bytes) -> dict:
    if len(body) > MAX_BODY:
        raise TooLarge(f"a label is at most {MAX_BODY} bytes")
    if nesting(body, MAX_DEPTH) > MAX_DEPTH:
        raise BadRequest(f"the body is nested deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BadRequest("the body must be a JSON object") from exc
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    query, target, grade = (
        data.get("query"),
        data.get("document_id") or data.get("url"),
        data.get("grade"),
    )
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("query (the search text that was judged) is required")
    if not isinstance(target, str) or not target:
        raise BadRequest("document_id or url (what was judged) is required")
    if grade not in GRADES:
        raise BadRequest("grade must be 0 (not relevant), 1 (partly) or 2 (answers it)")
    note = data.get("note")
    return {
        "query": query[:2000],
        "repo": str(data.get("repo") or "")[:200] or None,
        "target": target[:500],
        "grade": grade,
        "note": note[:2000] if isinstance(note, str) else None,
    }


def append(path: Path, label: dict, who: str) -> dict:
    record = {"at": datetime.now(UTC).isoformat(), "by": who, **label}
    line = json.dumps(record, ensure_ascii=False)
    with _lock, path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    return record
