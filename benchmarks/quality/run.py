"""Retrieval quality: Recall@10 and MRR per slice, for relore and two baselines.

    .venv/bin/python benchmarks/quality/build_eval.py      # only when the set is rebuilt
    .venv/bin/python benchmarks/quality/run.py              # land, dbt build, score, print
    .venv/bin/python benchmarks/quality/run.py --skip-build --misses --split dev

The corpus (../shared/corpus/threads.jsonl) lands through relore's real writer as GitHub
payloads (corpus_github.py) into a private embedded Postgres under ``--home`` (default
/tmp/relore-quality), ``dbt build`` derives the marts (build_bench.dbt_build), and then every
item of eval.jsonl is asked of:

* ``grep`` and ``websearch_to_tsquery`` + ``ts_rank`` over the same documents, and a textbook
  BM25 over whole threads (``bm25:threads``; baselines.py says how each tokenises);
* ``relore``, the real service in process (create_app on the reader role, starlette's
  TestClient), with the semantic tier on (``relored embed`` runs after the build unless
  ``--no-embed``): ``/api/v1/search`` with ``kind=failure`` for a pasted error,
  ``kind=rationale&file=PATH`` for a file and its concept words, the bare question for a
  paraphrase, a change description (change.jsonl) and a "PATH: why ...?" (why.jsonl, the
  text as written, path first), ``/api/v1/inflight`` for an issue. The encoder is the one
  ``RELORE_ENCODER`` chooses (``RELORE_ENCODER=mpnet … --skip-build --replace-vectors``
  measures all-mpnet-base-v2 over the marts a MiniLM run built). Diagnostic variants (``relore:…``) change
  one thing each, to locate misses; ``relore:lexical`` is the same request with the tier off.

Every system is scored on one page (10 hits, 3 per thread) reduced to threads (metrics.py),
items scoped to their repository; relore's hits are also scored as slots (the wasted share:
hits whose shown text holds no content word of the query; and hits per page). Per-query ranks go to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "benchmarks"))

import baselines  # noqa: E402
import build_bench  # noqa: E402
import corpus_github  # noqa: E402
import metrics  # noqa: E402
import provenance  # noqa: E402
import psycopg  # noqa: E402
import semantic as semantic_ranking  # noqa: E402

from relore.contract.version import __version__  # noqa: E402
from relore.extract.landing import land  # noqa: E402
from relore.operate import database  # noqa: E402
from relore.serve.app import Settings, create_app  # noqa: E402
from relore.serve.semantic import fusion  # noqa: E402

EVAL = HERE / "eval.jsonl"
# questions in other words than their thread's, written before any run and frozen
# (paraphrase_check.py says how)
PARAPHRASE = HERE / "paraphrase.jsonl"
# descriptions of a change an agent is about to make, and "PATH: why ...?" questions, written
# before any run and frozen (intent_check.py says how)
CHANGE = HERE / "change.jsonl"
WHY = HERE / "why.jsonl"
SLICES = ("failure", "rationale", "inflight", "paraphrase", "change", "why")
ROWS = (
    "failure/verbatim",
    "failure/rerun",
    "rationale/words",
    "rationale/code",
    "inflight/indexed",
    "inflight/unindexed",
    "paraphrase/question",
    "change/description",
    "why/description",
)
SYSTEMS = ("grep", "ts_rank", "bm25:threads", "relore", "relore:lexical", "precedent")
# the change slice beside `relore precedent` (at most 5 pull requests: its R@10 is its R@5)
PRECEDENT_SYSTEMS = ("bm25:threads", "relore", "relore:lexical", "precedent", "precedent:lexical")
# the systems whose hits are scored as slots (wasted share, hits per page, empty pages)
SLOTTED = ("relore", "relore:lexical")
BATCH = 2000


def land_corpus(url: str, repo: str | None = None) -> dict:
    """Every corpus thread (of ``repo`` only, when given) through the real landing writer (a
    no-op when already landed)."""
    threads = [t for t in corpus_github.load_threads() if repo in (None, t["repo"])]
    written = 0
    with psycopg.connect(url, autocommit=True) as conn:
        for repo, objects in corpus_github.corpus_objects(threads):
            for start in range(0, len(objects), BATCH):
                with conn.transaction(), conn.cursor() as cur:
                    written += land(cur, repo, "quality", objects[start : start + BATCH])
    return {"threads": len(threads), "rows_written": written}


def index_facts(url: str) -> dict:
    with psycopg.connect(url) as conn:
        docs = conn.execute(
            "select trust_tier, count(*) from marts.documents where not is_deleted group by 1"
        ).fetchall()
        kinds = conn.execute(
            "select document_kind, count(*) from marts.documents where not is_deleted group by 1"
        ).fetchall()
        threads = conn.execute("select count(*) from marts.threads").fetchone()[0]
    return {
        "threads": threads,
        "documents_by_trust": dict(sorted(docs)),
        "documents_by_kind": dict(sorted(kinds)),
    }


# -- relore ----------------------------------------------------------------------------------


# Asked of the whole organisation (#39): every query of these slices again with `org` and no
# `repo`, every repository ranked together. Its cross slice: the error lines whose thread is
# in another repository than the organisation's largest, where an agent working there would
# find it only across repositories (labels: eval.jsonl's, frozen long before).
ORG_SLICES = ("failure", "paraphrase", "change", "why")
LARGEST = "huggingface/transformers"


def relore_variants(item: dict) -> dict[str, tuple[str, dict]]:
    """System name -> (route, params). ``relore`` is how an agent asks; the others change
    one thing each, to say where a miss comes from."""
    found = _variants(item)
    if item["slice"] in ORG_SLICES:
        route, params = found["relore"]
        owner = item["repo"].split("/")[0]
        found["relore:org"] = (
            route,
            {**{k: v for k, v in params.items() if k != "repo"}, "org": owner},
        )
    return found


def org_table(results: list[dict]) -> str:
    """Each slice asked in its repository (`relore`) and of the organisation (`relore:org`);
    the cross rows: error lines whose thread is outside the largest repository."""
    lines = [f"{'row':28s} {'n':>4s}  {'in its repo':>22s}  {'across the org':>22s}"]
    rows: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        if "relore:org" not in r["systems"]:
            continue
        rows[r["row"]].append(r)
        if r["row"].startswith("failure/") and r["item"]["repo"].lower() != LARGEST:
            rows["cross/" + r["row"].split("/")[1]].append(r)
            rows["cross/all error lines"].append(r)
    for name in sorted(rows):
        cells = []
        for system in ("relore", "relore:org"):
            s = metrics.summary([r["systems"][system] for r in rows[name]])
            cells.append(f"{s['recall_at_10']:11.3f}{s['mrr']:11.3f}")
        lines.append(f"{name:28s} {len(rows[name]):4d}  " + "  ".join(cells))
    return "\n".join(lines)


def _variants(item: dict) -> dict[str, tuple[str, dict]]:
    repo = item["repo"]
    if item["slice"] == "failure":
        return {
            "relore": ("search", {"q": item["query"], "repo": repo, "kind": "failure"}),
            "relore:error-filter": (
                "search",
                {"q": "", "error": item["query"], "repo": repo, "kind": "failure"},
            ),
        }
    if item["slice"] == "rationale":
        asked = {"q": item["query"], "repo": repo, "file": item["file"]}
        return {
            "relore": ("search", {**asked, "kind": "rationale"}),
            "relore:trust=reported": (
                "search",
                {**asked, "kind": "rationale", "trust": "reported"},
            ),
            "relore:no-kind": ("search", asked),
            "relore:path-in-text": (
                "search",
                {"q": f"{item['file']} {item['query']}", "repo": repo},
            ),
        }
    if item["slice"] in ("paraphrase", "change"):  # a question or a description, as written
        return {"relore": ("search", {"q": item["query"], "repo": repo})}
    if item["slice"] == "why":  # as written, the path first; the variant names it as --file
        described = item["query"].split(": ", 1)[-1]
        return {
            "relore": ("search", {"q": item["query"], "repo": repo}),
            "relore:file-filter": (
                "search",
                {"q": described, "repo": repo, "file": item["file"]},
            ),
        }
    return {"relore": ("inflight", {"repo": repo, "number": item["number"]})}


def ask_precedent(client, item: dict) -> tuple[list, dict]:
    """``/api/v1/precedent`` with the change description as written (5 pull requests)."""
    response = client.get("/api/v1/precedent", params={"q": item["query"], "repo": item["repo"]})
    if response.status_code != 200:
        return [], {"status": response.status_code, "error": response.text[:300]}
    body = response.json()
    hits = [metrics.thread_key(h["repo"], h["number"]) for h in body["hits"]]
    return hits, {
        "status": 200,
        "returned": body["returned"],
        "total": body["total"],
        "meaning": body["tiers"]["meaning"]["state"],
        "matched_by": [h["matched_by"] for h in body["hits"]],
    }


def ask_relore(client, route: str, params: dict) -> tuple[list, dict]:
    response = client.get(f"/api/v1/{route}", params=params)
    if route == "inflight":
        if response.status_code == 404:
            return [], {"status": 404, "error": response.json().get("error")}
        response.raise_for_status()
        body = response.json()
        hits = [metrics.thread_key(p["repo"], p["number"]) for p in body["pulls"]]
        return hits, {"status": 200, "returned": body["returned"]}
    if response.status_code != 200:
        return [], {"status": response.status_code, "error": response.text[:300]}
    body = response.json()
    hits = [metrics.thread_key(h["repo"], h["number"]) for h in body["hits"]]
    # the text each hit shows as its own evidence (metrics.wasted)
    shown = [
        " ".join([h["snippet"], *([h["title"]] if h["document_kind"] == "opening_post" else [])])
        for h in body["hits"]
    ]
    meta = {
        "shown": shown,
        # found by the words (a hit only meaning found shows its passage, not the words)
        "worded": [h.get("matched_by", ["words"]) != ["meaning"] for h in body["hits"]],
        "status": 200,
        "returned": body["returned"],
        "total": body["total"],
        "widened": body.get("widened"),
        "expanded": body.get("expanded", False),
        "trust_floor": body.get("trust_floor"),
    }
    for key in ("normalized_filters", "legs"):
        if key in body:
            meta[key] = body[key]
    return hits, meta


# -- the run ---------------------------------------------------------------------------------


def baseline_query(item: dict) -> str:
    if item["slice"] == "rationale":
        return f"{item['file']} {item['query']}"
    return item["query"]


def run_items(
    url: str, items: list[dict], export_root: Path, semantic=None, only=None
) -> list[dict]:
    """Every item asked of every system; ``only`` names relore's systems to ask instead
    (gate.py: ``relore`` and ``relore:lexical``), with no baseline or diagnostic variant."""
    baselined = only is None
    if baselined:
        index = baselines.export(url, export_root)
        with psycopg.connect(url) as conn:
            threads_bm25 = baselines.ThreadBM25(conn)
    reader = database.reader_url(url, env={})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    results = []
    with (
        psycopg.connect(url, autocommit=True) as conn,
        TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client,
    ):
        client.headers["x-relore-client"] = __version__
        for item in items:
            targets = [metrics.thread_key(t["repo"], t["number"]) for t in item["targets"]]
            own = (
                metrics.thread_key(item["repo"], item["number"])
                if item["slice"] == "inflight"
                else None
            )
            answers: dict[str, tuple[list, dict]] = {}
            query = baseline_query(item)
            if baselined:
                if item["slice"] == "inflight":
                    ranked = baselines.grep_rank(
                        export_root, index, item["repo"], [query], words=True
                    )
                else:
                    terms = baselines.grep_terms(query)
                    ranked = baselines.grep_rank(export_root, index, item["repo"], terms)
                answers["grep"] = ([metrics.thread_key(r, n) for r, n, _, _ in ranked], {})
                ranked = baselines.ts_rank(conn, item["repo"], query)
                answers["ts_rank"] = ([metrics.thread_key(r, n) for r, n, _, _ in ranked], {})
            if baselined and item["slice"] != "inflight":
                ranked = threads_bm25.rank(conn, item["repo"], query)
                answers["bm25:threads"] = ([metrics.thread_key(r, n) for r, n, _ in ranked], {})
            for name, (route, params) in relore_variants(item).items():
                if baselined or name in only:
                    answers[name] = ask_relore(client, route, params)
            if item["slice"] == "change" and (baselined or "precedent" in only):
                answers["precedent"] = ask_precedent(client, item)
            # the same request with the semantic tier off
            if item["slice"] != "inflight" and (baselined or "relore:lexical" in only):
                route, params = relore_variants(item)["relore"]
                fusion.ENABLED = False
                try:
                    answers["relore:lexical"] = ask_relore(client, route, params)
                    if item["slice"] == "change" and (baselined or "precedent" in only):
                        answers["precedent:lexical"] = ask_precedent(client, item)
                finally:
                    fusion.ENABLED = True
            if semantic is not None and item["slice"] != "inflight":
                lexical = metrics.threads_in_order(answers["relore"][0])
                for unit in semantic.units:
                    ranked = semantic.rank(unit, item["repo"], item["query"])
                    answers[f"semantic:{unit}"] = (ranked, {})
                    answers[f"relore+semantic:{unit}"] = (
                        semantic_ranking.fuse(lexical, ranked),
                        {},
                    )
                answers["semantic:passage+feedback"] = (
                    semantic.rank_with_feedback("passage", item["repo"], item["query"]),
                    {},
                )
                answers["semantic:passage+grep"] = (
                    semantic_ranking.fuse(
                        semantic.rank("passage", item["repo"], item["query"]),
                        metrics.threads_in_order(answers["grep"][0]),
                    ),
                    {},
                )
            systems = {}
            for name, (hits, meta) in answers.items():
                # a person asking about an issue knows the issue: it is not an answer
                hits = [h for h in hits if h != own]
                scored = metrics.score(hits, targets)
                scored["threads"] = [f"{r}#{n}" for r, n in scored["threads"]]
                if "shown" in meta:
                    shown = meta.pop("shown")
                    scored["wasted"] = metrics.wasted(
                        [lexemes(conn, text) for text in shown], lexemes(conn, item["query"])
                    )
                    worded = meta.pop("worded")
                    scored["wasted_worded"] = [
                        w for w, by_words in zip(scored["wasted"], worded, strict=True) if by_words
                    ]
                systems[name] = {**scored, **({"meta": meta} if meta else {})}
            row = f"{item['slice']}/{item['form']}"
            results.append({"id": item["id"], "row": row, "split": item["split"], "item": item,
                            "systems": systems})  # fmt: skip
    return results


def embed_corpus(url: str, replace: bool = False) -> dict:
    """``relored embed`` over every repository (a no-op when nothing changed since), with the
    model ``RELORE_ENCODER`` chooses; ``replace``: every stored vector dropped first."""
    from relore.operate import embed
    from relore.serve import repos

    start = time.perf_counter()
    encoder = embed.load_encoder()
    embedded = 0
    with psycopg.connect(url, autocommit=True) as conn:
        if replace:
            embed.replace_store(conn)
        embed.ensure_store(conn, encoder.dimension)
        for repo_id, name in repos.targets(conn, None):
            embedded += embed.embed_repo(conn, encoder, name, repo_id).embedded
    seconds = time.perf_counter() - start
    return {"model": encoder.model_key, "embedded": embedded, "seconds": round(seconds, 1)}


def lexemes(conn, text: str) -> set[str]:
    """A text's content words as the index reads them (stop words dropped)."""
    row = conn.execute("select tsvector_to_array(to_tsvector('english', %s))", (text,)).fetchone()
    return set(row[0])


