"""``relore mcp``: relore's verbs as Model Context Protocol tools, over stdio.

Each tool is a verb with a ``purpose`` in its declaration (``contract/verbs``): its input
schema is made from the declaration (names, kinds, limits, choices and help), its arguments
become the verb's command line and are parsed by the parser made from the same declaration,
and it runs through ``cli.run`` — the CLI's one request builder, renderer and mapping of
failures. So a tool answers with the text ``relore`` prints (envelope, ``>``
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
import secrets

from relore.client import cli
from relore.client.definition import build_parser
from relore.client.exits import EXIT_STATUSES, ExitStatus, Refused
from relore.contract import envelope, verbs
from relore.contract.version import __version__

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


def input_schema(verb) -> dict:
    """A verb's tool arguments as a JSON Schema object, from its declaration: each
    parameter's kind, limits, help and default; an old name of one is stated beside it."""
    params = verb.on("mcp")
    properties = {}
    for param in params:
        prop = verbs.json_schema(param)
        if param.help:
            prop["description"] = verbs.said(param.help)
        if param.default not in (None, False, [], ""):
            prop["default"] = param.default
        properties[param.dest] = prop
    for param in params:
        for old in param.aliases:
            said = f"the same as {param.dest} (its old name)"
            properties[old] = {**properties[param.dest], "description": said}
    schema = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    required = [p.dest for p in params if p.required_on("cli")]
    if required:
        schema["required"] = required
    return schema


def _bad(verb: str, message: str) -> Refused:
    return Refused(ExitStatus.USAGE, f"relore {verb}: error: {message}")


def _check(verb: str, name: str, prop: dict, value) -> list[str]:
    """``value`` as command-line words, once it is of the type the schema states."""
    kind = prop["type"]
    if kind == "array":
        if isinstance(value, str):  # one value where several may be: `repo` was one string
            value = [value]
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


def argv(verb: str, arguments: dict) -> list[str]:
    """A tool call's arguments as the verb's command line. Options are written ``--o=v``
    and positionals after ``--``, so a value starting with ``-`` stays a value."""
    declared = verbs.VERBS[verb]
    params = {p.dest: p for p in declared.on("mcp")}
    schema = input_schema(declared)["properties"]
    arguments = dict(arguments)
    for name, param in params.items():
        for old in param.aliases:
            if old not in arguments:
                continue
            if arguments.get(name) is not None and arguments[name] != arguments[old]:
                raise _bad(verb, f"{old} is the old name of {name}: give one of them")
            value = arguments.pop(old)
            if arguments.get(name) is None:
                arguments[name] = value
    unknown = sorted(set(arguments) - set(params))
    if unknown:
        raise _bad(verb, f"no argument {', '.join(unknown)}; it takes {', '.join(params)}")
    options, positionals = [], []
    for name, value in arguments.items():
        if value is None:
            continue
        param, words = params[name], _check(verb, name, schema[name], value)
        if param.positional:
            positionals.extend(words)
            continue
        flag = max(param.flags, key=len)
        if param.kind == "flag":
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
        self.verbs = [name for name, verb in verbs.VERBS.items() if verb.purpose]

    def definitions(self) -> list[dict]:
        return [
            {
                "name": name,
                "title": verbs.said(verbs.VERBS[name].help),
                "description": verbs.VERBS[name].purpose,
                "input_schema": input_schema(verbs.VERBS[name]),
            }
            for name in self.verbs
        ]

    def call(self, verb: str, arguments: dict | None, session: str) -> tuple[dict, str]:
        """The page and its text, or ``Refused``. Blocking (urllib, the code lens)."""
        if verb not in self.verbs:
            raise Refused(ExitStatus.USAGE, f"relore: no tool {verb!r}: {', '.join(self.verbs)}")
        words = argv(verb, arguments or {})
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
