"""A precedent page: the legs asked (``rank.py``), the chosen pull requests read back
(``read.py``), each saying why it matched — the terms its documents carry, the named files it
changed, how near it is in meaning — with the files it touched (capped, with the total) and
the review comments that shaped it (at most ``REVIEWS_SHOWN``, quoted, with the file and line
each sits on)."""

from __future__ import annotations

import asyncio

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.contract import stamps
from relore.contract.envelope import quote
from relore.contract.limits import MAX_PRECEDENT
from relore.serve import notices, ranking, repos
from relore.serve.lexical import idf, query, store
from relore.serve.page_hits import snippet
from relore.serve.precedent import rank, read
from relore.serve.precedent.request import TIERS, PrecedentRequest
from relore.serve.semantic import fusion, nearest
from relore.serve.thread import thread_identity

FILES_SHOWN = 8
REVIEWS_SHOWN = 3
REVIEW_CHARS = 300
TERMS_SHOWN = 12


async def _walk(searcher, threads, asked: dict, legs: rank.Legs) -> None:
    """The index's legs side by side in worker threads (tantivy releases the GIL): the words
    of merged pull requests and of the others, whole threads, and the named files."""
    lexemes = asked["lexemes"]
    # a member of the shared index is scored by its own idf: its weights asked once for the
    # two states' words (a count search a lexeme)
    weights = await asyncio.to_thread(idf.own, searcher, lexemes)
    capped = await asyncio.gather(
        *(
            asyncio.to_thread(rank.words, searcher, lexemes, TIERS, state, legs, weights=weights)
            for state in ("merged", "closed")
        ),
        asyncio.to_thread(rank.threads, threads, lexemes, legs),
        asyncio.to_thread(rank.evidence, searcher, asked["files"], asked["symbols"], TIERS, legs),
    )
    legs.capped = any(capped)


async def _meaning(cur, repo_id: int, request: PrecedentRequest, legs: rank.Legs) -> dict:
    """The meaning leg into ``legs.meaning``; the tier's state as the page says it."""
    if not fusion.ENABLED:
        return {"state": "off", "reason": "turned off on this daemon (RELORE_SEMANTIC=off)"}
    if not request.terms:
        return {"state": "not asked", "reason": "no words to ask in meaning"}
    found = await nearest.nearest(
        cur, repo_id, request.text, {"tiers": list(TIERS), "state": "closed"}
    )
    if isinstance(found, nearest.Off):
        return {"state": "off", "reason": found.reason}
    for near in found:
        legs.meaning[near.thread_number] = (near.similarity, near.document_id)
    return {"state": "answered", "threads": len(found)}


def _matched(why: dict, lexemes: int, named: int) -> str:
    """Why a pull request is on the page, in the daemon's words (retrieved values stay in
    ``why``'s lists, which the renderer fences)."""
    said = []
    if why["terms"]:
        said.append(f"carries {len(why['terms'])} of {lexemes} terms")
    if why.get("files") or why.get("symbols"):
        shared = len(why.get("files", [])) + len(why.get("symbols", []))
        said.append(f"touched {shared} of the {named} named files/symbols")
    if "similarity" in why:
        said.append(f"similarity {why['similarity']:.2f}")
    return "; ".join(said) or "matched by its files only"


async def _rows(cur, sql: str, params: dict) -> list[dict]:
    await cur.execute(sql, params)
    return await cur.fetchall()


async def _hits(
    cur, repo_id: int, chosen: list[rank.Fused], legs: rank.Legs, asked: dict, searcher
):
    numbers = [f.number for f in chosen]
    if not numbers:
        return []
    base = {"repo_id": repo_id, "numbers": numbers, "lexemes": asked["lexemes"]}
    heads = {r["number"]: r for r in await _rows(cur, read.HEADS, base)}
    carried = {
        r["number"]: list(r["carried"])
        for r in await _rows(cur, read.CARRIED, {**base, "tiers": list(TIERS)})
    }
    named = {**base, "files": asked["files"], "cap": FILES_SHOWN}
    files: dict[int, list[dict]] = {}
    for row in await _rows(cur, read.FILES, named):
        files.setdefault(row["number"], []).append(row)
    reviews: dict[int, list[dict]] = {}
    for row in await _rows(
        cur, read.REVIEWS, {**named, "tiers": list(TIERS), "cap": REVIEWS_SHOWN}
    ):
        reviews.setdefault(row["number"], []).append(row)
    worded = [f.number for f in chosen if f.number in legs.words]
    best = await asyncio.to_thread(
        lambda: {t: query.document_id(searcher, legs.words[t].address) for t in worded}
    )
    shown = {}  # the document each hit is shown by: its best by the words, else by meaning
    for f in chosen:
        if f.number in legs.words:
            shown[f.number] = best[f.number]
        elif f.number in legs.meaning:
            shown[f.number] = legs.meaning[f.number][1]
        elif heads.get(f.number, {}).get("opening_document"):
            shown[f.number] = heads[f.number]["opening_document"]
    await cur.execute(
        ranking.PAGE,
        {
            "repo_ids": [repo_id] * len(shown),
            "documents": list(shown.values()),
            "scores": [0.0] * len(shown),
            "lexemes": asked["lexemes"],
            "lead_chars": 160,
        },
    )
    documents = {r["document_id"]: r for r in await cur.fetchall()}
    hits = []
    for f in chosen:
        head = heads.get(f.number)
        if head is None:  # deleted since the index was read
            continue
        hits.append(
            _hit(f, head, carried, files, reviews, documents.get(shown.get(f.number)), legs, asked)
        )
    return hits


