"""``relore map``'s walk (``rank.py``): where walks start, and PageRank's power iteration
over files → names → files. Pure standard library."""

from __future__ import annotations

DAMPING = 0.85
TOLERANCE = 1e-6  # L1 change of the rank vector (which sums to 1)
MAX_ITERATIONS = 100
# the share of walks that start at the package's entry files (``rank.py``)
ENTRY_SHARE = 0.5


def pagerank(
    edges: list[list[tuple[int, float]]],
    targets: list[list[int]],
    personal: list[float],
    whole: int | None = None,
) -> tuple[list[float], list[float]]:
    """Power iteration over files → targets → files.

    ``edges[f]`` is file f's ``(target, weight)`` list, ``targets[t]`` the files target t
    spreads evenly over, ``personal`` where a walk starts (sums to 1). A file passes on
    ``weight / max(its total, the median total)`` along each edge; what it keeps back (all
    of it, for a file with no edge) starts again from ``personal``. A node from ``whole`` on
    (the documentation: no target is in it) passes on all it has. Returns the nodes' ranks
    and each target's inflow at them.
    """
    n = len(edges)
    whole = n if whole is None else whole
    totals = [sum(w for _t, w in out) for out in edges]
    positive = sorted(t for t in totals[:whole] if t > 0)
    typical = positive[len(positive) // 2] if positive else 1.0
    shares = []
    passed = []
    for f in range(n):
        total = max(totals[f], typical) if f < whole else totals[f] or 1.0
        shares.append([(t, w / total) for t, w in edges[f]])
        passed.append(totals[f] / total)
    rank = list(personal)
    inflow = [0.0] * len(targets)
    for _ in range(MAX_ITERATIONS):
        inflow = [0.0] * len(targets)
        restart = 0.0
        for f in range(n):
            r = rank[f]
            restart += r * (1.0 - passed[f])
            for t, share in shares[f]:
                inflow[t] += r * share
        new = [(1.0 - DAMPING + DAMPING * restart) * p for p in personal]
        for t, flow in enumerate(inflow):
            if flow:
                each = DAMPING * flow / len(targets[t])
                for f in targets[t]:
                    new[f] += each
        change = sum(abs(a - b) for a, b in zip(new, rank, strict=True))
        rank = new
        if change < TOLERANCE:
            break
    return rank, inflow


def _normalised(mass: list[float]) -> list[float] | None:
    total = sum(mass)
    return [m / total for m in mass] if total > 0 else None


def personalisation(
    records, focus: list[str] | None, edges: list, providers: dict
) -> tuple[list[float], list[str]]:
    """Where walks start, and the entry files among those starts (empty with ``focus``)."""
    files = [rel for rel, _language, _record in records]
    if not files:
        return [], []
    mass = [sum(w for _t, w in out) for out in edges]
    uniform = [1.0 / len(files)] * len(files)
    if focus:
        chosen = [
            any(f == "" or rel == f or (f.endswith("/") and rel.startswith(f)) for f in focus)
            for rel in files
        ]
        return (
            _normalised([m if c else 0.0 for m, c in zip(mass, chosen, strict=True)])
            or _normalised([float(c) for c in chosen])
            or uniform
        ), []
    by_references = _normalised(mass) or uniform
    entries = [
        i
        for i, (rel, language, _record) in enumerate(records)
        if language in providers and rel.rsplit("/", 1)[-1] in providers[language].entry_files
    ]
    if entries:
        depth = min(files[i].count("/") for i in entries)
        entries = [i for i in entries if files[i].count("/") == depth]
    at_entries = _normalised([mass[i] if i in entries else 0.0 for i in range(len(files))])
    if at_entries is None:
        return by_references, []
    personal = [
        (1.0 - ENTRY_SHARE) * b + ENTRY_SHARE * e
        for b, e in zip(by_references, at_entries, strict=True)
    ]
    return personal, [files[i] for i in entries if mass[i] > 0]
