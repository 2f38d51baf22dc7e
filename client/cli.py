"""``relore``: the agent's read-only client. Standard library only (invariant 1)."""

from __future__ import annotations

import argparse
import enum
import json
import os
import re
import sys
from typing import TextIO

from relore.client import render, transport
from relore.client import rules as rules_mod
from relore.client.code import DEFS_CAP, MAP_CAP, REFS_CAP
from relore.contract import limits, patterns, wire
from relore.contract.version import __version__


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    DAEMON_DOWN = 3
    VERSION_MISMATCH = 4
    NOT_READY = 5
    NOT_INDEXED = 6


EXIT_STATUSES = {
    ExitStatus.OK: "an answer (an empty page is an answer)",
    ExitStatus.ERROR: "the daemon refused or failed the request",
    ExitStatus.USAGE: "a bad argument, or RELORE_API that is not an http(s) URL",
    ExitStatus.DAEMON_DOWN: "no relore daemon at RELORE_API (nothing listening, another "
    "server, or a redirect elsewhere)",
    ExitStatus.VERSION_MISMATCH: "the daemon runs another version",
    ExitStatus.NOT_READY: "the daemon cannot answer yet (503: no index, no clone, database "
    "down or busy)",
    ExitStatus.NOT_INDEXED: "the repository or thread is not indexed there",
}


def _exit_epilog() -> str:
    return "exit status:\n" + "\n".join(
        f"  {status.value} {status.name.lower().replace('_', ' ')}: {what}"
        for status, what in EXIT_STATUSES.items()
    )


def _repo(value: str) -> str:
    if not patterns.is_repo(value):
        raise argparse.ArgumentTypeError(f"expected owner/name, got {value!r}")
    return value


def _text(what: str, most: int, hint: str = ""):
    """An argparse type: text of at most ``most`` characters without NUL (the daemon's own
    limit, from ``relore.contract.limits``: refused here before a request is made)."""

    def parse(value: str) -> str:
        if len(value) > most:
            raise argparse.ArgumentTypeError(
                f"the {what} is {len(value)} characters; at most {most}{hint}"
            )
        if "\x00" in value:
            raise argparse.ArgumentTypeError(f"the {what} contains a NUL character")
        return value

    return parse


_query = _text("query", limits.MAX_QUERY_CHARS, ": paste the error line, not the whole log")
_pattern = _text("pattern", limits.MAX_PATTERN_CHARS)
_focus = _text("focus", limits.MAX_FOCUS_CHARS)
_task = _text("task", limits.MAX_TASK_CHARS, ": one sentence about the change")


def _thread_ref(value: str) -> tuple[str | None, int]:
    match = patterns.THREAD_REF_RE.fullmatch(value.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"expected owner/name#N or N, got {value!r}")
    return match.group(1), int(match.group(2))


def _thread_params(args) -> dict:
    repo, number = args.ref
    repo = repo or args.repo
    if not repo:
        raise transport.DaemonError(400, "which repository? write owner/name#N or add --repo")
    params = {"repo": repo, "number": number}
    if args.verb == "thread":
        mode = (
            "outline" if args.outline else "full" if args.full else "files" if args.files
            else "comment" if args.comment else "page"
        )  # fmt: skip
        params.update(
            mode=mode, after=args.after, focus=args.focus, comment=args.comment, limit=args.limit
        )
    return params


def _whole(low: int, high: int | None, what: str):
    """An argparse type: a whole number in [low, high], refused with ``what`` otherwise."""

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError("expected a whole number") from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(what)
        return n

    return parse


_limit = _whole(1, limits.MAX_HITS, f"at most {limits.MAX_HITS} hits per page, at least 1")
_comments = _whole(
    1, limits.THREAD_PAGE, f"at most {limits.THREAD_PAGE} comments per page, at least 1"
)
_offset = _whole(0, None, "expected 0 or more")


def _rows(cap: int):
    return _whole(1, cap, f"at most {cap} rows per page, at least 1")


_max_tokens = _whole(limits.MIN_MAX_TOKENS, None, f"at least {limits.MIN_MAX_TOKENS}")


def _session(value: str) -> str:
    if not rules_mod.valid_session(value):
        raise argparse.ArgumentTypeError("1-128 characters of letters, digits and ._:@-")
    return value


_PATH_LINE = re.compile(r"^(.+?)(?::|#L)([0-9]+)$")


