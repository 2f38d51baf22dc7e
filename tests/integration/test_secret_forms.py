"""Secrets in the forms ML projects paste never reach the agent or a mart (issue #35, item 2).

Each form below is planted where a real thread carries it (a title, an opening post, a
comment, a review comment's diff hunk, a label), served by a fake GitHub and landed by
``relored extract``, then built by the world's ``dbt build``. Each form is its own test:
its needles (the secret, and every fragment of it a split or a wrap leaves) are absent from
every string of every mart the repository's rows hold, and from the pages an agent reads
(``relore thread`` in text and ``--json``, the API's ``format=text``, ``relore search``).
``relore mcp`` runs the same ``cli.run`` and renderer, so its text is the CLI's.

The clone's lines go through the same catalog: ``relore grep``, ``symbol`` and ``copies``
on a clone holding tokens print none of them.
"""

from __future__ import annotations

import base64
import io
import json
import random
import string
import tempfile
import textwrap
import urllib.parse
import urllib.request
from dataclasses import dataclass

import psycopg
import pytest
from fixtures import corpus, corpus_pulls
from fixtures import world as worlds
from fixtures.gitrepo import git as _git

from relore.client import cli as client_cli
from relore.contract.version import __version__
from relore.operate import cli as relored

pytestmark = pytest.mark.slow

