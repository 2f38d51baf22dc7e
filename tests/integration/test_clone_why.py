"""The working clone, for real: a git repository built here with subprocess git (renames, a
merge of a pull request, squash subjects, a licence header) → `relored clone` → dbt build →
serve's why / symbol / grep / copies → `relore`. No mocked git. The clone is made in the
shared world (tests/fixtures/world.py); the tests read and write a copy of it.

History of the repository (dates fixed, oldest first):

    A   Add quux limits (#2)              src/core.py: foo() holds compute_quux_limit()
    R1  Move core into pkg (#6)           src/core.py -> src/pkg/core.py
    B   Rewrite the quux path (#3)        foo() deleted; bar() added at the end with
                                          `limit = compute_quux_limit() * 2`
    C   Tune the limit (#4)               * 2 -> * 3
    D   Use four                          * 3 -> * 4, on branch acme/tune (no number)
    X   Readme                            on main meanwhile
    M   Merge pull request #5 ...         --no-ff merge of acme/tune
    R2  Move core to lib (#7)             src/pkg/core.py -> lib/acme/core.py
    E   Add models (#8)                   llama.py, mistral.py with `# Copied from` markers
    P   Return an empty string ...        pushed directly: no PR, no number
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import psycopg
import pytest
from fixtures import fake_github, indexed
from fixtures import world as worlds
from fixtures.gitrepo import git as _git

from relore.client import cli as client_cli
from relore.contract.version import __version__
from relore.operate import cli as relored
from relore.operate import database
from relore.serve.app import Settings, create_app

pytestmark = pytest.mark.slow

# Its own name and id in the shared world (the slice is acme/widgets, the ranking corpus 4242).
REPO, REPO_ID = "acme/gearbox", 4343
CORE = "lib/acme/core.py"
NAMES = {"src/core.py", "src/pkg/core.py", CORE}
LICENCE = (
    "# Copyright 2020 The Acme Team. All rights reserved.\n"
    "# Licensed under the Apache License, Version 2.0\n"
    "#\n"
    "import os\n"
)
FOO = """

def foo(widgets):
    legacy_threshold = compute_quux_limit()
    return widgets > legacy_threshold
"""
KEEP = """

def keep(path):
    \"\"\"Unchanged for ever.\"\"\"
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return handle.read()
"""
BAR = """

def bar(widgets, gadgets):
    \"\"\"Widgets over the limit.\"\"\"
    # guard the empty case
    limit = compute_quux_limit() * 2
    return [w for w in widgets if w > limit]
"""
LLAMA = """class LlamaRMSNorm:
    def forward(self, x):
        return x


class LlamaRMSNormX:
    pass
"""
MISTRAL = """# Copied from acme.models.llama.LlamaRMSNorm with Llama->Mistral
class MistralRMSNorm:
    # Copied from acme.models.llama.LlamaRMSNorm.forward
    def forward(self, x):
        return x


# Copied from acme.models.llama.LlamaRMSNormX
class MistralRMSNormX:
    pass
"""
# a file never renamed: its pickaxe follows the one name (--follow)
UTIL_OLD = """def old_rate():
    return fetch_gizmo_rate()


def unrelated(a, b):
    total = a + b
    total = total * 2
    return total
"""
UTIL_NEW = """def unrelated(a, b):
    total = a + b
    total = total * 2
    return total


def new_rate(scale):
    rate = fetch_gizmo_rate() * scale
    return rate
