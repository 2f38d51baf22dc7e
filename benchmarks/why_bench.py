"""``why`` on a line with deep history: wall time and subprocesses, from a real clone.

No git checkout with a deep history is installed on this machine (``/root/.pyenv`` is a
shallow clone of one commit), so the history is generated: ``git fast-import`` writes a
repository of ``--commits`` commits (default 5,000, one a day from 2012) in which

- ``src/engine/core.py`` (a licence header, forty functions, churned by a third of all
  commits) is renamed twice, to ``src/engine/kernel.py`` and then ``lib/engine/kernel.py``;
- the target line ``budget = resolve_shard_budget(total, workers) ...`` is born in
  ``plan_shards()`` early, survives a rewrite that deletes that function and re-adds the line
  in a new one at the end of the file (the line's range is lost there; its words are not),
  and is edited every 200 commits after;
- every 100th change lands through a ``Merge pull request #N`` merge commit, the rest carry
  ``(#N)`` squash subjects;
- a late line of four words that all arrive with its own commit makes the worst case: every
  pickaxe walks the file's whole history and none reaches further back.

Then the real loop: an embedded Postgres in a temporary ``RELORE_HOME``, the pull requests
of the target file's history landed raw, ``relored clone --url`` (a complete clone and its
rename walk), ``dbt build``, and the app in-process on the reader role. Each case is asked
once on a fresh app (cold: first request of the daemon; the OS page cache holds the pack
the clone just wrote) and then ``--runs`` more times (warm, median).

    .venv/bin/python benchmarks/why_bench.py                # --commits 5000 --runs 5
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from relore.contract.version import __version__
from relore.operate import cli as relored
from relore.operate import database
from relore.serve.app import Settings, create_app

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
    rewrite_at, edit_every = commits * 2 // 5, 200
    birth_at, rename_at = commits // 50, (commits // 4, commits * 7 // 10)
    worst_at = commits - 3
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
        elif n > rewrite_at and (n - rewrite_at) % edit_every == 0:
            history.tail[4] = TARGET + f" + {(n - rewrite_at) // edit_every}"
            subject = f"Retune the shard budget (#{pr})"
            facts["target_edits"].append(pr)
        elif n == worst_at:
            history.tail.insert(5, WORST)
            subject = f"Spread metrics (#{pr})"
            facts["worst_pr"] = pr
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


def land(url: str, facts: dict) -> int:
    """The pull requests whose numbers the target file's history carries, as raw payloads."""
    wanted = {facts["origin_pr"], facts["worst_pr"], *facts["target_edits"]}
    wanted |= {pr for pr, subject in facts["pulls"].items() if "Move" in subject}
    wanted |= {pr for pr, subject in facts["pulls"].items() if "Rewrite" in subject}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "insert into ops.repos (repo_id, full_name, owner_login, owner_type)"
            " values (%s, %s, 'bench', 'Organization') on conflict do nothing",
            (REPO_ID, REPO),
        )
        for pr in sorted(wanted):
            payload = {
                "id": pr,
                "number": pr,
                "title": facts["pulls"][pr].rsplit(" (#", 1)[0],
                "state": "closed",
                "body": "A change.",
                "user": {"login": "maint", "id": 1, "type": "User"},
                "author_association": "MEMBER",
                "labels": [],
                "comments": 0,
                "html_url": f"https://github.com/{REPO}/pull/{pr}",
                "created_at": "2020-01-01T00:00:00Z",
                "updated_at": "2020-01-01T00:00:00Z",
                "pull_request": {"merged_at": "2020-01-01T00:00:00Z"},
            }
            digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
            conn.execute(
                "insert into raw.github_objects (repo_id, repo, object_type, object_id,"
                " thread_number, payload, payload_hash, pass_name)"
                " values (%s, %s, 'issue', %s, %s, %s, %s, 'bench')",
                (REPO_ID, REPO, pr, pr, Jsonb(payload), digest),
            )
    return len(wanted)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", help="keep the work directory here")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="why-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict = {}

    t = time.perf_counter()
    origin = work / "origin"
    facts = generate(origin, args.commits)
    results["generate_s"] = round(time.perf_counter() - t, 2)
    results["commits"] = facts["commits"]
    results["merges"] = facts["merges"]

    home = work / "home"
    paths = database.EmbeddedPaths(home)
    database.start_embedded(paths)
    try:
        env = {"RELORE_HOME": str(home), "RELORE_CLONES_DIR": str(work / "clones")}
        url = database.ensure_database(env)
        results["pull_requests_landed"] = land(url, facts)

        out, err = io.StringIO(), io.StringIO()
        t = time.perf_counter()
        code = relored.main(
            ["clone", "--repo", REPO, "--url", str(origin), "--json"], env=env, out=out, err=err
        )
        results["clone_and_rename_walk_s"] = round(time.perf_counter() - t, 2)
        assert code == 0, err.getvalue()
        report = json.loads(out.getvalue())
        results["renames_read"] = report["renames_read"]

        t = time.perf_counter()
        dbt = Path(sys.executable).parent / "dbt"
        subprocess.run(
            [
                str(dbt),
                "build",
                "--target-path",
                str(work / "target"),
                "--log-path",
                str(work / "logs"),
            ],
            cwd=ROOT,
            env={**os.environ, "RELORE_DATABASE_URL": url},
            check=True,
            capture_output=True,
        )
        results["dbt_build_s"] = round(time.perf_counter() - t, 2)

        os.environ["RELORE_CLONES_DIR"] = env["RELORE_CLONES_DIR"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from starlette.testclient import TestClient
        cases = {
            "deep line (origin found)": facts["target_line"],
            "worst case (3 pickaxes, none reach further)": facts["worst_line"],
            "licence header (pickaxe declined)": 3,
        }
        reader = database.reader_url(url, env={})
        timings = {}
        for name, line in cases.items():
            with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
                client.headers["x-relore-client"] = __version__
                params = {"repo": REPO, "path": NAMES[2], "line": line}
                t = time.perf_counter()
                response = client.get("/api/v1/why", params=params)
                cold = time.perf_counter() - t
                assert response.status_code == 200, response.text
                page = response.json()
                warm = []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    client.get("/api/v1/why", params=params)
                    warm.append(time.perf_counter() - t)
            budget = page["budget"]
            timings[name] = {
                "line": line,
                "cold_s": round(cold, 3),
                "warm_median_s": round(statistics.median(warm), 3),
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
        results["why"] = timings

        clone = work / "clones" / "bench" / "engine"
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
        results["git_alone_s"] = raw
    finally:
        database.stop_embedded(paths)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
