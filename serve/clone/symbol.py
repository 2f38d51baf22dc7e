"""``symbol``: the definitions of a name in the working clone at its HEAD, by the client's
own code lens (``relore.lens``: the same providers and engine ``relore defs`` runs on the
caller's tree), here over the clone. Its parse cache lives beside the clones, never in one.
At most ``SYMBOL_CONCURRENT`` parses run at once, and a parse stops at the request's deadline
(the thread checks before each file), never running on after the 503."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path

from relore.serve import inputs
from relore.serve.clone import redaction
from relore.serve.clone.git import Budget, Git
from relore.serve.clone.reading import clone_text, head_of
from relore.serve.errors import BadRequest, NotFound, Unavailable

SYMBOL_TIMEOUT_S = 60.0
# at most this many `symbol` parses run at once per daemon (each is a thread of tree-sitter
# work); the wait for one counts against the request's deadline
SYMBOL_CONCURRENT = 2


def parse_symbol(params) -> dict:
    return inputs.parse("symbol", params)  # as contract/verbs declares it


def _cache_env(clone: Path) -> dict:
    env = dict(os.environ)
    if not env.get("RELORE_CODE_CACHE"):
        # beside the clones (owner names never start with a dot), never inside one
        env["RELORE_CODE_CACHE"] = str(clone.parent.parent / ".code-cache")
    return env


_parse_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


@contextlib.asynccontextmanager
async def _parse_slot(budget: Budget):
    loop = asyncio.get_running_loop()
    slots = _parse_slots.get(loop)
    if slots is None:
        _parse_slots.clear()  # one daemon, one loop: a new loop (a test) starts afresh
        slots = _parse_slots[loop] = asyncio.Semaphore(SYMBOL_CONCURRENT)
    await asyncio.wait_for(slots.acquire(), max(budget.remaining(), 0))
    try:
        yield
    finally:
        slots.release()


async def symbol(request: dict, clone: Path, pool=None) -> dict:
    from relore.lens import index, registry

    budget = Budget(deadline_s=SYMBOL_TIMEOUT_S)
    git = Git(clone, budget)
    head = await head_of(git)
    scope = request["path"] or "."
    if request["path"] and not (clone / request["path"]).resolve().is_relative_to(clone.resolve()):
        raise BadRequest("path leaves the repository")
    stop = threading.Event()
    try:
        async with _parse_slot(budget):
            parsing = asyncio.ensure_future(
                asyncio.to_thread(
                    index.defs,
                    request["name"],
                    scope,
                    _cache_env(clone),
                    limit=request["limit"],
                    cwd=str(clone),
                    stop=stop.is_set,
                )
            )
            try:
                page = await asyncio.wait_for(asyncio.shield(parsing), budget.remaining())
            except TimeoutError:
                stop.set()  # the thread ends at its next file, and holds its slot till then
                with contextlib.suppress(index.Stopped):
                    await parsing
                raise
            finally:
                stop.set()  # cancelled too (the client went away): nothing parses on
    except index.PathNotFound:
        raise NotFound(f"{request['path']} is not in the clone at HEAD") from None
    except registry.GrammarMissing as exc:
        raise Unavailable(str(exc)) from None
    except (TimeoutError, index.Stopped):
        budget.timed_out.append(f"definitions: stopped after {SYMBOL_TIMEOUT_S:.0f}s")
        raise Unavailable(
            f"reading the clone for {request['name']!r} took over {SYMBOL_TIMEOUT_S:.0f}s: "
            "narrow it with path=DIR"
        ) from None
    page.pop("root", None)
    page.get("files", {}).pop("cache", None)
    page.pop("offset", None)
    page.pop("skipped_before", None)
    await redaction.fields(
        pool, page.get("definitions", []), ("path", "qualified", "scope", "text")
    )
    for row in page.get("definitions", []):
        row["text"] = clone_text(row.get("text") or "")
    page.update(repo=request["repo"], head=head, path=request["path"])
    page["budget"] = budget.report()
    return page
