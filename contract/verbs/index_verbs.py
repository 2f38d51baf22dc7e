"""The verbs the daemon answers from its index: search, precedent, status, rules, thread,
inflight."""

from __future__ import annotations

from relore.contract import limits, patterns
from relore.contract.verbs.common import FORMAT, page_flags, repo
from relore.contract.verbs.shape import Param, Verb


def _signal(name: str, help: str) -> Param:
    return Param(name, "many", help, values=limits.MAX_SIGNAL_VALUES, most=limits.MAX_QUERY_CHARS)


SEARCH = Verb(
    "search",
    "ranked search over issues, PRs and comments",
    [
        Param(
            "q",  # the HTTP API's name for it (relore mcp takes `text` too, its old name)
            "query",
            "words, an error line, a pasted traceback (up to "
            f"{limits.MAX_PASTE_CHARS} characters: the daemon cuts it to its error line and "
            "deepest frames)",
            positional=True,
            metavar="TEXT",
            default="",
            most=limits.MAX_QUERY_CHARS,
            pasted=limits.MAX_PASTE_CHARS,
            aliases=("text",),
            http_help=f"words or an error line (at most {limits.MAX_QUERY_CHARS} characters), "
            f"or a pasted traceback (at most {limits.MAX_PASTE_CHARS}: cut to its lead, error "
            "line and deepest frames, and said in a query_cut notice)",
        ),
        Param(
            "repo",
            "repos",
            "owner/name; repeat it to search several; none (and no --org): every "
            "repository indexed, ranked together",
            values=limits.MAX_SEARCH_REPOS,
        ),
        Param("org", "owner", "every indexed repository of this owner, ranked together"),
        Param(
            "limit",
            "limit",
            f"hits, 1-{limits.MAX_HITS} (default {limits.MAX_HITS})",
            high=limits.MAX_HITS,
            default=limits.MAX_HITS,
            unit="hits per page",
        ),
        Param("trust", "choice", choices=limits.TRUST_TIERS),
        Param("state", "choice", choices=limits.STATES),
        Param("author", "string", "GitHub login"),
        _signal("file", "threads that touched this path"),
        _signal("error", "threads carrying this error"),
        _signal("test", "threads naming this test id"),
        _signal("symbol", "threads naming this symbol"),
        Param(
            "kind",
            "choice",
            "the question's kind: sets the trust floor (rationale: authoritative only) and "
            "caps precedent at 5 (for earlier pull requests of the same kind, `relore "
            "precedent` ranks pull requests whole)",
            choices=limits.QUESTION_KINDS,
        ),
        Param("since", "date", "documents from this date on, YYYY-MM-DD"),
        *page_flags(),
        FORMAT,
    ],
    description="TEXT - reads the text from stdin, as does no TEXT with stdin a file or a "
    "pipe: relore search --repo o/n < traceback.txt",
    purpose="Ranked search over the repository's issues, pull requests, comments and "
    "review comments. Call it before changing code whose history may matter: paste an "
    "error line or a traceback, or name a file, test or symbol, to find earlier reports, "
    "fixes and the reasons given for them. Give several `repo`, an `org`, or neither to "
    "search every indexed repository at once (an error often surfaced first in a sibling "
    "project). At most 10 hits, each a snippet naming its repository; read one with "
    "`thread`.",
    route="search",
    summary="Ranked search: strict conjunction, then a disclosed widening; a question is "
    "also asked in meaning (the semantic tier, when on)",
    source="index",
)

PRECEDENT = Verb(
    "precedent",
    "earlier pull requests that made the same kind of change (merged first)",
    [
        Param(
            "q",  # the HTTP API's name for it (relore mcp takes `text` too, its old name)
            "text",
            "the change you are about to make, in one or two sentences (paths and "
            "`symbols` in it count as evidence)",
            positional=True,
            required="cli",  # over HTTP, files alone may say what the change is
            metavar="DESCRIPTION",
            most=limits.MAX_QUERY_CHARS,
            what="description",
            hint=": one or two sentences about the change",
            aliases=("text",),
        ),
        Param(
            "file",
            "many",
            "a file the change touches: boosts, never filters (at most "
            f"{limits.MAX_SIGNAL_VALUES})",
            values=limits.MAX_SIGNAL_VALUES,
            most=limits.MAX_QUERY_CHARS,
        ),
        repo(required=True),
        Param(
            "limit",
            "limit",
            f"pull requests, 1-{limits.MAX_PRECEDENT} (default {limits.MAX_PRECEDENT})",
            high=limits.MAX_PRECEDENT,
            default=limits.MAX_PRECEDENT,
            unit="pull requests",
        ),
        *page_flags(),
        FORMAT,
    ],
    description="The closed pull requests that made the kind of change DESCRIPTION "
    "describes, merged ones first, each with why it matched (terms, files, meaning), "
    "the files it changed and the review comments that shaped it. Open pull requests "
    "are not precedent: `relore search --state open` lists them.",
    purpose="The earlier pull requests that made the same kind of change you are "
    "about to make: describe the change in a sentence or two (and name the files with "
    "`file`) before writing code. Merged ones first, at most 5, each saying why it matched "
    "and showing the files it changed and 1-3 review comments that shaped it; read one "
    "whole with `thread`.",
    route="precedent",
    summary="The earlier pull requests that made the same kind of change: merged first, "
    "each with why it matched, the files it changed and the review comments that shaped it",
    source="index",
)

