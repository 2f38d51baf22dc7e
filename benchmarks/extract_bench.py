"""Extract throughput, side by side with github-to-sqlite, against one fake GitHub on loopback.

Both tools walk the same two listings (issues with PRs, and issue comments) from the same
fake server process; each runs as its own child process so its wall time and peak memory
are its own. Requests that cost rate limit are read from the server's own counter.

The two do different work, so relore is reported twice: landing alone (raw JSON into
Postgres) and landing plus the `dbt build` that derives its normalised tables
(build_bench.dbt_build); github-to-sqlite normalises as it goes (users, labels, milestones).
A child's peak RSS is its own process: the Postgres server relore and dbt write to is a
separate set of processes, sampled beside (`postgres_peak_pss_mib`); sqlite runs inside
github-to-sqlite, so its memory is in that tool's figure.

github-to-sqlite is the peer, not the subject: when it fails on behaviour the real API has
(the 422 past page ``--max-page`` of a page-numbered listing, the comment listing's cap),
its row records the exit, its last stderr line and the rows its database holds, and the
run goes on. ``--g2s-profile`` runs it once more under cProfile and says where its time
goes. One JSON line per row; the first names the commit measured.

    python3 -m venv /tmp/g2s && /tmp/g2s/bin/pip install github-to-sqlite
    .venv/bin/python benchmarks/extract_bench.py --threads 5000 \\
        --g2s-python /tmp/g2s/bin/python --g2s-profile
    # toy: the 422 wall at page 2, seconds (the dbt build adds ~25 s; --g2s-python optional)
    .venv/bin/python benchmarks/extract_bench.py --threads 30 --max-page 1 --no-build
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import build_bench  # noqa: E402
import provenance  # noqa: E402
from fixtures.corpus import generate  # noqa: E402

from relore.operate import database  # noqa: E402

RELORED = str(Path(sys.executable).parent / "relored")
REPO = "acme/bench"
SEED = 1
COMMENT_CAP = 30_000  # GitHub's, and the fake's default

# github-to-sqlite has api.github.com written into it: point it at the fake, here only.
# argv: base URL, a cProfile output path or "", then github-to-sqlite's own arguments.
G2S_SHIM = """
import sys, requests, github_to_sqlite.utils as u
from github_to_sqlite.cli import cli
base, profile_to = sys.argv.pop(1), sys.argv.pop(1)
real_get = requests.get
u.requests.get = lambda url, *a, **k: real_get(url.replace("https://api.github.com", base), *a, **k)
if profile_to:
    import cProfile
    profile = cProfile.Profile()
    try:
        profile.runcall(cli, sys.argv[1:])
    finally:
        profile.dump_stats(profile_to)
else:
    cli(sys.argv[1:])
"""


def used(base_url: str) -> int:
    """Requests that cost rate limit so far, by the server's own count."""
    with urllib.request.urlopen(f"{base_url}/rate_limit") as response:
        body = json.loads(response.read())
    return int(body["resources"]["core"]["used"])


class ServerMemory:
    """Peak proportional set size (MiB) of a Postgres server: the postmaster and every
    backend, sampled every ``every`` seconds while the block runs. PSS splits shared buffers
    among the processes mapping them, so the sum counts them once; a spike between two
    samples is missed."""

    def __init__(self, data_dir: Path, every: float = 0.2) -> None:
        self.postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
        self.every, self.peak = every, 0.0
        self._stop = threading.Event()

    def sample(self) -> float:
        total = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                pid = int(entry.name)
                if pid != self.postmaster:
                    stat = Path(f"/proc/{pid}/stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[1]) != self.postmaster:
                        continue
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile, or not ours to read
            total += next(
                int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")
            )
        return total / 1024

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self.sample())

    def __enter__(self) -> ServerMemory:
        self.peak = self.sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = round(max(self.peak, self.sample()))


