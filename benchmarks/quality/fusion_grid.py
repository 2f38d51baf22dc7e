"""Choose a fused page's weights by measurement: every setting on every fused slice at once.

    .venv/bin/python benchmarks/quality/run.py --home H          # once: land, build, embed
    .venv/bin/python benchmarks/quality/fusion_grid.py --home H  # every setting, tier on/off

Only the slices a fused page answers move with the weights (a question, a change
description, a "PATH: why" description: semantic.fusion routes pasted errors, filtered and
short queries lexical-first). Each setting replaces ``fusion.WEIGHTS`` for one shape or for
all, and is asked of the real service in process, as run.py asks it; a row is R@10 / MRR per
slice with the tier on, and with it off: a setting is then also what its shapes weigh
without meaning (``fusion.WORDS_ONLY``; the shipped row keeps the shipped one).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import metrics  # noqa: E402
import run  # noqa: E402

from relore.contract.version import __version__  # noqa: E402
from relore.operate import database  # noqa: E402
from relore.serve.app import Settings, create_app  # noqa: E402
from relore.serve.semantic import fusion  # noqa: E402

FUSED = ("paraphrase", "change", "why")
W = fusion.Weights


# One grid per shape, walked in step (setting k takes each shape's k-th entry, the last when
# a grid is shorter): a shape answers nearly one slice (questions the paraphrases,
# descriptions the changes, a file described the "why"s), so each shape's best entry is read
# off its own slice.
PROSE = [
    W(1, 1),
    W(0.5, 1),
    W(0.25, 1),
    W(1, 0.5),
    W(1, 1, words_second=0.5),
    W(0.5, 1, words_second=0.5),
    W(1, 1, words_share=0.5),
    W(0.5, 1, words_share=0.5),
    W(1, 1, meaning_floor=0.3),
    W(0.25, 1, words_share=0.5),
]
FILED = [
    W(1, 0.5, file=1),
    W(1, 0.25, file=1),
    W(1, 0.5, file=2),
    W(1, 0.5, file=0.5),
    W(1, 0.5, file=1, words_second=0.5),
    W(1, 0.25, file=2),
    W(1, 0, file=1),
    W(1, 1, file=1),
    W(1, 0.5, file=1, meaning_floor=0.3),
    W(1, 0.25, file=1, words_second=0.5),
]


def settings() -> dict[str, dict[str, fusion.Weights]]:
    """Name -> the WEIGHTS a run uses."""
    grid: dict[str, dict[str, fusion.Weights]] = {"shipped": dict(fusion.WEIGHTS)}
    for k in range(max(len(PROSE), len(FILED))):
        prose, filed = PROSE[min(k, len(PROSE) - 1)], FILED[min(k, len(FILED) - 1)]
        grid[f"grid{k}"] = {"question": prose, "description": prose, "path_description": filed}
    return grid


def _items(slices) -> list[dict]:
    items = []
    for path in (run.PARAPHRASE, run.CHANGE, run.WHY):
        with open(path, encoding="utf-8") as handle:
            items += [json.loads(line) for line in handle if line.strip()]
    return [i for i in items if i["slice"] in slices]


def measure(client, items: list[dict]) -> dict[str, tuple[float, float]]:
    by_slice: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        route, params = run.relore_variants(item)["relore"]
        hits, _ = run.ask_relore(client, route, params)
        targets = [metrics.thread_key(t["repo"], t["number"]) for t in item["targets"]]
        by_slice[item["slice"]].append(metrics.score(hits, targets))
    out = {}
    for name, scores in by_slice.items():
        figures = metrics.summary(scores)
        out[name] = (figures["recall_at_10"], figures["mrr"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", required=True, help="a home run.py built and embedded")
    parser.add_argument("--slice", choices=FUSED, action="append")
    parser.add_argument("--only", action="append", help="setting names to run")
    parser.add_argument("--out", default=None, help="the table as JSON")
    parser.add_argument(
        "--prose",
        action="append",
        help="a question's/description's Weights as keyword arguments, e.g. "
        "'words=1,meaning=0.25' (replaces the PROSE grid; repeatable)",
    )
    parser.add_argument(
        "--filed",
        action="append",
        help="a file described's Weights, as --prose (replaces the FILED grid; repeatable)",
    )
    args = parser.parse_args()
    items = _items(args.slice or FUSED)
    for given, grid in ((args.prose, PROSE), (args.filed, FILED)):
        if given:
            grid[:] = [W(**{k: float(v) for k, v in (p.split("=") for p in spec.split(","))})
                       for spec in given]  # fmt: skip
    if args.prose and not args.filed:
        del FILED[1:]
    url = database.start_embedded(database.EmbeddedPaths(Path(args.home) / "pg"))
    reader = database.reader_url(url, env={})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    table = {}
    shipped = dict(fusion.WEIGHTS)
    shipped_words_only = dict(fusion.WORDS_ONLY)
    with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
        client.headers["x-relore-client"] = __version__
        for name, weights in settings().items():
            if args.only and name not in args.only:
                continue
            fusion.WEIGHTS.clear()
            fusion.WEIGHTS.update(weights)
            row = {"on": measure(client, items)}
            fusion.ENABLED = False
            if name != "shipped":  # the setting is also what a shape weighs without meaning
                fusion.WORDS_ONLY.clear()
                fusion.WORDS_ONLY.update(
                    {s: replace(w, words_share=fusion.WORDS_ONLY_SHARE)
                     for s, w in weights.items() if s in shipped_words_only}
                )  # fmt: skip
            try:
                row["off"] = measure(client, items)
            finally:
                fusion.ENABLED = True
                fusion.WORDS_ONLY.clear()
                fusion.WORDS_ONLY.update(shipped_words_only)
            table[name] = row
            cells = "  ".join(
                f"{s}: {row['on'][s][0]:.3f}/{row['on'][s][1]:.3f}"
                f" ({row['off'][s][0]:.3f}/{row['off'][s][1]:.3f})"
                for s in sorted(row["on"])
            )
            print(f"{name:28s} {cells}", flush=True)
    fusion.WEIGHTS.clear()
    fusion.WEIGHTS.update(shipped)
    if args.out:
        Path(args.out).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
