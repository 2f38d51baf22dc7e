"""``why`` from a real clone: named deep lines, and the distribution over a sample of lines
of a large history. Wall time, git processes, history walks, and what hit the budget.

No real history of any size is installed on this machine or ships in a package a registry
here serves (``/root/.pyenv`` is a shallow clone of one commit), so both repositories are
generated, through ``git fast-import``:

**The deep file** (``--commits``, default 5,000, one a day from 2012):

- ``src/engine/core.py`` (a licence header, forty functions, churned by a third of all
  commits) is renamed twice, to ``src/engine/kernel.py`` and then ``lib/engine/kernel.py``;
- the target line ``budget = resolve_shard_budget(total, workers) ...`` is born in
  ``plan_shards()`` early, survives a rewrite that deletes that function and re-adds the line
  in a new one at the end of the file (the line's range is lost there; its words are not),
  and is edited every 200 commits after (every ``commits / 25`` below 5,000);
- every 100th change lands through a ``Merge pull request #N`` merge commit, the rest carry
  ``(#N)`` squash subjects;
- a late line of four words that all arrive with its own commit: every pickaxe walks the
  file's whole history and none reaches further back.

Each of its three named lines is asked once on a fresh app (cold: first request of the
daemon; the OS page cache holds the pack the clone just wrote) and then ``--runs`` more
times (warm, median).

**The large tree** (``--large-commits``, default 30,000 commits, ``--files``, default 4,000
files at HEAD, one commit every three hours or so from 2012): Python files created over the
years (a tenth in the first import), each with a popularity drawn from a Pareto law, so a
few hot files carry thousands of commits and most files a handful; a change edits lines,
inserts and deletes statements and functions (a file stops growing at 3,000 lines); single
files are renamed (about one change in 120), three whole directories move, files are
deleted. Three changes in four are squash merges ``Subject (#N)``, one in twenty is a direct
push with no number, and about one in five is a topic branch of one to four commits, forked
from main when opened and merged by ``Merge pull request #N`` up to six changes later (its
files untouched on main meanwhile, so the merge is clean). Every pull request is landed
raw. Then ``--lines`` lines drawn uniformly (seeded) from every line of every file at HEAD,
and ``--hot-lines`` more from the hottest 1 % of files (by commits), are each asked once,
in turn, of one warm daemon (the first request, not counted, opens its pool); then, three
times, a line the last commit plants in the hottest file, of three words new to it (all
three pickaxes walk its whole history, none reaching further back). Last, the
walks ``why`` runs, alone, on two of those lines (the file with the fewest commits, the
hottest), before and after ``git commit-graph write --reachable --changed-paths`` in the
clone.

Then the real loop for both: an embedded Postgres in a temporary ``RELORE_HOME``, ``relored
clone --url`` (a complete clone and its rename walk), ``dbt build`` of the marts ``why``
reads (their tests skipped), and the app in-process on the reader role. The work directory is removed at the end unless ``--keep`` names one.

    .venv/bin/python benchmarks/why_bench.py      # --commits 5000 --runs 5 --files 4000
                                                  # --large-commits 30000 --lines 200
                                                  # --hot-lines 20
    .venv/bin/python benchmarks/why_bench.py --commits 30 --runs 1 --files 20 \
        --large-commits 60 --lines 5 --hot-lines 2   # toy size: seconds, every figure
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import provenance
import psycopg
from psycopg.types.json import Jsonb

from relore.contract.version import __version__
from relore.operate import cli as relored
from relore.operate import database
from relore.serve.app import Settings, create_app
from relore.serve.clone.git import Budget
from relore.serve.clone.why.history import MAX_PICKAXE_WALKS
from relore.serve.clone.why.lines import candidates

ROOT = Path(__file__).resolve().parent.parent
REPO, REPO_ID = "bench/engine", 31337
NAMES = ("src/engine/core.py", "src/engine/kernel.py", "lib/engine/kernel.py")
LICENCE = [
    "# Copyright 2012 The Engine Authors. All rights reserved.",
    "#",
    '# Licensed under the Apache License, Version 2.0 (the "License");',
    "# you may not use this file except in compliance with the License.",
    "# You may obtain a copy of the License at",
    "#",
    "#     http://www.apache.org/licenses/LICENSE-2.0",
    "#",
    "# Unless required by applicable law or agreed to in writing, software",
    '# distributed under the License is distributed on an "AS IS" BASIS,',
    "# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.",
    "# See the License for the specific language governing permissions and",
    "# limitations under the License.",
    "import math",
]
TARGET = "    budget = resolve_shard_budget(total, workers)"
MIN_COMMITS = 12
WORST = "    spread = alpha_metric(beta_metric, gamma_metric, delta_metric)"


class History:
    """The target file as a list of blocks; each commit edits it or a filler file."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.functions = {
            f"step_{i}": [f"def step_{i}(x):", f"    y = x * {i}", "    return y", "", ""]
            for i in range(40)
        }
        self.tail: list[str] = []
        self.fillers = {f"src/engine/mod_{i}.py": [f"VALUE_{i} = 0"] for i in range(30)}
        self.path = NAMES[0]

    def text(self) -> str:
        body = []
        for lines in self.functions.values():
            body.extend(lines)
        return "\n".join([*LICENCE, "", "", *body, *self.tail]) + "\n"

    def churn(self, n: int) -> str:
        name = self.rng.choice([k for k in self.functions if k.startswith("step_")])
        self.functions[name][1] = f"    y = x * {n % 97} + {self.rng.randint(0, 9)}"
        return f"Tune {name}"


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n" % len(raw) + raw + b"\n"


