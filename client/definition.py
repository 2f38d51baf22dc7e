"""``relore``'s command line: its verbs, their options and help, the exit statuses it lists.
Nothing here runs a verb (``cli.py`` does); the argument types are ``argtypes.py``. Stdlib only.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

from relore.client import argtypes
from relore.client.exits import EXIT_STATUSES
from relore.contract import limits, patterns, wire
from relore.contract.version import __version__
from relore.lens import DEFS_CAP, MAP_CAP, REFS_CAP


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` finds it: a positive
    ``COLUMNS``, else the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's, its width found without importing shutil: argparse builds a formatter
    for every argument it adds, and its own import of shutil (bz2 and lzma with it) was
    ~3 ms of every start."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class _RawDescriptionHelpFormatter(_HelpFormatter, argparse.RawDescriptionHelpFormatter):
    pass


def _exit_epilog() -> str:
    return "exit status:\n" + "\n".join(
        f"  {status.value} {status.name.lower().replace('_', ' ')}: {what}"
        for status, what in EXIT_STATUSES.items()
    )


def _page_flags(parser: argparse.ArgumentParser, page: str = "the daemon's page") -> None:
    """The two output flags every verb takes (the code lens's pages are enveloped too)."""
    parser.add_argument("--json", action="store_true", help=f"{page} as JSON")
    parser.add_argument(
        "--compact", action="store_true", help="drop the envelope's notice line (marks stay)"
    )


def _tree_argument(parser: argparse.ArgumentParser) -> None:
    """defs/refs read a tree named as map's is: a positional PATH; ``--path`` is the old
    spelling, kept (``cli.py`` refuses both at once when they differ)."""
    parser.add_argument("path", nargs="?", help="directory or file to read (default .)")
    parser.add_argument("--path", dest="path_option", metavar="PATH", help="the same as PATH")


def _search(verbs) -> None:
    s = verbs.add_parser(
        "search",
        help="ranked search over issues, PRs and comments",
        description="TEXT - reads the text from stdin, as does no TEXT with stdin a file or a "
        "pipe: relore search --repo o/n < traceback.txt",
    )
    s.add_argument(
        "q",  # the HTTP API's name for it (relore mcp takes `text` too, its old name)
        metavar="TEXT",
        type=argtypes.query,
        nargs="?",
        default="",
        help="words, an error line, a pasted traceback (up to "
        f"{limits.MAX_PASTE_CHARS} characters: the daemon cuts it to its error line and "
        "deepest frames)",
    )
    s.add_argument("--repo", type=argtypes.repo, help="owner/name")
    s.add_argument(
        "--limit",
        type=argtypes.limit,
        default=limits.MAX_HITS,
        help=f"hits, 1-{limits.MAX_HITS} (default {limits.MAX_HITS})",
    )
    s.add_argument("--trust", choices=limits.TRUST_TIERS)
    s.add_argument("--state", choices=limits.STATES)
    s.add_argument("--author", help="GitHub login")
    s.add_argument("--file", action="append", default=[], help="threads that touched this path")
    s.add_argument("--error", action="append", default=[], help="threads carrying this error")
    s.add_argument("--test", action="append", default=[], help="threads naming this test id")
    s.add_argument("--symbol", action="append", default=[], help="threads naming this symbol")
    s.add_argument(
        "--kind",
        choices=limits.QUESTION_KINDS,
        help="the question's kind: sets the trust floor (rationale: authoritative only) and "
        "caps precedent at 5 (for earlier pull requests of the same kind, `relore precedent` "
        "ranks pull requests whole)",
    )
    s.add_argument("--since", help="documents from this date on, YYYY-MM-DD")
    _page_flags(s)


def _precedent(verbs) -> None:
    pr = verbs.add_parser(
        "precedent",
        help="earlier pull requests that made the same kind of change (merged first)",
        description="The closed pull requests that made the kind of change DESCRIPTION "
        "describes, merged ones first, each with why it matched (terms, files, meaning), "
        "the files it changed and the review comments that shaped it. Open pull requests "
        "are not precedent: `relore search --state open` lists them.",
    )
    pr.add_argument(
        "q",  # the HTTP API's name for it
        metavar="DESCRIPTION",
        type=argtypes.description,
        help="the change you are about to make, in one or two sentences (paths and "
        "`symbols` in it count as evidence)",
    )
    pr.add_argument(
        "--file",
        action="append",
        default=[],
        help=f"a file the change touches: boosts, never filters (at most "
        f"{limits.MAX_SIGNAL_VALUES})",
    )
    pr.add_argument("--repo", type=argtypes.repo, required=True, help="owner/name")
    pr.add_argument(
        "--limit",
        type=argtypes.precedent_limit,
        default=limits.MAX_PRECEDENT,
        help=f"pull requests, 1-{limits.MAX_PRECEDENT} (default {limits.MAX_PRECEDENT})",
    )
    _page_flags(pr)


def _status(verbs) -> None:
    st = verbs.add_parser("status", help="what the index holds")
    st.add_argument("--repo", type=argtypes.repo, help="owner/name")
    _page_flags(st)


def _rules(verbs) -> None:
    ru = verbs.add_parser(
        "rules",
        help="the project's rules your change needs (never repeated within a session)",
        description="The rules whose scope covers FILE..., chosen for --task, minus those "
        "already sent in this session; the titles of the others are listed once. Session: "
        "--session, else RELORE_SESSION, else this terminal's POSIX session; what it was "
        "sent is kept as the daemon's signed token in RELORE_STATE_DIR (else "
        "~/.local/state/relore/rules-sessions) and sent back.",
    )
    ru.add_argument("files", nargs="+", metavar="FILE", help="paths relative to the repo root")
    ru.add_argument("--repo", type=argtypes.repo, required=True, help="owner/name")
    ru.add_argument(
        "--task",
        type=argtypes.task,
        help=f"your change, in one sentence (<= {limits.MAX_TASK_CHARS} chars)",
    )
    ru.add_argument(
        "--include", action="append", default=[], metavar="ID", help="also send this rule"
    )
    ru.add_argument(
        "--max-tokens",
        type=argtypes.max_tokens,
        help=f"stop at this many tokens (>= {limits.MIN_MAX_TOKENS})",
    )
    ru.add_argument("--refresh", action="store_true", help="send again what this session was sent")
    ru.add_argument("--session", type=argtypes.session, help="session id (default: see above)")
    _page_flags(ru)


def _thread(verbs) -> None:
    th = verbs.add_parser(
        "thread",
        help="one thread in capped views: a page, an outline, a comment, the opening post, files",
        description="A page holds at most 10 comments (the ends and the middle); --after ID "
        "reads on in order; --focus orders a page (never empties it) and narrows an outline.",
    )
    th.add_argument("ref", type=argtypes.thread_ref, help=patterns.REF_FORMS)
    th.add_argument("--repo", type=argtypes.repo, help="owner/name (when REF is a bare number)")
    view = th.add_mutually_exclusive_group()
    view.add_argument("--outline", action="store_true", help="one line per comment (≤ 100)")
    view.add_argument("--full", action="store_true", help="the opening post whole")
    view.add_argument("--files", action="store_true", help="the changed paths")
    view.add_argument("--comment", metavar="ID", help="one comment whole")
    th.add_argument("--after", metavar="ID", help="the comments after this one, in order")
    th.add_argument(
        "--focus", type=argtypes.focus, metavar="TEXT", help="order the page by these words"
    )
    th.add_argument(
        "--limit",
        type=argtypes.comments,
        default=limits.THREAD_PAGE,
        help=f"comments per page, 1-{limits.THREAD_PAGE}",
    )
    _page_flags(th)


def _inflight(verbs) -> None:
    inf = verbs.add_parser(
        "inflight", help="open and merged pull requests that claim to close an issue"
    )
    inf.add_argument("ref", type=argtypes.thread_ref, help=patterns.REF_FORMS)
    inf.add_argument("--repo", type=argtypes.repo, help="owner/name (when REF is a bare number)")
    _page_flags(inf)


def _why(verbs) -> None:
    """Answered by the daemon from its working clone of the repository (`relored clone`)."""
    w = verbs.add_parser(
        "why",
        help="who wrote a line, the pull request that carried it, and what reviewers said",
        description="Blames PATH:LINE in the daemon's clone at HEAD and returns the pull "
        "request that carried the commit with the review comments anchored near the line, "
        "then two lists: the line's revision chain (git log -L) and its origin chain (git "
        "log -S on its most distinctive word that reaches further back).",
    )
    w.add_argument(
        "target", type=argtypes.path_line, metavar="PATH:LINE", help="e.g. src/app.py:42"
    )
    w.add_argument("--repo", type=argtypes.repo, required=True, help="owner/name")
    _page_flags(w)


def _symbol(verbs) -> None:
    sy = verbs.add_parser("symbol", help="where NAME is defined, in the daemon's clone at HEAD")
    sy.add_argument("name", type=argtypes.identifier, help="an identifier")
    sy.add_argument("--repo", type=argtypes.repo, required=True, help="owner/name")
    sy.add_argument("--path", help="only under this directory or file")
    sy.add_argument("--limit", type=argtypes.rows(DEFS_CAP), help=f"rows, 1-{DEFS_CAP}")
    _page_flags(sy)


def _grep(verbs) -> None:
    g = verbs.add_parser("grep", help="git grep over the daemon's clone at HEAD, capped")
    g.add_argument("pattern", type=argtypes.pattern, help="an extended regular expression")
    g.add_argument("--repo", type=argtypes.repo, required=True, help="owner/name")
    g.add_argument("--fixed", action="store_true", help="PATTERN is a fixed string")
    g.add_argument("-i", "--ignore-case", action="store_true", help="ignore case")
    g.add_argument("--path", help="only under this path")
    g.add_argument("--limit", type=argtypes.clone_rows, help=f"lines, 1-{limits.CLONE_ROWS}")
    _page_flags(g)


def _copies(verbs) -> None:
    cp = verbs.add_parser(
        "copies", help="the `# Copied from` markers that point at NAME (HuggingFace style)"
    )
    cp.add_argument(
        "name", type=argtypes.dotted_name, help="e.g. LlamaRMSNorm or modeling_llama.LlamaMLP"
    )
    cp.add_argument("--repo", type=argtypes.repo, required=True, help="owner/name")
    cp.add_argument("--limit", type=argtypes.clone_rows, help=f"rows, 1-{limits.CLONE_ROWS}")
    _page_flags(cp)


def _map(verbs) -> None:
    """The code lens: offline over the caller's own tree, never the daemon."""
    m = verbs.add_parser("map", help="the tree's defined names, ranked (offline, tree-sitter)")
    m.add_argument("path", nargs="?", default=".", help="directory or file (default .)")
    m.add_argument(
        "--focus",
        action="append",
        default=[],
        metavar="PATH",
        help="rank the tree as seen from this file or directory (inside PATH; repeatable)",
    )
    m.add_argument(
        "--limit", type=argtypes.rows(MAP_CAP), default=MAP_CAP, help=f"rows, 1-{MAP_CAP}"
    )
    m.add_argument("--offset", type=argtypes.offset, default=0, help="skip this many rows first")
    _page_flags(m, "the page")


def _defs(verbs) -> None:
    d = verbs.add_parser("defs", help="where NAME is defined (offline, tree-sitter)")
    d.add_argument("name", help="an identifier: function, method, class, type")
    _tree_argument(d)
    d.add_argument(
        "--limit", type=argtypes.rows(DEFS_CAP), default=DEFS_CAP, help=f"rows, 1-{DEFS_CAP}"
    )
    d.add_argument("--offset", type=argtypes.offset, default=0, help="skip this many rows first")
    _page_flags(d, "the page")


def _refs(verbs) -> None:
    r = verbs.add_parser("refs", help="every occurrence of NAME, by kind (offline, tree-sitter)")
    r.add_argument("name", help="an identifier")
    _tree_argument(r)
    r.add_argument("--kind", choices=["definition", "call", "attribute", "name"])
    r.add_argument(
        "--limit", type=argtypes.rows(REFS_CAP), default=REFS_CAP, help=f"rows, 1-{REFS_CAP}"
    )
    r.add_argument("--offset", type=argtypes.offset, default=0, help="skip this many rows first")
    _page_flags(r, "the page")


def _mcp(verbs) -> None:
    verbs.add_parser(
        "mcp",
        help="these verbs as Model Context Protocol tools over stdio (needs relore[mcp])",
        description="An MCP server on stdin/stdout for an agent harness: every verb above "
        "but mcp is a read-only tool answering with the text relore prints (and the page "
        "as structured content); a failure is a tool error with the same message and exit "
        "status. map/defs/refs read only the tree the server was started in (a path outside "
        "it, or through a symbolic link, is refused). RELORE_API and "
        "RELORE_API_TOKEN as for every verb; rules never repeat within one MCP session.",
    )


# Every verb in the order ``relore --help`` lists them, and what adds its parser.
VERBS = {
    "search": _search,
    "precedent": _precedent,
    "status": _status,
    "rules": _rules,
    "thread": _thread,
    "inflight": _inflight,
    "why": _why,
    "symbol": _symbol,
    "grep": _grep,
    "copies": _copies,
    "map": _map,
    "defs": _defs,
    "refs": _refs,
    "mcp": _mcp,
}


def verb_of(argv: list[str]) -> str | None:
    """The verb a command line runs, when its first word names one; else None (``-h``,
    ``--version``, a mistyped verb: the whole parser answers those)."""
    return argv[0] if argv and argv[0] in VERBS else None


def build_parser(
    parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser,
    verb: str | None = None,
) -> argparse.ArgumentParser:
    """The command line. ``parser_class`` (every verb's parser is one too) lets ``relore
    mcp`` take a refusal as an exception instead of a printed usage and an exit. ``verb``:
    only that verb's parser is built (``verb_of``: the one a command line runs, so a
    cached ``relore refs`` builds one parser, not thirteen); it parses that verb's command
    lines as the whole parser does."""
    parser = parser_class(
        prog="relore",
        description="Read a repository's issue and PR history from a relore daemon "
        f"(RELORE_API, default {wire.DEFAULT_API}).",
        epilog=_exit_epilog(),
        formatter_class=_RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"relore {__version__}")
    verbs = parser.add_subparsers(
        dest="verb",
        required=True,
        metavar="VERB",
        parser_class=functools.partial(parser_class, formatter_class=_HelpFormatter),
    )
    for name, add in VERBS.items():
        if verb is None or name == verb:
            add(verbs)
    return parser