def _path_line(value: str) -> tuple[str, int]:
    """``PATH:LINE`` (or GitHub's ``PATH#L12``), the path relative to the repository root."""
    match = _PATH_LINE.match(value.strip())
    if not match or "\x00" in value:
        raise argparse.ArgumentTypeError(f"expected PATH:LINE, e.g. src/app.py:42, got {value!r}")
    if int(match.group(2)) < 1:
        raise argparse.ArgumentTypeError("lines are numbered from 1")
    return match.group(1), int(match.group(2))


def _identifier(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", value or ""):
        raise argparse.ArgumentTypeError(
            f"expected an identifier (or a.dotted.Name), got {value!r}"
        )
    return value


_clone_rows = _whole(1, limits.CLONE_ROWS, f"at most {limits.CLONE_ROWS} rows per page, at least 1")


def _page_flags(parser: argparse.ArgumentParser) -> None:
    """The two output flags every daemon verb takes."""
    parser.add_argument("--json", action="store_true", help="the daemon's page as JSON")
    parser.add_argument(
        "--compact", action="store_true", help="drop the envelope's notice line (marks stay)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relore",
        description="Read a repository's issue and PR history from a relore daemon "
        f"(RELORE_API, default {wire.DEFAULT_API}).",
        epilog=_exit_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"relore {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    s = verbs.add_parser("search", help="ranked search over issues, PRs and comments")
    s.add_argument(
        "text", type=_query, nargs="?", default="", help="words, an error line, a pasted traceback"
    )
    s.add_argument("--repo", type=_repo, help="owner/name")
    s.add_argument(
        "--limit",
        type=_limit,
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
        "caps precedent at 5",
    )
    s.add_argument("--since", help="documents from this date on, YYYY-MM-DD")
    _page_flags(s)

    st = verbs.add_parser("status", help="what the index holds")
    st.add_argument("--repo", type=_repo, help="owner/name")
    _page_flags(st)

    ru = verbs.add_parser(
        "rules",
        help="the project's rules your change needs (never repeated within a session)",
        description="The rules whose scope covers FILE..., chosen for --task, minus those "
        "already sent in this session; the titles of the others are listed once. Session: "
        "--session, else RELORE_SESSION, else this terminal's POSIX session.",
    )
    ru.add_argument("files", nargs="+", metavar="FILE", help="paths relative to the repo root")
    ru.add_argument("--repo", type=_repo, required=True, help="owner/name")
    ru.add_argument(
        "--task",
        type=_task,
        help=f"your change, in one sentence (<= {limits.MAX_TASK_CHARS} chars)",
    )
    ru.add_argument(
        "--include", action="append", default=[], metavar="ID", help="also send this rule"
    )
    ru.add_argument(
        "--max-tokens",
        type=_max_tokens,
        help=f"stop at this many tokens (>= {limits.MIN_MAX_TOKENS})",
    )
    ru.add_argument("--refresh", action="store_true", help="send again what this session was sent")
    ru.add_argument("--session", type=_session, help="session id (default: see above)")
    _page_flags(ru)

    # The code lens: offline over the caller's own tree, never the daemon.
    th = verbs.add_parser(
        "thread",
        help="one thread in capped views: a page, an outline, a comment, the opening post, files",
        description="A page holds at most 10 comments (the ends and the middle); --after ID "
        "reads on in order; --focus orders a page (never empties it) and narrows an outline.",
    )
    th.add_argument("ref", type=_thread_ref, help="owner/name#N, or N with --repo")
    th.add_argument("--repo", type=_repo, help="owner/name (when REF is a bare number)")
    view = th.add_mutually_exclusive_group()
    view.add_argument("--outline", action="store_true", help="one line per comment (≤ 100)")
    view.add_argument("--full", action="store_true", help="the opening post whole")
    view.add_argument("--files", action="store_true", help="the changed paths")
    view.add_argument("--comment", metavar="ID", help="one comment whole")
    th.add_argument("--after", metavar="ID", help="the comments after this one, in order")
    th.add_argument("--focus", type=_focus, metavar="TEXT", help="order the page by these words")
    th.add_argument(
        "--limit",
        type=_comments,
        default=limits.THREAD_PAGE,
        help=f"comments per page, 1-{limits.THREAD_PAGE}",
    )
    _page_flags(th)

    inf = verbs.add_parser(
        "inflight", help="open and merged pull requests that claim to close an issue"
    )
    inf.add_argument("ref", type=_thread_ref, help="owner/name#N, or N with --repo")
    inf.add_argument("--repo", type=_repo, help="owner/name (when REF is a bare number)")
    _page_flags(inf)

    # Answered by the daemon from its working clone of the repository (`relored clone`).
    w = verbs.add_parser(
        "why",
        help="who wrote a line, the pull request that carried it, and what reviewers said",
        description="Blames PATH:LINE in the daemon's clone at HEAD and returns the pull "
        "request that carried the commit with the review comments anchored near the line, "
        "then two lists: the line's revision chain (git log -L) and its origin chain (git "
        "log -S on its most distinctive word that reaches further back).",
    )
    w.add_argument("target", type=_path_line, metavar="PATH:LINE", help="e.g. src/app.py:42")
    w.add_argument("--repo", type=_repo, required=True, help="owner/name")
    _page_flags(w)

    sy = verbs.add_parser("symbol", help="where NAME is defined, in the daemon's clone at HEAD")
    sy.add_argument("name", type=_identifier, help="an identifier")
    sy.add_argument("--repo", type=_repo, required=True, help="owner/name")
    sy.add_argument("--path", help="only under this directory or file")
    sy.add_argument("--limit", type=_rows(DEFS_CAP), help=f"rows, 1-{DEFS_CAP}")
    _page_flags(sy)

    g = verbs.add_parser("grep", help="git grep over the daemon's clone at HEAD, capped")
    g.add_argument("pattern", type=_pattern, help="an extended regular expression")
    g.add_argument("--repo", type=_repo, required=True, help="owner/name")
    g.add_argument("--fixed", action="store_true", help="PATTERN is a fixed string")
    g.add_argument("-i", "--ignore-case", action="store_true", help="ignore case")
    g.add_argument("--path", help="only under this path")
    g.add_argument("--limit", type=_clone_rows, help=f"lines, 1-{limits.CLONE_ROWS}")
    _page_flags(g)

    cp = verbs.add_parser(
        "copies", help="the `# Copied from` markers that point at NAME (HuggingFace style)"
    )
    cp.add_argument("name", type=_identifier, help="e.g. LlamaRMSNorm or modeling_llama.LlamaMLP")
    cp.add_argument("--repo", type=_repo, required=True, help="owner/name")
    cp.add_argument("--limit", type=_clone_rows, help=f"rows, 1-{limits.CLONE_ROWS}")
    _page_flags(cp)

    m = verbs.add_parser("map", help="the tree's defined names, ranked (offline, tree-sitter)")
    m.add_argument("path", nargs="?", default=".", help="directory or file (default .)")
    m.add_argument("--limit", type=_rows(MAP_CAP), default=MAP_CAP, help=f"rows, 1-{MAP_CAP}")
    m.add_argument("--offset", type=_offset, default=0, help="skip this many rows first")
    m.add_argument("--json", action="store_true", help="the page as JSON")

    d = verbs.add_parser("defs", help="where NAME is defined (offline, tree-sitter)")
    d.add_argument("name", help="an identifier: function, method, class, type")
    d.add_argument("--path", default=".", help="directory or file to read (default .)")
    d.add_argument("--limit", type=_rows(DEFS_CAP), default=DEFS_CAP, help=f"rows, 1-{DEFS_CAP}")
    d.add_argument("--offset", type=_offset, default=0, help="skip this many rows first")
    d.add_argument("--json", action="store_true", help="the page as JSON")

    r = verbs.add_parser("refs", help="every occurrence of NAME, by kind (offline, tree-sitter)")
    r.add_argument("name", help="an identifier")
    r.add_argument("--path", default=".", help="directory or file to read (default .)")
    r.add_argument("--kind", choices=["definition", "call", "attribute", "name"])
    r.add_argument("--limit", type=_rows(REFS_CAP), default=REFS_CAP, help=f"rows, 1-{REFS_CAP}")
    r.add_argument("--offset", type=_offset, default=0, help="skip this many rows first")
    r.add_argument("--json", action="store_true", help="the page as JSON")
    return parser


# verb -> (route, query, renderer): the daemon's answers from its working clone
_CLONE_VERBS = {
    "why": lambda a: (
        "why",
        {"repo": a.repo, "path": a.target[0], "line": a.target[1]},
        render.why_page,
    ),
    "symbol": lambda a: (
        "code/symbol",
        {"repo": a.repo, "name": a.name, "path": a.path, "limit": a.limit},
        render.symbol_page,
    ),
    "grep": lambda a: (
        "code/grep",
        {
            "repo": a.repo,
            "pattern": a.pattern,
            "fixed": 1 if a.fixed else None,
            "ignore_case": 1 if a.ignore_case else None,
            "path": a.path,
            "limit": a.limit,
        },
        render.grep_page,
    ),
    "copies": lambda a: (
        "code/copies",
        {"repo": a.repo, "name": a.name, "limit": a.limit},
        render.copies_page,
    ),
}


def _code_verb(args: argparse.Namespace, env, stdout: TextIO, stderr: TextIO) -> int:
    """map/defs/refs: imported here so the daemon verbs never load the lens or tree-sitter."""
    from relore.client.code import index, registry

    try:
        if args.verb == "map":
            page = index.repo_map(args.path, env, limit=args.limit, offset=args.offset)
            text = render.map_page(page)
        elif args.verb == "defs":
            page = index.defs(args.name, args.path, env, limit=args.limit, offset=args.offset)
            text = render.defs_page(page)
        else:
            page = index.refs(
                args.name, args.path, env, limit=args.limit, offset=args.offset, kind=args.kind
            )
            text = render.refs_page(page)
    except registry.GrammarMissing as exc:
        print(f"relore: {exc}", file=stderr)
        return ExitStatus.ERROR
    except index.PathNotFound as exc:
        print(f"relore: {exc}", file=stderr)
        return ExitStatus.USAGE
    print(json.dumps(page, ensure_ascii=False, indent=2) if args.json else text, file=stdout)
    return ExitStatus.OK


def main(
    argv: list[str] | None = None,
    env: dict[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    env = os.environ if env is None else env
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error or the help
        return ExitStatus.USAGE if exc.code else ExitStatus.OK
    if args.verb in ("map", "defs", "refs"):
        return _code_verb(args, env, stdout, stderr)
    api = env.get("RELORE_API") or wire.DEFAULT_API
    token = env.get("RELORE_API_TOKEN") or None
    try:
        if args.verb == "search":
            params = {
                "q": args.text,
                "repo": args.repo,
                "limit": args.limit,
                "trust": args.trust,
                "state": args.state,
                "author": args.author,
                "file": args.file,
                "error": args.error,
                "test": args.test,
                "symbol": args.symbol,
                "kind": args.kind,
                "since": args.since,
            }
            page = transport.get(api, "search", params, token=token)
            text = render.enveloped(page, render.search_page(page), compact=args.compact)
        elif args.verb in ("thread", "inflight"):
            page = transport.get(api, args.verb, _thread_params(args), token=token)
            renderer = render.thread_page if args.verb == "thread" else render.inflight_page
            text = render.enveloped(page, renderer(page), compact=args.compact)
        elif args.verb in _CLONE_VERBS:
            route, params, renderer = _CLONE_VERBS[args.verb](args)
            page = transport.get(api, route, params, token=token)
            text = render.enveloped(page, renderer(page), compact=args.compact)
        elif args.verb == "rules":
            page = transport.get(api, "rules", rules_mod.params(args, env), token=token)
            text = render.enveloped(page, render.rules_page(page), compact=args.compact)
        else:
            page = transport.get(api, "status", {"repo": args.repo}, token=token)
            text = render.enveloped(page, render.status_page(page), compact=args.compact)
    except transport.BadApi as exc:
        print(f"relore: {exc}", file=stderr)
        return ExitStatus.USAGE
    except transport.DaemonDown as exc:  # NotRelore too: something else answered there
        hint = (
            "point RELORE_API at `relored serve`"
            if isinstance(exc, transport.NotRelore)
            else "start it with `relored serve` or set RELORE_API"
        )
        print(f"relore: {exc}; {hint}", file=stderr)
        return ExitStatus.DAEMON_DOWN
    except transport.VersionMismatch as exc:
        print(f"relore: {exc}", file=stderr)
        return ExitStatus.VERSION_MISMATCH
    except transport.DaemonError as exc:
        print(f"relore: {exc}", file=stderr)
        if exc.status == 400:
            return ExitStatus.USAGE
        if exc.status == 503:
            return ExitStatus.NOT_READY
        if exc.status == 404:
            return ExitStatus.NOT_INDEXED
        return ExitStatus.ERROR
    print(json.dumps(page, ensure_ascii=False, indent=2) if args.json else text, file=stdout)
    return ExitStatus.OK


def entry() -> None:
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `relore ... | head`: the reader had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = ExitStatus.OK
    sys.exit(code)