def generate(path: Path, commits: int, seed: int = 7) -> dict:
    """A deep history through ``git fast-import``; returns facts about it."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    history = History(seed)
    stream = io.BytesIO()
    start = 1_325_376_000  # 2012-01-01
    facts: dict = {"pulls": {}, "target_edits": [], "merges": 0}
    mark = 0
    commits = max(commits, MIN_COMMITS)
    # the named events in order, each on its own commit at any size
    birth_at = max(commits // 50, 1)
    rename_at = (max(commits // 4, birth_at + 1), 0)
    rewrite_at = max(commits * 2 // 5, rename_at[0] + 1)
    rename_at = (rename_at[0], max(commits * 7 // 10, rewrite_at + 1))
    worst_at = max(commits - 3, rename_at[1] + 1)
    edit_every = min(200, max(commits // 25, 2))
    for n in range(1, commits + 1):
        when = start + n * 86_400
        ops: list[bytes] = []
        pr = 1000 + n
        if n == birth_at:
            history.functions["plan_shards"] = [
                "def plan_shards(total, workers):",
                "    if workers <= 0:",
                "        return []",
                TARGET,
                "    return [budget] * workers",
                "",
                "",
            ]
            subject = f"Plan shards by budget (#{pr})"
            facts["origin_pr"] = pr
        elif n in rename_at:
            old = history.path
            history.path = NAMES[1] if n == rename_at[0] else NAMES[2]
            ops.append(f"R {old} {history.path}\n".encode())
            subject = f"Move {old} to {history.path} (#{pr})"
        elif n == rewrite_at:
            del history.functions["plan_shards"]
            history.tail = [
                "",
                "",
                "def assign_shards(total, workers, floor=1):",
                "    workers = max(workers, floor)",
                TARGET + " + 0",
                "    return [budget for _ in range(workers)]",
            ]
            subject = f"Rewrite shard assignment (#{pr})"
        elif n == worst_at:
            history.tail.insert(5, WORST)
            subject = f"Spread metrics (#{pr})"
            facts["worst_pr"] = pr
        elif n > rewrite_at and (n - rewrite_at) % edit_every == 0:
            history.tail[4] = TARGET + f" + {(n - rewrite_at) // edit_every}"
            subject = f"Retune the shard budget (#{pr})"
            facts["target_edits"].append(pr)
        elif n % 3 == 0:
            subject = history.churn(n) + f" (#{pr})"
        else:
            filler = history.rng.choice(list(history.fillers))
            history.fillers[filler][0] = f"VALUE_{filler[-4]} = {n}"
            ops.append(
                b"M 100644 inline "
                + filler.encode()
                + b"\n"
                + _data(history.fillers[filler][0] + "\n")
            )
            subject = f"Bump a value (#{pr})"
        if not any(op.startswith(b"M 100644 inline src/engine/mod_") for op in ops):
            ops.append(b"M 100644 inline " + history.path.encode() + b"\n" + _data(history.text()))
        merged = n % 100 == 50 and n not in rename_at
        who = f"Dev {n % 13} <dev{n % 13}@example.com> {when} +0000\n".encode()
        if merged:
            # the change on a topic branch, then a merge commit on main that names the PR
            mark += 1
            stream.write(b"commit refs/heads/topic\nmark :%d\n" % mark)
            stream.write(b"author " + who + b"committer " + who)
            stream.write(_data(subject.rsplit(" (#", 1)[0]))
            stream.write(b"from :%d\n" % (mark - 1))
            for op in ops:
                stream.write(op)
            stream.write(b"\n")
            mark += 1
            merge_who = f"Dev {n % 13} <dev{n % 13}@example.com> {when + 3600} +0000\n".encode()
            stream.write(b"commit refs/heads/main\nmark :%d\n" % mark)
            stream.write(b"author " + merge_who + b"committer " + merge_who)
            stream.write(_data(f"Merge pull request #{pr} from bench/topic-{n}"))
            stream.write(b"from :%d\nmerge :%d\n\n" % (mark - 2, mark - 1))
            facts["merges"] += 1
        else:
            mark += 1
            stream.write(b"commit refs/heads/main\nmark :%d\n" % mark)
            stream.write(b"author " + who + b"committer " + who)
            stream.write(_data(subject))
            if mark > 1:
                stream.write(b"from :%d\n" % (mark - 1))
            for op in ops:
                stream.write(op)
            stream.write(b"\n")
        if "(#" in subject or merged:
            facts["pulls"][pr] = subject
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet"],
        input=stream.getvalue(),
        check=True,
    )
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-f", "main"], check=True)
    lines = (path / NAMES[2]).read_text().split("\n")
    facts["target_line"] = next(i for i, t in enumerate(lines, 1) if t.startswith(TARGET))
    facts["worst_line"] = next(i for i, t in enumerate(lines, 1) if t == WORST)
    facts["commits"] = int(
        subprocess.run(
            ["git", "-C", str(path), "rev-list", "--count", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    return facts


# --- the large tree ------------------------------------------------------------------------

FOREST, FOREST_ID = "bench/forest", 31338
# the marts `why` reads (and what they are built from): their tests are not what is measured
WHY_READS = (
    "+corpus_stats",
    "+documents",
    "+threads",
    "+thread_commits",
    "+path_aliases",
    "+repositories",
)
NO_TESTS = ("--exclude-resource-type", "test", "--exclude-resource-type", "unit_test")
SYLLABLES = (
    "ba be bi bo bu da de di do du fa fe fi fo ga ge gi go ka ke ki ko ku la le li lo lu ma"
    " me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu"
    " va ve vi vo za ze zi zo ash ent ion ard els orm ter ill ox um"
).split()
MAX_FILE_LINES = 3000
STRESS = "    quench_wyvern = whisk_chyme(jolly_quarry)"


class Forest:
    """The files at the tip of the history being written, and how popular each is."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        words: set[str] = set()
        while len(words) < 6000:
            words.add("".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 3))))
        self.words = sorted(words)
        self.rng.shuffle(self.words)
        # a word's rank sets how common it is across the repository (Zipf)
        self.cum_words = list(itertools.accumulate(1 / (r + 1) ** 1.05 for r in range(6000)))
        self.files: dict[str, list[str]] = {}
        self.weight: dict[str, float] = {}
        self.topic: dict[str, list[str]] = {}  # a file's own words, used often in it
        self.touches: dict[str, int] = {}  # commits that wrote the file, under any name
        self.dirs = [f"{a}/{b}" for a in self._some(12) for b in self._some(6)]
        self.locked: set[str] = set()  # files an open topic branch changes
        self._cache: tuple[list[str], list[float]] | None = None

    def _some(self, n: int) -> list[str]:
        return [self.rng.choice(self.words) for _ in range(n)]

    def word(self, path: str | None = None) -> str:
        if path and self.rng.random() < 0.45:
            return self.rng.choice(self.topic[path])
        return self.rng.choices(self.words, cum_weights=self.cum_words)[0]

    def ident(self, path: str | None, parts: int | None = None) -> str:
        n = parts or self.rng.choice((1, 1, 2, 2, 2, 3))
        return "_".join(self.word(path) for _ in range(n))

    def statement(self, path: str, indent: str) -> list[str]:
        r = self.rng.random()

        def w() -> str:
            return self.ident(path)

        if r < 0.30:
            return [f"{indent}{w()} = {w()}({w()}, {w()})"]
        if r < 0.42:
            return [f"{indent}{w()} = {self.rng.randint(0, 4096)}"]
        if r < 0.52:
            return [f"{indent}{w()}.{w()}({w()})"]
        if r < 0.62:
            return [f"{indent}if {w()} is None:", f"{indent}    {w()} = {w()}({w()})"]
        if r < 0.70:
            return [f"{indent}for {w()} in {w()}:", f"{indent}    {w()}.append({w()})"]
        if r < 0.80:
            return [
                f"{indent}# " + " ".join(self.word(path) for _ in range(self.rng.randint(3, 9)))
            ]
        if r < 0.86:
            return [""]
        return [f"{indent}{w()} = {w()}[{w()}] + {w()}"]

    def function(self, path: str) -> list[str]:
        lines = ["", "", f"def {self.ident(path, 2)}({self.ident(path)}, {self.ident(path)}):"]
        if self.rng.random() < 0.4:
            words = " ".join(self.word(path) for _ in range(self.rng.randint(3, 8)))
            lines.append(f'    """{words.capitalize()}."""')
        for _ in range(self.rng.randint(2, 12)):
            lines += self.statement(path, "    ")
        lines.append(f"    return {self.ident(path)}")
        return lines

    def new_path(self) -> str:
        while True:
            name = self.ident(None, self.rng.choice((1, 2)))
            path = f"src/{self.rng.choice(self.dirs)}/{name}.py"
            if path not in self.files:
                return path

    def new_file(self, path: str) -> None:
        self.topic[path] = self._some(25)
        lines = LICENCE[:-1] if self.rng.random() < 0.6 else []
        lines = [*lines, f'"""{" ".join(self._some(6)).capitalize()}."""', ""]
        for _ in range(self.rng.randint(1, 6)):
            lines.append(f"from {self.ident(path, 1)} import {self.ident(path)}")
        for _ in range(self.rng.randint(2, 14)):
            lines += self.function(path)
        self.files[path] = lines
        self.weight[path] = self.rng.paretovariate(0.95)
        self.touches[path] = 1
        self._cache = None

    def edit(self, path: str) -> None:
        """Change a few lines, insert or delete a statement, add or delete a function."""
        lines = self.files[path]
        body = [i for i, t in enumerate(lines) if t.startswith("    ")]
        defs = [i for i, t in enumerate(lines) if t.startswith("def ")]
        grow = len(lines) < MAX_FILE_LINES
        r = self.rng.random()
        if (r < 0.55 or (not grow and r < 0.8)) and body:
            for _ in range(self.rng.choice((1, 1, 1, 2, 3))):
                i = self.rng.choice(body)
                indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())] or "    "
                lines[i] = self.statement(path, indent)[0] or lines[i]
        elif r < 0.72 and body and grow:
            i = self.rng.choice(body)
            lines[i + 1 : i + 1] = self.statement(path, "    ")
        elif (r < 0.86 and grow) or not defs:
            at = self.rng.choice([*defs, len(lines)])
            at = max(at - 2, 0) if at < len(lines) else at
            lines[at:at] = self.function(path)
        elif (len(defs) > 2 and r < 0.93) or not grow:
            k = self.rng.randrange(len(defs))
            end = defs[k + 1] - 2 if k + 1 < len(defs) else len(lines)
            del lines[max(defs[k] - 2, 0) : end]
        elif body:
            i = self.rng.choice(body)
            if lines[i - 1].startswith("    ") and lines[i + 1 : i + 2] != [""]:
                del lines[i]
        self.touches[path] += 1

    def pick(self, k: int) -> list[str]:
        """Up to ``k`` unlocked files, by popularity."""
        if self._cache is None:
            paths = list(self.files)
            self._cache = (paths, list(itertools.accumulate(self.weight[p] for p in paths)))
        paths, cum = self._cache
        found: list[str] = []
        for _ in range(k * 20):
            path = self.rng.choices(paths, cum_weights=cum)[0]
            if path not in self.locked and path not in found:
                found.append(path)
                if len(found) == k:
                    break
        return found

    def any_file(self) -> str | None:
        """An unlocked file, popular or not (a rename or a deletion); None when every file
        is on an open topic branch."""
        paths = [p for p in self.files if p not in self.locked]
        return self.rng.choice(paths) if paths else None

    def rename(self, old: str, new: str) -> None:
        for table in (self.files, self.weight, self.topic, self.touches):
            table[new] = table.pop(old)
        self._cache = None

    def delete(self, path: str) -> None:
        for table in (self.files, self.weight, self.topic, self.touches):
            table.pop(path)
        self._cache = None