"""
UTIL_RATE_LINE = 8
# line numbers in lib/acme/core.py at HEAD
LIMIT_LINE = 18  # limit = compute_quux_limit() * 4
COMMENT_LINE = 17  # # guard the empty case
BLANK_LINE = 5
SENTINEL_LINE = 10  # return ""  # missing_path_sentinel


def _commit(cwd: Path, subject: str, date: str) -> str:
    _git(cwd, "add", "-A")
    _git(cwd, "commit", "-q", "-m", subject, date=date)
    return _git(cwd, "rev-parse", "HEAD")


def _origin(parent: Path) -> dict:
    root = parent / "widgets"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    core = root / "src" / "core.py"
    core.parent.mkdir()
    core.write_text(LICENCE + FOO + KEEP)
    shas = {"A": _commit(root, "Add quux limits (#2)", "2020-01-01T00:00:00Z")}
    (root / "src" / "pkg").mkdir()
    _git(root, "mv", "src/core.py", "src/pkg/core.py")
    shas["R1"] = _commit(root, "Move core into pkg (#6)", "2020-06-01T00:00:00Z")
    moved = root / "src" / "pkg" / "core.py"
    moved.write_text(LICENCE + KEEP + BAR)
    shas["B"] = _commit(root, "Rewrite the quux path (#3)", "2021-01-01T00:00:00Z")
    moved.write_text(moved.read_text().replace("* 2\n", "* 3\n"))
    shas["C"] = _commit(root, "Tune the limit (#4)", "2021-06-01T00:00:00Z")
    _git(root, "checkout", "-q", "-b", "tune")
    moved.write_text(moved.read_text().replace("* 3\n", "* 4\n"))
    shas["D"] = _commit(root, "Use four", "2022-01-01T00:00:00Z")
    _git(root, "checkout", "-q", "main")
    (root / "README").write_text("widgets\n")
    shas["X"] = _commit(root, "Readme", "2022-01-15T00:00:00Z")
    _git(
        root, "merge", "-q", "--no-ff", "tune", "-m", "Merge pull request #5 from acme/tune",
        date="2022-02-01T00:00:00Z",
    )  # fmt: skip
    shas["M"] = _git(root, "rev-parse", "HEAD")
    (root / "lib" / "acme").mkdir(parents=True)
    _git(root, "mv", "src/pkg/core.py", CORE)
    shas["R2"] = _commit(root, "Move core to lib (#7)", "2022-06-01T00:00:00Z")
    models = root / "lib" / "acme" / "models"
    models.mkdir()
    (models / "llama.py").write_text(LLAMA)
    (models / "mistral.py").write_text(MISTRAL)
    shas["E"] = _commit(root, "Add models (#8)", "2022-07-01T00:00:00Z")
    util = root / "lib" / "acme" / "util.py"
    util.write_text(UTIL_OLD)
    shas["U1"] = _commit(root, "Add the gizmo rate (#10)", "2022-07-10T00:00:00Z")
    util.write_text(UTIL_NEW)
    shas["U2"] = _commit(root, "Rewrite the gizmo helper (#11)", "2022-07-20T00:00:00Z")
    target = root / CORE
    target.write_text(
        target.read_text().replace(
            "        return None\n", '        return ""  # missing_path_sentinel\n'
        )
    )
    shas["P"] = _commit(root, "Return an empty string for a missing path", "2022-08-01T00:00:00Z")
    lines = target.read_text().split("\n")
    assert lines[LIMIT_LINE - 1] == "    limit = compute_quux_limit() * 4"
    assert lines[SENTINEL_LINE - 1].endswith("# missing_path_sentinel")
    assert lines[COMMENT_LINE - 1] == "    # guard the empty case"
    return {"path": root, "shas": shas}


# --- the index: hand-landed GitHub payloads for the pull requests that carried the history --


def _land(conn, object_type: str, object_id: int, number: int | None, payload: dict) -> None:
    indexed.land_raw(conn, REPO, REPO_ID, object_type, object_id, number, payload)


def _user(login: str) -> dict:
    return {"login": login, "id": sum(map(ord, login)), "type": "User"}


PULLS = {
    # number: (title, merge commit key or literal sha, head sha, changed files)
    2: ("Add quux limits", "A", "1" * 40, [{"filename": "src/core.py", "status": "added"}]),
    3: ("Rewrite the quux path", "f" * 40, "2" * 40, []),
    4: ("Tune the limit", "C", "3" * 40, []),
    5: ("Use four", "M", "e" * 40, [{"filename": "src/pkg/core.py", "status": "modified"}]),
    6: ("Move core into pkg", "R1", "4" * 40, []),
    7: (
        "Move core to lib",
        "R2",
        "5" * 40,
        [{"filename": CORE, "previous_filename": "src/pkg/core.py", "status": "renamed"}],
    ),
}


def _seed(conn, shas: dict) -> None:
    conn.execute(
        "insert into ops.repos (repo_id, full_name, owner_login, owner_type)"
        " values (%s, %s, 'acme', 'Organization')",
        (REPO_ID, REPO),
    )
    file_id = 0
    for number, (title, merge, head, files) in PULLS.items():
        when = f"2022-0{min(number, 9)}-01T00:00:00Z"
        _land(
            conn,
            "issue",
            9000 + number,
            number,
            {
                "id": 9000 + number,
                "number": number,
                "title": title,
                "state": "closed",
                "body": f"The change for {title.lower()}.",
                "user": _user("maint"),
                "author_association": "MEMBER",
                "labels": [],
                "comments": 0,
                "html_url": f"https://github.com/{REPO}/pull/{number}",
                "created_at": when,
                "updated_at": when,
                "pull_request": {"merged_at": when},
            },
        )
        _land(
            conn,
            "pull",
            5000 + number,
            number,
            {
                "id": 5000 + number,
                "number": number,
                "state": "closed",
                "merged": True,
                "merged_at": when,
                "merge_commit_sha": shas.get(merge, merge),
                "head": {"sha": head, "ref": f"branch-{number}"},
                "base": {"sha": "0" * 40, "ref": "main"},
                "changed_files": len(files),
                "additions": 1,
                "deletions": 1,
            },
        )
        for entry in files:
            file_id += 1
            _land(conn, "pull_file", file_id, number, {**entry, "additions": 1, "deletions": 0})
    for comment_id, path, line, body in (
        (7001, "src/pkg/core.py", LIMIT_LINE, "Why four? The quux limit doubles on ARM boards."),
        (7002, "src/pkg/core.py", 2, "Keep the licence header as it is."),
        (7003, "README", 1, "A readme line, nowhere near."),
    ):
        _land(
            conn,
            "review_comment",
            comment_id,
            5,
            {
                "id": comment_id,
                "pull_request_review_id": 8001,
                "body": body,
                "path": path,
                "line": line,
                "original_line": line,
                "side": "RIGHT",
                "commit_id": "e" * 40,
                "original_commit_id": "e" * 40,
                "diff_hunk": "@@ -1 +1 @@",
                "user": _user("reviewer"),
                "author_association": "MEMBER",
                "html_url": f"https://github.com/{REPO}/pull/5#discussion_r{comment_id}",
                "pull_request_url": f"https://api.github.com/repos/{REPO}/pulls/5",
                "created_at": "2022-01-20T00:00:00Z",
                "updated_at": "2022-01-20T00:00:00Z",
            },
        )


def _relored(argv: list[str], env: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = relored.main(argv, env=env, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _land_world(landing: worlds.Landing) -> dict:
    """The origin built, its pull requests landed and `relored clone` run, in the world."""
    origin = _origin(landing.mktemp("origin"))
    with psycopg.connect(landing.url, autocommit=True) as conn:
        _seed(conn, origin["shas"])
    argv = ["clone", "--repo", REPO, "--url", str(origin["path"]), "--json"]
    code, out, err = _relored(argv, landing.env)
    assert code == 0, err
    return {"origin": origin, "report": json.loads(out), "progress": err}


WORLD_PART = worlds.Part(REPO, land=_land_world)


@pytest.fixture(scope="module")
def origin(indexed_world) -> dict:
    return indexed_world.landed[REPO]["origin"]


@pytest.fixture(scope="module")
def clones_dir(indexed_world):
    """serve reads RELORE_CLONES_DIR from its process environment: the world's clones."""
    path = indexed_world.clones_dir
    before = os.environ.get("RELORE_CLONES_DIR")
    os.environ["RELORE_CLONES_DIR"] = str(path)
    yield path
    if before is None:
        os.environ.pop("RELORE_CLONES_DIR", None)
    else:
        os.environ["RELORE_CLONES_DIR"] = before


