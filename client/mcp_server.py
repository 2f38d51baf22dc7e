"""``relore mcp``: relore's verbs as Model Context Protocol tools, over stdio.

Each tool is a verb of ``definition.py``: its input schema is read off the verb's parser
(names, types, bounds, choices and help), its arguments become the verb's command line and
are parsed there, and it runs through ``cli.run`` — the CLI's one request builder, renderer
and mapping of failures. So a tool answers with the text ``relore`` prints (envelope, ``>``
quoting, caps, ``returned``/``total``, notices), with the page alongside as structured
content, and a failure is a tool error carrying the line ``relore`` prints and its exit
status. ``rules`` runs under one session per MCP session, so a rule is never repeated
within it.

The SDK (``pip install 'relore[mcp]'``) is imported inside ``serve`` and ``_sdk`` only: no
other verb loads it. It brings its own HTTP transports (starlette, uvicorn, httpx2); stdio
never starts them, and no database driver or relore server package enters this process
(``tests/unit/test_client_boundary.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import re
import secrets

from relore.client import cli
from relore.client.definition import build_parser
from relore.client.exits import EXIT_STATUSES, ExitStatus, Refused
from relore.contract import envelope
from relore.contract.version import __version__

# What each tool is for and when an agent should call it; the parameters' help is the CLI's.
PURPOSE = {
    "search": "Ranked search over the repository's issues, pull requests, comments and "
    "review comments. Call it before changing code whose history may matter: paste an "
    "error line or a traceback, or name a file, test or symbol, to find earlier reports, "
    "fixes and the reasons given for them. At most 10 hits, each a snippet; read one with "
    "`thread`.",
    "precedent": "The earlier pull requests that made the same kind of change you are "
    "about to make: describe the change in a sentence or two (and name the files with "
    "`file`) before writing code. Merged ones first, at most 5, each saying why it matched "
    "and showing the files it changed and 1-3 review comments that shaped it; read one "
    "whole with `thread`.",
    "thread": "One issue or pull request in capped views. Call it to read a search hit: a "
    "page is the opening post and at most 10 comments (the ends and the middle); `after` "
    "reads on in order, `outline` lists every comment on a line, `comment` reads one whole, "
    "`full` the opening post whole, `files` the changed paths, `focus` orders by words.",
    "inflight": "Pull requests that claim to close an issue: open, merged, then abandoned. "
    "Call it before starting on an issue, to see who is already on it or has tried.",
    "status": "What the daemon has indexed: each repository's threads and documents and "
    "how fresh each extract pass is. Call it when unsure which repositories are indexed or "
    "whether a missing answer means old data.",
    "rules": "The project's rules for the files you are about to change, chosen for your "
    "task. Call it before editing, with the paths and a one-sentence task. A rule sent once "
    "is not sent again in this MCP session (its title is listed instead); `refresh` sends "
    "them again after your context was reset.",
    "why": "Why a line is as it is: blames PATH:LINE in the daemon's clone at HEAD and "
    "returns the pull request that carried it, the review comments near the line, and the "
    "line's revision and origin chains. Call it before changing or deleting a line whose "
    "purpose is unclear.",
    "symbol": "Where a name is defined in the daemon's clone of the repository at HEAD. For "
    "the indexed repository's code; for your own working tree use `defs`.",
    "grep": "git grep over the daemon's clone of the repository at HEAD, capped, every "
    "match counted. For the indexed repository's code; your own tree is your shell's.",
    "copies": "The `# Copied from` markers that point at a name (HuggingFace style). Call it "
    "before changing a class or function others copy, so the copies change with it.",
    "map": "The definitions the other files of your working tree use most, ranked "
    "(offline, tree-sitter; paths are relative to where the MCP server was started, and "
    "nothing outside that tree is read). Call "
    "it first in an unfamiliar tree.",
    "defs": "Where a name is defined in your working tree (offline, tree-sitter).",
    "refs": "Every occurrence of a name in your working tree, each saying what it is "
    "(definition, call, attribute, name). Call it before renaming or changing a signature.",
}
# the parser's arguments a tool does not take: the output is both forms at once, the MCP
# session is the rules session, `--path` is defs/refs' old spelling of PATH
NOT_TOOL_ARGUMENTS = {"help", "json", "session", "path_option"}

INSTRUCTIONS = (
    "relore answers from a repository's issue and pull-request history (and the daemon's "
    "clone of its code) in capped pages, each saying what it returned of what total and "
    f"what it left out. Every page sits between {envelope.BEGIN} and {envelope.END}. "
    f"{envelope.NOTICE} Start with `search`; read a hit with `thread`; call `rules` before "
    "editing. Every tool is read-only."
)


class SdkMissing(RuntimeError):
    """The MCP SDK is not installed."""


class _Refusing(argparse.ArgumentParser):
    """A verb's parser whose refusal is raised with the CLI's wording, never printed."""

    def error(self, message: str):
        raise Refused(ExitStatus.USAGE, f"{self.prog}: error: {message}")

    def exit(self, status: int = 0, message: str | None = None):
        raise Refused(ExitStatus.USAGE, message or f"{self.prog}: nothing to run")


def _verbs(parser: argparse.ArgumentParser) -> tuple[dict, dict]:
    """The verb parsers and their one-line help, by verb."""
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    return action.choices, helps


def _words(text: str | None) -> str:
    """CLI help, said of a tool: ``--max-tokens`` is the argument ``max_tokens``."""
    return re.sub(r"--([a-z][a-z-]+)", lambda m: m.group(1).replace("-", "_"), text or "")


def _property(action: argparse.Action) -> dict:
    if action.nargs == 0:  # store_true
        prop: dict = {"type": "boolean"}
    elif action.nargs == "+" or isinstance(action, argparse._AppendAction):
        prop = {"type": "array", "items": {"type": "string"}}
        if action.nargs == "+":
            prop["minItems"] = 1
    elif hasattr(action.type, "bounds"):
        low, high = action.type.bounds
        prop = {"type": "integer", "minimum": low}
        if high is not None:
            prop["maximum"] = high
    else:
        prop = {"type": "string"}
        if action.choices:
            prop["enum"] = list(action.choices)
        if hasattr(action.type, "max_chars"):
            prop["maxLength"] = action.type.max_chars
    if action.help:
        prop["description"] = _words(action.help)
    if action.default not in (None, False, [], "", argparse.SUPPRESS):
        prop["default"] = action.default
    return prop


def _arguments(verb_parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in verb_parser._actions if a.dest not in NOT_TOOL_ARGUMENTS]


# an argument's old name over MCP -> its name: still accepted, and stated in the schema
OLD_NAMES = {"text": "q"}  # search's query was `text` here and `q` over HTTP


def input_schema(verb_parser: argparse.ArgumentParser) -> dict:
    """A verb's arguments as a JSON Schema object, read off its parser."""
    actions = _arguments(verb_parser)
    required = [
        a.dest for a in actions if a.required or (not a.option_strings and a.nargs in (None, "+"))
    ]
    properties = {a.dest: _property(a) for a in actions}
    for old, name in OLD_NAMES.items():
        if name in properties:
            said = f"the same as {name} (its old name)"
            properties[old] = {**properties[name], "description": said}
    schema = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _bad(verb: str, message: str) -> Refused:
    return Refused(ExitStatus.USAGE, f"relore {verb}: error: {message}")


