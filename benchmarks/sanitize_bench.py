"""What the one sanitiser costs a large page: ``envelope.wrap`` (mark, scrub every string, put
the envelope on) over a search-sized page of each kind of text, in-process, no database.

    .venv/bin/python benchmarks/sanitize_bench.py [--hits 200] [--runs 30]

Each page holds ``--hits`` hits, each a quoted ~2 kB snippet and a handful of single-line
fields; the kinds are the text GitHub hands relore: ASCII prose, ASCII with HTML and generics
(``<`` on every line: the delimiter check cannot stop at its first look), Cyrillic,
Japanese and Chinese prose (non-ASCII; the Chinese holds 《》, look-alikes of ``<<``), and
the hostile catalog. Prints
the median and the least milliseconds per page (what a shared machine disturbs least)
and MB/s of retrieved text at the least, as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import provenance

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fixtures import hostile_strings

from relore.contract import envelope

PROSE = (
    "The trainer crashes when gradient accumulation is set and the dataloader is empty; "
    "see the traceback below. Running with fp16 and deepspeed stage 2 on 4 GPUs. "
)
HTML = (
    "<details><summary>Traceback</summary> List<Map<String, Integer>> x = a << 2; "
    "<!-- comment --> <code>if a < b and b > c</code></details> "
)
CYRILLIC = "Ошибка при загрузке модели: файл конфигурации не найден, проверьте путь. "
JAPANESE = "モデルの読み込みに失敗しました。くわしくは〈設定〉を見てください。ログを添付します。"
CHINESE = "加载模型时出错：请参阅《配置指南》中的说明，并附上完整的日志。"
KINDS = {
    "ascii prose": PROSE,
    "ascii with html": HTML,
    "cyrillic": CYRILLIC,
    "japanese": JAPANESE,
    "chinese with title marks": CHINESE,
    "hostile catalog": hostile_strings.joined(),
}


def page(text: str, hits: int) -> tuple[dict, int]:
    body = (text * (2048 // len(text) + 1))[:2048]
    lines = "\n".join(body[i : i + 120] for i in range(0, len(body), 120))
    rows = [
        {
            "title": body[:80],
            "author": "octocat",
            "path": f"src/{body[:30]}.py",
            "labels": ["bug", body[:20]],
            "snippet": envelope.quote(lines),
        }
        for _ in range(hits)
    ]
    size = sum(len(r["title"]) + len(r["path"]) + 20 + len(lines) for r in rows)
    return {"hits": rows, "returned": hits, "total": hits}, size


def measure(text: str, hits: int, runs: int) -> dict:
    built, chars = page(text, hits)
    envelope.wrap(built)  # warm: the long-line class is built once per process
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        envelope.wrap(built)
        times.append(time.perf_counter() - started)
    median, best = statistics.median(times), min(times)
    return {
        "page_chars": chars,
        "median_ms": round(median * 1000, 2),
        "min_ms": round(best * 1000, 2),  # the figure a busy machine disturbs least
        "mb_per_s": round(chars / best / 1e6, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=200)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    report = {kind: measure(text, args.hits, args.runs) for kind, text in KINDS.items()}
    report["measured_at"] = provenance.facts()
    print(json.dumps(report, indent=2, ensure_ascii=False))
    print(provenance.line())


if __name__ == "__main__":
    main()