@pytest.fixture(scope="module")
def world(indexed_world, world_copy, clones_dir, tmp_path_factory):
    """A copy of the shared world, built with this clone: the tests below clone again (into
    the world's clone) and build, so they read and write the copy."""
    landed = indexed_world.landed[REPO]
    return {
        "url": world_copy,
        "env": {"RELORE_DATABASE_URL": world_copy, "RELORE_CLONES_DIR": str(clones_dir)},
        "report": landed["report"],
        "progress": landed["progress"],
        "build_dir": tmp_path_factory.mktemp("dbt"),
    }


@pytest.fixture(scope="module")
def api(world):
    from starlette.testclient import TestClient

    reader = database.reader_url(world["url"], env={})
    with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
        client.headers["x-relore-client"] = __version__
        yield client


def _rows(url: str, sql: str, *params) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


# --- relored clone ----------------------------------------------------------------------------


def test_clone_is_complete_and_sits_at_the_remotes_head(world, origin, clones_dir):
    report = world["report"]
    clone = clones_dir / "acme" / "gearbox"
    assert report["path"] == str(clone)
    assert report["action"] == "cloned"
    assert report["head_sha"] == origin["shas"]["P"]
    assert _git(clone, "rev-parse", "--is-shallow-repository") == "false"
    assert int(_git(clone, "rev-list", "--count", "HEAD")) == 12
    assert "cloning" in world["progress"] and str(origin["path"]) in world["progress"]