def slot_table(results: list[dict], systems: tuple[str, ...] = SLOTTED) -> str:
    """Per slice and system: the wasted share of the hits returned (and of those the words
    found: a hit only meaning found shows its passage), the mean hits per page, and the pages
    that came back empty."""
    lines = [
        f"{'slice/form':20s} {'system':15s} {'n':>4s}  {'wasted':>7s} {'by words':>8s} "
        f"{'hits/page':>10s} {'empty':>6s}"
    ]
    for row_name in ROWS:
        for system in systems:
            rows = [
                r["systems"][system]
                for r in results
                if r["row"] == row_name and system in r["systems"]
            ]
            s = metrics.summary([x for x in rows if "wasted" in x])
            if s["n"]:
                empty = sum(1 for x in rows if "wasted" in x and not x["wasted"])
                worded = [w for x in rows for w in x.get("wasted_worded", [])]
                share = sum(worded) / len(worded) if worded else 0.0
                lines.append(
                    f"{row_name:20s} {system:15s} {s['n']:4d}  "
                    f"{s['wasted_share']:7.3f} {share:8.3f} {s['hits_per_page']:10.2f} {empty:6d}"
                )
    return "\n".join(lines)


def table(results: list[dict], systems: list[str]) -> tuple[str, dict]:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in results:
        groups[(r["row"], r["split"])].append(r)
        groups[(r["row"], "all")].append(r)
    figures: dict = {}
    header = f"{'slice/form':20s} {'split':5s} {'n':>4s}  " + "  ".join(
        f"{s:>22s}" for s in systems
    )
    lines = [header, " " * 33 + "  ".join(f"{'R@10':>11s}{'MRR':>11s}" for _ in systems)]
    for row_name in ROWS:
        for split in ("dev", "test", "all"):
            rows = groups.get((row_name, split))
            if not rows:
                continue
            cells = []
            for system in systems:
                scores = [r["systems"][system] for r in rows if system in r["systems"]]
                s = metrics.summary(scores)
                figures.setdefault(row_name, {}).setdefault(split, {})[system] = s
                cells.append(
                    f"{s['recall_at_10']:11.3f}{s['mrr']:11.3f}" if s["n"] else f"{'—':>22s}"
                )
            lines.append(f"{row_name:20s} {split:5s} {len(rows):4d}  " + "  ".join(cells))
    return "\n".join(lines), figures


