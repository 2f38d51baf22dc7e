"""``relore map`` reads a tree's documentation as one more user: the code its README, docs
pages and an installed distribution's METADATA show calls the API the way its users do (#16).

The documentation is the tree's own text, and relore maps trees it does not trust: a huge
README, a million fences, a FIFO or a link named README must cost a bounded read and parse.
"""

from __future__ import annotations

import os
import textwrap
import time

import pytest
from fixtures.code_tree import INTERNALS, write_tree
from fixtures.code_tree import by_name as _by_name
from fixtures.code_tree import names as _names

from relore.lens import doc_blocks, doc_files, docs, engine, index, registry

EVERY = 100_000  # a page holding every name


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


# A package whose internals use `Engine` (three files) and `Buffer` (one); `Router` and
# `serve` only its users call, and nothing declares them (starlette's shape).
PACKAGE = {
    "pkg/__init__.py": '__version__ = "1.0"\n',
    **INTERNALS,
    "pkg/routing.py": """
        class Router:
            def get(self):
                pass


        def serve():
            pass


        def unused():
            pass
    """,
}

README = """
# pkg

```python title="app.py"
from pkg.routing import Router
import pkg.routing as routing

def homepage():
    return Router()

routing.serve(homepage)
```

```shell
$ pip install pkg
$ unused --now
```
"""


def _tree(tmp_path, extra: dict) -> str:
    return str(write_tree(tmp_path / "tree", {**PACKAGE, **extra}))


def _block_count(monkeypatch) -> list[int]:
    parsed = [0]
    real = engine.extract

    def counted(provider, source):
        parsed[0] += 1
        return real(provider, source)

    monkeypatch.setattr(engine, "extract", counted)
    return parsed


# the attacks first: every read and parse is bounded


def test_a_readme_of_a_million_fences_parses_a_bounded_number_of_blocks(tmp_path, monkeypatch):
    fences = "```python\nRouter()\n```\n" * 1_000_000  # 25 MB
    root = _tree(tmp_path, {"README.md": fences})
    parsed = _block_count(monkeypatch)
    found = docs.read(root, root, False, registry.by_name("python"))
    assert found.blocks == parsed[0] <= doc_blocks.MAX_BLOCKS
    assert found.cut
    assert found.counts["Router"][0] == found.blocks


def test_a_huge_readme_is_read_only_up_to_its_bound(tmp_path, monkeypatch):
    # one fence that never closes, holding 40 MB of calls on one line and on many
    body = "```python\n" + "Router();" * 2_000_000 + "\n" + "serve()\n" * 3_000_000
    root = _tree(tmp_path, {"README.md": body})
    reads = []
    real = os.read
    monkeypatch.setattr(docs.os, "read", lambda fd, n: reads.append(n) or real(fd, n))
    found = docs.read(root, root, False, registry.by_name("python"))
    assert sum(reads) <= doc_files.MAX_DOCUMENT_BYTES + (1 << 16) * 2
    assert found.code_bytes <= doc_blocks.MAX_CODE_BYTES
    assert found.cut


def test_a_fifo_or_a_link_named_readme_is_never_opened_for_reading(tmp_path, monkeypatch):
    root = _tree(tmp_path, {})
    os.mkfifo(os.path.join(root, "README.md"))  # opening it blocking would hang the map
    secret = tmp_path / "secret.md"
    secret.write_text("```python\nserve()\n```\n")
    os.makedirs(os.path.join(root, "docs"))
    os.symlink(secret, os.path.join(root, "docs", "index.md"))
    os.symlink(tmp_path, os.path.join(root, "docs", "up"))
    found = docs.read(root, root, False, registry.by_name("python"))
    assert found.documents == [] and found.counts == {}