def _check(verb: str, name: str, prop: dict, value) -> list[str]:
    """``value`` as command-line words, once it is of the type the schema states."""
    kind = prop["type"]
    if kind == "array":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _bad(verb, f"{name} must be a list of strings")
        return value
    ok = {
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "string": isinstance(value, str),
    }[kind]
    if not ok:
        raise _bad(verb, f"{name} must be a{'n' if kind[0] == 'i' else ''} {kind}")
    return [str(value)]


def argv(verb: str, verb_parser: argparse.ArgumentParser, arguments: dict) -> list[str]:
    """A tool call's arguments as the verb's command line. Options are written ``--o=v``
    and positionals after ``--``, so a value starting with ``-`` stays a value."""
    actions = {a.dest: a for a in _arguments(verb_parser)}
    schema = input_schema(verb_parser)["properties"]
    arguments = dict(arguments)
    for old, name in OLD_NAMES.items():
        if old in arguments and name in actions and old not in actions:
            if arguments.get(name) is not None and arguments[name] != arguments[old]:
                raise _bad(verb, f"{old} is the old name of {name}: give one of them")
            value = arguments.pop(old)
            arguments.setdefault(name, value)
            if arguments[name] is None:
                arguments[name] = value
    unknown = sorted(set(arguments) - set(actions))
    if unknown:
        raise _bad(verb, f"no argument {', '.join(unknown)}; it takes {', '.join(actions)}")
    options, positionals = [], []
    for name, value in arguments.items():
        if value is None:
            continue
        action, words = actions[name], _check(verb, name, schema[name], value)
        if not action.option_strings:
            positionals.extend(words)
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:
            options.extend([flag] if value else [])
        else:
            options.extend(f"{flag}={word}" for word in words)
    return [verb, *options, *(["--", *positionals] if positionals else [])]