REPO = "acme/pasted"
_rng = random.Random(3535)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _r(n: int, alphabet: str = ALNUM) -> str:
    """n random characters; a digit, a lower and an upper case letter when the alphabet
    has them (a real key's shape)."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        kinds = [set(alphabet) & set(k) for k in (string.digits, string.ascii_lowercase,
                 string.ascii_uppercase)]  # fmt: skip
        if all(set(value) & kind for kind in kinds if kind):
            return value


@dataclass(frozen=True)
class Form:
    name: str  # the test id: what the form is
    where: str  # title, body, comment, hunk, label
    text: str
    needles: tuple[str, ...]  # none of these may survive anywhere


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _forms() -> list[Form]:
    wandb, wandb2, wandb3 = _r(40, HEX), _r(40, HEX), _r(40, HEX)
    aws = _r(40, ALNUM + "/+")
    kaggle, kaggle2 = _r(32, HEX), _r(32, HEX)
    kgat = "KGAT_" + _r(32, HEX)
    tgp = "tgp_v1_" + _r(43, ALNUM + "_-")
    together = _r(64, HEX)
    cohere_key, mistral_key = _r(40), _r(32)
    twilio_sid, twilio_token = "AC" + _r(32, HEX), _r(32, HEX)
    ghp, hf1, hf2 = _r(36), _r(34, string.ascii_letters), _r(34, string.ascii_letters)
    hf64 = "hf_" + _r(34, string.ascii_letters)
    blob = base64.b64encode(hf64.encode()).decode()
    zw1, zw2 = _r(20, string.ascii_letters), _r(20, string.ascii_letters)
    wide = _r(34, string.ascii_letters)
    proj = "sk-proj-" + _r(74, ALNUM + "_-") + "T3BlbkFJ" + _r(74, ALNUM + "_-")
    wrapped = textwrap.fill(proj, 80, break_long_words=True, break_on_hyphens=False)
    sendgrid = "SG." + _r(22, ALNUM + "_-") + "." + _r(43, ALNUM + "_-")
    sendgrid_flat = "SG." + _r(66, string.ascii_lowercase + string.digits + "_-")
    return [
        Form("wandb key set in os.environ, in a comment", "comment",
             f'```python\nimport os\nos.environ["WANDB_API_KEY"] = "{wandb}"\n```', (wandb,)),
        Form("wandb key set in os.environ, in a diff hunk", "hunk",
             f'@@ -1,2 +1,3 @@\n import os\n+os.environ["WANDB_API_KEY"] = "{wandb2}"\n'
             " import wandb", (wandb2,)),
        Form("wandb.login(key=...)", "comment",
             f'I call\n\n    wandb.login(key="{wandb3}")\n\nand it hangs', (wandb3,)),
        Form("aws secret set in os.environ", "comment",
             f"os.environ['AWS_SECRET_ACCESS_KEY'] = '{aws}'", (aws,)),
        Form("kaggle.json", "comment",
             f'my ~/.kaggle/kaggle.json:\n```json\n{{"username":"someone","key":"{kaggle}"}}\n```',
             (kaggle,)),
        Form("KAGGLE_KEY=", "body",
             f"```\nexport KAGGLE_USERNAME=someone\nexport KAGGLE_KEY={kaggle2}\n```", (kaggle2,)),
        Form("KGAT_ token", "comment", f"kaggle says 401 with {kgat}", (kgat, kgat[5:])),
        Form("together tgp_v1_ key in a title", "title", f"Together rejects {tgp}",
             (tgp, tgp[7:])),
        Form("together 64-hex key passed positionally", "comment",
             f'client = Together("{together}")', (together,)),
        Form("cohere key passed positionally", "comment",
             f'co = cohere.Client("{cohere_key}")', (cohere_key,)),
        Form("mistral key passed positionally", "comment",
             f'client = MistralClient("{mistral_key}")', (mistral_key,)),
        Form("twilio sid and token passed positionally", "comment",
             f'client = Client("{twilio_sid}", "{twilio_token}")', (twilio_token,)),
        Form("ghp_ split by bold markup", "comment", f"the token was **ghp_**{ghp} oops",
             (ghp,)),
        Form("hf_ split by an HTML tag", "comment", f"token: <b>hf_</b>{hf1}", (hf1,)),
        Form("hf_ split by backticks", "body", f"token: `hf_`{hf2}", (hf2,)),
        Form("hf_ token wrapped in base64", "comment", f"HF_B64: {blob}\n\ndecode it",
             (blob, hf64, hf64[3:])),
        Form("zero-width space inside a token", "comment", f"hf_{zw1}\u200b{zw2} leaked",
             (zw1, zw2)),
        Form("fullwidth token", "comment", f"try {_fullwidth('hf_' + wide)} please",
             (_fullwidth(wide), wide)),
        Form("sk-proj- key wrapped at 80 columns", "comment", f"my key:\n{wrapped}\nthanks",
             tuple(line for line in wrapped.split("\n")[1:])),
        Form("sendgrid key as a label", "label", sendgrid, (sendgrid, sendgrid[3:25])),
        Form("sendgrid key in gitleaks' shape", "comment", f"SENDGRID: {sendgrid_flat}",
             (sendgrid_flat, sendgrid_flat[3:])),
    ]  # fmt: skip


FORMS = _forms()
# a 40-hex word that is no commit (a key pasted bare), and one the text says is a commit
BARE_HEX = _r(40, HEX)
SAID_SHA = _r(40, HEX)
# what the clone holds: every line grep/symbol/copies could print
CLONE_TOKEN = "hf_" + _r(34, string.ascii_letters)
CLONE_SENDGRID = "SG." + _r(22, ALNUM + "_-") + "." + _r(43, ALNUM + "_-")
CLONE_COPIED_TOKEN = "ghp_" + _r(36)


def _corpus() -> corpus.Corpus:
    made = corpus.generate(seed=35, threads=12, repo=REPO, comments_per_thread=3)
    placed = {}
    for i, form in enumerate(FORMS):
        title = f"pasted form {i}"
        if form.where == "title":
            issue = made.add_issue(form.text, f"pasted form {i}: see the title")
        elif form.where == "body":
            issue = made.add_issue(title, form.text)
        elif form.where == "label":
            issue = made.add_issue(title, "labelled")
            label = {"id": 990 + i, "name": form.text, "color": "ffffff", "default": False}
            made.edit_issue(issue["number"], labels=[label])
        elif form.where == "hunk":
            issue = made.add_issue(title, "a pull request", pull_request=True)
            comment = made.add_review_comment(issue["number"], "this line leaks")
            made.review_table.overrides[comment["id"]]["diff_hunk"] = form.text
        else:
            issue = made.add_issue(title, "see the comment")
            made.add_comment(issue["number"], form.text)
        placed[form.name] = issue["number"]
    bare = made.add_issue("a key is no commit", f"after `wandb login` I pasted {BARE_HEX} here")
    said = made.add_issue("a commit is one", f"this was merged in {SAID_SHA} last week")
    # a bare 40-hex word the pull request names (its head) is that commit
    known = made.add_issue("a known commit", "a pull request", pull_request=True)
    head = corpus_pulls.head_sha(made, made.pulls[known["number"]])
    made.add_comment(known["number"], f"I tried {head} locally")
    made.facts["forms"] = placed
    made.facts["commits"] = {
        "bare": bare["number"],
        "said": said["number"],
        "known": known["number"],
        "head": head,
    }
    return made


def _land_clone(landing: worlds.Landing) -> None:
    """A clone whose lines hold tokens: a config, a definition's default, a copy marker."""
    root = landing.mktemp("pasted-origin") / "pasted"
    (root / "lib").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "lib" / "base.py").write_text("class Base:\n    pass\n")
    (root / "lib" / "config.py").write_text(
        f'HF_TOKEN = "{CLONE_TOKEN}"\nhub_token = "{CLONE_TOKEN}"\nSENDGRID = "{CLONE_SENDGRID}"\n'
    )
    (root / "lib" / "login.py").write_text(
        f'def login_with_token(token="{CLONE_TOKEN}"):\n    return token\n'
    )
    (root / "lib" / "copied.py").write_text(
        f"# Copied from lib.base.Base with Base->Copied, {CLONE_COPIED_TOKEN}->x\n"
        "class Copied:\n    pass\n"
    )
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Add the config")
    out, err = io.StringIO(), io.StringIO()
    argv = ["clone", "--repo", REPO, "--url", str(root), "--json"]
    assert relored.main(argv, env=landing.env, out=out, err=err) == 0, err.getvalue()