def test_a_docs_tree_of_endless_directories_is_walked_a_bounded_way(tmp_path, monkeypatch):
    files = {f"docs/d{i}/e{j}/x.py": "" for i in range(40) for j in range(40)}
    files.update({f"docs/page{i}.md": "```python\nserve()\n```\n" for i in range(200)})
    root = _tree(tmp_path, files)
    listed = []
    real = os.scandir
    monkeypatch.setattr(docs.os, "scandir", lambda p: listed.append(p) or real(p))
    found = docs.read(root, root, False, registry.by_name("python"))
    assert len(found.documents) == doc_files.MAX_DOCUMENTS
    assert len(listed) <= doc_files.MAX_DIRECTORIES * len(doc_files.DOCS_DIRS) + 2


def test_a_site_packages_of_huge_records_reads_a_bounded_number_of_bytes(tmp_path, monkeypatch):
    # a package no distribution names: the RECORDs are searched, up to a budget in all
    site = tmp_path / "site"
    write_tree(site, {f"pkg/{rel.removeprefix('pkg/')}": body for rel, body in PACKAGE.items()})
    for i in range(30):
        write_tree(site, {f"other{i}-1.0.dist-info/RECORD": "x/y.py,,\n" * 200_000})
    reads = []
    real = os.read
    monkeypatch.setattr(docs.os, "read", lambda fd, n: reads.append(n) or real(fd, n))
    assert doc_files._owning_distribution(str(site / "pkg"), []) is None
    assert sum(reads) <= doc_files.MAX_RECORD_BYTES + 2 * doc_files.MAX_DOCUMENT_BYTES


# what the documentation is worth


def test_names_only_the_readmes_example_uses_score_as_a_users_references(tmp_path, env):
    # before: nothing in the tree names Router or serve, so both scored 0 with `unused`
    page = index.repo_map(_tree(tmp_path, {"README.md": README}), env, limit=EVERY)
    names, by_name = _names(page), _by_name(page)
    assert by_name["Router"]["score"] > 0 and by_name["serve"]["score"] > 0
    assert names.index("serve") < names.index("part"), names  # routing.serve: by its module
    assert by_name["Router"]["documented"] == 2  # the import and the call
    assert by_name["unused"]["documented"] == 0  # a shell block is not Python
    assert page["documentation"] == {
        "documents": [os.path.join(page["path"], "README.md")],
        "sources": 0,
        "blocks": 1,
        "names": 2,
        "cut": False,
    }


def test_the_examples_own_definitions_are_not_the_packages(tmp_path, env):
    # the example defines `serve` itself and calls it: that is not the package's serve
    readme = "```python\ndef serve():\n    pass\n\nserve()\n```\n"
    page = index.repo_map(_tree(tmp_path, {"README.md": readme}), env, limit=EVERY)
    assert _by_name(page)["serve"]["score"] == 0


def test_a_builtin_spelling_is_the_packages_when_the_example_imports_it(tmp_path, env):
    # rich's `from rich import print`; a bare `len` and a `.get` on a dict stay built-ins'
    tree = {
        "pkg/console.py": "def print():\n    pass\n\n\ndef len():\n    pass\n\n\ndef get():\n"
        "    pass\n",
        "README.md": "```python\nfrom pkg import print\nprint(len([]), {}.get(1))\n```\n",
    }
    page = index.repo_map(_tree(tmp_path, tree), env, limit=EVERY)
    by_name = _by_name(page)
    assert by_name["print"]["documented"] == 2
    assert by_name["len"]["documented"] == by_name["get"]["documented"] == 0


def test_rest_code_blocks_literal_blocks_and_doctest_lines_are_read(tmp_path, env):
    readme = textwrap.dedent(
        """
        pkg
        ===

        .. code-block:: python
            :linenos:

            from pkg.routing import Router

        A literal block::

            import pkg.routing
            pkg.routing.serve()

        A shell session::

            $ pip install pkg --unused

        >>> from pkg.engine import Buffer
        >>> Buffer()
        <Buffer>
        """
    )
    root = _tree(tmp_path, {"README.rst": readme})
    found = docs.read(root, root, False, registry.by_name("python"))
    assert found.blocks == 4
    assert {name: tuple(c) for name, c in found.counts.items()} == {
        "Router": (1, 0),
        "serve": (1, 0),
        "Buffer": (2, 0),
    }


