"""What a document's examples say: its Python code blocks (Markdown fences, reST
directives and ``::`` blocks, ``>>>`` lines), the modules they import and the names they
bind themselves, and their references counted. No regex here can backtrack: an example
is untrusted text."""

from __future__ import annotations

import re
import textwrap

from relore.lens import engine
from relore.lens.doc_files import MARKDOWN, REST, SOURCE

# code blocks parsed, the bytes of one (the rest of a longer one is cut at a line's end),
# and their bytes in all. Small on purpose: tree-sitter's queries over a block of deeply
# nested errors (16 kB of "(") take time growing with the square of its size, ~70 ms at
# 4 kB, so the most a hostile documentation costs is 16 such blocks
MAX_BLOCKS = 512
MAX_BLOCK_BYTES = 4096
MAX_CODE_BYTES = 64 * 1024
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "pyi", "ipython"})
CONSOLE_TAGS = frozenset({"pycon", "python-repl", "pyrepl", "doctest"})
UNSAID = ""  # a block whose language is not said
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\{?\.?([A-Za-z0-9_+-]*)")
_SOURCE_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*\{?\.?([A-Za-z0-9_+-]*)")
_DIRECTIVE = re.compile(
    r"([ \t]*)\.\.[ \t]+(code-block|code|sourcecode|doctest|testcode|ipython)::[ \t]*(\S*)"
)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^#;\n]+)", re.MULTILINE)
_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^#;\n)]+)", re.MULTILINE)
# a dotted chain (``httpx.get``, ``pkg . routing . serve``), matched from an identifier's
# start only, so one pass over a block
_CHAIN = re.compile(rb"(?<![\w.])[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
# what an example binds itself is read line by line, each line once (no regex here may
# backtrack: an example is untrusted text); a longer line binds nothing
MAX_BINDING_LINE = 400
_TARGETS = re.compile(r"[\w \t,*]+")
_BINDERS = re.compile(r"\b(for|def|lambda)\b")
_AS = re.compile(r"\bas[ \t]+(\w+)")
_KEYWORD = re.compile(rb"[ \t]*=(?!=)")
_WORD = re.compile(r"\w+")


def _console(lines: list[str]) -> str:
    """The statements of ``>>>`` / ``...`` lines, prompts removed (their output is not)."""
    kept = []
    for line in textwrap.dedent("\n".join(lines)).splitlines():
        if line.startswith((">>> ", "... ")) or line in (">>>", "..."):
            kept.append(line[4:])
    return "\n".join(kept)


def _indented_block(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines from ``start`` indented deeper than ``indent`` (blank lines inside), and
    where the block ends."""
    end = start
    body = []
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
        end += 1
    return body, end


def blocks(text: str, form: str) -> list[tuple[str, str]]:
    """``(language tag, lines)`` of every code block of a document in ``form`` (``MARKDOWN``,
    ``REST``, or ``SOURCE``: a source file's docstrings and comments, where a fence may be
    indented and a ``::`` is not a literal block), in order: ``"pycon"`` for ``>>>`` lines,
    ``UNSAID`` when the document does not say. One pass over the lines."""
    lines = text.splitlines()
    markdown = form == MARKDOWN
    fences = _FENCE if markdown else _SOURCE_FENCE if form == SOURCE else None
    literal = form == REST
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(lines) and len(found) < MAX_BLOCKS:
        line = lines[i]
        stripped = line.strip()
        fence = fences.match(line) if fences is not None else None
        if fence:
            mark = fence.group(1)
            body = []
            i += 1
            while i < len(lines):
                close = lines[i].strip()
                if close.startswith(mark) and not close.strip(mark[0]):
                    break
                body.append(lines[i])
                i += 1
            found.append((fence.group(2).lower(), "\n".join(body)))
            i += 1
            continue
        directive = None if markdown else _DIRECTIVE.match(line)
        if directive or (literal and stripped.endswith("::") and not stripped.startswith("..")):
            indent = len(line) - len(line.lstrip())
            i += 1
            while directive and i < len(lines) and lines[i].strip().startswith(":"):
                i += 1  # the directive's options
            body, i = _indented_block(lines, i, indent)
            if directive:
                kind, tag = directive.group(2), directive.group(3).lower()
                tag = {"doctest": "pycon", "testcode": "python", "ipython": "python"}.get(kind, tag)
            else:
                tag = UNSAID
            found.append((tag, "\n".join(body)))
            continue
        if stripped.startswith(">>>"):
            body = []
            while i < len(lines) and lines[i].strip().startswith((">>>", "...")):
                body.append(lines[i].strip())
                i += 1
            found.append(("pycon", "\n".join(body)))
            continue
        i += 1
    return found


def _modules(code: str) -> tuple[set[str], set[str], set[str]]:
    """The names a block binds to modules (``import httpx``, ``import a.b as c``), the
    names it imports from one (``from rich import print``), and the modules' own names
    (``a``, ``b``: a path, not a use of the package's definitions)."""
    modules, imported, paths = set(), set(), set()
    for match in _IMPORT.finditer(code):
        for part in match.group(1).split(","):
            words = part.split()
            if not words:
                continue
            paths.update(words[0].split("."))
            modules.add(
                words[2] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0]
            )
    for match in _FROM.finditer(code):
        paths.update(match.group(1).split("."))
        for part in match.group(2).split(","):
            words = part.split()
            if words:
                imported.add(words[0])
    return modules, imported, paths - imported


def _bound(code: str) -> set[str]:
    """The names an example binds itself (``r = httpx.get(...)``, ``def app(scope)``,
    ``for _ in``, ``as client``): its own, not the package's."""
    bound: set[str] = set()
    for line in code.splitlines():
        if len(line) > MAX_BINDING_LINE:
            continue
        stripped = line.strip()
        lists = []
        head, equals, rest = stripped.partition("=")
        if equals and not rest.startswith("=") and head[-1:] not in "<>!=+-*/%&|^@":
            target = head.partition(":")[0]  # x: int = 1
            if _TARGETS.fullmatch(target):
                lists.append(target)
        for binder in _BINDERS.finditer(stripped):
            after = stripped[binder.end() :]
            if binder.group(1) == "for":
                lists.append(after.partition(" in ")[0])
            elif binder.group(1) == "def":
                lists.append(after.partition("(")[2].partition(")")[0])
            else:
                lists.append(after.partition(":")[0])
        for listed in lists:
            for part in listed.split(","):
                word = _WORD.search(part.partition(":")[0].partition("=")[0])
                if word:
                    bound.add(word.group())
        bound.update(m.group(1) for m in _AS.finditer(line))
    return bound


def _count(into: dict, source: bytes, provider, said: bool, context) -> None:
    has_error, definitions, occurrences, _exports = engine.extract(provider, source)
    if has_error and not said:
        return  # an untagged block that is not Python
    modules, imported, paths, bound = context
    own = {d[0] for d in definitions} | bound
    qualified = set()  # where a name is reached through a module the examples import
    for chain in _CHAIN.finditer(source) if modules else ():
        parts = list(_IDENTIFIER.finditer(chain.group()))
        if parts[0].group().decode() in modules:
            qualified.update(chain.start() + part.start() for part in parts[1:])
    for name, places in occurrences.items():
        if name in modules or name in paths:
            continue
        for byte, _line, _column, code in places:
            if code == engine.DEFINITION or _KEYWORD.match(source, byte + len(name.encode())):
                continue  # a keyword argument names a parameter, not a definition
            if engine.local(code):
                continue  # a parameter or a local of the example's own function
            if name in own and not engine.through(code):
                continue  # the example's own (``@Request.application def application``)
            if engine.through(code):
                if byte in qualified:
                    slot = 0  # httpx.get: the package's, by its module
                elif name in provider.builtin_methods:
                    continue  # r.headers.get: a dict's
                else:
                    slot = 1
            elif name in provider.builtin_names and name not in imported:
                continue  # print: the built-in, unless the block imported it
            else:
                slot = 0
            into.setdefault(name, [0, 0])[slot] += 1
