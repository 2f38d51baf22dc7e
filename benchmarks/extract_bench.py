"""Extract throughput, side by side with github-to-sqlite, against one fake GitHub on loopback.

Both tools walk the same two listings (issues with PRs, and issue comments) from the same
fake server process; each runs as its own child process so its wall time and peak memory
are its own. Requests that cost rate limit are read from the server's own counter.

    python3 -m venv /tmp/g2s && /tmp/g2s/bin/pip install github-to-sqlite
    .venv/bin/python benchmarks/extract_bench.py --threads 5000 --g2s-python /tmp/g2s/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from relore.operate import database

ROOT = Path(__file__).resolve().parents[1]
RELORED = str(Path(sys.executable).parent / "relored")
REPO = "acme/bench"

# github-to-sqlite has api.github.com written into it: point it at the fake, here only.
G2S_SHIM = """
import sys, requests, github_to_sqlite.utils as u
from github_to_sqlite.cli import cli
base = sys.argv.pop(1)
real_get = requests.get
u.requests.get = lambda url, *a, **k: real_get(url.replace("https://api.github.com", base), *a, **k)
cli(sys.argv[1:])
"""


def used(base_url: str) -> int:
    """Requests that cost rate limit so far, by the server's own count."""
    with urllib.request.urlopen(f"{base_url}/rate_limit") as response:
        body = json.loads(response.read())
    return int(body["resources"]["core"]["used"])


def timed(argv: list[str], env: dict) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = child.stdout.read().decode()
    err = child.stderr.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=5000)
    parser.add_argument("--g2s-python", help="a Python with github-to-sqlite installed")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="relore-bench-"))
    paths = database.EmbeddedPaths(home)
    url = database.start_embedded(paths)
    fake = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/fixtures/fake_github.py"), "--repo", REPO,
         "--threads", str(args.threads), "--seed", "1", "--port", "0",
         "--rate-limit", "100000000"],
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
            for step in ("issues", "issue_comments"):
                w, r, out = timed(
                    [RELORED, "extract", step, "--repo", REPO, "--json", "--quiet"], env
                )
                wall, rss = wall + w, max(rss, r)
                reports.append(json.loads(out))
            payloads = sum(s["seen"] for rep in reports for s in rep["steps"])
            written = sum(s["written"] for rep in reports for s in rep["steps"])
            requests = sum(rep["requests"] for rep in reports)
            not_modified = sum(rep["not_modified"] for rep in reports)
            return {
                "tool": label,
                "wall_s": round(wall, 2),
                "payloads": payloads,
                "written": written,
                "payloads_per_s": round(payloads / wall),
                "requests": requests,
                "rate_limited_requests": used(base_url) - before,
                "not_modified": not_modified,
                "peak_rss_mib": round(rss),
            }

        rows.append(relore_walk("relore (first walk)"))
        rows.append(relore_walk("relore (idle poll)"))
        if args.g2s_python:
            db = home / "g2s.db"
            before = used(base_url)
            wall = rss = 0.0
            for command in ("issues", "issue-comments"):
                w, r, _ = timed(
                    [args.g2s_python, "-c", G2S_SHIM, base_url, command, str(db), REPO], env
                )
                wall, rss = wall + w, max(rss, r)
            count = subprocess.run(
                [args.g2s_python, "-c",
                 "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]);"
                 "print(c.execute('select count(*) from issues').fetchone()[0]"
                 "+c.execute('select count(*) from issue_comments').fetchone()[0])", str(db)],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            spent = used(base_url) - before
            rows.append(
                {
                    "tool": "github-to-sqlite",
                    "wall_s": round(wall, 2),
                    "payloads": int(count),
                    "payloads_per_s": round(int(count) / wall),
                    "requests": spent,
                    "rate_limited_requests": spent,
                    "peak_rss_mib": round(rss),
                }
            )
        for row in rows:
            per_k = row["requests"] / max(1, row["payloads"]) * 1000
            print(json.dumps({**row, "requests_per_1000_payloads": round(per_k, 1)}))
    finally:
        fake.terminate()
        database.stop_embedded(paths)


if __name__ == "__main__":
    main()