def test_an_installed_packages_readme_is_its_distributions_metadata(tmp_path, env):
    # site-packages: no README beside the package, the description in the dist-info that
    # lists the package in its RECORD (its name is not the package's)
    metadata = (
        "Metadata-Version: 2.4\nName: the-pkg\nDescription-Content-Type: text/markdown\n\n" + README
    )
    site = tmp_path / "site"
    write_tree(
        site,
        {
            **PACKAGE,
            "other-2.0.dist-info/METADATA": "Name: other\n\n```python\nfrom pkg.engine import "
            "Buffer\n```\n",
            "other-2.0.dist-info/RECORD": "other/__init__.py,,\n",
            "the_pkg-1.0.dist-info/METADATA": metadata,
            "the_pkg-1.0.dist-info/RECORD": "pkg/__init__.py,sha256=x,1\npkg/engine.py,,\n",
        },
    )
    page = index.repo_map(str(site / "pkg"), env, limit=EVERY)
    by_name = _by_name(page)
    assert by_name["Router"]["documented"] == 2 and by_name["Router"]["score"] > 0
    assert by_name["Buffer"]["documented"] == 0  # another distribution's description
    assert page["documentation"]["documents"] == [str(site / "the_pkg-1.0.dist-info" / "METADATA")]


def test_a_map_of_an_unchanged_installed_package_lists_nothing_and_reads_no_record(
    tmp_path, env, monkeypatch
):
    # every map looked for the documents again: site-packages listed, RECORDs read (up to
    # 16 MB), the package's and its docs' directories listed, even with its answer cached
    site = tmp_path / "site"
    write_tree(
        site,
        {
            **PACKAGE,
            "the_pkg-1.0.dist-info/METADATA": "Name: the-pkg\n\n" + README,
            "the_pkg-1.0.dist-info/RECORD": "pkg/__init__.py,,\n",
        },
    )
    hour_ago = time.time_ns() - 3600 * 10**9
    for directory, _dirs, _files in os.walk(site):
        os.utime(directory, ns=(hour_ago, hour_ago))
    first = index.repo_map(str(site / "pkg"), env, limit=EVERY)
    listed, opened = [], []
    real_scandir, real_open = os.scandir, os.open
    monkeypatch.setattr(docs.os, "scandir", lambda p: listed.append(p) or real_scandir(p))
    monkeypatch.setattr(
        docs.os, "open", lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k)
    )
    again = docs.tree_documentation(
        index.walk(str(site / "pkg"), None, env), [("pkg/engine.py", "python", None)], env
    )
    assert [p for p in listed if str(p).startswith(str(site))] == []
    assert [p for p in opened if str(p).endswith("RECORD")] == []
    assert again is not None
    assert first["documentation"]["documents"] == [str(site / "the_pkg-1.0.dist-info" / "METADATA")]
    monkeypatch.undo()
    (site / "pkg" / "README.md").write_text("```python\nfrom pkg.routing import serve\n```\n")
    later = index.repo_map(str(site / "pkg"), env, limit=EVERY)
    assert str(site / "pkg" / "README.md") in later["documentation"]["documents"]


def test_an_old_metadatas_description_header_is_read(tmp_path):
    metadata = (
        "Metadata-Version: 1.1\nName: pkg\nDescription: pkg\n        |\n        |"
        " .. code-block:: python\n        |\n        |     from pkg import Router\n"
        "Platform: any\n"
    )
    text, markdown = doc_files._description(metadata.encode())
    assert not markdown
    assert [
        tag
        for tag, _body in doc_blocks.blocks(
            text, doc_files.MARKDOWN if markdown else doc_files.REST
        )
    ] == ["python"]