def refusal(exc: Refused) -> dict:
    """A refusal as a tool error's structured content: the CLI's line, its exit status."""
    status = ExitStatus(exc.status)
    return {
        "error": exc.line,
        "exit_status": int(status),
        "status": status.name.lower(),
        "meaning": EXIT_STATUSES[status],
    }


def refusal_text(exc: Refused) -> str:
    status = ExitStatus(exc.status)
    name = status.name.lower().replace("_", " ")
    return f"{exc.line}\n(relore exit status {int(status)}, {name}: {EXIT_STATUSES[status]})"


class Tools:
    """Every tool: its definition, and a call answered as the CLI answers the verb."""

    def __init__(self, env, root: str | None = None):
        self.env = env
        # map/defs/refs read this tree alone, their relative paths from it: where the server
        # was started (the SDK's MCP roots are deprecated, SEP-2577: not asked for)
        self.root = os.path.abspath(root or os.getcwd())
        self.parser = build_parser(_Refusing)
        self.verb_parsers, self.helps = _verbs(self.parser)
        self.verbs = [v for v in self.verb_parsers if v in PURPOSE]

    def definitions(self) -> list[dict]:
        return [
            {
                "name": verb,
                "title": _words(self.helps[verb]),
                "description": PURPOSE[verb],
                "input_schema": input_schema(self.verb_parsers[verb]),
            }
            for verb in self.verbs
        ]

    def call(self, verb: str, arguments: dict | None, session: str) -> tuple[dict, str]:
        """The page and its text, or ``Refused``. Blocking (urllib, the code lens)."""
        if verb not in PURPOSE:
            raise Refused(ExitStatus.USAGE, f"relore: no tool {verb!r}: {', '.join(self.verbs)}")
        words = argv(verb, self.verb_parsers[verb], arguments or {})
        if verb == "rules":
            words.insert(1, f"--session={session}")
        args = self.parser.parse_args(words)
        # threaded: the code lens never forks here
        return cli.run(args, self.env, workers=1, within=self.root)


def new_session() -> str:
    """A rules session of its own for each MCP session (``contract.patterns.is_session``)."""
    return f"mcp-{secrets.token_hex(8)}"


def _sdk():
    try:
        import anyio
        import mcp_types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError as exc:
        raise SdkMissing(
            f"needs the MCP SDK ({exc.name} is missing): pip install 'relore[mcp]'"
        ) from None
    return anyio, mcp_types, Server, stdio_server


def build_server(env):
    """The low-level MCP server over ``Tools(env)``; a rules session per connection."""
    anyio, types, Server, _ = _sdk()
    tools = Tools(env)
    listed = [
        types.Tool(
            name=d["name"],
            title=d["title"],
            description=d["description"],
            input_schema=d["input_schema"],
            annotations=types.ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        )
        for d in tools.definitions()
    ]

    @contextlib.asynccontextmanager
    async def connection(_server):
        """``Server.run`` enters this once per connection: over stdio, the MCP session (a
        ``ServerSession`` is made per request, so it cannot be the key)."""
        yield {"rules_session": new_session()}

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params):
        session = ctx.lifespan_context["rules_session"]
        work = functools.partial(tools.call, params.name, params.arguments, session)
        try:
            page, text = await anyio.to_thread.run_sync(work)
        except Refused as exc:
            return types.CallToolResult(
                content=[types.TextContent(text=refusal_text(exc))],
                structured_content=refusal(exc),
                is_error=True,
            )
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=page)

    return Server(
        "relore",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(env) -> int:
    """Serve MCP on stdin/stdout until the client closes it."""
    anyio, _, _, stdio_server = _sdk()
    server = build_server(dict(env))

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    return ExitStatus.OK