def precedent_table(results: list[dict]) -> str:
    """The change slice: R@5, R@10 and MRR of `relore precedent` beside search and BM25."""
    lines = [f"{'split':5s} {'n':>4s}  {'system':18s} {'R@5':>7s} {'R@10':>7s} {'MRR':>7s}"]
    for split in ("dev", "test", "all"):
        rows = [r for r in results if r["row"] == "change/description"]
        rows = [r for r in rows if split == "all" or r["split"] == split]
        for system in PRECEDENT_SYSTEMS:
            s = metrics.summary([r["systems"][system] for r in rows if system in r["systems"]])
            if s["n"]:
                lines.append(
                    f"{split:5s} {s['n']:4d}  {system:18s} {s['recall_at_5']:7.3f} "
                    f"{s['recall_at_10']:7.3f} {s['mrr']:7.3f}"
                )
    return "\n".join(lines)


def print_misses(results: list[dict]) -> None:
    """Items relore misses (its page holds no target), with what the baselines did."""
    for r in results:
        mine = r["systems"]["relore"]
        if mine["rank"] is not None:
            continue
        item = r["item"]
        others = ", ".join(
            f"{name}={r['systems'][name]['rank'] or '-'}"
            for name in r["systems"]
            if name != "relore"
        )
        query = item["query"].replace("\n", " ⏎ ")[:160]
        targets = " ".join(f"#{t['number']}" for t in item["targets"])
        print(f"\n{r['id']} [{r['split']}] {item['repo']} → {targets}   ({others})")
        print(f"  query: {query}" + (f"   file: {item['file']}" if "file" in item else ""))
        meta = {k: v for k, v in mine.get("meta", {}).items() if k not in ("legs",)}
        print(f"  relore: {json.dumps(meta, ensure_ascii=False)[:300]}")
        print(f"  relore threads: {' '.join(mine['threads'][:6]) or '(none)'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", default=os.environ.get("RELORE_QUALITY_HOME",
                        "/tmp/relore-quality"), help="embedded Postgres and work files")  # fmt: skip
    parser.add_argument(
        "--eval",
        action="append",
        help="item files (default eval.jsonl, paraphrase.jsonl, change.jsonl, why.jsonl)",
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="also rank by the encoder (per thread, per document) and fuse with relore by "
        "reciprocal rank: diagnostic variants, to choose the semantic tier's unit",
    )
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all")
    parser.add_argument("--slice", choices=SLICES, action="append")
    parser.add_argument("--repo", help="one repository's threads and items only")
    parser.add_argument(
        "--sample", type=int, help="the first N items of each slice (a quick run, not a figure)"
    )
    parser.add_argument("--skip-build", action="store_true", help="score the existing marts")
    parser.add_argument("--keep", action="store_true", help="leave the Postgres running")
    parser.add_argument(
        "--no-embed",
        action="store_true",
        help="do not run relored embed after the build (relore then answers by words only "
        "unless an earlier run embedded)",
    )
    parser.add_argument(
        "--replace-vectors",
        action="store_true",
        help="drop the stored vectors before embedding (another RELORE_ENCODER than the "
        "last run's: relored embed --replace)",
    )
    parser.add_argument("--misses", action="store_true", help="list relore's misses")
    parser.add_argument("--variants", action="store_true", help="print the diagnostic table")
    parser.add_argument("--out", default=None, help="per-query JSON (default HOME/quality.json)")
    parser.add_argument(
        "--fill-share",
        type=float,
        default=None,
        help="ranked.FILL_SHARE for this run (the share of a query's lexemes a filled hit "
        "holds; 1 turns the fill off): to choose the rule by measurement",
    )
    args = parser.parse_args()
    if args.fill_share is not None:
        from relore.serve import ranked

        ranked.FILL_SHARE = args.fill_share
    home = Path(args.home)
    home.mkdir(parents=True, exist_ok=True)
    items = []
    for path in args.eval or [str(EVAL), str(PARAPHRASE), str(CHANGE), str(WHY)]:
        with open(path, encoding="utf-8") as handle:
            items += [json.loads(line) for line in handle if line.strip()]
    items = [
        i
        for i in items
        if (args.split == "all" or i["split"] == args.split)
        and (not args.slice or i["slice"] in args.slice)
        and args.repo in (None, i["repo"])
    ]
    if args.sample:
        kept: dict[str, int] = defaultdict(int)
        sampled = []
        for item in items:
            kept[item["slice"]] += 1
            if kept[item["slice"]] <= args.sample:
                sampled.append(item)
        items = sampled
    paths = database.EmbeddedPaths(home / "pg")
    url = database.start_embedded(paths)
    report: dict = {
        "measured_at": provenance.facts(),
        "eval": str(args.eval),
        "fill_share": args.fill_share,
    }
    try:
        if not args.skip_build:
            start = time.perf_counter()
            report["landed"] = land_corpus(url, args.repo)
            report["landed"]["seconds"] = round(time.perf_counter() - start, 1)
            report["build"] = build_bench.dbt_build(url, home)
        report["index"] = index_facts(url)
        if not args.no_embed:
            report["embed"] = embed_corpus(url, args.replace_vectors)
        start = time.perf_counter()
        semantic = None
        if args.semantic:
            semantic = semantic_ranking.build(url)
            report["semantic_encode_seconds"] = semantic.seconds
        results = run_items(url, items, home / "export", semantic)
        report["query_seconds"] = round(time.perf_counter() - start, 1)
    finally:
        if not args.keep:
            database.stop_embedded(paths)
    text, figures = table(results, list(SYSTEMS))
    print(json.dumps({k: report[k] for k in report if k != "eval"}, indent=1))
    print(text)
    print(
        "\nslots: the wasted share of relore's hits, hits per page, empty pages\n"
        + slot_table(results)
    )
    if any("precedent" in r["systems"] for r in results):
        print(
            "\nprecedent on the change slice (at most 5 pull requests)\n" + precedent_table(results)
        )
    variants = sorted({name for r in results for name in r["systems"]} - set(SYSTEMS))
    variant_text, variant_figures = table(results, ["relore", *variants])
    if args.variants:
        print("\nrelore variants (diagnostic: each changes one thing)\n" + variant_text)
        print("\nasked of the whole organisation (#39; R@10, MRR)\n" + org_table(results))
    if args.misses:
        print_misses(results)
    out = Path(args.out) if args.out else home / "quality.json"
    report.update({"figures": figures, "variant_figures": variant_figures, "results": results})
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
    print(f"\nper-query ranks: {out}")


if __name__ == "__main__":
    main()