WORLD_PART = worlds.Part(REPO, corpus=_corpus, land=_land_clone)


@pytest.fixture(scope="module")
def daemon(indexed_world):
    with indexed_world.serving() as base_url:
        yield base_url


@pytest.fixture(scope="module")
def mart_strings(indexed_world) -> list[tuple[str, str, str]]:
    """(table, column, value) for every string any mart holds for this repository's rows
    (text, arrays, JSON; a table without repo_id is read whole)."""
    repo_id = indexed_world.corpora[REPO].repo_id
    found = []
    with psycopg.connect(indexed_world.url) as conn:
        columns = conn.execute(
            "select c.table_name, c.column_name, c.data_type,"
            " exists (select from information_schema.columns r where r.table_schema = 'marts'"
            "   and r.table_name = c.table_name and r.column_name = 'repo_id')"
            " from information_schema.columns c where c.table_schema = 'marts'"
            " and c.data_type in ('text', 'character varying', 'ARRAY', 'jsonb', 'json')"
            " order by 1, 2"
        ).fetchall()
        for table, column, kind, keyed in columns:
            value = {
                "ARRAY": f'array_to_string("{column}"::text[], chr(10))',
                "jsonb": f'"{column}"::text',
                "json": f'"{column}"::text',
            }.get(kind, f'"{column}"')
            where = f'"{column}" is not null' + (" and repo_id = %s" if keyed else "")
            rows = conn.execute(
                f'select {value} from marts."{table}" where {where}',
                (repo_id,) if keyed else (),
            ).fetchall()
            found.extend((table, column, row[0]) for row in rows)
    assert any(table == "documents" for table, _, _ in found)
    return found


_STATE = tempfile.mkdtemp(prefix="relore-pasted-state-")


