"""Parameters many verbs share, declared once: the repository, the output flags, the format."""

from __future__ import annotations

from relore.contract.verbs.shape import Param


def repo(required: bool | str = False, help: str = "owner/name") -> Param:
    return Param("repo", "repo", help, required=required)


def page_flags(page: str = "the daemon's page") -> tuple[Param, Param]:
    """The two output flags every verb takes on the command line (the code lens's pages are
    enveloped too); a tool answers with the page and its text at once (no ``json``), a route
    takes ``format``."""
    return (
        Param("json", "flag", f"{page} as JSON", on="cli"),
        Param("compact", "flag", "drop the envelope's notice line (marks stay)", on="cli mcp"),
    )


# a page route's format: the page, or the text `relore` prints for it (the one renderer)
FORMAT = Param(
    "format",
    "choice",
    "text: the text `relore` prints for it",
    on="http",
    choices=("json", "text"),
    default="json",
)
