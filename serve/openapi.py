"""The API's contract as OpenAPI 3.1, served at ``/api/v1/openapi.json``.

Written by hand, next to the routes it describes; a test fails when a route under
``/api/v1`` is missing from it.
"""

from __future__ import annotations

from relore.contract import limits, patterns
from relore.contract.version import __version__
from relore.serve import notices

_REPO = {
    "name": "repo",
    "in": "query",
    "schema": {"type": "string", "pattern": f"^{patterns.REPO}$"},
}
_NUMBER = {"name": "number", "in": "query", "required": True, "schema": {"type": "integer"}}


def _q(name: str, schema: dict, description: str = "", required: bool = False) -> dict:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


def _many(name: str, description: str) -> dict:
    return {
        **_q(name, {"type": "array", "items": {"type": "string"}}, description),
        "explode": True,
    }


_OBJECT = {"application/json": {"schema": {"type": "object"}}}
_PAGE = {
    "description": "a page; every string sanitised (no control, escape or bidi character, "
    "one line unless quoted), retrieved lines marked with '>', wrapped in the envelope",
    "content": _OBJECT,
}
# format=text: the client's own renderer run on the page, the very text `relore` prints
_FORMAT = _q("format", {"enum": ["json", "text"]}, "text: the text `relore` prints for it")
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


def document() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "relore", "version": __version__},
        "paths": {
            "/api/v1/search": {
                "get": {
                    "summary": "Ranked search: strict conjunction, then a disclosed widening; a "
                    "question is also asked in meaning (the semantic tier, when on)",
                    "parameters": [
                        _q(
                            "q",
                            {"type": "string", "maxLength": limits.MAX_PASTE_CHARS},
                            f"words or an error line (at most {limits.MAX_QUERY_CHARS} "
                            f"characters), or a pasted traceback (at most "
                            f"{limits.MAX_PASTE_CHARS}: cut to its lead, error line and "
                            "deepest frames, and said in a query_cut notice)",
                        ),
                        _REPO,
                        _q("limit", {"type": "integer", "minimum": 1, "maximum": limits.MAX_HITS}),
                        _q("trust", {"enum": list(limits.TRUST_TIERS)}),
                        _q("state", {"enum": list(limits.STATES)}),
                        _q("author", {"type": "string"}),
                        _q("kind", {"enum": list(limits.QUESTION_KINDS)}),
                        _q("since", {"type": "string", "format": "date"}),
                        _many("file", "threads that touched this path"),
                        _many("error", "threads carrying this error"),
                        _many("test", "threads naming this test id"),
                        _many("symbol", "threads naming this symbol"),
                        _FORMAT,
                    ],
                    "responses": {"200": _NOTICED_PAGE_OR_TEXT, **_ERRORS},
                }
            },
            "/api/v1/precedent": {
                "get": {
                    "summary": "The earlier pull requests that made the same kind of change: "
                    "merged first, each with why it matched, the files it changed and the "
                    "review comments that shaped it",
                    "parameters": [
                        _q(
                            "q",
                            {"type": "string", "maxLength": limits.MAX_QUERY_CHARS},
                            "the change, described in words (paths and `symbols` in it "
                            "count as evidence)",
                        ),
                        {**_REPO, "required": True},
                        _q(
                            "limit",
                            {"type": "integer", "minimum": 1, "maximum": limits.MAX_PRECEDENT},
                        ),
                        {
                            **_many("file", "a file the change touches: boosts, never filters"),
                            "schema": {
                                "type": "array",
                                "maxItems": limits.MAX_SIGNAL_VALUES,
                                "items": {"type": "string", "maxLength": limits.MAX_QUERY_CHARS},
                            },
                        },
                        _FORMAT,
                    ],
                    "responses": {"200": _NOTICED_PAGE_OR_TEXT, **_ERRORS},
                }
            },
            "/api/v1/thread": {
                "get": {
                    "summary": "One thread in capped views",
                    "parameters": [
                        {**_REPO, "required": True},
                        _NUMBER,
                        _q("mode", {"enum": ["page", "outline", "comment", "full", "files"]}),
                        _q("after", {"type": "string"}),
                        _q("focus", {"type": "string", "maxLength": limits.MAX_FOCUS_CHARS}),
                        _q("comment", {"type": "string"}),
                        _q(
                            "limit",
                            {"type": "integer", "minimum": 1, "maximum": limits.THREAD_PAGE},
                        ),
                        _FORMAT,
                    ],
                    "responses": {"200": _NOTICED_PAGE_OR_TEXT, **_ERRORS},
                }
            },
            "/api/v1/inflight": {
                "get": {
                    "summary": "Open and merged pull requests that claim to close an issue",
                    "parameters": [{**_REPO, "required": True}, _NUMBER, _FORMAT],
                    "responses": {"200": _NOTICED_PAGE_OR_TEXT, **_ERRORS},
                }
            },
            "/api/v1/status": {
                "get": {
                    "summary": "What the index holds, per repository; where the daemon reads "
                    "(replica: a primary, or a hot standby and how far behind it is)",
                    "parameters": [_REPO, _FORMAT],
                    "responses": {"200": _PAGE_OR_TEXT, **_ERRORS},
                }
            },
            "/api/v1/rules": {
                "get": {
                    "summary": "The project's rules a change needs, never repeated in a session",
                    "parameters": [
                        {**_REPO, "required": True},
                        {
                            **_many("file", "the files the change touches"),
                            "required": True,
                            "schema": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": 50,
                                "items": {"type": "string", "pattern": "\\S"},
                            },
                        },
                        _q("task", {"type": "string", "maxLength": limits.MAX_TASK_CHARS}),
                        {
                            **_many("include", "rule ids to send whatever their score"),
                            "schema": {
                                "type": "array",
                                "maxItems": 25,
                                "items": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$"},
                            },
                        },
                        _q("max_tokens", {"type": "integer", "minimum": limits.MIN_MAX_TOKENS}),
                        _q("refresh", {"type": "boolean"}),
                        _q("session", {"type": "string", "pattern": "^[A-Za-z0-9_.:@-]{1,128}$"}),
                        _q(
                            "session_token",
                            {"type": "string", "maxLength": limits.MAX_SESSION_TOKEN_CHARS},
                            "the session_token of the session's last reply, sent back; one "
                            "that does not verify starts the session afresh and says why",
                        ),
                    ],
                    "responses": {"200": _PAGE, **_ERRORS},
                }
            },
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
            **_clone_paths(),  # answered from the working clone
            "/api/v1/openapi.json": {
                "get": {
                    "summary": "This document",
                    "responses": {"200": {"description": "it", "content": _OBJECT}},
                }
            },
        },
    }


