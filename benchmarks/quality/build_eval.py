"""Build the retrieval-quality evaluation set from the excerpt corpus, deterministically.

    .venv/bin/python benchmarks/quality/build_eval.py          # writes eval.jsonl beside it

Three slices, each item with its provenance (the thread and turn the query was taken from)
and its targets at thread level (repo, number); a slice has two forms:

* ``failure``: an error line a developer would paste (``SomeError: message``), or, where the
  excerpt shows Python frames above it, the last few lines of that traceback. Taken verbatim
  from a turn (or the title, when no turn holds one): form ``verbatim``. Form ``rerun`` is
  the same paste from another machine (see ``rerun``), when that changes anything. Targets:
  every thread of the repository whose text holds the same error, by this script's own key
  (class + the message's first sentence, at most 60 characters, lowercased, digits and hex
  collapsed, paths cut to their basename) — independent of relore's error normal form on
  purpose. One item per distinct error.
* ``rationale``: a review thread's file path plus 2-3 words from that inline conversation
  (names it quotes first, then identifiers, then words it shares with the diff hunk, then
  its other content words): form ``words``. Form ``code``: the path plus two identifiers
  from the lines the comment is anchored to (what a developer reading the file sees).
  Target: the pull request. One item per (pull request, path).
* ``inflight``: an issue that a pull request's description claims to close (GitHub's
  closing keywords with ``#N``, ``owner/repo#N`` or an issue URL of the same repository).
  Targets: every such pull request, whatever its state. Form ``indexed`` when the corpus
  holds the issue, ``unindexed`` when it does not (what an index that sampled the PR but
  not the issue is asked).

Split: an item is ``dev`` or ``test`` by the sha1 of its source thread (issue, for inflight),
so one thread never feeds both halves. relore may be tuned on ``dev`` only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus_github import CORPUS, load_threads, split_review_thread  # noqa: E402

OUT = HERE / "eval.jsonl"

# -- failure ---------------------------------------------------------------------------------

_ERROR = re.compile(
    r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning)):[ \t]+(\S.*)$"
)
_FRAME = re.compile(r'^\s*(File "|Traceback \(most recent call last\)|-+> ?\d+|\S+\.py:\d+)')
_LINES = re.compile(r"\n|\\n")
MIN_MESSAGE = 15
MAX_LINE = 300
TRACEBACK_LINES = 8
EXCERPT_CUT = 1450  # the index returns at most ~1.5k characters: a longer excerpt was cut


def _clean_line(line: str, quoted: bool) -> str:
    """An error line as a person copies it: from the class name to the end, no markup
    (an error quoted inline in prose, `like this`, ends at its closing backtick)."""
    if quoted and "`" in line:
        line = line.split("`", 1)[0]
    line = line.rstrip().rstrip("`").rstrip()
    if len(line) > MAX_LINE:
        line = line[:MAX_LINE].rsplit(" ", 1)[0]
    return line


def error_key(error_class: str, message: str) -> str:
    """Same error, different run: digits, hex and absolute paths do not tell errors apart."""
    text = message.lower()
    text = re.sub(r"0x[0-9a-f]+", "0x", text)
    text = re.sub(r"(?:[a-z]:)?[\\/](?:[^\\/\s'\"]+[\\/])+([^\\/\s'\":,]+)", r"\1", text)
    text = re.sub(r"\d+", "0", text)
    text = re.sub(r"[\s`*]+", " ", text).strip()
    text = re.split(r"[.;!?](?:\s|$)", text, maxsplit=1)[0]  # the first sentence
    return f"{error_class.rsplit('.', 1)[-1].lower()}: {text[:60]}"


def error_lines(text: str, cut: bool = False) -> list[tuple[int, str, str, str]]:
    """(line index, cleaned line, class, message) for each error line in ``text``; with
    ``cut`` (the text ends where the index cut the excerpt) the last line is not trusted."""
    out = []
    lines = _LINES.split(text.rstrip())
    for i, raw in enumerate(lines):
        if cut and i == len(lines) - 1:
            continue
        match = _ERROR.search(raw)
        if not match or len(match.group(2).strip()) < MIN_MESSAGE:
            continue
        quoted = match.start() > 0 and raw[match.start() - 1] == "`"
        line = _clean_line(raw[match.start() :], quoted)
        out.append((i, line, match.group(1), match.group(2)))
    return out


def traceback_before(text: str, index: int, line: str) -> str | None:
    """The frames just above an error line plus the line, when there are Python frames."""
    lines = _LINES.split(text)
    window = lines[max(0, index - (TRACEBACK_LINES - 1)) : index]
    starts = [k for k, candidate in enumerate(window) if _FRAME.match(candidate)]
    if not starts:
        return None
    kept = [
        x.rstrip()
        for x in window[starts[0] :]
        if x.strip() and not x.strip().startswith("`") and not re.fullmatch(r"[\s_=~^-]+", x)
    ]
    return "\n".join([*kept, line]) if kept else None


def failure_items(threads: list[dict]) -> list[dict]:
    threads_by_key: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for t in threads:
        texts = [t["title"]] + [u["body"] for u in t["turns"]]
        for text in texts:
            for _, _, cls, message in error_lines(text):
                threads_by_key[error_key(cls, message)].add((t["repo"], t["number"]))
    items, used = [], set()
    for t in threads:
        cut = len(t["excerpt"]) >= EXCERPT_CUT
        last = len(t["turns"]) - 1
        sources = [(k, u["role"], u["body"], cut and k == last) for k, u in enumerate(t["turns"])]
        sources.append((None, "title", t["title"], False))  # only when no turn has one
        chosen = None
        for turn_index, role, text, at_cut in sources:
            for line_index, line, cls, message in error_lines(text, at_cut):
                key = error_key(cls, message)
                if key in used:
                    continue
                chosen = (turn_index, role, text, line_index, line, key)
                break
            if chosen:
                break
        if not chosen:
            continue
        turn_index, role, text, line_index, line, key = chosen
        used.add(key)
        query = traceback_before(text, line_index, line) or line
        targets = sorted(k for k in threads_by_key[key] if k[0] == t["repo"])
        item = {
            "slice": "failure",
            "form": "verbatim",
            "shape": "traceback" if "\n" in query else "error_line",
            "repo": t["repo"],
            "query": query,
            "targets": [{"repo": r, "number": n} for r, n in targets],
            "source": {
                "repo": t["repo"],
                "number": t["number"],
                "turn": turn_index,
                "role": role,
                "error_key": key,
            },
        }
        items.append(item)
        again = rerun(query)
        if again != query:
            items.append({**item, "form": "rerun", "query": again})
    return items


_PACKAGES = re.compile(r"(?:[A-Za-z]:)?[^\s\"'`(]*?[\\/](?:site|dist)-packages[\\/]")
_HOME = re.compile(r"/(?:home|Users)/[^/\s\"']+/")
_NUMBER = re.compile(r"(?<![\w.\-])\d+(?:\.\d+)?(?![\w])")
_QUOTED = re.compile(r"('[^'\n]*'|\"[^\"\n]*\")")


def rerun(query: str) -> str:
    """The same failure on another machine and run: another environment's install prefix
    and home directory, and every free-standing number (sizes, line numbers, device
    indices as in ``cuda:0``, values) one higher. Quoted strings and names with digits
    (``fp16``, ``GPT2Tokenizer``, ``v1-5``) are kept: they name what failed, not the run."""
    text = _PACKAGES.sub("/opt/conda/envs/work/lib/python3.11/site-packages/", query)
    text = _HOME.sub("/home/dev/", text)
    pieces = _QUOTED.split(text)
    for i in range(0, len(pieces), 2):  # even pieces are outside quotes
        pieces[i] = _NUMBER.sub(_bump, pieces[i])
    return "".join(pieces)


def _bump(match: re.Match) -> str:
    whole, _, fraction = match.group(0).partition(".")
    return f"{int(whole) + 1}" + (f".{fraction}" if fraction else "")


# -- rationale -------------------------------------------------------------------------------

STOPWORDS = set(
    """
    a about above actually add added adding after again agree all also although always am an
    and another any anything anyway are aren around as ask at away back be because been before
    being below best better between both but by call called can cannot case cases change
    changed changes check code come could current currently did didn do does doesn doing done
    don down each either else end enough even ever every example fine first fix fixed for from
    further get gets getting give go going good got great had has hasn have having he her here
    him his how however i if in indeed instead into is isn it its itself just keep know last
    least left less let lets like line lines look looks lot made make makes making many may
    maybe me mean means might more most much must my need needed needs never new next nice no
    non none nor not nothing now of off ok okay old on once one only or other otherwise our out
    over own part per perhaps please point possible pr prefer probably put quite rather really
    reason remove removed right same say see seems set should shouldn since so some something
    still such suggestion sure take than thank thanks that the their them then there these they
    thing things think this those though through thus to too try trying two under until up us
    use used using very want wanted was wasn way we well were what whatever when where whether
    which while who why will with without won work works would wouldn yes yet you your
    agreed ahah already anymore apologies approach arrive believe bit cool correct correctly
    feel feels forgot glad guess hey hmm idea issue lgtm little mind missed note notice oh
    oops personally pretty realized realize right seem sense sorry sounds super sure thought
    totally true false self understand wonder wondering wrong yeah yep
    """.split()
)
_BACKTICKED = re.compile(r"`([^`\n]{2,60})`")
_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\b")
_WORD = re.compile(r"\b[a-zA-Z][a-zA-Z]{3,}\b")
_NOISE = re.compile(r"^\s*```\w*\s*$|https?://\S+|@[\w-]+", re.M)


def concept_terms(conversation: str, hunk: str | None, path: str, logins: set[str]) -> list[str]:
    """2-3 words a developer looking at this file would ask about, in this order of
    preference: names the conversation quotes in backticks, identifiers it uses, words it
    shares with the code under review (the diff hunk), then its other content words."""
    path_parts = {p.lower() for p in re.split(r"[/._-]", path) if p}
    code_words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", hunk or "")}
    prose = _NOISE.sub(" ", conversation)
    names = [
        span.strip().removeprefix("self.").rstrip("()").rsplit(".", 1)[-1]
        for span in _BACKTICKED.findall(conversation)
        if re.fullmatch(r"[A-Za-z_][\w.]*(\(\))?", span.strip())
    ]
    words = [w.lower() for w in _WORD.findall(prose)]
    ordered = (
        names
        + _IDENT.findall(prose)
        + [w for w in words if w in code_words]
        + [w for w in words if w not in code_words]
    )
    taken: list[str] = []
    for term in ordered:
        low = term.lower()
        if (
            len(term) < 3
            or low in STOPWORDS
            or low in path_parts
            or low in logins
            or low in (t.lower() for t in taken)
        ):
            continue
        taken.append(term)
        if len(taken) == 3:
            break
    return taken


def rationale_items(threads: list[dict]) -> list[dict]:
    items, seen = [], set()
    for t in threads:
        if t["kind"] != "pull":
            continue
        for k, turn in enumerate(t["turns"]):
            if turn["role"] != "review_thread" or not turn["path"]:
                continue
            replies = split_review_thread(turn["body"], turn["author"])
            if not replies or (t["repo"], t["number"], turn["path"]) in seen:
                continue
            logins = {login.lower() for login, _, _ in replies}
            conversation = "\n\n".join(body for _, _, body in replies)
            terms = concept_terms(conversation, turn["diff_hunk"], turn["path"], logins)
            if len(terms) < 2:
                continue
            seen.add((t["repo"], t["number"], turn["path"]))
            item = {
                "slice": "rationale",
                "form": "words",
                "repo": t["repo"],
                "file": turn["path"],
                "query": " ".join(terms),
                "targets": [{"repo": t["repo"], "number": t["number"]}],
                "source": {
                    "repo": t["repo"],
                    "number": t["number"],
                    "turn": k,
                    "role": "review_thread",
                    "line": turn["line"],
                },
            }
            items.append(item)
            names = code_names(turn["diff_hunk"])
            if len(names) >= 2:
                items.append({**item, "form": "code", "query": " ".join(names[:2])})
    return items


PYTHON_NAMES = set(
    """
    self cls return None True False def class import from with raise pass lambda yield assert
    global nonlocal break continue print len str int float bool list dict tuple set range
    isinstance getattr setattr hasattr super kwargs args torch numpy else elif while for
    """.split()
)


def code_names(hunk: str | None) -> list[str]:
    """The names a developer sees on the lines a review comment is anchored to (the diff
    hunk's last three lines): identifiers with an underscore or an inner capital, or of six
    characters or more, nearest the anchor first."""
    if not hunk:
        return []
    lines = [x for x in hunk.split("\n") if x and not x.startswith("@@")][-3:]
    names: list[str] = []
    for line in reversed(lines):
        for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", line[1:]):
            distinct = "_" in name.strip("_") or re.search(r"[a-z][A-Z]", name) or len(name) >= 6
            if distinct and name not in PYTHON_NAMES and name not in names:
                names.append(name)
    return names


# -- inflight --------------------------------------------------------------------------------

_CLOSES = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \t]+(?:([\w.-]+/[\w.-]+)?#(\d+)\b"
    r"|https?://github\.com/([\w.-]+/[\w.-]+)/issues/(\d+)\b)",
    re.I,
)


def inflight_items(threads: list[dict]) -> list[dict]:
    """Issues a pull request's description claims to close, grouped by issue."""
    held = {(t["repo"].lower(), t["number"]): t for t in threads}
    claims: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for t in threads:
        if t["kind"] != "pull":
            continue
        for k, turn in enumerate(t["turns"]):
            if turn["role"] != "description":
                continue
            for m in _CLOSES.finditer(turn["body"]):
                repo = (m.group(1) or m.group(3) or t["repo"]).lower()
                number = int(m.group(2) or m.group(4))
                if repo != t["repo"].lower() or number == t["number"]:
                    continue
                target = held.get((repo, number))
                if target is not None and target["kind"] != "issue":
                    continue  # a pull request closing a pull request: not this question
                claim = {"repo": t["repo"], "number": t["number"], "state": t["state"], "turn": k}
                if claim not in claims[(repo, number)]:
                    claims[(repo, number)].append(claim)
    items = []
    for (repo, number), prs in sorted(claims.items()):
        issue = held.get((repo, number))
        full = issue["repo"] if issue else prs[0]["repo"]
        items.append(
            {
                "slice": "inflight",
                "form": "indexed" if issue else "unindexed",
                "repo": full,
                "number": number,
                "query": f"#{number}",
                "targets": [{"repo": p["repo"], "number": p["number"]} for p in prs],
                "source": {
                    "repo": full,
                    "number": number,
                    "issue_in_corpus": issue is not None,
                    "claims": prs,
                },
            }
        )
    return items


# -- the set ---------------------------------------------------------------------------------


def half(repo: str, number: int) -> str:
    digest = hashlib.sha1(f"{repo.lower()}#{number}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def build(threads: list[dict]) -> list[dict]:
    items = failure_items(threads) + rationale_items(threads) + inflight_items(threads)
    counters: dict[str, int] = defaultdict(int)
    out = []
    for item in items:
        name = f"{item['slice']}-{item['form']}"
        counters[name] += 1
        source = item["source"]
        out.append(
            {
                "id": f"{name}-{counters[name]:03d}",
                "split": half(source["repo"], source["number"]),
                **item,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the items go")
    out = parser.parse_args().out
    threads = load_threads()
    items = build(threads)
    with open(out, "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False, sort_keys=False) + "\n")
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for item in items:
        counts[(f"{item['slice']}/{item['form']}", item["split"])] += 1
    print(f"{len(items)} items from {CORPUS} -> {out}")
    for (name, split), n in sorted(counts.items()):
        print(f"  {name:20s} {split:5s} {n}")


if __name__ == "__main__":
    main()