def _relore(api: str, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_API": api, "RELORE_SESSION": "pasted-test", "RELORE_STATE_DIR": _STATE}
    code = client_cli.main(list(argv), env=env, stdout=out, stderr=err)
    assert code == 0, (argv, err.getvalue())
    return out.getvalue()


def _api_text(api: str, route: str, params: dict) -> str:
    query = urllib.parse.urlencode({**params, "format": "text"})
    request = urllib.request.Request(
        f"{api}/api/v1/{route}?{query}", headers={"x-relore-client": __version__}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode("utf-8")


def _api_json(api: str, route: str, params: dict) -> str:
    request = urllib.request.Request(
        f"{api}/api/v1/{route}?{urllib.parse.urlencode(params)}",
        headers={"x-relore-client": __version__},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode("utf-8")


def _pages(api: str, number: int, words: str) -> dict[str, str]:
    """Every page an agent reads about thread ``number``, as it reads it."""
    ref = f"{REPO}#{number}"
    pages = {}
    for view in ([], ["--full"], ["--files"], ["--outline"]):
        name = " ".join(["thread", *view])
        pages[name] = _relore(api, "thread", ref, *view)
        pages[name + " --json"] = _relore(api, "thread", ref, *view, "--json")
    pages["api thread text"] = _api_text(api, "thread", {"repo": REPO, "number": number})
    pages["api thread full text"] = _api_text(
        api, "thread", {"repo": REPO, "number": number, "mode": "full"}
    )
    pages["search --json"] = _relore(api, "search", words, "--repo", REPO, "--json")
    pages["search"] = _relore(api, "search", words, "--repo", REPO)
    return pages


def _leaks(needles, named) -> list[tuple[str, str]]:
    """(where, the needle's start) for each needle found; ``named``: a dict or pairs."""
    pairs = named.items() if isinstance(named, dict) else named
    return [(where, needle[:16]) for where, text in pairs for needle in needles
            if needle in text]  # fmt: skip


@pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
def test_a_pasted_secret_reaches_no_mart_and_no_page(form, indexed_world, daemon, mart_strings):
    number = indexed_world.corpora[REPO].facts["forms"][form.name]
    in_marts = _leaks(form.needles, [(f"{t}.{c}", v) for t, c, v in mart_strings])
    pages = _pages(daemon, number, f"pasted form {FORMS.index(form)}")
    assert "pasted form" in pages["thread --full"]
    assert in_marts == [] and _leaks(form.needles, pages) == []


def test_every_form_was_planted_and_derived(indexed_world, mart_strings):
    """The absences above are redaction, not loss: every form's thread is in the marts."""
    placed = indexed_world.corpora[REPO].facts["forms"]
    repo_id = indexed_world.corpora[REPO].repo_id
    with psycopg.connect(indexed_world.url) as conn:
        numbers = {
            row[0]
            for row in conn.execute(
                "select thread_number from marts.documents where repo_id = %s", (repo_id,)
            )
        }
    assert set(placed.values()) <= numbers
    assert any("[REDACTED:" in value for table, _, value in mart_strings if table == "documents")


def test_a_bare_40_hex_word_is_no_commit_unless_said_or_known(indexed_world):
    facts = indexed_world.corpora[REPO].facts["commits"]
    repo_id = indexed_world.corpora[REPO].repo_id
    with psycopg.connect(indexed_world.url) as conn:
        rows = conn.execute(
            "select thread_number, sha, source from marts.thread_commits where repo_id = %s",
            (repo_id,),
        ).fetchall()
    assert (facts["said"], SAID_SHA, "prose") in rows
    assert (facts["known"], facts["head"], "prose") in rows
    assert [sha for _, sha, _ in rows if sha == BARE_HEX] == []


CLONE_NEEDLES = (CLONE_TOKEN, CLONE_TOKEN[3:], CLONE_SENDGRID, CLONE_COPIED_TOKEN)


def test_grep_prints_no_secret_from_the_clone(daemon):
    for pattern in ("hf_", "SG\\.", "token"):
        page = _api_json(daemon, "code/grep", {"repo": REPO, "pattern": pattern})
        assert json.loads(page)["returned"] >= 1, pattern
        assert _leaks(CLONE_NEEDLES, {"api grep": page}) == []
        text = _api_text(daemon, "code/grep", {"repo": REPO, "pattern": pattern})
        assert _leaks(CLONE_NEEDLES, {"api grep text": text}) == []
    assert "[REDACTED:hf_token]" in _relore(daemon, "grep", "hf_", "--repo", REPO)
    cli = _relore(daemon, "grep", "hf_", "--repo", REPO, "--json")
    assert _leaks(CLONE_NEEDLES, {"relore grep --json": cli}) == []


def test_symbol_and_copies_print_no_secret_from_the_clone(daemon):
    pages = {
        "symbol": _relore(daemon, "symbol", "login_with_token", "--repo", REPO),
        "symbol --json": _relore(daemon, "symbol", "login_with_token", "--repo", REPO, "--json"),
        "copies": _relore(daemon, "copies", "lib.base.Base", "--repo", REPO),
        "copies --json": _relore(daemon, "copies", "lib.base.Base", "--repo", REPO, "--json"),
    }
    assert json.loads(pages["symbol --json"])["total"] == 1
    assert json.loads(pages["copies --json"])["total"] == 1
    assert _leaks(CLONE_NEEDLES, pages) == []


def test_why_prints_no_secret_from_the_clone(daemon):
    pages = {
        "why": _relore(daemon, "why", "lib/config.py:1", "--repo", REPO),
        "why --json": _relore(daemon, "why", "lib/config.py:1", "--repo", REPO, "--json"),
    }
    assert "[REDACTED:hf_token]" in pages["why"]
    assert _leaks(CLONE_NEEDLES, pages) == []


def test_mcp_tools_print_no_pasted_secret(indexed_world, daemon, tmp_path):
    """``relore mcp`` (the SDK's client over stdio, as a harness starts it): each form's
    thread in full and grep over the clone, text and structured content."""
    import asyncio
    import sys

    from mcp import Client, StdioServerParameters

    placed = indexed_world.corpora[REPO].facts["forms"]
    calls = [("thread", {"ref": f"{REPO}#{placed[form.name]}", "full": True}) for form in FORMS]
    calls.append(("grep", {"pattern": "hf_", "repo": REPO}))
    env = {"RELORE_API": daemon, "RELORE_CODE_CACHE": str(tmp_path / "cache"),
           "RELORE_STATE_DIR": str(tmp_path / "state")}  # fmt: skip

    async def session():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "relore.client", "mcp"], env=env
        )
        async with Client(params) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = asyncio.run(session())
    said = [
        (f"mcp {name} {i}", json.dumps([block.text for block in result.content], ensure_ascii=False)
         + json.dumps(result.structured_content, ensure_ascii=False))
        for i, ((name, _), result) in enumerate(zip(calls, results, strict=True))
    ]  # fmt: skip
    assert all(not result.is_error for result in results)
    needles = [n for form in FORMS for n in form.needles] + list(CLONE_NEEDLES)
    assert _leaks(needles, said) == []


def test_the_reader_redacts_in_a_read_only_transaction(indexed_world):
    """The daemon redacts clone lines as relore_reader, whose sessions are read-only: the
    catalog's functions (and those they call) are granted and write nothing."""
    with psycopg.connect(indexed_world.reader) as conn:
        assert conn.execute("show transaction_read_only").fetchone()[0] == "on"
        texts = [form.text for form in FORMS]
        redacted = conn.execute(
            "select array_agg(marts.relore_redact(t) order by n)"
            " from unnest(%s::text[]) with ordinality as given (t, n)",
            (texts,),
        ).fetchone()[0]
    assert (
        _leaks([n for form in FORMS for n in form.needles], list(zip(texts, redacted, strict=True)))
        == []
    )