def timed(argv: list[str], env: dict) -> dict:
    """One child process: wall seconds, peak RSS MiB, exit code, stdout, stderr's last line."""
    start = time.perf_counter()
    try:
        child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        return {"wall": 0.0, "rss": 0.0, "exit": None, "out": "", "err": "", "tail": str(exc)}
    # stderr is read on a thread: a child writing much of it (a long traceback) while we
    # wait on stdout would otherwise block on a full pipe.
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(child.stderr.read()), daemon=True)
    reader.start()
    out = child.stdout.read().decode()
    reader.join()
    _, status, usage = os.wait4(child.pid, 0)
    err = b"".join(errors).decode(errors="replace")
    lines = [line for line in err.splitlines() if line.strip()]
    return {
        "wall": time.perf_counter() - start,
        "rss": usage.ru_maxrss / 1024,
        "exit": os.waitstatus_to_exitcode(status),
        "out": out,
        "err": err,
        "tail": lines[-1].strip() if lines else "",
    }


def landed(url: str) -> dict[str, int]:
    """Distinct live objects in raw, by type: a walk restarted from its mark re-reads the
    mark's second, so the passes' ``seen`` counts some payloads twice."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "select object_type, count(distinct object_id) from raw.github_objects "
            "where not is_deleted group by 1"
        ).fetchall()
    return dict(rows)


def sqlite_rows(path: Path) -> dict[str, int]:
    """Rows in each table of github-to-sqlite's database (FTS shadow tables left out)."""
    if not path.exists():
        return {}
    with sqlite3.connect(path) as conn:
        names = [
            name
            for (name,) in conn.execute(
                "select name from sqlite_master where type = 'table' and name not like '%fts%' "
                "order by name"
            )
        ]
        return {n: conn.execute(f'select count(*) from "{n}"').fetchone()[0] for n in names}


def build_nodes(work: Path) -> dict:
    """dbt's own per-node times from run_results.json: summed execution seconds of the github
    staging models (raw JSON into typed latest-version tables: the nearest to
    github-to-sqlite's issues and issue_comments), the other models, and the tests; dbt runs
    2 threads, so the sums can exceed the wall."""
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    groups = {"staging_github_s": 0.0, "other_models_s": 0.0, "tests_s": 0.0}
    slowest = []
    for r in results:
        node, seconds = r["unique_id"], r["execution_time"]
        if node.startswith("model.relore.stg_github__"):
            groups["staging_github_s"] += seconds
        elif node.startswith(("model.", "snapshot.", "seed.")):
            groups["other_models_s"] += seconds
        else:
            groups["tests_s"] += seconds
        slowest.append((seconds, node.split(".")[-1]))
    slowest.sort(reverse=True)
    return {
        "nodes": len(results),
        **{k: round(v, 1) for k, v in groups.items()},
        "slowest": {name: round(s, 1) for s, name in slowest[:5]},
    }


SQLITE_EXECUTE = "<method 'execute' of 'sqlite3.Connection' objects>"
# Where github-to-sqlite's time goes, read from its cProfile as cumulative seconds: (label,
# file suffix, function, caller) where a caller counts one edge of the call graph only.
G2S_PLACES = [
    ("fetch: HTTP and JSON", "github_to_sqlite/utils.py", "paginate", None),
    (
        "save_issues (users, labels m2m, milestones)",
        "github_to_sqlite/utils.py",
        "save_issues",
        None,
    ),
    ("save_issue_comment", "github_to_sqlite/utils.py", "save_issue_comment", None),
    (". its issue lookup (unindexed)", "sqlite_utils/db.py", "rows_where", "save_issue_comment"),
    (". its user upsert", "github_to_sqlite/utils.py", "save_user", "save_issue_comment"),
    (". its comment insert", "sqlite_utils/db.py", "insert", "save_issue_comment"),
    ("ensure_db_shape (FTS, views)", "github_to_sqlite/utils.py", "ensure_db_shape", None),
    # sqlite-utils wraps every write in atomic(): BEGIN, the write, COMMIT. The generator's
    # own frame runs only around the yield, so its edge to execute is BEGIN + COMMIT.
    ("commits (atomic: BEGIN + COMMIT)", "~", SQLITE_EXECUTE, "atomic"),
]


