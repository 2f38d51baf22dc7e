"""The retrieval-quality gate (#36): every slice's R@10 and MRR, relore with the semantic tier
on (``relore``) and off (``relore:lexical``), never below the figures recorded in gate.json.

    .venv/bin/python benchmarks/quality/gate.py --home /tmp/gate-q            # measure, compare
    .venv/bin/python benchmarks/quality/gate.py --home /tmp/gate-q --record   # measure, write gate.json

A measurement is run.py's, cut to what the gate compares: the whole corpus
(../shared/corpus/threads.jsonl, 668 threads) landed through relore's writer into a private
embedded Postgres under ``--home``, ``dbt build``, ``relored embed``, then every labelled item
of eval.jsonl, paraphrase.jsonl, change.jsonl and why.jsonl asked of the real service in
process (run.run_items with ``only``: no baseline, no diagnostic variant). Exit 0 when no
slice dropped, 1 when one did (each drop on a line: slice, system, metric, recorded, measured,
and the command that records a new figure), 2 when the comparison cannot be made (a slice
without a recorded figure, a slice of another size, another corpus).

The figures are deterministic on one machine, and measured so across what differs between
machines: the encoder's numpy float32 sums (another BLAS kernel, thread count and SIMD width)
moved no vector component by more than 2e-7, and a new pgvector HNSW graph (random levels)
moved no item's rank (benchmarks/results/quality-gate.md). So figures are kept at
``DIGITS`` decimals and a drop counts when it exceeds ``TOLERANCE``, one unit of the last
digit (the rounding of both figures): a true drop above 0.002 always fails, one below 0.0005
never does. One item moving is past it: a first target leaving rank 1 moves a slice's MRR by
at least 0.5 / 116 (0.0043, the largest slice); one target leaving the page moves R@10 by at
least 0.0037 in every slice but the paraphrases, where a fifth of an item's five targets is
1 / 515 (0.0019). Moves lower down a large slice's pages (rank 3 to 4 of 103 items: 0.0008)
pass.

The figures are recorded in the same commit that earns them: ``--record`` writes every slice's
figures with the command and the commit they were measured at.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import build_bench  # noqa: E402
import corpus_github  # noqa: E402
import provenance  # noqa: E402
import run  # noqa: E402

from relore.operate import database  # noqa: E402

FIGURES = HERE / "gate.json"
GATED = ("relore", "relore:lexical")
METRICS = ("recall_at_10", "mrr")
NAMES = {"recall_at_10": "R@10", "mrr": "MRR"}
DIGITS = 3
TOLERANCE = 0.001
RECORD = ".venv/bin/python benchmarks/quality/gate.py --home /tmp/gate-q --record"


def gated() -> list[tuple[str, str]]:
    """Every (system, slice) the gate compares: relore:lexical is not asked of inflight."""
    return [
        (system, row)
        for row in run.ROWS
        for system in GATED
        if not (system == "relore:lexical" and row.startswith("inflight/"))
    ]


def corpus_facts() -> dict:
    data = corpus_github.CORPUS.read_bytes()
    return {
        "path": "../shared/corpus/threads.jsonl",
        "threads": sum(1 for line in data.splitlines() if line.strip()),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def read_items() -> list[dict]:
    items = []
    for path in (run.EVAL, run.PARAPHRASE, run.CHANGE, run.WHY):
        with open(path, encoding="utf-8") as handle:
            items += [json.loads(line) for line in handle if line.strip()]
    return items


def measure(home: Path, *, keep: bool = False, skip_build: bool = False) -> dict:
    """Land, build, embed, ask: every gated slice's n, R@10 and MRR, and where the time went."""
    # a search index of its own beside its Postgres, never the checkout's .relore
    os.environ["RELORE_INDEX_DIR"] = str(home / "search-index")
    timing: dict[str, float] = {}
    start = time.perf_counter()
    paths = database.EmbeddedPaths(home / "pg")
    url = database.start_embedded(paths)
    timing["postgres_start_s"] = round(time.perf_counter() - start, 1)
    try:
        if not skip_build:
            start = time.perf_counter()
            run.land_corpus(url)
            timing["land_s"] = round(time.perf_counter() - start, 1)
            timing["build_s"] = build_bench.dbt_build(url, home)["wall_s"]
        start = time.perf_counter()
        run.embed_corpus(url)
        timing["embed_s"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        results = run.run_items(url, read_items(), home / "export", only=GATED)
        timing["ask_s"] = round(time.perf_counter() - start, 1)
    finally:
        if not keep:
            database.stop_embedded(paths)
    _, table = run.table(results, list(GATED))
    figures: dict[str, dict] = {system: {} for system in GATED}
    for system, row in gated():
        summary = table.get(row, {}).get("all", {}).get(system, {"n": 0})
        if summary["n"]:
            figures[system][row] = {"n": summary["n"]} | {
                metric: round(summary[metric], DIGITS) for metric in METRICS
            }
    # each item's first target's rank (None: not on the page), to see which items moved
    ranks = {
        system: {r["id"]: r["systems"][system]["rank"] for r in results if system in r["systems"]}
        for system in GATED
    }
    return {"corpus": corpus_facts(), "figures": figures, "timing": timing, "ranks": ranks}


def compare(recorded: dict, measured: dict) -> tuple[list[str], list[str], list[str]]:
    """(drops, broken, gains): a metric below its recorded figure by more than TOLERANCE;
    what makes the comparison meaningless (a slice unrecorded or unmeasured, another size,
    another corpus); a metric above its figure by more than TOLERANCE (record it)."""
    drops: list[str] = []
    broken: list[str] = []
    gains: list[str] = []
    if recorded.get("corpus", {}).get("sha256") != measured["corpus"]["sha256"]:
        broken.append(
            f"the corpus ({measured['corpus']['path']}, sha256 "
            f"{measured['corpus']['sha256'][:12]}) is not the one the figures were recorded on "
            f"({recorded.get('corpus', {}).get('sha256', 'none')[:12]})"
        )
    for system, row in gated():
        was = recorded.get("figures", {}).get(system, {}).get(row)
        now = measured["figures"].get(system, {}).get(row)
        if was is None:
            broken.append(f"{row} [{system}]: no recorded figure")
            continue
        if now is None:
            broken.append(f"{row} [{system}]: no item measured (the slice has no labelled items)")
            continue
        if was["n"] != now["n"]:
            broken.append(
                f"{row} [{system}]: {now['n']} items measured, the figures were recorded over "
                f"{was['n']}"
            )
            continue
        for metric in METRICS:
            change = round(now[metric] - was[metric], DIGITS)
            said = (
                f"{row} [{system}] {NAMES[metric]}: recorded {was[metric]:.{DIGITS}f}, "
                f"measured {now[metric]:.{DIGITS}f}"
            )
            if change < -TOLERANCE:
                drops.append(f"{said} (dropped {-change:.{DIGITS}f}, tolerance {TOLERANCE})")
            elif change > TOLERANCE:
                gains.append(f"{said} (rose {change:.{DIGITS}f})")
    stale = {
        (system, row) for system, rows in recorded.get("figures", {}).items() for row in rows
    } - set(gated())
    broken += [f"{row} [{system}]: recorded but no longer a slice" for system, row in stale]
    return drops, broken, gains


def table(measured: dict, recorded: dict | None) -> str:
    lines = [f"{'slice/form':20s} {'system':15s} {'n':>4s} {'R@10':>13s} {'MRR':>13s}"]
    for system, row in gated():
        now = measured["figures"].get(system, {}).get(row)
        was = (recorded or {}).get("figures", {}).get(system, {}).get(row)
        cells = []
        for metric in METRICS:
            shown = "—" if now is None else f"{now[metric]:.{DIGITS}f}"
            if was is not None:
                shown += f" ({was[metric]:.{DIGITS}f})"
            cells.append(f"{shown:>13s}")
        n = "—" if now is None else str(now["n"])
        lines.append(f"{row:20s} {system:15s} {n:>4s} " + " ".join(cells))
    return "\n".join(lines)


def report(recorded: dict, measured: dict) -> int:
    """Print the comparison; the exit status: 0 held, 1 a slice dropped, 2 not comparable."""
    drops, broken, gains = compare(recorded, measured)
    print(table(measured, recorded) + "\n(recorded figures in parentheses)")
    for line in gains:
        print(f"ROSE: {line}: record it ({RECORD}) in the commit that earns it")
    for line in broken:
        print(f"NOT COMPARABLE: {line}", file=sys.stderr)
    for line in drops:
        print(f"DROPPED: {line}", file=sys.stderr)
    if broken or drops:
        print(
            "quality gate FAILED. If the change is meant (labels, corpus, ranking traded on "
            f"purpose), record the new figures: {RECORD}, and commit benchmarks/quality/"
            "gate.json with the change that earns them.",
            file=sys.stderr,
        )
        return 2 if broken else 1
    print(f"quality gate held: {len(gated())} slices x 2 metrics, tolerance {TOLERANCE}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", default="/tmp/gate-q", help="embedded Postgres and work files")
    parser.add_argument("--figures", type=Path, default=FIGURES, help="the recorded figures")
    parser.add_argument("--record", action="store_true", help="write the measured figures")
    parser.add_argument("--out", type=Path, help="also write the measurement (JSON) here")
    parser.add_argument(
        "--measured", type=Path, help="compare this --out instead of measuring (no Postgres)"
    )
    parser.add_argument("--keep", action="store_true", help="leave the Postgres running")
    parser.add_argument("--skip-build", action="store_true", help="embed and ask only")
    args = parser.parse_args()
    print(provenance.line())
    if args.measured:
        measured = json.loads(args.measured.read_text())
    else:
        home = Path(args.home)
        home.mkdir(parents=True, exist_ok=True)
        measured = measure(home, keep=args.keep, skip_build=args.skip_build)
        measured["measured_at"] = provenance.facts()
    print(json.dumps({k: measured[k] for k in ("measured_at", "timing") if k in measured}))
    if args.out:
        args.out.write_text(json.dumps(measured, indent=1) + "\n")
    if args.record:
        recorded = {
            "command": RECORD,
            "measured_at": measured["measured_at"],
            "scale": "the whole corpus, every labelled item of every slice",
            "digits": DIGITS,
            "tolerance": TOLERANCE,
            **{k: measured[k] for k in ("corpus", "timing", "figures")},
        }
        args.figures.write_text(json.dumps(recorded, indent=1) + "\n")
        print(table(measured, None) + f"\nrecorded in {args.figures}")
        return
    try:
        recorded = json.loads(args.figures.read_text())
    except FileNotFoundError:
        raise SystemExit(f"no recorded figures at {args.figures}: {RECORD}") from None
    raise SystemExit(report(recorded, measured))


if __name__ == "__main__":
    main()
