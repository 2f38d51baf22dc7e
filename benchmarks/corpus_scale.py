"""Measure the corpus generator at benchmark scale: wall time, peak memory, comment count.

.venv/bin/python benchmarks/corpus_scale.py --threads 50000 --comments-per-thread 40
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fixtures import corpus
from fixtures.corpus_payloads import iso


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=50_000)
    parser.add_argument("--comments-per-thread", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    c = corpus.generate(
        seed=args.seed, threads=args.threads, comments_per_thread=args.comments_per_thread
    )
    elapsed = time.perf_counter() - start
    last = c.comment(c.table.ids[-1])
    assert iso(c.table.created[-1]) == last["created_at"], "lazy payload disagrees with table"
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"threads={args.threads} comments={len(c.table)} generate_s={elapsed:.2f} "
        f"peak_rss_mb={peak_mb:.0f}"
    )


if __name__ == "__main__":
    main()