class Stream:
    """Commits written to ``git fast-import`` as they are made."""

    def __init__(self, path: Path, rng: random.Random):
        self.proc = subprocess.Popen(
            ["git", "-C", str(path), "fast-import", "--quiet"], stdin=subprocess.PIPE
        )
        self.rng = rng
        self.clock = 1_325_376_000  # 2012-01-01
        self.mark = 0
        self.commits = 0

    def commit(self, ref: str, subject: str, ops: list[bytes], parent: int, merge: int = 0):
        self.mark += 1
        self.commits += 1
        self.clock += self.rng.randint(2700, 18900)
        dev = self.rng.randrange(60)
        sig = b"Dev %d <dev%d@example.com> %d +0000\n" % (dev, dev, self.clock)
        out = self.proc.stdin
        out.write(b"commit %s\nmark :%d\n" % (ref.encode(), self.mark))
        out.write(b"author " + sig + b"committer " + sig + _data(subject))
        if parent:
            out.write(b"from :%d\n" % parent)
        if merge:
            out.write(b"merge :%d\n" % merge)
        out.write(b"".join(ops) + b"\n")
        return self.mark

    def close(self) -> None:
        self.proc.stdin.close()
        if self.proc.wait() != 0:
            raise RuntimeError("git fast-import failed")