def test_clone_reads_every_rename_pair_and_stores_no_source(world, origin):
    rows = _rows(
        world["url"],
        "select commit_sha, old_path, new_path from ops.path_renames where repo_id = %s"
        " order by committed_at",
        REPO_ID,
    )
    assert rows == [
        (origin["shas"]["R1"], "src/core.py", "src/pkg/core.py"),
        (origin["shas"]["R2"], "src/pkg/core.py", CORE),
    ]
    # paths and shas only: nothing of the files' text reached the database
    with psycopg.connect(world["url"]) as conn:
        dump = json.dumps(
            conn.execute("select * from ops.path_renames").fetchall()
            + conn.execute("select * from ops.clones").fetchall(),
            default=str,
        )
    assert "compute_quux_limit" not in dump and "Copyright" not in dump


def test_a_file_moved_twice_links_all_three_names(world):
    rows = _rows(
        world["url"],
        "select path, alias_path, is_direct from marts.path_aliases where repo_id = %s"
        " order by 1, 2",
        REPO_ID,
    )
    assert rows == [
        (CORE, "src/core.py", False),
        (CORE, "src/pkg/core.py", True),
        ("src/core.py", CORE, False),
        ("src/core.py", "src/pkg/core.py", True),
        ("src/pkg/core.py", CORE, True),
        ("src/pkg/core.py", "src/core.py", True),
    ]


def test_second_clone_fetches_moves_head_and_writes_only_new_pairs(
    world, origin, clones_dir, run_dbt
):
    root = origin["path"]
    (root / "docs").mkdir()
    _git(root, "mv", "README", "docs/README")
    moved = _commit(root, "Move the readme (#9)", "2022-09-01T00:00:00Z")
    try:
        code, out, _ = _relored(["clone", "--repo", REPO, "--json"], world["env"])
        assert code == 0
        report = json.loads(out)
        assert report["action"] == "fetched"
        assert report["previous_head"] == origin["shas"]["P"]
        assert report["head_sha"] == moved
        assert report["walked_from"] == origin["shas"]["P"]
        assert (report["renames_read"], report["renames_written"]) == (1, 1)
        again = json.loads(_relored(["clone", "--repo", REPO, "--json"], world["env"])[1])
        assert (again["renames_read"], again["renames_written"]) == (0, 0)
        run_dbt(world["url"], world["build_dir"], "build")
        assert _rows(
            world["url"],
            "select alias_path from marts.path_aliases where repo_id = %s and path = 'README'",
            REPO_ID,
        ) == [("docs/README",)]
    finally:
        # put the origin back where the other tests expect it (the clone follows next run)
        _git(root, "reset", "-q", "--hard", origin["shas"]["P"])
        _relored(["clone", "--repo", REPO], world["env"])


