"""What a verb declaration is made of: ``Verb`` and ``Param``, the kinds a parameter may be,
and each kind's JSON Schema. Stdlib only, and cheap: every ``relore`` start imports it
(no dataclasses, no typing).

A ``Param`` is one parameter of one verb, declared once. Where it appears is ``on``:

- ``cli``: an argument of ``relore VERB`` (``client/definition.py`` adds it to argparse);
- ``mcp``: an argument of the verb's MCP tool (``client/mcp_server.py``; always also ``cli``:
  a tool call is parsed as the verb's command line);
- ``http``: a query parameter of the verb's route (``serve/inputs.parse`` reads it,
  ``serve/openapi.py`` documents it, and the client sends it when it is also ``cli``).

Its ``kind`` names its shape; each end implements each kind once (``client/argtypes.py``,
``serve/inputs.py``) and reads its numbers from here (``most``, ``low``/``high``,
``values``, ``choices``), so the two ends can never disagree about what is allowed.
"""

from __future__ import annotations

import re

from relore.contract import patterns

SURFACES = ("cli", "mcp", "http")

# kind -> whether it repeats (a list of values)
KINDS = {
    "string": False,  # any text, taken as given
    "text": False,  # text of at most `most` characters, without NUL (`what` names it)
    "query": False,  # search text: `most`, or `pasted` for a pasted traceback
    "pattern": False,  # grep's regular expression: at most `most`, no NUL or line break
    "repo": False,  # owner/name
    "repos": True,  # owner/name, repeatable: at most `values`
    "owner": False,  # a GitHub user or organisation (the owner of owner/name)
    "date": False,  # YYYY-MM-DD
    "path": False,  # relative to the repository root, never leaving it (at most `most`)
    "identifier": False,  # symbol's name
    "dotted": False,  # copies' name: an identifier or a dotted one
    "session": False,  # a rules session id
    "thread_ref": False,  # o/n#N, #N, N or a pasted GitHub URL (the CLI's; sent as repo+number)
    "path_line": False,  # PATH:LINE (the CLI's; sent as path+line)
    "number": False,  # a thread number
    "int": False,  # a whole number in [low, high] (high None: no upper bound)
    "limit": False,  # rows on a page: 1 to `high`, and `high` when absent (over HTTP)
    "choice": False,  # one of `choices`
    "flag": False,  # a switch: present or not
    "many": True,  # repeatable; at most `values` values of at most `most` characters each
    "files": True,  # rules' paths: at least one, at most `values`
    "rule_ids": True,  # rule ids, at most `values`
}


def _surfaces(on: str) -> frozenset:
    surfaces = frozenset(on.split())
    unknown = surfaces - set(SURFACES)
    if unknown or ("mcp" in surfaces and "cli" not in surfaces):
        raise ValueError(f"on={on!r}: surfaces are {SURFACES}, and mcp needs cli")
    return surfaces


class Param:
    """One parameter of one verb. ``name`` is its name over HTTP; ``dest`` its name on the
    command line's namespace and over MCP (default ``name``). On the command line it is an
    option (``flags``, default ``--name`` with dashes) or ``positional``. ``required`` is
    True, False,
    ``"cli"`` (on the command line and over MCP, not over HTTP) or ``"http"`` (over HTTP, not
    on the command line, which gets it another way). ``help`` says it on every surface
    (``--flag`` is said ``flag`` off the command line), unless ``http_help`` says it over
    HTTP where the command line's words do not fit."""

    __slots__ = (
        "aliases",
        "choices",
        "default",
        "dest",
        "flags",
        "group",
        "help",
        "high",
        "hint",
        "http_help",
        "kind",
        "low",
        "metavar",
        "most",
        "name",
        "on",
        "pasted",
        "positional",
        "required",
        "unit",
        "values",
        "what",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        kind: str = "string",
        help: str = "",
        *,
        on: str = "cli mcp http",
        required: bool | str = False,
        positional: bool = False,
        flags: tuple[str, ...] | None = None,
        dest: str | None = None,
        metavar: str | None = None,
        default=None,
        group: str | None = None,
        most: int | None = None,
        pasted: int | None = None,
        low: int | None = None,
        high: int | None = None,
        values: int | None = None,
        choices: tuple[str, ...] | None = None,
        what: str | None = None,
        hint: str = "",
        unit: str | None = None,
        aliases: tuple[str, ...] = (),
        http_help: str | None = None,
    ):
        if kind not in KINDS:
            raise ValueError(f"{name}: no kind {kind!r} (one of {', '.join(KINDS)})")
        self.name, self.kind, self.help = name, kind, help
        self.on = _surfaces(on)
        self.required, self.positional = required, positional
        self.flags = () if positional else (flags or ("--" + name.replace("_", "-"),))
        self.dest = dest or name
        self.metavar, self.default, self.group = metavar, default, group
        self.most, self.pasted, self.values, self.choices = most, pasted, values, choices
        self.low = 1 if low is None and kind == "limit" else low
        self.high = high
        self.what, self.hint, self.unit, self.aliases = what, hint, unit, aliases
        self.http_help = http_help

    @property
    def repeat(self) -> bool:
        return KINDS[self.kind]

    def required_on(self, surface: str) -> bool:
        """Whether a request on ``surface`` must carry it (``cli`` stands for MCP too)."""
        if self.required in ("cli", "http"):
            return self.required == ("http" if surface == "http" else "cli")
        return bool(self.required)

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.kind!r}, on={' '.join(sorted(self.on))!r})"


