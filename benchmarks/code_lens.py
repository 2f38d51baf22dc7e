"""Wall time of the code lens on a large real tree, cold and cached, beside grep; and how
``relore map`` ranks packages whose entry points are known.

.venv/bin/python benchmarks/code_lens.py [--path TREE] [--name NAME] [--repeat N]
    [--verbs map,defs,refs] [--phases] [--floor] [--editable | --source DIR]
    [--entry-points] [--tuning] [--top N]

Defaults: this venv's site-packages (thousands of installed Python files) and a common
name. Each verb runs as a user runs it: the ``relore`` console script of relore installed
from a wheel (built from ``--source``, default this checkout's files as they are, into a
venv of its own under a temporary directory; tree-sitter and the grammars are this venv's,
on its path), a fresh process, on every core (``RELORE_CODE_WORKERS`` unset). This venv's
own ``relore`` is an editable install, whose import hook a user never has: ~20 ms of every
start (pathlib, urllib.parse and more imported before relore); ``--editable`` times it
instead. Each verb runs first against an empty cache directory (cold:
every file that can hold the name parsed), then again (cached: nothing parsed, nothing
read but what the answer prints; the median of ``--repeat`` runs). ``grep -rn NAME
--include=*.py`` over the same tree is the baseline an agent would otherwise use, timed
before the runs and again beside each verb's cached runs (the median of ``--repeat``); each
ratio is relore's time over grep's, from one run.

``--phases``: where a cached ``refs NAME`` spends its time, in one process (the minimum of
``--repeat`` fresh processes each): the interpreter's start (``python -c pass``), imports,
the argument parser, the walk (of which starting git's ``check-ignore``, which answers while
the walk goes on, the kept listings' load and the kept walk's check), the cache index's
load, the name's postings, the ``lstat`` of every source file with the records read, the
page, its envelope (marks and scrub), the JSON; and the floor no cache removes: one
``os.stat`` per source file, timed alone.

``--floor``: what no cold ``refs NAME`` can go under, timed without relore, on every
core: the sift alone (every Python file read and tested for the name as a whole word by
``bytes.find``) and the parse alone (the files that hold it parsed by tree-sitter and
nothing else, shared by size), each the least of ``--repeat``, beside grep's median.

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

RELORE = str(Path(sys.executable).with_name("relore"))  # --editable: this venv's
LABELS = Path(__file__).resolve().parent / "code_lens_entry_points.jsonl"
TUNING = Path(__file__).resolve().parent / "code_lens_tuning_entry_points.jsonl"
TOP = 40


def _env(cache_dir: str) -> dict[str, str]:
    env = {**os.environ, "RELORE_CODE_CACHE": cache_dir}
    env.pop("RELORE_CODE_WORKERS", None)
    # as an installed relore runs: its modules' bytecode written once and reused, not
    # compiled again by every process
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1) or (argv[0] != "grep" and result.returncode):
        raise SystemExit(f"{argv} exited {result.returncode}: {result.stderr[:500]}")
    return elapsed, result.stdout


def _median(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, str]:
    runs = [_timed(argv, env) for _ in range(repeat)]
    runs.sort(key=lambda run: run[0])
    return runs[len(runs) // 2]


def installed(source: str, workdir: str) -> str:
    """``relore`` installed as a user installs it: a wheel of ``source``'s files (tracked,
    as they are in its working tree) in a venv of its own under ``workdir``. tree-sitter
    and the grammars come from this venv's site-packages, named by a ``.pth`` path line
    (a path, not a site directory: this venv's editable hook is not run there)."""
    copy = os.path.join(workdir, "source")
    listed = subprocess.run(
        ["git", "-C", source, "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if os.path.isfile(os.path.join(source, rel)):
            os.makedirs(os.path.dirname(os.path.join(copy, rel)), exist_ok=True)
            shutil.copy2(os.path.join(source, rel), os.path.join(copy, rel))
    venv = os.path.join(workdir, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-deps", copy], check=True, stdout=subprocess.DEVNULL)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(site, "relore-bench-grammars.pth"), "w") as handle:
        handle.write(sysconfig.get_paths()["purelib"] + "\n")
    return os.path.join(venv, "bin", "relore")


def speed(relore: str, tree: str, name: str, repeat: int, only: list[str]) -> None:
    cache_dir = tempfile.mkdtemp(prefix="relore-code-bench-")
    env = _env(cache_dir)
    grep = ["grep", "-rn", name, "--include=*.py", tree]
    grep_s, grep_out = _median(grep, env, repeat)
    grep_lines = grep_out.count("\n")
    verbs = {
        "map": [relore, "map", tree, "--json"],
        # --path, which every version of the lens takes: the same script times older commits
        "defs": [relore, "defs", name, "--path", tree, "--json"],
        "refs": [relore, "refs", name, "--path", tree, "--json"],
    }
    verbs = {verb: argv for verb, argv in verbs.items() if verb in only}
    print(f"tree={tree} name={name} (grep and cached runs: the median of {repeat})")
    print(f"relore: {relore}")
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


# Run in a fresh process over a warm cache: each phase's seconds, by wrapping the functions
# that do it (the names of this commit's lens; a phase whose function is gone is left out).
PHASES = r"""
import io, json, os, sys, time
started = time.perf_counter()
from relore.client import cli
from relore.lens import cache, index, listing, tree_scan
seconds = {"imports": time.perf_counter() - started}

def timed(owner, attribute, phase):
    function = getattr(owner, attribute, None)
    if function is None:
        return
    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[phase] = seconds.get(phase, 0) + time.perf_counter() - began
    setattr(owner, attribute, wrapper)

for owner, attribute, phase in (
    (cli, "build_parser", "parser"), (tree_scan, "walk", "walk"),
    (listing, "_asking_ignored", "git check-ignore started"), (listing.Listings, "load", "listings load"),
    (listing, "_walked_again", "kept walk"),
    (cache.Store, "load", "index load"), (cache.Store, "holders", "name postings"),
    (tree_scan, "_from_cache", "stat + records"), (index, "scan", "scan"), (index, "refs", "refs"),
    (cli, "_lens_page", "envelope"), (json, "dumps", "json"),
):
    timed(owner, attribute, phase)
began = time.perf_counter()
cli.main(["refs", sys.argv[1], "--path", sys.argv[2], "--json"], stdout=io.StringIO())
seconds["main"] = time.perf_counter() - began
tree = listing.walk(sys.argv[2], None, None)  # unwrapped, no cache: only its paths
began = time.perf_counter()
for rel in tree.paths:
    os.stat(tree.prefix + rel)
seconds["stat alone"] = time.perf_counter() - began
seconds["source files"] = len(tree.paths)
print(json.dumps(seconds))
"""


def phases(relore: str, tree: str, name: str, repeat: int) -> None:
    """Where a cached ``refs`` spends its time (see the module's doc)."""
    cache_dir = tempfile.mkdtemp(prefix="relore-code-phases-")
    env = _env(cache_dir)
    try:
        _timed([relore, "refs", name, "--path", tree, "--json"], env)  # the cache, warm
        python = str(Path(relore).with_name("python"))  # relore's own interpreter
        start = [_timed([python, "-c", "pass"], env)[0] for _ in range(repeat)]
        runs = [
            json.loads(_timed([python, "-c", PHASES, name, tree], env)[1]) for _ in range(repeat)
        ]
        grep, _ = _median(["grep", "-rn", name, "--include=*.py", tree], env, repeat)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    least = {phase: min(run.get(phase, 0) for run in runs) for phase in runs[0]}
    files = int(least.pop("source files"))
    alone = least.pop("stat alone")
    scan = least.pop("scan")
    inside = least.pop("stat + records", 0) - least.get("name postings", 0)
    shown = {
        "interpreter": min(start),
        "imports": least.pop("imports"),
        "parser": least.pop("parser", 0),
        **{
            k: least.pop(k, 0)
            for k in ("walk", "git check-ignore started", "listings load", "kept walk")
        },
        "index load": least.pop("index load", 0),
        "name postings": least.pop("name postings", 0),
        f"{files} stats + records": inside,
        "page": least.pop("refs", 0) - scan,
        "envelope": least.pop("envelope", 0),
        "json": least.pop("json", 0),
    }
    total = shown["interpreter"] + shown["imports"] + least.pop("main")
    text = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in shown.items())
    print(
        f"phases of a cached refs {name} (the least of {repeat} processes each): {text}; "
        f"the process about {total * 1000:.0f} ms, grep {grep * 1000:.0f} ms (median); "
        f"the floor: {files} os.stat alone {alone * 1000:.0f} ms"
    )


IDENTIFIER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _holds(data: bytes, needle: bytes) -> bool:
    at = data.find(needle)
    while at >= 0:
        after = at + len(needle)
        if (at == 0 or data[at - 1] not in IDENTIFIER) and (
            after == len(data) or data[after] not in IDENTIFIER
        ):
            return True
        at = data.find(needle, at + 1)
    return False


def _sifted(paths: list[str], needle: bytes) -> list[bytes]:
    held = []
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        if len(data) <= 1_000_000 and _holds(data, needle):
            held.append(data)
    return held


def _forked(work, parts: list) -> float:
    """Seconds for ``work(part)`` on one forked process per part, all at once."""
    began = time.perf_counter()
    children = []
    for part in parts:
        child = os.fork()
        if child == 0:
            try:
                work(part)
            finally:
                os._exit(0)
        children.append(child)
    for child in children:
        os.waitpid(child, 0)
    return time.perf_counter() - began


def floor(tree: str, name: str, repeat: int) -> None:
    """The sift and the parse of a cold ``refs NAME``, each alone (see the module's doc)."""
    import tree_sitter
    import tree_sitter_python

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    paths = sorted(str(p) for p in Path(tree).rglob("*.py*") if p.suffix in (".py", ".pyi"))
    paths = [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]
    cores = len(os.sched_getaffinity(0))
    needle = name.encode()
    sift = min(
        _forked(lambda part: _sifted(part, needle), [paths[k::cores] for k in range(cores)])
        for _ in range(repeat)
    )
    held = sorted(_sifted(paths, needle), key=len, reverse=True)
    parts: list[list[bytes]] = [[] for _ in range(cores)]
    for data in held:  # the largest first, each to the least loaded process
        min(parts, key=lambda part: sum(map(len, part))).append(data)
    parse = min(
        _forked(lambda part: [parser.parse(data) for data in part], parts) for _ in range(repeat)
    )
    grep, _ = _median(["grep", "-rn", name, "--include=*.py", tree], dict(os.environ), repeat)
    print(
        f"floor of a cold refs {name} on {cores} processes (the least of {repeat}): the sift "
        f"of {len(paths)} files alone {sift:.2f} s; the parse of the {len(held)} holding it "
        f"({sum(map(len, held)) / 1e6:.1f} MB) alone {parse:.2f} s; grep {grep:.2f} s "
        f"(median): the parse alone {parse / grep:.1f}x grep"
    )


def _ranking(package_dir: str, env: dict) -> list[str]:
    """The map's whole order (page by page, as an agent would read it)."""
    from relore.lens import index

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
        "--phases", action="store_true", help="where a cached refs spends its time, in process"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="the sift and the parse of a cold refs, each alone, without relore",
    )
    parser.add_argument(
        "--verbs", default="map,defs,refs", help="the verbs timed (comma-separated)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="grep and cached runs: the median of this many"
    )
    parser.add_argument(
        "--editable",
        action="store_true",
        help="time this venv's relore (an editable install) instead of an installed wheel",
    )
    parser.add_argument(
        "--source",
        default=str(Path(__file__).resolve().parents[1]),
        help="the checkout whose wheel is timed (default this one; e.g. an older commit's "
        "worktree, for before and after)",
    )
    args = parser.parse_args()
    print(provenance.line())
    workdir = tempfile.mkdtemp(prefix="relore-code-wheel-")
    try:
        relore = RELORE if args.editable else installed(args.source, workdir)
        if args.verbs:
            speed(relore, args.path, args.name, max(1, args.repeat), args.verbs.split(","))
        if args.phases:
            phases(relore, args.path, args.name, max(1, args.repeat))
        if args.floor:
            floor(args.path, args.name, max(1, args.repeat))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.entry_points:
        entry_points(args.top)
    if args.tuning:
        entry_points(args.top, TUNING)


if __name__ == "__main__":
    main()