def test_clone_of_a_never_extracted_repository_is_partial_and_says_why(world, origin, clones_dir):
    code, out, _ = _relored(
        ["clone", "--repo", "acme/elsewhere", "--url", str(origin["path"])], world["env"]
    )
    assert code == 3
    assert "relored extract --repo acme/elsewhere" in out
    assert (clones_dir / "acme" / "elsewhere" / ".git").is_dir()


@pytest.mark.parametrize("repo", ["../..", "acme/..", "./x"])
def test_clone_refuses_a_repo_name_that_would_leave_the_clones_dir(world, repo):
    code, _, err = _relored(["clone", "--repo", repo, "--url", "/nonexistent"], world["env"])
    assert code in (1, 2)
    assert "owner/name" in err


# --- search --file across renames -----------------------------------------------------------


def test_file_filter_finds_a_thread_that_touched_the_file_under_an_earlier_name(api):
    page = api.get("/api/v1/search", params={"repo": REPO, "file": CORE}).json()
    numbers = {hit["number"] for hit in page["hits"]}
    # #2 added src/core.py, #5 changed src/pkg/core.py, #7 moved it to lib/acme/core.py
    assert {2, 5, 7} <= numbers, page
    assert set(page["normalized_filters"]["files"]) == NAMES


def test_file_filter_under_the_oldest_name_finds_the_thread_of_the_newest(api):
    page = api.get("/api/v1/search", params={"repo": REPO, "file": "src/core.py"}).json()
    assert 7 in {hit["number"] for hit in page["hits"]}, page


# --- why ------------------------------------------------------------------------------------


def _why(api, line: int, path: str = CORE):
    return api.get("/api/v1/why", params={"repo": REPO, "path": path, "line": line})


def test_why_maps_a_branch_commit_to_the_pull_request_whose_merge_carried_it(api, origin):
    response = _why(api, LIMIT_LINE)
    assert response.status_code == 200, response.text
    page = response.json()
    shas = origin["shas"]
    assert page["head"] == shas["P"]
    assert page["text"] == ">     limit = compute_quux_limit() * 4"
    assert page["blame"]["sha"] == shas["D"]
    assert page["blame"]["subject"] == "Use four"
    assert page["blame"]["filename"] == "src/pkg/core.py"
    pull = page["pull_request"]
    assert pull["number"] == 5
    assert pull["state"] == "merged"
    assert pull["url"] == f"https://github.com/{REPO}/pull/5"
    assert pull["via"] == f"merge {shas['M'][:12]} (merge_commit)"
    assert {"author", "trust", "date", "age", "title"} <= pull.keys()
    assert sorted(page["aliases"]) == ["src/core.py", "src/pkg/core.py"]


def test_why_returns_the_review_comment_anchored_at_the_line_under_its_old_name(api):
    page = _why(api, LIMIT_LINE).json()
    comments = page["review_comments"]
    assert [c["id"] for c in comments["comments"]] == ["review_comment:7001"]
    (comment,) = comments["comments"]
    assert comment["path"] == "src/pkg/core.py"
    assert comment["distance"] == 0
    assert comment["text"] == "> Why four? The quux limit doubles on ARM boards."
    # the licence-header comment is on the file but 16 lines away; the README one is not
    assert (comments["returned"], comments["total"], comments["on_file"]) == (1, 1, 2)