def generate_forest(path: Path, files: int, commits: int, seed: int) -> dict:
    """A large tree under a long history of pull requests; returns facts about it."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    forest = Forest(seed)
    rng = forest.rng
    git = Stream(path, rng)
    facts: dict = {"pulls": {}, "merges": 0, "topic_branches": 0, "direct_pushes": 0}
    facts |= {"renamed_files": 0, "directory_moves": 0, "deleted_files": 0}

    def put(p: str) -> bytes:
        text = "\n".join(forest.files[p]) + "\n"
        return b"M 100644 inline " + p.encode() + b"\n" + _data(text)

    for _ in range(max(files // 10, 1)):
        forest.new_file(forest.new_path())
    main = git.commit("refs/heads/main", "Initial import", [put(p) for p in forest.files], 0)
    number = 0
    topics: list[dict] = []
    moves = [commits * k // 4 for k in (1, 2, 3)]

    def merge(topic: dict) -> int:
        subject = f"Merge pull request #{topic['number']} from dev/{topic['branch']}"
        ops = [put(p) for p in topic["files"]]
        forest.locked -= set(topic["files"])
        facts["pulls"][topic["number"]] = subject
        facts["merges"] += 1
        return git.commit("refs/heads/main", subject, ops, main, merge=topic["tip"])

    while git.commits < commits:
        number += rng.choice((1, 1, 2, 3))  # issues take numbers too
        for topic in list(topics):
            topic["after"] -= 1
            if topic["after"] < 0:
                main = merge(topic)
                topics.remove(topic)
        if moves and git.commits >= moves[0]:
            old = rng.choice(forest.dirs)
            new = f"{old.split('/')[0]}/{forest.word()}"
            moving = [p for p in forest.files if p.startswith(f"src/{old}/")]
            if moving and not forest.locked & set(moving) and new not in forest.dirs:
                moves.pop(0)
                forest.dirs[forest.dirs.index(old)] = new
                ops = []
                for p in moving:
                    q = f"src/{new}/" + p.removeprefix(f"src/{old}/")
                    ops.append(f"R {p} {q}\n".encode())
                    forest.rename(p, q)
                subject = f"Move {old} to {new} (#{number})"
                main = git.commit("refs/heads/main", subject, ops, main)
                facts["pulls"][number] = subject
                facts["directory_moves"] += 1
                facts["renamed_files"] += len(moving)
                continue
        ops: list[bytes] = []
        r = rng.random()
        behind = len(forest.files) < files * git.commits / commits + files // 10
        if r < 0.2:
            kind = "add" if behind else "edit"
        elif r < 0.215:
            kind = "remove" if r < 0.207 and len(forest.files) > files // 2 else "rename"
        else:
            kind = "edit"
        one = forest.any_file() if kind in ("remove", "rename") else None
        touched = forest.pick(rng.choice((1, 1, 1, 2, 2, 3, 4))) if kind == "edit" else []
        if not (one or touched):  # every file is on an open branch, or the tree is behind
            kind = "add"
        if kind == "remove":
            forest.delete(one)
            ops.append(f"D {one}\n".encode())
            facts["deleted_files"] += 1
            verb = "Remove"
        elif kind == "rename":
            new = forest.new_path()
            ops.append(f"R {one} {new}\n".encode())
            forest.rename(one, new)
            facts["renamed_files"] += 1
            if rng.random() < 0.5:  # a move with an edit, still found as a rename
                forest.edit(new)
                touched = [new]
            verb = "Rename"
        elif kind == "edit":
            for p in touched:
                forest.edit(p)
            verb = rng.choice(("Fix", "Refactor", "Tune", "Handle", "Speed up", "Document"))
        else:
            touched = [forest.new_path()]
            forest.new_file(touched[0])
            verb = "Add"
        subject = f"{verb} {forest.word()} {forest.word()}"
        style = rng.random()
        if style < 0.2 and touched and not ops:
            # a topic branch forked from main now, merged a few changes later
            tip = git.commit(f"refs/heads/pr/{number}", subject, [put(p) for p in touched], main)
            for _ in range(rng.choice((0, 0, 1, 2, 3))):
                for p in touched:
                    forest.edit(p)
                again = rng.choice(("Address review", "Fix tests", "Tidy"))
                tip = git.commit(f"refs/heads/pr/{number}", again, [put(p) for p in touched], tip)
            facts["topic_branches"] += 1
            forest.locked |= set(touched)
            branch = f"{forest.word()}-{number}"
            topics.append({"number": number, "branch": branch, "tip": tip, "files": touched})
            topics[-1]["after"] = rng.randint(0, 6)
            continue
        ops += [put(p) for p in touched]
        if style < 0.25:
            facts["direct_pushes"] += 1
        else:
            subject += f" (#{number})"
            facts["pulls"][number] = subject
        main = git.commit("refs/heads/main", subject, ops, main)
    for topic in topics:
        main = merge(topic)
    # last, a line of three words new to the hottest file (no syllable spells a q, w, j, c or
    # y): each pickaxe walks its whole history and none reaches further back
    hottest = max(forest.files, key=lambda p: (forest.touches[p], p))
    lines = forest.files[hottest]
    at = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("    "))
    lines.insert(at + 1, STRESS)
    forest.touches[hottest] += 1
    number += 1
    subject = f"Track quarries (#{number})"
    facts["pulls"][number] = subject
    git.commit("refs/heads/main", subject, [put(hottest)], main)
    facts["stress"] = (hottest, at + 2)
    git.close()
    refs = subprocess.run(
        ["git", "-C", str(path), "for-each-ref", "--format=delete %(refname)", "refs/heads/pr/"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["git", "-C", str(path), "update-ref", "--stdin"], input=refs, check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-f", "main"], check=True)
    facts["commits"] = _count(path, "HEAD")
    facts["merge_commits"] = _count(path, "--merges", "HEAD")
    facts["files"] = forest.files
    facts["touches"] = forest.touches
    return facts


def _count(path: Path, *args: str) -> int:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-list", "--count", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


# --- the loop ------------------------------------------------------------------------------


def _payload(repo: str, number: int, title: str) -> dict:
    return {
        "id": number,
        "number": number,
        "title": title,
        "state": "closed",
        "body": "A change.",
        "user": {"login": "maint", "id": 1, "type": "User"},
        "author_association": "MEMBER",
        "labels": [],
        "comments": 0,
        "html_url": f"https://github.com/{repo}/pull/{number}",
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": "2020-01-01T00:00:00Z",
        "pull_request": {"merged_at": "2020-01-01T00:00:00Z"},
    }


def land(url: str, repo: str, repo_id: int, pulls: dict[int, str]) -> int:
    """Pull requests as raw payloads (the issue listing's shape): number and title."""
    rows = []
    for number, subject in sorted(pulls.items()):
        title = subject.rsplit(" (#", 1)[0]
        payload = _payload(repo, number, title)
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        rows.append((repo_id, repo, number, number, Jsonb(payload), digest))
    with psycopg.connect(url) as conn:
        conn.execute(
            "insert into ops.repos (repo_id, full_name, owner_login, owner_type)"
            " values (%s, %s, 'bench', 'Organization') on conflict do nothing",
            (repo_id, repo),
        )
        with conn.cursor() as cur:
            cur.executemany(
                "insert into raw.github_objects (repo_id, repo, object_type, object_id,"
                " thread_number, payload, payload_hash, pass_name)"
                " values (%s, %s, 'issue', %s, %s, %s, %s, 'bench')",
                rows,
            )
    return len(rows)


def deep_pulls(facts: dict) -> dict[int, str]:
    """The pull requests whose numbers the target file's history carries."""
    wanted = {facts["origin_pr"], facts["worst_pr"], *facts["target_edits"]}
    wanted |= {pr for pr, s in facts["pulls"].items() if "Move" in s or "Rewrite" in s}
    return {pr: facts["pulls"][pr] for pr in wanted}


def clone(repo: str, origin: Path, env: dict) -> dict:
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    code = relored.main(
        ["clone", "--repo", repo, "--url", str(origin), "--json"], env=env, out=out, err=err
    )
    assert code == 0, err.getvalue()
    return {"seconds": round(time.perf_counter() - t, 2), **json.loads(out.getvalue())}


def _client(reader: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    client = TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1")
    client.headers["x-relore-client"] = __version__
    return client


def ask(client, repo: str, path: str, line: int) -> tuple[float, int, dict]:
    params = {"repo": repo, "path": path, "line": line}
    t = time.perf_counter()
    response = client.get("/api/v1/why", params=params)
    return time.perf_counter() - t, response.status_code, response.json()


def named_cases(reader: str, facts: dict, runs: int) -> dict:
    cases = {
        "deep line (origin found)": facts["target_line"],
        "worst case (3 pickaxes, none reach further)": facts["worst_line"],
        "licence header (pickaxe declined)": 3,
    }
    timings = {}
    for name, line in cases.items():
        with _client(reader) as client:
            cold, status, page = ask(client, REPO, NAMES[2], line)
            assert status == 200, page
            warm = [ask(client, REPO, NAMES[2], line)[0] for _ in range(runs)]
        budget = page["budget"]
        timings[name] = {
            "line": line,
            "cold_s": round(cold, 3),
            "warm_median_s": round(statistics.median(warm), 3) if warm else None,
            "subprocesses": budget["subprocesses"],
            "history_walks": budget["history_walks"],
            "pickaxe_walks": budget["pickaxe_walks"],
            "timed_out": budget["timed_out"],
            "revisions": page["revisions"]["returned"],
            "revisions_more": page["revisions"]["total_is_lower_bound"],
            "origin_word": page["origin"]["word"],
            "origin_declined": page["origin"]["declined"],
            "origin_oldest": (page["origin"]["commits"] or [{}])[0].get("date"),
            "pull_request": (page["pull_request"] or {}).get("number"),
            "pull_request_via": (page["pull_request"] or {}).get("via"),
        }
    return timings


def draw(facts: dict, lines: int, hot_lines: int, seed: int) -> list[tuple[str, str, int]]:
    """(stratum, path, line): ``lines`` uniform over every line at HEAD, ``hot_lines`` over
    the lines of the hottest 1 % of files by commits."""
    rng = random.Random(seed)
    files = facts["files"]
    every = [(p, n) for p in sorted(files) for n in range(1, len(files[p]) + 1)]
    drawn = [("all", p, n) for p, n in rng.sample(every, min(lines, len(every)))]
    by_heat = sorted(files, key=lambda p: (-facts["touches"][p], p))
    hot = by_heat[: max(len(files) // 100, 1)]
    pool = [(p, n) for p in hot for n in range(1, len(files[p]) + 1)]
    drawn += [("hot", p, n) for p, n in rng.sample(pool, min(hot_lines, len(pool)))]
    return drawn


def measure_line(client, facts: dict, stratum: str, path: str, line: int) -> dict:
    wall, status, page = ask(client, FOREST, path, line)
    row = {"stratum": stratum, "path": path, "line": line, "commits": facts["touches"][path]}
    row |= {"wall_s": round(wall, 3), "status": status}
    if status != 200:
        row["error"] = page.get("error")
        return row
    budget, origin = page["budget"], page["origin"]
    skipped = [c.get("skipped") for c in origin.get("candidates", [])]
    row |= {
        "git_processes": budget["subprocesses"],
        "history_walks": budget["history_walks"],
        "pickaxe_walks": budget["pickaxe_walks"],
        "git_elapsed_s": budget["elapsed_ms"] / 1000,
        "timed_out": budget["timed_out"],
        "notes": budget["notes"],
        "declined": origin["declined"],
        "pickaxe_capped": "pickaxe budget spent" in skipped and origin["word"] is None,
        "revisions": page["revisions"]["returned"],
        "revisions_capped": page["revisions"]["total_is_lower_bound"],
        "origin_found": origin["word"] is not None,
        "pull_request": (page["pull_request"] or {}).get("number"),
        "via": (page["pull_request"] or {}).get("via", "").split(" ")[0] or None,
    }
    return row


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)] if ordered else 0


def spread(values: list[float], digits: int = 2) -> str:
    """p50 / p95 / max."""
    if not values:
        return "-"
    return (
        " / ".join(
            f"{round(v, digits):g}" for v in (statistics.median(values), percentile(values, 0.95))
        )
        + f" / {round(max(values), digits):g}"
    )


def summarise(rows: list[dict]) -> dict:
    ok = [r for r in rows if r["status"] == 200]
    code = [r for r in ok if not r["declined"]]
    return {
        "lines": len(rows),
        "files": len({r["path"] for r in rows}),
        "file_commits": spread([r["commits"] for r in rows], 0),
        "wall_s": spread([r["wall_s"] for r in rows]),
        "git_processes": spread([r["git_processes"] for r in ok], 0),
        "history_walks": spread([r["history_walks"] for r in ok], 0),
        "pickaxe_walks_0123": [sum(r["pickaxe_walks"] == k for r in ok) for k in range(4)],
        "declined": {
            reason: sum(r["declined"] == reason for r in ok)
            for reason in sorted({r["declined"] for r in ok if r["declined"]})
        },
        "origin_found_of_code_lines": f"{sum(r['origin_found'] for r in code)}/{len(code)}",
        "pull_request_found": f"{sum(r['pull_request'] is not None for r in ok)}/{len(ok)}",
        "via_carrying_merge": sum(r["via"] == "merge" for r in ok),
        "status_not_200": sum(r["status"] != 200 for r in rows),
        "timed_out": sum(bool(r["timed_out"]) for r in ok),
        "stopped_at_pickaxe_cap": sum(r["pickaxe_capped"] for r in ok),
        "revision_chain_capped": sum(r["revisions_capped"] for r in ok),
        "pickaxe_output_cut": sum(bool(r["notes"]) for r in ok),
    }


BUCKETS = ((1, 9), (10, 99), (100, 999), (1000, 10**9))


def by_commits(rows: list[dict]) -> dict:
    """Wall time by how many commits wrote the line's file."""
    found = {}
    for low, high in BUCKETS:
        inside = [r for r in rows if low <= r["commits"] <= high]
        if inside:
            name = f"{low}-{high}" if high < 10**9 else f"{low}+"
            found[name] = {
                "lines": len(inside),
                "wall_s": spread([r["wall_s"] for r in inside]),
                "pickaxe_walks_max": max((r.get("pickaxe_walks", 0) for r in inside), default=0),
                "hit_budget": sum(
                    r["status"] != 200 or bool(r["timed_out"]) or r["pickaxe_capped"]
                    for r in inside
                ),
            }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=5000, help="the deep file's history")
    parser.add_argument("--runs", type=int, default=5, help="warm runs of each named line")
    parser.add_argument("--files", type=int, default=4000, help="the large tree's files")
    parser.add_argument("--large-commits", type=int, default=30_000)
    parser.add_argument("--lines", type=int, default=200, help="lines drawn from every file")
    parser.add_argument("--hot-lines", type=int, default=20, help="from the hottest 1 %%")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", help="keep the work directory here")
    parser.add_argument("--rows", help="write every sampled line's figures here (JSON lines)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="why-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict = {"measured_at": provenance.facts()}
    print(f"{provenance.line()}: why_bench in {work}", file=sys.stderr)
    home = work / "home"
    paths = database.EmbeddedPaths(home)
    try:
        t = time.perf_counter()
        facts = generate(work / "origin", args.commits)
        results["deep"] = {
            "generate_s": round(time.perf_counter() - t, 2),
            "commits": facts["commits"],
            "merges": facts["merges"],
        }
        t = time.perf_counter()
        forest = generate_forest(work / "forest", args.files, args.large_commits, args.seed)
        results["large"] = {
            "generate_s": round(time.perf_counter() - t, 2),
            "commits": forest["commits"],
            "merge_commits": forest["merge_commits"],
            "files_at_head": len(forest["files"]),
            "lines_at_head": sum(map(len, forest["files"].values())),
            "largest_file_lines": max(map(len, forest["files"].values())),
            "file_commits": spread(list(forest["touches"].values()), 0),
            **{k: v for k, v in forest.items() if isinstance(v, int) and k != "commits"},
            "pack_mib": round(_pack_bytes(work / "forest") / 2**20),
        }
        print(f"generated: {json.dumps(results)}", file=sys.stderr)

        database.start_embedded(paths)
        env = {"RELORE_HOME": str(home), "RELORE_CLONES_DIR": str(work / "clones")}
        url = database.ensure_database(env)
        results["deep"]["pull_requests_landed"] = land(url, REPO, REPO_ID, deep_pulls(facts))
        results["large"]["pull_requests_landed"] = land(url, FOREST, FOREST_ID, forest["pulls"])
        for name, repo, origin in (("deep", REPO, "origin"), ("large", FOREST, "forest")):
            report = clone(repo, work / origin, env)
            results[name]["clone_and_rename_walk_s"] = report["seconds"]
            results[name]["renames_read"] = report["renames_read"]

        t = time.perf_counter()
        dbt = Path(sys.executable).parent / "dbt"
        argv = [str(dbt), "build", "--select", *WHY_READS, *NO_TESTS]
        argv += ["--target-path", str(work / "target")]
        built = subprocess.run(
            [*argv, "--log-path", str(work / "logs")],
            cwd=ROOT,
            env={**os.environ, "RELORE_DATABASE_URL": url},
            capture_output=True,
            text=True,
        )
        if built.returncode != 0:
            raise RuntimeError(f"dbt build failed:\n{built.stdout[-4000:]}")
        results["dbt_build_s"] = round(time.perf_counter() - t, 2)

        os.environ["RELORE_CLONES_DIR"] = env["RELORE_CLONES_DIR"]
        reader = database.reader_url(url, env={})
        results["why"] = named_cases(reader, facts, args.runs)
        results["git_alone_s"] = git_alone(work / "clones" / "bench" / "engine", facts)

        drawn = draw(forest, args.lines, args.hot_lines, args.seed)
        rows = []
        t = time.perf_counter()
        with _client(reader) as client:
            ask(client, FOREST, drawn[0][1], 1)  # opens the pool; not counted
            for i, (stratum, path, line) in enumerate(drawn, 1):
                rows.append(measure_line(client, forest, stratum, path, line))
                if i % 25 == 0:
                    took = time.perf_counter() - t
                    print(f"{i}/{len(drawn)} lines asked in {took:.0f} s", file=sys.stderr)
            results["sample_s"] = round(time.perf_counter() - t, 1)
            runs = [measure_line(client, forest, "stress", *forest["stress"]) for _ in range(3)]
            results["stress"] = {
                "median_of_3_wall_s": statistics.median(r["wall_s"] for r in runs)
            } | runs[0]
        if args.rows:
            Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rows))
        strata = {"all": "uniform over every line", "hot": "the hottest 1 % of files"}
        results["sample"] = {
            name: {"drawn": what, **summarise(inside), "by_file_commits": by_commits(inside)}
            for name, what in strata.items()
            if (inside := [r for r in rows if r["stratum"] == name])
        }
        slowest = sorted(rows, key=lambda r: -r["wall_s"])[:5]
        results["slowest"] = [
            {k: r.get(k) for k in ("path", "line", "commits", "wall_s", "status", "timed_out")}
            | {"pickaxe_walks": r.get("pickaxe_walks"), "declined": r.get("declined")}
            for r in slowest
        ]
        results["budget"] = {
            "deadline_s": Budget().deadline_s,
            "call_timeout_s": Budget().call_timeout_s,
            "max_pickaxe_walks": MAX_PICKAXE_WALKS,
            "max_wall_s": max(r["wall_s"] for r in rows),
            "max_pickaxe_walks_seen": max(r.get("pickaxe_walks", 0) for r in rows),
        }
        results["load_average_after_sample"] = os.getloadavg()
        clone_dir = work / "clones" / "bench" / "forest"
        results["git_alone_large_s"] = git_alone_large(clone_dir, forest, rows)
    finally:
        if paths.data.exists():
            database.stop_embedded(paths)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))


