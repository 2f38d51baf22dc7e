"""One token's budget: what GitHub says is left of it, and where a cycle stops spending it.

GitHub keeps a bucket per resource (``core`` for REST, ``graphql``), refilled at
``x-ratelimit-reset``; every answer names its bucket (``x-ratelimit-resource``) and what is
left in it (``x-ratelimit-remaining``). Two things cost nothing against it: a 304 to a
conditional request made with the token, and ``GET /rate_limit`` (both count towards the
secondary limits). A cycle (``extract/schedule.py``) hands the client a :class:`Budget`:

* ``floor``: no request is sent while its bucket holds that many or fewer (a polling phase
  spends down to 0, a backfill stops at the reserve). The refusal is :class:`BudgetSpent`,
  raised *before* the request, so a listing page is either landed with its mark or never
  asked for: the next cycle resumes at the mark and re-reads no page.
* ``admit(margin)``: the same test with room for a whole unit of work (a thread fetch is a
  few requests), asked before the unit starts, so a unit is rarely cut in half.
* pacing: at most ``per_minute`` requests in any minute (GitHub's secondary limits allow 900
  points a minute per REST endpoint; the hourly budget needs 84 a minute on average).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from relore.extract.github_client import GitHubError

PER_MINUTE = 600
RESERVE_SHARE = 0.02  # of the hourly limit, kept back from backfills by default


class BudgetSpent(GitHubError):
    """Not requested: the bucket is down to the floor the cycle set."""


def spent_in(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it was raised from, is a budget refusal (a thread or
    review step re-raises GitHub's errors with its own words)."""
    while exc is not None:
        if isinstance(exc, BudgetSpent):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@dataclass
class Bucket:
    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None

    def describe(self, clock: Callable[[], float] = time.time) -> str:
        if self.remaining is None:
            return "not known yet"
        of = f" of {self.limit:,}" if self.limit is not None else ""
        when = ""
        if self.reset is not None:
            at = datetime.fromtimestamp(self.reset, UTC).strftime("%H:%M:%SZ")
            when = f", resets at {at} (in {max(0, int(self.reset - clock())) // 60} min)"
        return f"{self.remaining:,}{of} left{when}"


def default_reserve(limit: int | None, repos: int) -> int:
    """What a backfill leaves: 2 % of the hour's limit, and at least a request per
    repository (the next cycle's polls, when it starts before the window resets)."""
    return max(round((limit or 5000) * RESERVE_SHARE), repos)


class Budget:
    def __init__(
        self,
        *,
        floor: int = 0,
        per_minute: int = PER_MINUTE,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.buckets = {"core": Bucket(), "graphql": Bucket()}
        self.floor = floor
        self.per_minute = per_minute
        self.clock, self.sleep = clock, sleep
        self.stopped: str | None = None  # why the last refusal refused
        self.paced = 0.0  # seconds slept to keep under per_minute
        self._sent: deque[float] = deque()

    @property
    def core(self) -> Bucket:
        return self.buckets["core"]

    def observe(self, headers) -> None:
        """Note the bucket an answer reports (every answer, a 304 included)."""
        remaining = headers.get("x-ratelimit-remaining")
        if remaining is None or not remaining.isdigit():
            return
        bucket = self.buckets.setdefault(headers.get("x-ratelimit-resource") or "core", Bucket())
        bucket.remaining = int(remaining)
        limit, reset = headers.get("x-ratelimit-limit", ""), headers.get("x-ratelimit-reset", "")
        bucket.limit = int(limit) if limit.isdigit() else bucket.limit
        bucket.reset = float(reset) if reset.isdigit() else bucket.reset

    def seed(self, payload: dict) -> None:
        """The buckets as ``GET /rate_limit`` reports them (a free request)."""
        for name, values in (payload.get("resources") or {}).items():
            if name in self.buckets or name in ("core", "graphql"):
                self.buckets[name] = Bucket(
                    int(values["limit"]), int(values["remaining"]), float(values["reset"])
                )

    def left(self, resource: str = "core") -> int | None:
        """What the bucket holds now (its limit again once its reset has passed)."""
        bucket = self.buckets.get(resource) or Bucket()
        if bucket.remaining is None:
            return None
        if bucket.reset is not None and self.clock() >= bucket.reset:
            return bucket.limit
        return bucket.remaining

    def refuses(self, resource: str = "core", margin: int = 0) -> bool:
        left = self.left(resource)
        return left is not None and left <= self.floor + margin

    def _refuse(self, resource: str, url: str) -> None:
        bucket = self.buckets[resource]
        self.stopped = (
            f"the token's {resource} budget is down to the reserve ({self.floor:,}): "
            f"{bucket.describe(self.clock)}"
        )
        raise BudgetSpent(self.stopped, url=url)

    def admit(self, margin: int, resource: str = "core", url: str = "") -> None:
        """Before a unit of work of about ``margin`` requests: refuse it unless it fits."""
        if self.refuses(resource, margin):
            self._refuse(resource, url)

    def check(self, resource: str, url: str) -> None:
        """Before each request: refuse it at the floor, else keep it under the pace."""
        if self.refuses(resource):
            self._refuse(resource, url)
        now = self.clock()
        while self._sent and self._sent[0] <= now - 60:
            self._sent.popleft()
        if len(self._sent) >= self.per_minute:
            wait = self._sent[0] + 60 - now
            self.paced += wait
            self.sleep(wait)
            now = self.clock()
        self._sent.append(now)
