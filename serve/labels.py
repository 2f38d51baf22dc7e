"""Relevance labels: appended to a JSONL file for the evaluation set, never read back.

This is the one thing the service writes, and it is not evidence: nothing retrieves it,
which is the invariant (an agent's judgement must never become what the next agent reads).
It needs a configured path (``RELORE_LABELS_PATH``) and, when tokens are configured, a
token with the ``label`` scope. A label is ``application/json`` (a form a hostile page can
post without asking is 415), from no browser origin but the daemon's own (403), and at most
``MAX_BODY`` bytes, refused (413) from its ``Content-Length`` before it is read, or as soon
as a body without one streams past the limit.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from relore.serve.errors import BadRequest, Forbidden, TooLarge, UnsupportedMediaType

MAX_BODY = 16_384
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


def parse(body: bytes) -> dict:
    if len(body) > MAX_BODY:
        raise TooLarge(f"a label is at most {MAX_BODY} bytes")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
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
