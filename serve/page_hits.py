"""A search hit as the page shows it: its document read back by id, with a snippet cut
around the words it matched (ranking.PAGE) and the thread it belongs to."""

from __future__ import annotations

from relore.contract import stamps
from relore.contract.envelope import quote
from relore.serve import excerpts, ranking
from relore.serve.thread import thread_identity

SNIPPET_CHARS = 400
# a review comment shown by the code it matched on: this much of what it says first
HUNK_LEAD_CHARS = 160


def hit(row: dict) -> dict:
    return {
        **thread_identity(row),
        "document_id": row["document_id"],
        "document_kind": row["document_kind"],
        "author": row["author"],
        "trust": row["trust"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
        "score": round(float(row["score"]), 4),
        "matched_terms": int(row["matched_terms"]),
        "all_terms": bool(row.get("all_terms", True)),
        # said once here, printed verbatim by both renderers: a filled hit's coverage
        **(
            {"partial": f"carries {row['matched_terms']} of {row['of_terms']} terms"}
            if not row.get("all_terms", True)
            else {}
        ),
        **({"path": row["path"]} if row.get("path") else {}),
        "snippet": quote(snippet(row["snippet"], row["body_text"])),
    }


def snippet(headline: str | None, body: str | None, chars: int = SNIPPET_CHARS) -> str:
    """A hit's shown text: the headline's fragments, edges restored, cut to ``chars``."""
    restored = excerpts.restore_edges(headline or "", body or "")
    return excerpts.cut(restored, chars)[0]


async def page_rows(cur, repo_id: int | list[int], hits: list, lexemes: list[str]) -> dict:
    """The page's documents read back (by id), with snippets around the lexemes; ``repo_id``
    the repository of every hit, or of each (a page ranked across repositories)."""
    if not hits:
        return {}
    repo_ids = [repo_id] * len(hits) if isinstance(repo_id, int) else list(repo_id)
    await cur.execute(
        ranking.PAGE,
        {
            "repo_ids": repo_ids,
            "documents": [h.document_id for h in hits],
            "scores": [h.score for h in hits],
            "lexemes": lexemes,
            "lead_chars": HUNK_LEAD_CHARS,
        },
    )
    rows = {}
    for row in await cur.fetchall():
        row["all_terms"] = int(row["matched_terms"]) >= len(lexemes)
        row["of_terms"] = len(lexemes)
        rows[row["document_id"]] = row
    return rows
