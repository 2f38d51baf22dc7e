"""The one text pipeline for rules: both the task and the rule go through ``terms``.

Steps, in order: identifiers are split (``UserRepository``, ``user_repo.py`` and ``user-repo``
all give ``user`` and ``repository``); a file extension glued to a name is dropped while a
bare ``.py`` means the language; everything is lower-cased; filler words are dropped; a few
aliases are applied (``py`` → ``python``, ``db`` → ``database``, ``repo`` → ``repository``,
``spec`` → ``test``); a rough stem makes ``validate``, ``validation`` and ``validating`` one
term. ``topics`` then adds a ``#topic`` term for every word in a topic's vocabulary, so a
task about a *column* meets a rule about *migrations* (both ``#data``).

The 15 built-in topics can be extended from a JSON or YAML file named by
``RELORE_RULES_TOPICS``: ``{topic: [word, ...]}`` (words are added to a topic; a new topic
name adds a topic).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

# A bare extension (``.py`` after a space or at the start) names its language.
EXTENSION_LANGUAGES = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "go": "go",
    "rs": "rust",
    "rb": "ruby",
    "java": "java",
    "kt": "kotlin",
    "c": "c",
    "h": "c",
    "cpp": "cpp",
    "cs": "csharp",
    "php": "php",
    "sql": "sql",
    "sh": "shell",
    "md": "markdown",
    "rst": "restructuredtext",
    "yml": "yaml",
    "yaml": "yaml",
    "json": "json",
    "toml": "toml",
    "html": "html",
    "css": "css",
    "scss": "css",
    "proto": "protobuf",
    "tf": "terraform",
}

ALIASES = {
    "py": "python",
    "db": "database",
    "repo": "repository",
    "spec": "test",
}

# Words that carry no meaning for matching a rule to a change.
FILLER = frozenset(
    """
    a about above after again all also always am an and any are as at be because been
    before being below between both but by can could did do does doing done don down during
    each either else ensure etc every few file files for from further get had has have
    having here how i if in into is it its itself just keep let like make makes making may
    me might more most must my need needs never new no nor not now of off on once only or
    other our out over own please same shall she should so some such than that the their
    them then there these they this those through to too under until up upon use used uses
    using very via was way we were what when where whether which while who whom why will
    with within without would yes yet you your add adds added adding change changes
    changed changing code thing things want wants one two
    """.split()
)

# topic -> words (unstemmed; stemmed through the same pipeline when the table is built)
TOPICS: dict[str, tuple[str, ...]] = {
    "data": (
        "database sql query queries table column columns row schema migration migrations "
        "migrate index transaction postgres orm model models repository record field "
        "foreign join"
    ).split(),
    "http": (
        "http https request response endpoint route router api rest status header headers "
        "url client server timeout retry webhook cors handler get post put patch "
        "pagination paginate"
    ).split(),
    "test": (
        "test tests testing pytest unittest fixture fixtures mock mocks assert assertion "
        "coverage integration unit flaky snapshot"
    ).split(),
    "log": "log logs logging logger trace tracing metric metrics telemetry audit print".split(),
    "error": (
        "error errors exception exceptions raise raises catch except failure fail fails "
        "traceback retry crash panic"
    ).split(),
    "ui": (
        "ui frontend component components button form page view css style layout render "
        "template react modal accessibility"
    ).split(),
    "types": (
        "type types typing typed annotation annotations hint hints mypy generic interface "
        "dataclass protocol cast"
    ).split(),
    "naming": "name names naming rename variable identifier prefix suffix convention".split(),
    "security": (
        "security secret secrets password token tokens auth authentication authorization "
        "permission permissions credential credentials encrypt encryption sanitize xss csrf "
        "injection vulnerability key"
    ).split(),
    "config": (
        "config configuration setting settings environment env flag flags option "
        "options default defaults"
    ).split(),
    "dependency": (
        "dependency dependencies package packages library libraries import imports version "
        "pin upgrade vendor requirement requirements"
    ).split(),
    "docs": (
        "docs documentation docstring docstrings comment comments readme changelog document "
        "guide example"
    ).split(),
    "validate": (
        "validate validation validator input schema check checks verify parse sanitize constraint"
    ).split(),
    "style": (
        "style format formatting formatter lint linter indentation whitespace line length "
        "import order ruff black prettier eslint"
    ).split(),
    "git": "git commit commits branch branches merge rebase pull push tag history".split(),
}

_PATH_SPLIT = re.compile(r"[\s/\\]+")
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_GLUED_EXT = re.compile(r"^(?P<name>.*[A-Za-z0-9_\-])\.(?P<ext>[A-Za-z0-9]{1,5})$")
_BARE_EXT = re.compile(r"^\*?\.(?P<ext>[A-Za-z0-9]{1,5})$")
_VOWEL = re.compile(r"[aeiouy]")
_DOUBLE_END = re.compile(r"([bdfgmnprt])\1$")
_SUFFIXES = (
    ("izations", "ize"),
    ("ization", "ize"),
    ("isations", "ize"),
    ("isation", "ize"),
    ("urations", "ure"),
    ("uration", "ure"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ed", ""),
    ("ers", ""),
    ("er", ""),
    ("ments", ""),
    ("ment", ""),
    ("ly", ""),
)


def stem(word: str) -> str:
    """A rough stem: validate/validation/validating → ``validat``; sanitize/sanitization →
    ``sanitiz``; logs/logging/logger → ``log``. Idempotent on its own output."""
    w = word
    if len(w) <= 3:
        return w
    for suffix, replacement in _SUFFIXES:
        if not w.endswith(suffix):
            continue
        base = w[: -len(suffix)]
        # never cut a word down to nothing recognisable (user, order, string stay whole)
        if replacement:
            ok = len(base) >= 3
        elif suffix in ("ing", "ings", "ed"):
            ok = len(base) >= 3 and _VOWEL.search(base) is not None
        else:
            ok = len(base) >= 4
        if ok:
            w = base + replacement
            if not replacement:
                w = _DOUBLE_END.sub(r"\1", w)
            break
    else:
        if re.search(r"(s|x|z|ch|sh)es$", w) and len(w) > 5:
            w = w[:-2]
        elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _canonical(word: str) -> str:
    word = ALIASES.get(word, word)
    stemmed = stem(word)
    aliased = ALIASES.get(stemmed)
    return stem(aliased) if aliased else stemmed


def _pieces(chunk: str) -> Iterable[str]:
    """Identifier words of one whitespace/path-free chunk, extension handled."""
    bare = _BARE_EXT.match(chunk)
    if bare:
        language = EXTENSION_LANGUAGES.get(bare.group("ext").lower())
        if language:
            yield language
        return
    glued = _GLUED_EXT.match(chunk)
    if glued and glued.group("ext").lower() in EXTENSION_LANGUAGES:
        chunk = glued.group("name")
    for word in _WORD.findall(chunk):
        yield from _CAMEL.findall(word)


def words(text: str) -> list[str]:
    """The text's words after splitting, lower-casing and dropping filler (before aliases
    and stems): for tests and for showing what a task was reduced to."""
    out = []
    for chunk in _PATH_SPLIT.split(text or ""):
        chunk = chunk.strip("\"'`()[]{}<>,;:!?")
        if not chunk:
            continue
        for piece in _pieces(chunk):
            lowered = piece.lower()
            if len(lowered) < 2 or lowered in FILLER:  # numbers stay: 409, 2fa
                continue
            out.append(lowered)
    return out


def terms(text: str) -> list[str]:
    """The text as matching terms: words, aliased and stemmed (repeats kept)."""
    return [_canonical(w) for w in words(text)]


def _topics_file(env: Mapping[str, str] | None) -> str | None:
    env = os.environ if env is None else env
    return env.get("RELORE_RULES_TOPICS") or None


def load_topic_file(path: str) -> dict[str, list[str]]:
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith(".json"):
        data = json.loads(text)
    else:
        try:
            import yaml
        except ImportError:  # pragma: no cover - depends on the install
            raise ValueError(f"{path}: YAML needs PyYAML; use a .json file instead") from None
        data = yaml.safe_load(text)
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(w, str) for w in v)
        for k, v in data.items()
    ):
        raise ValueError(f"{path}: expected a mapping of topic name to a list of words")
    return data


@lru_cache(maxsize=8)
def _topic_index(extra_path: str | None) -> dict[str, frozenset[str]]:
    merged: dict[str, list[str]] = {t: list(ws) for t, ws in TOPICS.items()}
    if extra_path:
        for topic, extra in load_topic_file(extra_path).items():
            merged.setdefault(topic.lower(), []).extend(extra)
    index: dict[str, set[str]] = {}
    for topic, vocabulary in merged.items():
        for word in vocabulary:
            for term in terms(word):
                index.setdefault(term, set()).add(topic)
    return {term: frozenset(ts) for term, ts in index.items()}


def topic_index(env: Mapping[str, str] | None = None) -> dict[str, frozenset[str]]:
    """term → the topics it belongs to (built-ins plus ``RELORE_RULES_TOPICS``)."""
    return _topic_index(_topics_file(env))


def topics(term_list: Iterable[str], env: Mapping[str, str] | None = None) -> list[str]:
    """``#topic`` terms for the given terms, one per term in a topic (repeats kept)."""
    index = topic_index(env)
    out = []
    for term in term_list:
        out.extend(f"#{t}" for t in sorted(index.get(term, ())))
    return out
