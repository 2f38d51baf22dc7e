"""Wall time of the code lens on a large real tree, cold and cached, beside grep.

.venv/bin/python benchmarks/code_lens.py [--path TREE] [--name NAME]

Defaults: this venv's site-packages (thousands of installed Python files) and a common
name. Each verb runs as a user runs it (the ``relore`` console script, a fresh process),
first against an empty cache directory (cold: every file parsed), then again (cached:
nothing parsed). ``grep -rn NAME --include=*.py`` over the same tree is the baseline an
agent would otherwise use; the ratio is relore's time over grep's, from one run.
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


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1) or (argv[0] == RELORE and result.returncode):
        raise SystemExit(f"{argv} exited {result.returncode}: {result.stderr[:500]}")
    return elapsed, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default=sysconfig.get_paths()["purelib"])
    parser.add_argument("--name", default="parse")
    args = parser.parse_args()
    cache_dir = tempfile.mkdtemp(prefix="relore-code-bench-")
    env = {**os.environ, "RELORE_CODE_CACHE": cache_dir}
    grep_s, grep_out = _timed(["grep", "-rn", args.name, "--include=*.py", args.path], env)
    grep_lines = grep_out.count("\n")
    verbs = {
        "map": [RELORE, "map", args.path, "--json"],
        "defs": [RELORE, "defs", args.name, "--path", args.path, "--json"],
        "refs": [RELORE, "refs", args.name, "--path", args.path, "--json"],
    }
    print(provenance.line())
    print(f"tree={args.path} name={args.name}")
    print(f"grep -rn {args.name} --include=*.py: {grep_s:.2f} s, {grep_lines} lines")
    try:
        for verb, argv in verbs.items():
            # cold: an empty cache for every verb, so each pays its own parse
            shutil.rmtree(cache_dir)
            os.mkdir(cache_dir)
            cold_s, cold_out = _timed(argv, env)
            warm_s, warm_out = _timed(argv, env)
            cold, warm = json.loads(cold_out), json.loads(warm_out)
            files = cold["files"]
            extra = ""
            if verb == "refs":
                extra = f" occurrences={cold['occurrences']} counts={cold['counts']}"
            if verb == "defs":
                extra = f" definitions={cold['total']}"
            if verb == "map":
                extra = f" names={cold['total']} dunders={cold['dunders_excluded']}"
            print(
                f"{verb}: cold {cold_s:.2f} s ({files['parsed']} parsed of "
                f"{files['source_files']} source files, {files['without_name']} without the "
                f"name) = {cold_s / grep_s:.1f}x grep; cached {warm_s:.2f} s "
                f"({warm['files']['parsed']} parsed) = {warm_s / grep_s:.1f}x grep;"
                f" skipped_large={files['skipped_large']}"
                f" syntax_errors={files['syntax_errors']}{extra}"
            )
        print(f"cache size: {sum(p.stat().st_size for p in Path(cache_dir).iterdir()):,} bytes")
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