STATUS = Verb(
    "status",
    "what the index holds",
    [repo(), *page_flags(), FORMAT],
    purpose="What the daemon has indexed: each repository's threads and documents and "
    "how fresh each extract pass is. Call it when unsure which repositories are indexed or "
    "whether a missing answer means old data.",
    route="status",
    summary="What the index holds, per repository; where the daemon reads (replica: a "
    "primary, or a hot standby and how far behind it is)",
    source="index",
)

RULES = Verb(
    "rules",
    "the project's rules your change needs (never repeated within a session)",
    [
        Param(
            "file",
            "files",
            "paths relative to the repo root",
            positional=True,
            required=True,
            dest="files",
            metavar="FILE",
            values=limits.MAX_RULES_FILES,
        ),
        repo(required=True),
        Param(
            "task",
            "text",
            f"your change, in one sentence (<= {limits.MAX_TASK_CHARS} chars)",
            most=limits.MAX_TASK_CHARS,
            what="task",
            hint=": one sentence about the change",
        ),
        Param(
            "include",
            "rule_ids",
            "also send this rule",
            metavar="ID",
            values=limits.MAX_INCLUDE,
        ),
        Param(
            "max_tokens",
            "int",
            f"stop at this many tokens (>= {limits.MIN_MAX_TOKENS})",
            low=limits.MIN_MAX_TOKENS,
        ),
        Param("refresh", "flag", "send again what this session was sent"),
        # over MCP the MCP session is the rules session
        Param(
            "session",
            "session",
            "session id (default: see above)",
            on="cli http",
            http_help="the rules session: a rule it was sent is not sent again",
        ),
        Param(
            "session_token",
            "text",
            "the session_token of the session's last reply, sent back; one that does not "
            "verify starts the session afresh and says why",
            on="http",  # the client keeps it (client/rules.py)
            most=limits.MAX_SESSION_TOKEN_CHARS,
        ),
        *page_flags(),
    ],
    description="The rules whose scope covers FILE..., chosen for --task, minus those "
    "already sent in this session; the titles of the others are listed once. Session: "
    "--session, else RELORE_SESSION, else this terminal's POSIX session; what it was "
    "sent is kept as the daemon's signed token in RELORE_STATE_DIR (else "
    "~/.local/state/relore/rules-sessions) and sent back.",
    purpose="The project's rules for the files you are about to change, chosen for your "
    "task. Call it before editing, with the paths and a one-sentence task. A rule sent once "
    "is not sent again in this MCP session (its title is listed instead); `refresh` sends "
    "them again after your context was reset.",
    route="rules",
    summary="The project's rules a change needs, never repeated in a session",
    source="index",
)


def _ref() -> Param:
    """A thread as the command line names it; sent as ``repo`` and ``number``."""
    return Param(
        "ref", "thread_ref", patterns.REF_FORMS, on="cli mcp", positional=True, required=True
    )


def _bare(help: str = "owner/name (when REF is a bare number)") -> list[Param]:
    """``--repo`` on the command line (REF may name it); ``repo`` and ``number`` over HTTP."""
    return [
        Param("repo", "repo", help, required="http", http_help="owner/name"),
        Param("number", "number", "the thread's number", on="http", required=True),
    ]


THREAD = Verb(
    "thread",
    "one thread in capped views: a page, an outline, a comment, the opening post, files",
    [
        _ref(),
        *_bare(),
        Param(
            "mode",
            "choice",
            "the view: a page, an outline, one comment (comment=ID), the opening post "
            "whole, the changed paths",
            on="http",  # the command line's --outline/--full/--files/--comment
            choices=("page", "outline", "comment", "full", "files"),
            default="page",
        ),
        Param("outline", "flag", "one line per comment (≤ 100)", on="cli mcp", group="view"),
        Param("full", "flag", "the opening post whole", on="cli mcp", group="view"),
        Param("files", "flag", "the changed paths", on="cli mcp", group="view"),
        Param("comment", "string", "one comment whole", metavar="ID", group="view"),
        Param("after", "string", "the comments after this one, in order", metavar="ID"),
        Param(
            "focus",
            "text",
            "order the page by these words",
            metavar="TEXT",
            most=limits.MAX_FOCUS_CHARS,
        ),
        Param(
            "limit",
            "limit",
            f"comments per page, 1-{limits.THREAD_PAGE}",
            high=limits.THREAD_PAGE,
            default=limits.THREAD_PAGE,
            unit="comments per page",
        ),
        *page_flags(),
        FORMAT,
    ],
    description="A page holds at most 10 comments (the ends and the middle); --after ID "
    "reads on in order; --focus orders a page (never empties it) and narrows an outline.",
    purpose="One issue or pull request in capped views. Call it to read a search hit: a "
    "page is the opening post and at most 10 comments (the ends and the middle); `after` "
    "reads on in order, `outline` lists every comment on a line, `comment` reads one whole, "
    "`full` the opening post whole, `files` the changed paths, `focus` orders by words.",
    route="thread",
    summary="One thread in capped views",
    source="index",
)

INFLIGHT = Verb(
    "inflight",
    "open and merged pull requests that claim to close an issue",
    [_ref(), *_bare(), *page_flags(), FORMAT],
    purpose="Pull requests that claim to close an issue: open, merged, then abandoned. "
    "Call it before starting on an issue, to see who is already on it or has tried.",
    route="inflight",
    summary="Open and merged pull requests that claim to close an issue",
    source="index",
)