def test_why_revision_chain_and_origin_chain_are_two_lists(api, origin):
    page = _why(api, LIMIT_LINE).json()
    shas = origin["shas"]
    revisions = page["revisions"]
    assert [r["sha"] for r in revisions["commits"]] == [shas["D"], shas["C"], shas["B"]]
    assert [(r["pull_request"] or {}).get("number") for r in revisions["commits"]] == [5, 4, 3]
    assert revisions["commits"][1]["pull_request"]["via"] == "merge_commit"
    assert revisions["commits"][2]["pull_request"]["via"] == "subject"
    origin_chain = page["origin"]
    # the rewrite lost the line's range; the word reaches the commit that brought it in
    assert origin_chain["word"] == "compute_quux_limit"
    assert origin_chain["declined"] is None
    assert [r["sha"] for r in origin_chain["commits"]] == [shas["A"]]
    assert origin_chain["commits"][0]["pull_request"]["number"] == 2
    assert origin_chain["commits"][0]["date"] == "2020-01-01"
    assert page["budget"]["pickaxe_walks"] == 1


def test_why_origin_of_a_file_never_renamed_follows_its_one_name(api, origin):
    page = _why(api, UTIL_RATE_LINE, "lib/acme/util.py").json()
    shas = origin["shas"]
    assert page["text"] == ">     rate = fetch_gizmo_rate() * scale"
    assert page["aliases"] == []
    assert [r["sha"] for r in page["revisions"]["commits"]] == [shas["U2"]]
    assert page["origin"]["word"] == "fetch_gizmo_rate"
    assert [r["sha"] for r in page["origin"]["commits"]] == [shas["U1"]]
    assert page["budget"]["pickaxe_walks"] == 1


def test_why_on_a_licence_header_line_declines_the_pickaxe_and_says_why(api):
    page = _why(api, 1).json()
    origin_chain = page["origin"]
    assert origin_chain["declined"] == "licence header"
    assert "licence header" in origin_chain["note"]
    assert origin_chain["commits"] == []
    assert page["budget"]["pickaxe_walks"] == 0
    # declining the pickaxe is not declining the answer: blame and the revision chain stay
    assert page["blame"]["subject"] == "Add quux limits (#2)"
    assert page["pull_request"]["number"] == 2
    assert page["revisions"]["returned"] >= 1


@pytest.mark.parametrize(("line", "reason"), [(BLANK_LINE, "blank"), (COMMENT_LINE, "comment")])
def test_why_on_a_line_with_no_code_declines_the_pickaxe(api, line, reason):
    page = _why(api, line).json()
    assert page["origin"]["declined"] == reason
    assert page["budget"]["pickaxe_walks"] == 0


def test_why_for_a_commit_no_pull_request_carried_still_returns_both_lists(api, origin):
    page = _why(api, SENTINEL_LINE).json()
    assert page["blame"]["sha"] == origin["shas"]["P"]
    assert page["pull_request"] is None
    assert "pushed directly" in page["pull_request_note"]
    assert [r["sha"] for r in page["revisions"]["commits"]] == [
        origin["shas"]["P"],
        origin["shas"]["A"],
    ]
    # the sentinel word arrived with blame's own commit: it reaches no further back
    assert page["origin"]["word"] is None
    assert page["origin"]["candidates"][0]["word"] == "missing_path_sentinel"
    assert page["origin"]["candidates"][0]["reaches_further"] is False
    assert "reaches further back" in page["origin"]["note"]