def _scores(page: dict) -> list[tuple[str, float]]:
    return [(e["name"], e["score"]) for e in page["entries"]]


def test_a_focused_map_starts_no_walk_at_the_documentation(tmp_path, env):
    # --focus: every walk starts at the caller's path, none at the README
    plain = _tree(tmp_path / "plain", {})
    documented = _tree(tmp_path / "documented", {"README.md": README})
    pages = [
        index.repo_map(root, env, focus=[os.path.join(root, "pkg/wire.py")], limit=EVERY)
        for root in (plain, documented)
    ]
    assert _scores(pages[0]) == _scores(pages[1])


def test_a_tree_whose_documentation_holds_no_code_ranks_as_before(tmp_path, env):
    plain = index.repo_map(_tree(tmp_path / "plain", {}), env, limit=EVERY)
    prose = _tree(tmp_path / "prose", {"README.md": "# pkg\n\nNo code here::\n\n    $ x\n"})
    page = index.repo_map(prose, env, limit=EVERY)
    assert page["documentation"]["names"] == 0
    assert _scores(page) == _scores(plain)


def test_an_examples_keyword_arguments_and_own_names_are_not_uses(tmp_path):
    # click's README: `prompt="Your name"` names a parameter, not click.prompt; `routes`,
    # `request`, `count` are the example's own variables and parameters
    tree = {
        "pkg/api.py": "def option():\n    pass\n\n\ndef prompt():\n    pass\n\n\n"
        "def routes():\n    pass\n\n\ndef request():\n    pass\n\n\ndef count():\n    pass\n",
        "README.md": """
            ```python
            import pkg

            @pkg.option("--name", prompt="Your name")
            def hello(count, name):
                for request in range(count):
                    routes = [request]
                    print(routes, count == 1)
            ```
        """,
    }
    root = _tree(tmp_path, tree)
    found = docs.read(root, root, False, registry.by_name("python"))
    assert {name: tuple(c) for name, c in found.counts.items()} == {"option": (1, 0)}


def test_a_docstrings_doctest_and_fenced_example_are_documentation(tmp_path, env):
    # requests' and httpx's shape: the examples are in the package's own docstrings; the
    # names bound in one `>>>` run are the example's in the next
    tree = {
        "pkg/api.py": '''
            def serve():
                """Serve.

                >>> import pkg.routing
                >>> router = pkg.routing.Router()
                <Router>

                >>> router.get()
                """


            def unused():
                pass
        ''',
        "pkg/client.py": '''
            class Client:
                """A client.

                ```python
                from pkg.api import serve
                serve()
                ```
                """
        ''',
    }
    root = _tree(tmp_path, tree)
    page = index.repo_map(root, env, limit=EVERY)
    by_name = _by_name(page)
    assert by_name["Router"]["documented"] == 1 and by_name["Router"]["score"] > 0
    assert by_name["serve"]["documented"] == 2 and by_name["serve"]["score"] > 0
    assert by_name["unused"]["score"] == 0
    assert page["documentation"]["sources"] == 2 and page["documentation"]["documents"] == []


def test_source_files_are_read_for_examples_up_to_a_budget_in_all(tmp_path, monkeypatch):
    files = {f"pkg/m{i}.py": "# filler\n" * 120_000 for i in range(12)}  # 13 MB
    root = _tree(tmp_path, files)
    reads = []
    real = os.read
    monkeypatch.setattr(docs.os, "read", lambda fd, n: reads.append(n) or real(fd, n))
    found = docs.read(root, root, False, registry.by_name("python"), sorted(files))
    assert sum(reads) <= docs.MAX_SOURCE_BYTES + doc_files.MAX_DOCUMENT_BYTES + (1 << 16)
    assert found.cut


