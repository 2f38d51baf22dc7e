"""Wall time of the code lens on a large real tree, cold and cached, beside grep; and how
``relore map`` ranks packages whose entry points are known.

.venv/bin/python benchmarks/code_lens.py [--path TREE] [--name NAME] [--repeat N]
    [--entry-points] [--tuning] [--top N]

Defaults: this venv's site-packages (thousands of installed Python files) and a common
name. Each verb runs as a user runs it (the ``relore`` console script, a fresh process, on
every core: ``RELORE_CODE_WORKERS`` unset), first against an empty cache directory (cold:
every file that can hold the name parsed), then again (cached: nothing parsed, nothing
read but what the answer prints; the median of ``--repeat`` runs). ``grep -rn NAME
--include=*.py`` over the same tree is the baseline an agent would otherwise use, timed
before the runs and again beside each verb's cached runs (the median of ``--repeat``); each
ratio is relore's time over grep's, from one run.

``--entry-points``: the held-out check. ``code_lens_entry_points.jsonl`` lists each
package's documented entry points, written before the ranking they check; for every one
installed beside this venv, ``relore map <package>`` must place each in its top 40. It
prints where each name lands (and ``--top N``: the map's first N names). ``--tuning``: the
same check over ``code_lens_tuning_entry_points.jsonl``, the five packages the ranking's
weights may be set on (requests, jinja2, uvicorn, werkzeug, rich); the held-out ones never.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import provenance

RELORE = str(Path(sys.executable).with_name("relore"))
LABELS = Path(__file__).resolve().parent / "code_lens_entry_points.jsonl"
TUNING = Path(__file__).resolve().parent / "code_lens_tuning_entry_points.jsonl"
TOP = 40


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1) or (argv[0] == RELORE and result.returncode):
        raise SystemExit(f"{argv} exited {result.returncode}: {result.stderr[:500]}")
    return elapsed, result.stdout


def _median(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, str]:
    runs = [_timed(argv, env) for _ in range(repeat)]
    runs.sort(key=lambda run: run[0])
    return runs[len(runs) // 2]


def speed(tree: str, name: str, repeat: int) -> None:
    cache_dir = tempfile.mkdtemp(prefix="relore-code-bench-")
    env = {**os.environ, "RELORE_CODE_CACHE": cache_dir}
    env.pop("RELORE_CODE_WORKERS", None)
    grep = ["grep", "-rn", name, "--include=*.py", tree]
    grep_s, grep_out = _median(grep, env, repeat)
    grep_lines = grep_out.count("\n")
    verbs = {
        "map": [RELORE, "map", tree, "--json"],
        # --path, which every version of the lens takes: the same script times older commits
        "defs": [RELORE, "defs", name, "--path", tree, "--json"],
        "refs": [RELORE, "refs", name, "--path", tree, "--json"],
    }
    print(f"tree={tree} name={name} (grep and cached runs: the median of {repeat})")
    print(f"grep -rn {name} --include=*.py: {grep_s:.2f} s, {grep_lines} lines")
    try:
        for verb, argv in verbs.items():
            # cold: an empty cache for every verb, so each pays its own parse
            shutil.rmtree(cache_dir)
            os.mkdir(cache_dir)
            cold_s, cold_out = _timed(argv, env)
            warm_s, warm_out = _median(argv, env, repeat)
            # grep again beside the cached runs: the page cache and the load they saw
            again_s, _ = _median(grep, env, repeat)
            cold, warm = json.loads(cold_out), json.loads(warm_out)
            files = cold["files"]
            extra = ""
            if verb == "refs":
                extra = f" occurrences={cold['occurrences']} counts={cold['counts']}"
            if verb == "defs":
                extra = f" definitions={cold['total']}"
                extra += f" without_definition={files.get('without_definition', '-')}"
            if verb == "map":
                extra = (
                    f" names={cold['total']} dunders={cold['dunders_excluded']}"
                    f" everywhere={cold.get('everywhere_excluded', '-')}"
                )
            print(
                f"{verb}: cold {cold_s:.2f} s ({files['parsed']} parsed of "
                f"{files['source_files']} source files, {files['without_name']} without the "
                f"name, workers={files.get('workers', 1)}) = {cold_s / grep_s:.1f}x grep; "
                f"cached {warm_s:.2f} s ({warm['files']['parsed']} parsed, "
                f"{warm['files'].get('from_cache', '-')} from cache) = {warm_s / again_s:.2f}x grep "
                f"({again_s:.2f} s);"
                f" skipped_large={files['skipped_large']}"
                f" syntax_errors={files['syntax_errors']}{extra}"
            )
        size = sum(p.stat().st_size for p in Path(cache_dir).rglob("*") if p.is_file())
        print(f"cache size: {size:,} bytes")
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def _ranking(package_dir: str, env: dict) -> list[str]:
    """The map's whole order (page by page, as an agent would read it)."""
    from relore.client.code import index

    names: list[str] = []
    while True:
        page = index.repo_map(package_dir, env, limit=TOP, offset=len(names))
        names.extend(e["name"] for e in page["entries"])
        if not page["left_out"]:
            return names


def entry_points(top: int, labels: Path = LABELS) -> None:
    site = sysconfig.get_paths()["purelib"]
    env = {"RELORE_CODE_CACHE": tempfile.mkdtemp(prefix="relore-code-rank-")}
    found = inside_all = 0
    try:
        for line in labels.read_text().splitlines():
            label = json.loads(line)
            package_dir = os.path.join(site, label["package"])
            if not os.path.isdir(package_dir):
                print(f"entry points [{label['package']}]: not installed here")
                continue
            order = _ranking(package_dir, env)
            places = {n: (order.index(n) + 1 if n in order else None) for n in label["names"]}
            inside = [n for n, p in places.items() if p is not None and p <= TOP]
            found += len(places)
            inside_all += len(inside)
            shown = ", ".join(f"{n} {p or '-'}" for n, p in places.items())
            print(
                f"entry points [{label['package']}]: {len(inside)} of {len(places)} in the "
                f"top {TOP} ({shown})"
            )
            if top:
                print(f"top {top} [{label['package']}]: {', '.join(order[:top])}")
        print(f"entry points [{labels.name}]: {inside_all} of {found} in the top {TOP}")
    finally:
        shutil.rmtree(env["RELORE_CODE_CACHE"], ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default=sysconfig.get_paths()["purelib"])
    parser.add_argument("--name", default="parse")
    parser.add_argument(
        "--entry-points",
        action="store_true",
        help=f"the held-out check: each installed package's entry points in its top {TOP}",
    )
    parser.add_argument(
        "--tuning",
        action="store_true",
        help="the same check over the five packages the ranking may be tuned on",
    )
    parser.add_argument(
        "--top", type=int, default=0, help="with --entry-points/--tuning: print the top N"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="grep and cached runs: the median of this many"
    )
    args = parser.parse_args()
    print(provenance.line())
    speed(args.path, args.name, max(1, args.repeat))
    if args.entry_points:
        entry_points(args.top)
    if args.tuning:
        entry_points(args.top, TUNING)


if __name__ == "__main__":
    main()