def _clone_paths() -> dict:
    """The routes answered from the working clone `relored clone` keeps."""
    repo = {**_REPO, "required": True}
    limit = _q("limit", {"type": "integer", "minimum": 1, "maximum": limits.CLONE_ROWS})
    errors = {
        **_ERRORS,
        "404": {**_ERRORS["404"], "description": "the clone holds no such file at HEAD"},
        "503": {
            **_ERRORS["503"],
            "description": "no working clone of the repository (the error names the "
            "`relored clone --repo o/n` command, also in `command`), or git/grammar missing",
        },
    }

    def get(summary: str, parameters: list[dict]) -> dict:
        return {
            "get": {
                "summary": summary,
                "parameters": parameters,
                "responses": {"200": _PAGE, **errors},
            }
        }

    return {
        "/api/v1/why": get(
            "Blame a line: the pull request that carried it, review comments near it, its "
            "revision chain and its origin chain",
            [
                repo,
                _q("path", {"type": "string", "maxLength": 1000}, "relative to the root", True),
                _q("line", {"type": "integer", "minimum": 1}, "1-based line at HEAD", True),
            ],
        ),
        "/api/v1/code/symbol": get(
            "Definitions of a name in the clone (the code lens over HEAD)",
            [
                repo,
                _q("name", {"type": "string"}, "an identifier", True),
                _q("path", {"type": "string"}),
                limit,
            ],
        ),
        "/api/v1/code/grep": get(
            "git grep over the clone, capped; every match counted",
            [
                repo,
                _q(
                    "pattern",
                    {"type": "string", "maxLength": limits.MAX_PATTERN_CHARS},
                    "extended regex",
                    True,
                ),
                _q("fixed", {"type": "boolean"}, "a fixed string, not a regex"),
                _q("ignore_case", {"type": "boolean"}),
                _q("path", {"type": "string"}, "only under this path"),
                limit,
            ],
        ),
        "/api/v1/code/copies": get(
            "`# Copied from X` markers whose target is the name, with the copy under each",
            [repo, _q("name", {"type": "string"}, "an identifier or dotted name", True), limit],
        ),
    }