def git_alone(clone: Path, facts: dict) -> dict:
    line = facts["target_line"]
    raw = {}
    for label, argv in {
        "git blame -L": ["blame", "--porcelain", "-L", f"{line},{line}", "HEAD", "--", NAMES[2]],
        "git log -L (-n 21)": ["log", "-L", f"{line},{line}:{NAMES[2]}", "-s", "-n21", "HEAD"],
        "git log -S --follow (one word)": [
            "log", "-S", "resolve_shard_budget", "--follow", "HEAD", "--", NAMES[2],
        ],
        "git log -S (three names)": ["log", "-S", "resolve_shard_budget", "HEAD", "--", *NAMES],
    }.items():  # fmt: skip
        t = time.perf_counter()
        subprocess.run(["git", "-C", str(clone), *argv], capture_output=True, check=True)
        raw[label] = round(time.perf_counter() - t, 3)
    return raw


def git_alone_large(clone: Path, facts: dict, rows: list[dict]) -> dict:
    """The walks ``why`` runs, alone, on two sampled code lines (the file with the fewest
    commits, the hottest file), each once; then again after a commit-graph with changed-path
    Bloom filters is written into the clone (which ``relored clone`` does not write)."""
    code = [r for r in rows if r["status"] == 200 and not r["declined"]]
    if not code:
        return {}
    picked = {
        "fewest commits": min(code, key=lambda r: (r["commits"], r["path"], r["line"])),
        "hottest file": max(code, key=lambda r: (r["commits"], r["path"], -r["line"])),
    }
    walks = {}
    for name, row in picked.items():
        path, line = row["path"], row["line"]
        text = "\n".join(facts["files"][path])
        word = candidates(facts["files"][path][line - 1], text)[0][0]
        walks[name] = {
            "git blame -L": ["blame", "--porcelain", "-L", f"{line},{line}", "HEAD", "--", path],
            "git log -L (-n 21)": ["log", "-L", f"{line},{line}:{path}", "-s", "-n21", "HEAD"],
            "git log -S --follow": ["log", "-S", word, "--follow", "HEAD", "--", path],
            "git log -S (no --follow)": ["log", "-S", word, "HEAD", "--", path],
        }
    found: dict = {
        name: {"path": r["path"], "line": r["line"], "commits": r["commits"]}
        for name, r in picked.items()
    }

    def run(argv: list[str]) -> float:
        t = time.perf_counter()
        subprocess.run(["git", "-C", str(clone), *argv], capture_output=True, check=True)
        return round(time.perf_counter() - t, 3)

    for name, commands in walks.items():
        found[name]["plain_s"] = {label: run(argv) for label, argv in commands.items()}
    found["commit_graph_write_s"] = run(["commit-graph", "write", "--reachable", "--changed-paths"])
    for name, commands in walks.items():
        found[name]["with_commit_graph_s"] = {label: run(argv) for label, argv in commands.items()}
    return found


def _pack_bytes(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / ".git" / "objects" / "pack").glob("*.pack"))


if __name__ == "__main__":
    main()
