"""The page for people at ``/``: search with filters, a thread view, the exact text an agent
gets, and relevance labels. Plain HTML, one script, one stylesheet: no build step, no CDN,
nothing fetched from anywhere but this daemon.

The page holds no data of its own. Its script calls the same ``/api/v1`` routes the client
does, with the token the person pastes (kept in the tab's ``sessionStorage``) and the version
it was served with, so a page left open across a daemon upgrade gets the 426 and says to
reload. "View as the model sees it" asks the API for ``format=text``: the client's own
renderer run server-side, shown verbatim. Retrieved text reaches the page as text nodes only
(``static/app.js`` never parses markup from data), and the content security policy allows no
inline script and no origin but this one.
"""

from __future__ import annotations

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from relore.contract.version import __version__

STATIC = Path(__file__).resolve().parent / "static"

CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


async def index(request: Request) -> HTMLResponse:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(page.replace("{{version}}", html.escape(__version__)), headers=HEADERS)


def routes() -> list[BaseRoute]:
    return [
        Route("/", index),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
