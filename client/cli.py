"""``relore``: the agent's read-only client. Standard library only (invariant 1).

This module runs a verb: it parses the command line (``definition.py``, whose argument types
are ``argtypes.py``), asks the daemon or the local code lens, renders the page
(``render.py``) and returns an exit status (``exits.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from relore.client import render
from relore.client import rules as rules_mod
from relore.client.definition import build_parser
from relore.client.exits import EXIT_STATUSES, ExitStatus
from relore.contract import wire

__all__ = ["EXIT_STATUSES", "ExitStatus", "build_parser", "entry", "main"]


def _thread_params(args) -> dict:
    from relore.client import transport

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

    if args.verb != "map":
        if args.path and args.path_option and args.path != args.path_option:
            print(
                f"relore {args.verb}: a tree given twice ({args.path!r} and --path "
                f"{args.path_option!r}): name one",
                file=stderr,
            )
            return ExitStatus.USAGE
        args.path = args.path or args.path_option or "."
    try:
        workers = index.workers_for(env)
        if args.verb == "map":
            page = index.repo_map(
                args.path,
                env,
                limit=args.limit,
                offset=args.offset,
                focus=args.focus,
                workers=workers,
            )
            text = render.map_page(page)
        elif args.verb == "defs":
            page = index.defs(
                args.name, args.path, env, limit=args.limit, offset=args.offset, workers=workers
            )
            text = render.defs_page(page)
        else:
            page = index.refs(
                args.name,
                args.path,
                env,
                limit=args.limit,
                offset=args.offset,
                kind=args.kind,
                workers=workers,
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
    return _daemon_verb(args, env, stdout, stderr)


def _daemon_verb(args: argparse.Namespace, env, stdout: TextIO, stderr: TextIO) -> int:
    """Every verb the daemon answers. urllib (``transport``) is imported here: the code
    lens's verbs, which never talk to a daemon, start without it."""
    from relore.client import transport

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
            sent = rules_mod.params(args, env)
            page = transport.get(api, "rules", sent, token=token)
            warning = rules_mod.remember(env, sent, page)
            if warning:
                print(f"relore: {warning}", file=stderr)
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