def test_why_spends_at_most_three_pickaxe_walks(api, origin, world):
    """A line whose every word arrived with blame's commit: the walk stops at the budget."""
    root = origin["path"]
    target = root / "lib" / "acme" / "late.py"
    target.write_text("value = alpha_one(beta_two, gamma_three, delta_four, epsilon_five)\n")
    _commit(root, "Late words", "2022-10-01T00:00:00Z")
    try:
        code, _, err = _relored(["clone", "--repo", REPO], world["env"])
        assert code == 0, err
        page = _why(api, 1, "lib/acme/late.py").json()
        budget = page["budget"]
        assert budget["pickaxe_walks"] == 3
        assert budget["max_pickaxe_walks"] == 3
        walked = [c for c in page["origin"]["candidates"] if c["walked"]]
        skipped = [c for c in page["origin"]["candidates"] if c.get("skipped")]
        assert len(walked) == 3 and len(skipped) >= 1
        assert "budget of 3 pickaxe walks" in page["origin"]["note"]
    finally:
        _git(root, "reset", "-q", "--hard", origin["shas"]["P"])
        _relored(["clone", "--repo", REPO], world["env"])


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"path": "../../etc/passwd", "line": "1"}, "`..`"),
        ({"path": "lib/../../x", "line": "1"}, "`..`"),
        ({"path": "/etc/passwd", "line": "1"}, "absolute"),
        ({"path": "C:\\Windows\\x.py", "line": "1"}, "absolute"),
        ({"path": CORE, "line": "0"}, "line"),
        ({"path": CORE, "line": "-3"}, "line"),
        ({"path": CORE, "line": "ten"}, "line"),
        ({"path": "lib/a\x00b.py", "line": "1"}, "NUL"),
        ({"path": "", "line": "1"}, "path"),
        ({"path": CORE, "line": "400"}, "past its end"),
    ],
)
def test_why_bad_input_is_a_clear_400_never_a_500(api, params, needle):
    response = api.get("/api/v1/why", params={"repo": REPO, **params})
    assert response.status_code == 400, response.text
    assert needle in response.json()["error"]


def test_why_on_a_file_gone_from_head_is_a_404_naming_its_other_names(api):
    response = _why(api, 3, "src/pkg/core.py")
    assert response.status_code == 404
    message = response.json()["error"]
    assert "not a file at HEAD" in message
    assert CORE in message


@pytest.mark.parametrize(
    ("route", "params"),
    [
        ("why", {"path": "a.py", "line": "1"}),
        ("code/symbol", {"name": "thing"}),
        ("code/grep", {"pattern": "thing"}),
        ("code/copies", {"name": "Thing"}),
    ],
)
def test_a_repository_with_no_clone_answers_503_with_the_command(api, route, params):
    response = api.get(f"/api/v1/{route}", params={"repo": "acme/noclone", **params})
    assert response.status_code == 503
    body = response.json()
    assert body["command"] == "relored clone --repo acme/noclone"
    assert "`relored clone --repo acme/noclone`" in body["error"]


# --- symbol, grep, copies -------------------------------------------------------------------


def test_symbol_finds_the_definition_in_the_clone(api):
    response = api.get("/api/v1/code/symbol", params={"repo": REPO, "name": "LlamaRMSNorm"})
    assert response.status_code == 200, response.text
    page = response.json()
    (row,) = page["definitions"]
    assert (row["path"], row["line"], row["kind"]) == ("lib/acme/models/llama.py", 1, "class")
    assert row["text"] == "> class LlamaRMSNorm:"
    assert "root" not in page and "cache" not in page["files"]
    assert page["returned"] == page["total"] == 1


def test_grep_caps_lines_and_counts_every_match(api):
    page = api.get(
        "/api/v1/code/grep", params={"repo": REPO, "pattern": "RMSNorm", "limit": "2"}
    ).json()
    assert page["returned"] == 2
    assert page["total"] == 7
    assert page["files"] == 2
    assert page["total_is_lower_bound"] is False
    first = page["matches"][0]
    assert (first["path"], first["line"]) == ("lib/acme/models/llama.py", 1)
    assert first["text"] == "> class LlamaRMSNorm:"


def test_grep_with_a_broken_regex_is_a_400(api):
    response = api.get("/api/v1/code/grep", params={"repo": REPO, "pattern": "foo("})
    assert response.status_code == 400
    assert "refused the pattern" in response.json()["error"]