def test_what_a_documented_names_module_defines_beside_it_shares_its_weight(tmp_path, env):
    # starlette's README shows Route; Mount, defined beside it in routing.py, is the same
    # module's API. Before: Mount scored 0, as did what an undocumented module defines.
    tree = {
        "pkg/routing.py": "class Route:\n    pass\n\n\nclass Mount:\n    pass\n\n\n"
        "class _Private:\n    pass\n",
        "pkg/other.py": "class Elsewhere:\n    pass\n",
        "README.md": "```python\nfrom pkg.routing import Route\n```\n",
    }
    page = index.repo_map(_tree(tmp_path, tree), env, limit=EVERY)
    by_name = _by_name(page)
    assert by_name["Mount"]["documented"] == 0 and by_name["Mount"]["score"] > 0
    assert by_name["Route"]["score"] > by_name["Mount"]["score"]
    assert by_name["_Private"]["score"] == by_name["Elsewhere"]["score"] == 0


@pytest.mark.parametrize(
    "line",
    ["for a " * 40_000, "def f(" * 40_000, "lambda a," * 30_000, "a :" * 80_000],
    ids=["loop", "parameters", "lambda", "annotation"],
)
def test_an_example_built_to_backtrack_is_read_in_one_pass(tmp_path, line):
    # what an example binds was read with regexes that backtrack: one 240 kB line of
    # unfinished `for`s took minutes (quadratic); each line is now read once
    root = _tree(tmp_path, {"README.md": f"```python\nimport pkg\n{line}\npkg.serve()\n```\n"})
    found = docs.read(root, root, False, registry.by_name("python"))
    assert found.blocks == 1


def test_deeply_nested_blocks_are_parsed_in_small_pieces(tmp_path, monkeypatch):
    # tree-sitter's queries over nested errors grow with the square of a block's size:
    # 256 kB of "(" took over three minutes in one block; blocks are cut to a few kB and
    # a few dozen kB in all
    block = ("(" * 1000 + "\n") * 256
    body = "".join(f"```python\n{block}```\n" for _ in range(20))
    root = _tree(tmp_path, {"README.md": body})
    sizes = []
    real = engine.extract
    monkeypatch.setattr(engine, "extract", lambda p, s: sizes.append(len(s)) or real(p, s))
    found = docs.read(root, root, False, registry.by_name("python"))
    assert max(sizes) <= doc_blocks.MAX_BLOCK_BYTES
    assert sum(sizes) == found.code_bytes <= doc_blocks.MAX_CODE_BYTES
    assert found.cut


def test_a_tests_strings_are_its_fixtures_not_documentation(tmp_path, env):
    # a test writes a README holding an example: that is a fixture, not the package's docs
    fixture = 'README = """\n```python\nfrom pkg.routing import serve\nserve()\n```\n"""\n'
    root = _tree(tmp_path, {"tests/test_docs.py": fixture, "pkg/conftest.py": fixture})
    sources = ["tests/test_docs.py", "pkg/conftest.py"]
    found = docs.read(root, root, False, registry.by_name("python"), sources)
    assert found.sources == 0 and found.docstrings == {}


def test_a_map_of_an_unchanged_tree_parses_its_documentation_once(tmp_path, env, monkeypatch):
    # a cached map loaded the grammar and parsed every example again, ~30 ms of a 60 ms
    # answer; what was read is now kept beside the records, keyed by what it read
    root = _tree(tmp_path, {"README.md": README})
    parsed = _block_count(monkeypatch)  # the tree's files' parses and the examples'
    first = index.repo_map(root, env, limit=EVERY)
    assert parsed[0] == len(PACKAGE) + 1
    again = index.repo_map(root, env, limit=EVERY)
    assert parsed[0] == len(PACKAGE) + 1 and again["entries"] == first["entries"]
    readme = os.path.join(root, "README.md")
    with open(readme, "a") as handle:
        handle.write("\n```python\nfrom pkg.engine import Buffer\n```\n")
    changed = index.repo_map(root, env, limit=EVERY)
    assert parsed[0] == len(PACKAGE) + 3 and _by_name(changed)["Buffer"]["documented"] == 1
