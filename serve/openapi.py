"""The API's contract as OpenAPI 3.1, served at ``/api/v1/openapi.json``.

Each verb's route, summary and parameters are made from its declaration (``contract/verbs``);
the responses, and the routes that are no verb (``/label``, this document), are written
here. A test fails when a route under ``/api/v1`` is missing from it.
"""

from __future__ import annotations

from relore.contract import verbs, wire
from relore.contract.version import __version__
from relore.serve import notices

_OBJECT = {"application/json": {"schema": {"type": "object"}}}
_PAGE = {
    "description": "a page; every string sanitised (no control, escape or bidi character, "
    "one line unless quoted), retrieved lines marked with '>', wrapped in the envelope",
    "content": _OBJECT,
}
_PAGE_OR_TEXT = {
    **_PAGE,
    "content": {**_OBJECT, "text/plain": {"schema": {"type": "string"}}},
}
# what a search, thread or inflight page must say besides its counts (serve/notices.py)
_NOTICES = {
    "type": "array",
    "description": "in reading order; each sentence is shown verbatim at its place by "
    "every renderer (`relore`, format=text, the page at /): title/count = in parentheses "
    "after the thread's line / the count's line, before/after = a line before/after the "
    "items. The fields the sentence was made from stay on the page.",
    "items": {
        "type": "object",
        "required": ["kind", "place", "text"],
        "properties": {
            "kind": {
                "enum": list(notices.KINDS),
                "description": "; ".join(f"{k}: {v}" for k, v in notices.KINDS.items()),
            },
            "place": {"enum": list(notices.PLACES)},
            "text": {"type": "string", "description": "the sentence, one line"},
        },
    },
}
_NOTICED_PAGE_OR_TEXT = {
    **_PAGE_OR_TEXT,
    "content": {
        **_PAGE_OR_TEXT["content"],
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["notices"],
                "properties": {"notices": _NOTICES},
            }
        },
    },
}


def _said(description: str) -> dict:
    return {
        "description": description,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {"error": {"type": "string"}},
                }
            }
        },
    }


# a 503 the caller should retry says when: every connection busy (1 s), the daemon still
# opening its connections or the database starting (2 s), the database unreachable (5 s, and
# the error says `relored db start` / RELORE_DATABASE_URL)
_RETRY_AFTER = {
    "retry-after": {
        "description": "seconds to wait before retrying",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    }
}
_ERRORS = {
    "400": _said(
        "a request we will not run, and why (also: with no tokens, a Host that is not "
        "loopback or in RELORE_ALLOWED_HOSTS)"
    ),
    "401": _said("a token is required"),
    "403": _said("the token lacks the scope this route needs (a label-only token reads nothing)"),
    "404": _said("not indexed here"),
    "426": _said("client and daemon versions differ"),
    "503": {
        **_said(
            "the index is not built, every database connection is busy, the daemon is still "
            "opening its connections, the database is starting up, a query ran past its "
            "statement timeout, or the database is unreachable"
        ),
        "headers": _RETRY_AFTER,
    },
}


def _parameter(param: verbs.Param) -> dict:
    """A declared parameter as an OpenAPI query parameter (a list: ``file=a&file=b``)."""
    documented = {
        "name": param.name,
        "in": "query",
        "required": param.required_on("http"),
        "schema": verbs.json_schema(param),
        "description": verbs.said(param.http_help or param.help),
    }
    if param.repeat:
        documented["explode"] = True
    return documented


# the pages that carry notices (serve/notices.py); `format=text` is the renderer's text
_NOTICED = {"search", "precedent", "thread", "inflight"}
_CLONE_ERRORS = {
    **_ERRORS,
    "404": {**_ERRORS["404"], "description": "the clone holds no such file at HEAD"},
    "503": {
        **_ERRORS["503"],
        "description": "no working clone of the repository (the error names the "
        "`relored clone --repo o/n` command, also in `command`), or git/grammar missing",
    },
}


def _operation(verb: verbs.Verb) -> dict:
    """A verb's route: its summary and parameters from its declaration (``contract/verbs``)."""
    params = verb.on("http")
    if verb.name in _NOTICED:
        page = _NOTICED_PAGE_OR_TEXT
    elif any(p.name == "format" for p in params):
        page = _PAGE_OR_TEXT
    else:
        page = _PAGE
    errors = _CLONE_ERRORS if verb.source == "clone" else _ERRORS
    return {
        "get": {
            "summary": verb.summary,
            "parameters": [_parameter(p) for p in params],
            "responses": {"200": page, **errors},
        }
    }


def document() -> dict:
    routed = {
        f"{wire.API_PREFIX}/{verb.route}": _operation(verb)
        for verb in verbs.VERBS.values()
        if verb.route
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "relore", "version": __version__},
        "paths": {
            **routed,
            "/api/v1/label": {
                "post": {
                    "summary": "Append a relevance judgement to the labels file (never read back)",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["query", "grade"],
                                    # what was judged: a document id or a URL
                                    "anyOf": [
                                        {"required": ["document_id"]},
                                        {"required": ["url"]},
                                    ],
                                    "properties": {
                                        "query": {"type": "string", "pattern": "\\S"},
                                        "repo": {"type": "string"},
                                        "document_id": {"type": "string", "minLength": 1},
                                        "url": {"type": "string", "minLength": 1},
                                        "grade": {"enum": [0, 1, 2]},
                                        "note": {"type": "string"},
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "201": {"description": "recorded", "content": _OBJECT},
                        "413": _said("a body over 16 kB (refused before it is read)"),
                        "415": _said("not application/json"),
                        **_ERRORS,
                        "403": _said("needs the label scope, or came from another origin"),
                    },
                }
            },
            "/api/v1/openapi.json": {
                "get": {
                    "summary": "This document",
                    "responses": {"200": {"description": "it", "content": _OBJECT}},
                }
            },
        },
    }