def test_grep_path_leaving_the_repository_is_a_400(api):
    response = api.get(
        "/api/v1/code/grep", params={"repo": REPO, "pattern": "x", "path": "../../etc"}
    )
    assert response.status_code == 400


def test_copies_lists_markers_pointing_at_the_name_on_whole_segments(api):
    page = api.get("/api/v1/code/copies", params={"repo": REPO, "name": "LlamaRMSNorm"}).json()
    assert (page["returned"], page["total"], page["files"]) == (2, 2, 1)
    whole, member = page["copies"]
    assert whole["copy"] == {"name": "MistralRMSNorm", "kind": "class", "line": 2}
    assert whole["target"] == "acme.models.llama.LlamaRMSNorm"
    assert whole["member"] is None
    assert whole["with"] == "> Llama->Mistral"
    assert member["copy"] == {"name": "forward", "kind": "function", "line": 4}
    assert member["member"] == "forward"
    # `LlamaRMSNormX` is another name: its marker is not a copy of LlamaRMSNorm
    assert all(c["target"].endswith(("LlamaRMSNorm", "forward")) for c in page["copies"])


# --- the client, over real HTTP -------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(world):
    reader = database.reader_url(world["url"], env={})
    with fake_github.serve(create_app(Settings(reader))) as base_url:
        yield base_url


def _relore(argv: list[str], base_url: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = client_cli.main(argv, env={"RELORE_API": base_url}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_relore_why_prints_the_pull_request_and_both_chains(daemon, origin):
    code, out, err = _relore(["why", f"{CORE}:{LIMIT_LINE}", "--repo", REPO], daemon)
    assert code == 0, err
    assert f"pull request: {REPO}#5 merged — ⟦Use four⟧" in out
    assert "revision chain (git log -L, newest first): 3 of 3" in out
    assert "origin chain of ⟦compute_quux_limit⟧ (git log -S, oldest first): 1 of 1" in out
    assert f"{origin['shas']['A'][:12]} 2020-01-01" in out
    assert "    > Why four? The quux limit doubles on ARM boards." in out
    assert out.startswith("<<relore-page>>")


def test_relore_why_json_carries_the_page(daemon):
    code, out, _ = _relore(["why", f"{CORE}#L1", "--repo", REPO, "--json"], daemon)
    assert code == 0
    assert json.loads(out)["origin"]["declined"] == "licence header"


def test_relore_symbol_grep_copies_render_from_the_clone(daemon):
    code, out, _ = _relore(["symbol", "MistralRMSNorm", "--repo", REPO], daemon)
    assert code == 0 and "⟦lib/acme/models/mistral.py⟧:2  class  ⟦MistralRMSNorm⟧" in out
    code, out, _ = _relore(["grep", "quux", "--repo", REPO, "--fixed"], daemon)
    assert code == 0 and f"⟦{CORE}⟧:{LIMIT_LINE}" in out and "1 of 1 lines" in out
    code, out, _ = _relore(["copies", "LlamaRMSNorm", "--repo", REPO], daemon)
    assert code == 0
    assert "class ⟦MistralRMSNorm⟧ (line 2) ← ⟦acme.models.llama.LlamaRMSNorm⟧" in out


def test_relore_why_without_a_clone_exits_not_ready_with_the_command(daemon):
    code, _, err = _relore(["why", "a.py:1", "--repo", "acme/noclone"], daemon)
    assert code == client_cli.ExitStatus.NOT_READY
    assert "relored clone --repo acme/noclone" in err


@pytest.mark.parametrize("target", ["a.py", "a.py:0", ":3", "a.py:x"])
def test_relore_why_refuses_a_target_that_is_not_path_line(daemon, target):
    code, _, _ = _relore(["why", target, "--repo", REPO], daemon)
    assert code == client_cli.ExitStatus.USAGE