class Verb:
    """One verb: ``help`` (its line in ``relore --help``, and the MCP tool's title),
    ``description`` (``relore VERB --help``), ``purpose`` (the MCP tool's description: when
    an agent should call it; None: no tool), ``route`` (under ``/api/v1/``; None: answered
    without the daemon), ``summary`` (the route's, in the OpenAPI document), ``source``
    (``index``, ``clone`` or ``tree``: what answers it) and its ``params`` in order."""

    __slots__ = ("description", "help", "name", "params", "purpose", "route", "source", "summary")

    def __init__(
        self,
        name: str,
        help: str,
        params: list[Param] | tuple[Param, ...] = (),
        *,
        description: str | None = None,
        purpose: str | None = None,
        route: str | None = None,
        summary: str | None = None,
        source: str | None = None,
    ):
        self.name, self.help, self.description = name, help, description
        self.purpose, self.route, self.summary, self.source = purpose, route, summary, source
        self.params = tuple(params)
        for param in self.params:
            if route is None and param.on == {"http"}:
                raise ValueError(f"{name}: {param.name} is HTTP's only, but {name} has no route")

    def on(self, surface: str) -> list[Param]:
        """Its parameters on ``surface`` (``cli``, ``mcp`` or ``http``), in order; none over
        HTTP without a route."""
        if surface == "http" and self.route is None:
            return []
        return [p for p in self.params if surface in p.on]

    def sent(self) -> list[Param]:
        """The parameters the client sends as it parsed them (on the command line and over
        HTTP under one name each)."""
        return [p for p in self.on("http") if "cli" in p.on]

    def adding(self, *params: Param) -> Verb:
        """This verb with ``params`` after its own (a test's copy; declarations are edited
        in place)."""
        return Verb(
            self.name,
            self.help,
            (*self.params, *params),
            description=self.description,
            purpose=self.purpose,
            route=self.route,
            summary=self.summary,
            source=self.source,
        )

    def __repr__(self) -> str:
        return f"Verb({self.name!r}, route={self.route!r})"


def said(text: str) -> str:
    """Help written for the command line, said of a tool or a query parameter:
    ``--max-tokens`` is ``max_tokens``."""
    return re.sub(r"--([a-z][a-z-]+)", lambda m: m.group(1).replace("-", "_"), text or "")


def json_schema(param: Param) -> dict:
    """The JSON Schema of one value of ``param`` (a list's, when it repeats): the MCP tool's
    property and the OpenAPI parameter's schema, both from here."""
    kind = param.kind
    if kind in ("int", "limit", "number"):
        schema: dict = {"type": "integer"}
        if param.low is not None:
            schema["minimum"] = param.low
        if param.high is not None:
            schema["maximum"] = param.high
        return schema
    if kind == "flag":
        return {"type": "boolean"}
    if kind == "choice":
        return {"type": "string", "enum": list(param.choices)}
    if param.repeat:
        item: dict = {"type": "string"}
        schema = {"type": "array", "items": item}
        if kind == "files":
            schema["minItems"] = 1
            item["pattern"] = "\\S"
        elif kind == "rule_ids":
            item["pattern"] = f"^{patterns.RULE_ID_RE.pattern}$"
        elif kind == "repos":
            item["pattern"] = f"^{patterns.REPO}$"
        if param.most is not None:
            item["maxLength"] = param.most
        if param.values is not None:
            schema["maxItems"] = param.values
        return schema
    schema = {"type": "string"}
    if kind == "repo":
        schema["pattern"] = f"^{patterns.REPO}$"
    elif kind == "owner":
        schema["pattern"] = f"^{patterns.OWNER}$"
    elif kind == "session":
        schema["pattern"] = f"^{patterns.SESSION_RE.pattern}$"
    elif kind == "date":
        schema["format"] = "date"
    most = param.pasted or param.most
    if most is not None:
        schema["maxLength"] = most
    return schema