def _hit(f, head, carried, files, reviews, document, legs, asked) -> dict:
    n = f.number
    changed = files.get(n, [])
    why: dict = {"terms": carried.get(n, [])[:TERMS_SHOWN], "of_terms": len(asked["lexemes"])}
    if len(carried.get(n, [])) > TERMS_SHOWN:
        why["terms_carried"] = len(carried[n])
    evidence = legs.evidence.get(n, set())
    shared = [c["path"] for c in changed if c["shared"]]
    if evidence & set(asked["files"]) or shared:
        why["files"] = shared or sorted(evidence & set(asked["files"]))
    if evidence & set(asked["symbols"]):
        why["symbols"] = sorted(evidence & set(asked["symbols"]))
    if n in legs.meaning:
        why["similarity"] = round(legs.meaning[n][0], 4)
    named = len(asked["files_named"]) + len(asked["symbols"])
    hit = {
        **thread_identity({**head, "number": n}),
        "merged": f.merged,
        **({"merged_date": stamps.date(head["merged_at"])} if head.get("merged_at") else {}),
        "author": head["author_login"],
        "trust": head["opening_post_trust"],
        "date": stamps.date(head["created_at"]),
        "age": stamps.age(head["created_at"]),
        "score": round(f.score, 4),
        "matched_by": rank.matched_by(f.ranks),
        "why": why,
        "matched": _matched(why, len(asked["lexemes"]), named),
    }
    if document is not None:
        hit["shown_by"] = document["document_id"]
        hit["snippet"] = quote(snippet(document["snippet"], document["body_text"]))
    hit["files"] = {
        "returned": len(changed),
        "total": int(changed[0]["total"]) if changed else int(head.get("changed_files") or 0),
        "paths": [
            {"path": c["path"], "change": c["change_type"], "named": bool(c["shared"])}
            for c in changed
        ],
    }
    said = reviews.get(n, [])
    hit["reviews"] = {
        "returned": len(said),
        "total": int(said[0]["total"]) if said else 0,
        "comments": [_review(r) for r in said],
    }
    return hit


def _review(row: dict) -> dict:
    text = snippet(row["headline"], row["body"], REVIEW_CHARS)
    return {
        "id": row["id"],
        "kind": row["kind"],
        "author": row["author"],
        "trust": row["trust"],
        "date": stamps.date(row["created_at"]),
        "url": row["url"],
        **({"path": row["path"], "line": row["line"]} if row["path"] else {}),
        "carries": int(row["matched"] or 0),
        "on_named_file": bool(row["on_shared"]),
        "text": quote(text),
    }


@notices.stated(notices.precedent)
async def precedent(conn: AsyncConnection, request: PrecedentRequest) -> dict:
    """One page; a repository the index holds nothing for is ``errors.NotIndexed``."""
    repo_id = await repos.require(conn, request.repo)
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(read.NAMED, {"text": request.text})
        named = await cur.fetchone()
        files_named = list(dict.fromkeys([*request.files, *named["paths"]]))
        await cur.execute(
            ranking.RESOLVE,
            {
                "repo_id": repo_id,
                "text": " ".join(request.terms),
                "file": files_named or None,
                "error": None,
                "test": None,
                "symbol": list(named["symbols"]) or None,
                "prose": None,  # the description's paths are in file, found by read.NAMED
            },
        )
        resolved = await cur.fetchone()
        asked = {
            "lexemes": sorted(resolved["lexemes"]),
            "files": sorted(resolved["files"] or []),
            "symbols": sorted(resolved["symbols"] or []),
            "files_named": files_named,
        }
        legs, searcher = rank.Legs(), None
        # meaning (the description embedded, its neighbours read) while the index is walked;
        # a task group, so a failing leg cancels the other before the cursor is given back
        async with asyncio.TaskGroup() as group:
            if asked["lexemes"] or asked["files"] or asked["symbols"]:
                indexes = store.for_connection(conn)
                searcher = await indexes.fresh(conn, repo_id, resolved)
                threads = indexes.reader(repo_id).thread_searcher()
                group.create_task(_walk(searcher, threads, asked, legs))
            meant = group.create_task(_meaning(cur, repo_id, request, legs))
        meaning = meant.result()
        numbers = sorted(
            set(legs.words) | set(legs.evidence) | set(legs.meaning) | set(legs.threads)
        )
        pulls = {
            r["number"]: r["state"]
            for r in await _rows(cur, read.PULLS, {"repo_id": repo_id, "numbers": numbers})
        }
        fused = rank.fuse(legs, pulls)
        hits = await _hits(cur, repo_id, fused[: request.limit], legs, asked, searcher)
    merged = sum(1 for f in fused if f.merged)
    return {
        "query": request.text,
        "terms": list(request.terms),
        "repo": request.repo,
        "named": {
            "files": files_named,
            "symbols": list(named["symbols"]),
            "as_indexed": {"files": asked["files"], "symbols": asked["symbols"]},
        },
        "returned": len(hits),
        "total": len(fused),
        "counted": "closed pull requests",
        **({"total_is_lower_bound": True} if legs.capped else {}),
        "merged": merged,
        "closed_unmerged": len(fused) - merged,
        "limit": request.limit,
        "cap": MAX_PRECEDENT,
        "order": "merged first, then closed without merging; open pull requests are not precedent",
        "tiers": {
            "words": {"lexemes": len(asked["lexemes"]), "pulls": _count(legs.words, pulls)},
            "files": {
                "named": len(asked["files"]) + len(asked["symbols"]),
                "pulls": _count(legs.evidence, pulls),
            },
            "meaning": {
                **meaning,
                **(
                    {"pulls": _count(legs.meaning, pulls)} if meaning["state"] == "answered" else {}
                ),
            },
        },
        "hits": hits,
    }


def _count(found: dict, pulls: dict) -> int:
    return sum(1 for n in found if n in pulls)