def g2s_profile(path: Path) -> dict:
    """The cProfile of one github-to-sqlite command, reduced to where its time goes."""
    stats = pstats.Stats(str(path)).stats
    total = max(ct for (_, _, _, ct, _) in stats.values())
    places: dict[str, float] = {}
    commits = 0
    for label, suffix, function, caller in G2S_PLACES:
        for (file, _, func), (_, _, _, ct, callers) in stats.items():
            if func != function or not file.endswith(suffix):
                continue
            if caller is not None:
                edges = [edge for (_, _, f), edge in callers.items() if f == caller]
                ct = sum(edge[3] for edge in edges)
                if function == SQLITE_EXECUTE:
                    commits += sum(edge[1] for edge in edges) // 2
            places[label] = places.get(label, 0.0) + ct
    self_time = sorted(
        ((tt, f"{Path(file).name}:{func}") for (file, _, func), (_, _, tt, _, _) in stats.items()),
        reverse=True,
    )
    return {
        "profiled_s": round(total, 1),
        "cumulative_s": {k: round(v, 1) for k, v in places.items()},
        "commits": commits,
        "top_self_s": {name: round(tt, 1) for tt, name in self_time[:5]},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=5000)
    parser.add_argument("--comments-per-thread", type=int, default=12)
    parser.add_argument(
        "--max-page",
        type=int,
        default=100,
        help="the fake's page wall: page-numbered listings answer 422 past it (GitHub: 100)",
    )
    parser.add_argument("--g2s-python", help="a Python with github-to-sqlite installed")
    parser.add_argument(
        "--g2s-profile",
        action="store_true",
        help="run github-to-sqlite once more under cProfile: where its time goes",
    )
    parser.add_argument("--no-build", action="store_true", help="skip relore's dbt build")
    args = parser.parse_args()
    corpus = generate(SEED, args.threads, REPO, args.comments_per_thread)
    issues, comments = len(list(corpus.iter_issues())), len(corpus.table)
    print(
        json.dumps(
            {
                "run": "extract_bench",
                "measured_at": provenance.facts(),
                "threads": args.threads,
                "issues": issues,
                "issue_comments": comments,
                "comment_cap": COMMENT_CAP,
                "max_page": args.max_page,
            }
        ),
        flush=True,
    )
    home = Path(tempfile.mkdtemp(prefix="relore-bench-"))
    paths = database.EmbeddedPaths(home / "pg")
    url = database.start_embedded(paths)
    fake = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/fixtures/fake_github.py"), "--repo", REPO,
         "--threads", str(args.threads), "--comments-per-thread", str(args.comments_per_thread),
         "--seed", str(SEED), "--port", "0", "--rate-limit", "100000000",
         "--comment-cap", str(COMMENT_CAP), "--max-page", str(args.max_page)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = fake.stdout.readline()
        base_url = line.strip().rsplit(" ", 1)[-1]
        for _ in range(200):  # the line can come a moment before the socket answers
            try:
                used(base_url)
                break
            except OSError:
                time.sleep(0.05)
        env = {**os.environ, "RELORE_DATABASE_URL": url, "RELORE_GITHUB_API_URL": base_url}
        rows = []

        def relore_walk(label: str) -> dict:
            before = used(base_url)
            wall = rss = 0.0
            reports = []
            with ServerMemory(paths.data) as server:
                for step in ("issues", "issue_comments"):
                    child = timed(
                        [RELORED, "extract", step, "--repo", REPO, "--json", "--quiet"], env
                    )
                    if child["exit"] != 0:  # relore's own failure fails the run
                        raise SystemExit(f"relored extract {step} failed:\n{child['err'][-2000:]}")
                    wall, rss = wall + child["wall"], max(rss, child["rss"])
                    reports.append(json.loads(child["out"]))
            objects = landed(url)
            payloads = objects.get("issue", 0) + objects.get("issue_comment", 0)
            return {
                "tool": label,
                "includes": "2 relored processes: HTTP, JSON, landing raw JSONB; "
                "peak RSS without the Postgres server (its PSS beside)",
                "wall_s": round(wall, 2),
                **({"payloads": payloads} if label == "relore land" else {}),
                "complete": payloads == issues + comments,
                "seen": sum(s["seen"] for rep in reports for s in rep["steps"]),
                "written": sum(s["written"] for rep in reports for s in rep["steps"]),
                "requests": sum(rep["requests"] for rep in reports),
                "rate_limited_requests": used(base_url) - before,
                "not_modified": sum(rep["not_modified"] for rep in reports),
                "peak_rss_mib": round(rss),
                "postgres_peak_pss_mib": server.peak,
            }

        land = relore_walk("relore land")
        rows.append(land)
        if not args.no_build:
            with ServerMemory(paths.data) as server:
                built = build_bench.dbt_build(url, home)
            build = {
                "tool": "relore dbt build",
                "includes": "the whole project (staging, marts, signals, search vectors, "
                "redaction, tests); peak RSS of dbt without the Postgres server",
                "wall_s": built["wall_s"],
                "mart_rows_written": built["mart_rows_written"],
                "peak_rss_mib": built["dbt_peak_rss_mib"],
                "postgres_peak_pss_mib": server.peak,
                **build_nodes(home),
            }
            rows.append(build)
            rows.append(
                {
                    "tool": "relore land + dbt build",
                    "includes": "the two rows above, one after the other",
                    "wall_s": round(land["wall_s"] + build["wall_s"], 2),
                    "payloads": land["payloads"],
                    "complete": land["complete"],
                    "requests": land["requests"],
                    "peak_rss_mib": max(land["peak_rss_mib"], build["peak_rss_mib"]),
                    "postgres_peak_pss_mib": max(
                        land["postgres_peak_pss_mib"], build["postgres_peak_pss_mib"]
                    ),
                }
            )
        rows.append(relore_walk("relore idle poll"))
        if args.g2s_python:

            def g2s_walk(db: Path, profile: Path | None) -> dict:
                before = used(base_url)
                wall = rss = 0.0
                exits, errors = {}, {}
                for command in ("issues", "issue-comments"):
                    shim = [args.g2s_python, "-c", G2S_SHIM, base_url, str(profile or "")]
                    if profile is not None:
                        shim[-1] = f"{profile}.{command}"
                    child = timed([*shim, command, str(db), REPO], env)
                    wall, rss = wall + child["wall"], max(rss, child["rss"])
                    exits[command] = child["exit"]
                    if child["exit"] != 0:
                        errors[command] = child["tail"][:200]
                tables = sqlite_rows(db)
                payloads = tables.get("issues", 0) + tables.get("issue_comments", 0)
                spent = used(base_url) - before
                return {
                    "tool": "github-to-sqlite",
                    "includes": "2 processes: HTTP, JSON, normalising into sqlite as it goes "
                    "(users, labels m2m, milestones; a commit per row), FTS and views at the "
                    "end; sqlite is in-process, so in its peak RSS",
                    "wall_s": round(wall, 2),
                    "payloads": payloads,
                    "complete": payloads == issues + comments,
                    "exit": exits,
                    "errors": errors,
                    "tables": tables,
                    "requests": spent,
                    "rate_limited_requests": spent,
                    "peak_rss_mib": round(rss),
                }

            rows.append(g2s_walk(home / "g2s.db", None))
            if args.g2s_profile:
                profiled = g2s_walk(home / "g2s-profiled.db", home / "g2s.prof")
                row = {
                    "tool": "github-to-sqlite under cProfile",
                    "wall_s": profiled["wall_s"],
                    "payloads": profiled["payloads"],
                    "exit": profiled["exit"],
                }
                for command in ("issues", "issue-comments"):
                    prof = home / f"g2s.prof.{command}"
                    row[command] = g2s_profile(prof) if prof.exists() else None
                rows.append(row)
        for row in rows:
            if "requests" in row and "payloads" in row:
                row["payloads_per_s"] = round(row["payloads"] / max(row["wall_s"], 1e-9))
                per_k = row["requests"] / max(1, row["payloads"]) * 1000
                row["requests_per_1000_payloads"] = round(per_k, 1)
            print(json.dumps(row), flush=True)
    finally:
        fake.terminate()
        fake.wait()
        database.stop_embedded(paths)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
