"""``relore``: the agent's read-only client. Standard library only (invariant 1).

This module runs a verb: it parses the command line (``definition.py``, whose argument types
are ``argtypes.py``), asks the daemon or the local code lens, renders the page
(``contract/render/``) and returns an exit status (``exits.py``).
"""

from __future__ import annotations

import argparse
import os
import sys

from relore.client.definition import build_parser, verb_of
from relore.client.exits import EXIT_STATUSES, ExitStatus, Refused
from relore.contract import envelope, render, verbs, wire

TYPE_CHECKING = False  # typing is not imported to run a verb: a cached answer's start counts
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["EXIT_STATUSES", "ExitStatus", "Refused", "build_parser", "entry", "main", "run"]


def _thread_params(args) -> dict:
    """thread/inflight: REF sent as ``repo`` and ``number`` (``--repo`` when REF is a bare
    number); thread's view flags as ``mode``, a URL's ``#issuecomment-N`` as ``comment``."""
    from relore.client import transport

    repo, number, anchored = args.ref
    repo = repo or args.repo
    if not repo:
        raise transport.DaemonError(400, "which repository? write owner/name#N or add --repo")
    params = {"repo": repo, "number": number}
    if args.verb == "thread":
        if anchored and args.comment and args.comment != anchored:
            raise Refused(
                ExitStatus.USAGE,
                f"relore thread: the URL names comment {anchored} and --comment "
                f"{args.comment!r} another: name one",
            )
        if anchored and not (args.outline or args.full or args.files or args.after):
            args.comment = anchored  # a URL's #issuecomment-N opens that comment
        params["mode"] = (
            "outline" if args.outline else "full" if args.full else "files" if args.files
            else "comment" if args.comment else "page"
        )  # fmt: skip
    return params


def _composite(args, env) -> dict:
    """What a verb sends that its command line spells another way: thread/inflight's REF,
    why's PATH:LINE, rules' session and its token."""
    if args.verb in ("thread", "inflight"):
        return _thread_params(args)
    if args.verb == "why":
        return {"path": args.target[0], "line": args.target[1]}
    if args.verb == "rules":
        from relore.client import rules

        return rules.session_params(args, env)
    return {}


def request(args: argparse.Namespace, env) -> tuple[str, dict]:
    """The route a daemon verb's parsed command line asks and the query it sends: every
    parameter declared on both the command line and HTTP (``contract/verbs``), as parsed
    (a repeated one refused past its count before anything is sent), then what the command
    line spells another way."""
    verb = verbs.VERBS[args.verb]
    composite = _composite(args, env)  # first: a thread URL's comment anchor sets --comment
    params = {}
    for param in verb.sent():
        value = getattr(args, param.dest)
        if param.kind == "flag":
            value = 1 if value else None
        elif param.repeat and param.values is not None and len(value) > param.values:
            raise Refused(
                ExitStatus.USAGE,
                f"relore {verb.name}: at most {param.values} {param.flags[-1]} values",
            )
        params[param.name] = value
    return verb.route, {**params, **composite}


def _code_verb(
    args: argparse.Namespace, env, workers: int | None, within: str | None
) -> tuple[dict, str]:
    """map/defs/refs: imported here so the daemon verbs never load the lens or tree-sitter.
    ``within``: the only tree they may read, relative paths taken from there (``relore
    mcp``'s working directory); else the caller's working directory, and any tree."""
    from relore.lens import index, registry

    if args.verb != "map":
        if args.path and args.path_option and args.path != args.path_option:
            raise Refused(
                ExitStatus.USAGE,
                f"relore {args.verb}: a tree given twice ({args.path!r} and --path "
                f"{args.path_option!r}): name one",
            )
        args.path = args.path or args.path_option or "."
    try:
        workers = index.workers_for(env) if workers is None else workers
        where = {"workers": workers, "cwd": within, "within": within}
        if args.verb == "map":
            page = index.repo_map(
                args.path, env, limit=args.limit, offset=args.offset, focus=args.focus, **where
            )
            return _lens_page(page, render.map_page, args.compact)
        if args.verb == "defs":
            page = index.defs(
                args.name, args.path, env, limit=args.limit, offset=args.offset, **where
            )
            return _lens_page(page, render.defs_page, args.compact)
        page = index.refs(
            args.name, args.path, env, limit=args.limit, offset=args.offset, kind=args.kind, **where
        )
        return _lens_page(page, render.refs_page, args.compact)
    except registry.GrammarMissing as exc:
        raise Refused(ExitStatus.ERROR, f"relore: {exc}") from None
    except index.PathNotFound as exc:
        raise Refused(ExitStatus.USAGE, f"relore: {exc}") from None


def _lens_page(page: dict, renderer, compact: bool) -> tuple[dict, str]:
    """A code lens page as the daemon's pages leave it (``contract/envelope.py``): every
    source line quoted ``> ``, every string sanitised, the envelope on; then rendered
    between its delimiters, each path and name taken from the tree fenced."""
    for row in (*page.get("definitions", ()), *page.get("references", ())):
        row["text"] = envelope.quote(row["text"])
    page = envelope.wrap(page)
    return page, render.enveloped(page, renderer(page), compact=compact)


def run(
    args: argparse.Namespace, env, *, workers: int | None = None, within: str | None = None
) -> tuple[dict, str]:
    """One verb of parsed ``args``: its page and the text ``relore`` prints for it, or
    ``Refused`` (the line on stderr, the exit status). The CLI and ``relore mcp`` both run
    a verb through here: one request builder, one renderer, one mapping of failures.
    ``workers`` caps the code lens's processes (``relore mcp`` is threaded: it never forks);
    ``within`` is the only tree the code lens may read (``relore mcp``'s working tree)."""
    if verbs.VERBS[args.verb].source == "tree":
        return _code_verb(args, env, workers, within)
    return _daemon_verb(args, env)


