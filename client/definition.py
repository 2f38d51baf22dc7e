"""``relore``'s command line, made from the verbs' declarations (``contract/verbs``): each
verb's options and help, and the exit statuses it lists. Nothing here runs a verb (``cli.py``
does); the argument types are ``argtypes.py``. Stdlib only.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

from relore.client import argtypes
from relore.client.exits import EXIT_STATUSES
from relore.contract import verbs, wire
from relore.contract.version import __version__


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


def _add(verbs, verb) -> None:
    """A verb's parser, made from its declaration (``contract/verbs``): every parameter the
    command line takes, in order; a declared ``group`` is a mutually exclusive one."""
    parser = verbs.add_parser(verb.name, help=verb.help, description=verb.description)
    groups: dict = {}
    for param in verb.on("cli"):
        where = parser
        if param.group:
            if param.group not in groups:
                groups[param.group] = parser.add_mutually_exclusive_group()
            where = groups[param.group]
        if param.positional:
            where.add_argument(param.dest, **_options(param))
        else:
            where.add_argument(*param.flags, dest=param.dest, **_options(param))


def _options(param) -> dict:
    options: dict = {"help": param.help or None}
    if param.metavar:
        options["metavar"] = param.metavar
    if param.kind == "flag":
        return {**options, "action": "store_true"}
    if param.repeat:
        if param.positional:
            return {**options, "nargs": "+" if param.required_on("cli") else "*"}
        kind = argtypes.for_param(param)
        return {**options, "action": "append", "default": [], **({"type": kind} if kind else {})}
    kind = argtypes.for_param(param)
    if kind is not None:
        options["type"] = kind
    if param.choices:
        options["choices"] = param.choices
    if param.default is not None:
        options["default"] = param.default
    if param.positional:
        if not param.required_on("cli"):
            options["nargs"] = "?"
    elif param.required_on("cli"):
        options["required"] = True
    return options


def verb_of(argv: list[str]) -> str | None:
    """The verb a command line runs, when its first word names one; else None (``-h``,
    ``--version``, a mistyped verb: the whole parser answers those)."""
    return argv[0] if argv and argv[0] in verbs.VERBS else None


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
    subparsers = parser.add_subparsers(
        dest="verb",
        required=True,
        metavar="VERB",
        parser_class=functools.partial(parser_class, formatter_class=_HelpFormatter),
    )
    for name, declared in verbs.VERBS.items():
        if verb is None or name == verb:
            _add(subparsers, declared)
    return parser
