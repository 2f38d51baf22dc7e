"""The API's contract as OpenAPI 3.1, served at ``/api/v1/openapi.json``.

Written by hand, next to the routes it describes; a test fails when a route under
``/api/v1`` is missing from it.
"""

from __future__ import annotations

from relore.client.version import __version__

_REPO = {"name": "repo", "in": "query", "schema": {"type": "string", "pattern": "^[^/]+/[^/]+$"}}
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


_PAGE = {"description": "a page; retrieved text is marked with '>' and wrapped in the envelope"}
_ERRORS = {
    "400": {"description": "a request we will not run, and why"},
    "401": {"description": "a token is required"},
    "404": {"description": "not indexed here"},
    "426": {"description": "client and daemon versions differ"},
    "503": {"description": "the index is not built, or the database is unreachable"},
}


def document() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "relore", "version": __version__},
        "paths": {
            "/api/v1/search": {
                "get": {
                    "summary": "Ranked search: strict conjunction, then a disclosed widening",
                    "parameters": [
                        _q("q", {"type": "string", "maxLength": 2000}, "words or a traceback"),
                        _REPO,
                        _q("limit", {"type": "integer", "minimum": 1, "maximum": 10}),
                        _q("trust", {"enum": ["authoritative", "reported", "machine"]}),
                        _q("state", {"enum": ["open", "closed", "merged"]}),
                        _q("author", {"type": "string"}),
                        _q("kind", {"enum": ["failure", "rationale", "precedent"]}),
                        _q("since", {"type": "string", "format": "date"}),
                        _many("file", "threads that touched this path"),
                        _many("error", "threads carrying this error"),
                        _many("test", "threads naming this test id"),
                        _many("symbol", "threads naming this symbol"),
                    ],
                    "responses": {"200": _PAGE, **_ERRORS},
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
                        _q("focus", {"type": "string", "maxLength": 500}),
                        _q("comment", {"type": "string"}),
                        _q("limit", {"type": "integer", "minimum": 1, "maximum": 10}),
                    ],
                    "responses": {"200": _PAGE, **_ERRORS},
                }
            },
            "/api/v1/inflight": {
                "get": {
                    "summary": "Open and merged pull requests that claim to close an issue",
                    "parameters": [{**_REPO, "required": True}, _NUMBER],
                    "responses": {"200": _PAGE, **_ERRORS},
                }
            },
            "/api/v1/status": {
                "get": {
                    "summary": "What the index holds, per repository",
                    "parameters": [_REPO],
                    "responses": {"200": _PAGE, **_ERRORS},
                }
            },
            "/api/v1/rules": {
                "get": {
                    "summary": "The project's rules a change needs, never repeated in a session",
                    "parameters": [
                        {**_REPO, "required": True},
                        _many("file", "the files the change touches"),
                        _q("task", {"type": "string", "maxLength": 500}),
                        _many("include", "rule ids to send whatever their score"),
                        _q("max_tokens", {"type": "integer", "minimum": 100}),
                        _q("refresh", {"type": "boolean"}),
                        _q("session", {"type": "string"}),
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
                                    "properties": {
                                        "query": {"type": "string"},
                                        "repo": {"type": "string"},
                                        "document_id": {"type": "string"},
                                        "url": {"type": "string"},
                                        "grade": {"enum": [0, 1, 2]},
                                        "note": {"type": "string"},
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "201": {"description": "recorded"},
                        "403": {"description": "needs the label scope"},
                        **_ERRORS,
                    },
                }
            },
            "/api/v1/openapi.json": {
                "get": {"summary": "This document", "responses": {"200": {"description": "it"}}}
            },
        },
    }