def main(
    argv: list[str] | None = None,
    env: dict[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    env = os.environ if env is None else env
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    argv = sys.argv[1:] if argv is None else argv
    try:  # the parser of the verb asked for alone, when the first word names one
        args = build_parser(verb=verb_of(argv)).parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error or the help
        return ExitStatus.USAGE if exc.code else ExitStatus.OK
    if args.verb == "mcp":
        return _mcp(env, stderr)
    try:
        if args.verb == "search":
            args.q = _query_from_stdin(args.q, sys.stdin if stdin is None else stdin)
        page, text = run(args, env)
    except Refused as exc:
        print(exc.line, file=stderr)
        return exc.status
    if args.json:
        import json  # here: text pages never load it

        text = json.dumps(page, ensure_ascii=False, indent=2)
    print(text, file=stdout)
    return ExitStatus.OK


# how long `relore search` with no TEXT waits for a pipe it was given to say something
STDIN_WAIT_S = 1.0


def _query_from_stdin(text: str, stdin) -> str:
    """``relore search`` reads its text from stdin when TEXT is ``-``, or absent with stdin
    a file or a pipe (``relore search --repo R < tb.txt``): a pasted traceback is often too
    long and too quoted for a shell argument. ``relore mcp`` never comes here (its stdin is
    the protocol). An absent TEXT waits ``STDIN_WAIT_S`` at most for a pipe that says
    nothing, then searches without one (a harness's stdin left open)."""
    from relore.client import argtypes
    from relore.contract import limits

    if text != "-" and (text or not _piped(stdin)):
        return text
    try:
        read = stdin.read(limits.MAX_PASTE_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(ExitStatus.USAGE, f"relore search: cannot read stdin ({exc})") from None
    if len(read) > limits.MAX_PASTE_CHARS:
        raise Refused(
            ExitStatus.USAGE,
            f"relore search: stdin holds more than {limits.MAX_PASTE_CHARS} characters: pipe "
            "the traceback, not the whole log (e.g. tail -n 60)",
        )
    try:
        return argtypes.query(read.strip())
    except argparse.ArgumentTypeError as exc:
        raise Refused(ExitStatus.USAGE, f"relore search: {exc}") from None


def _piped(stdin) -> bool:
    """A file or a pipe with something to read (or its end) within ``STDIN_WAIT_S``; never
    a terminal, a device, a socket or a closed stream."""
    import stat

    if stdin is None or stdin.closed:
        return False
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):  # no descriptor (pytest's capture): read only for `-`
        return False
    if os.isatty(fd):
        return False
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return True
    if not stat.S_ISFIFO(mode):
        return False
    import select

    return bool(select.select([fd], [], [], STDIN_WAIT_S)[0])


def _mcp(env, stderr: TextIO) -> int:
    """``relore mcp``: the verbs as tools over stdio. The SDK is imported there, only."""
    from relore.client import mcp_server

    try:
        return mcp_server.serve(env)
    except mcp_server.SdkMissing as exc:
        print(f"relore mcp: {exc}", file=stderr)
        return ExitStatus.ERROR


def _daemon_verb(args: argparse.Namespace, env) -> tuple[dict, str]:
    """Every verb the daemon answers. urllib (``transport``) is imported here: the code
    lens's verbs, which never talk to a daemon, start without it."""
    from relore.client import transport

    api = env.get("RELORE_API") or wire.DEFAULT_API
    token = env.get("RELORE_API_TOKEN") or None
    try:
        route, params = request(args, env)
        page = transport.get(api, route, params, token=token)
        if args.verb == "rules":
            from relore.client import rules

            warning = rules.remember(env, params, page)
            if warning:  # stderr: under `relore mcp` stdout is the protocol's
                print(f"relore: {warning}", file=sys.stderr)
    except transport.BadApi as exc:
        raise Refused(ExitStatus.USAGE, f"relore: {exc}") from None
    except transport.DaemonDown as exc:  # NotRelore too: something else answered there
        hint = (
            "point RELORE_API at `relored serve`"
            if isinstance(exc, transport.NotRelore)
            else "start it with `relored serve` or set RELORE_API"
        )
        raise Refused(ExitStatus.DAEMON_DOWN, f"relore: {exc}; {hint}") from None
    except transport.VersionMismatch as exc:
        raise Refused(ExitStatus.VERSION_MISMATCH, f"relore: {exc}") from None
    except transport.DaemonError as exc:
        status = {
            400: ExitStatus.USAGE,
            503: ExitStatus.NOT_READY,
            404: ExitStatus.NOT_INDEXED,
        }.get(exc.status, ExitStatus.ERROR)
        raise Refused(status, f"relore: {exc}") from None
    renderer = getattr(render, f"{args.verb}_page")  # each daemon verb's page: render.<verb>_page
    return page, render.enveloped(page, renderer(page), compact=args.compact)


# verbs whose process has nothing left to do once its page is printed: no thread, no
# worker (the pool is joined), no file open
_ENDED_WITH_THE_PAGE = frozenset({"map", "defs", "refs"})


def entry() -> None:
    argv = sys.argv[1:]
    try:
        code = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # `relore ... | head`: the reader had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = ExitStatus.OK
    if verb_of(argv) in _ENDED_WITH_THE_PAGE:
        # The page is out: the interpreter's teardown (the cache's index and listings freed
        # object by object, every module unloaded) would only delay the exit.
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
