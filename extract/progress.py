"""Progress for long passes: one live line on a terminal, periodic lines otherwise.

Each line says what a person watching wants: items so far, requests made, the rate-limit
budget left and when it resets, and an ETA when the total is known.
"""

from __future__ import annotations

import time
from typing import TextIO

from relore.extract.github_client import GitHubClient


class Progress:
    def __init__(self, stream: TextIO | None, client: GitHubClient, *, interval: float = 2.0):
        self.stream = stream
        self.client = client
        self.interval = interval
        self.live = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._last = 0.0
        self._started = time.monotonic()
        self._width = 0

    def _budget(self) -> str:
        remaining, reset = self.client.stats.rate_remaining, self.client.stats.rate_reset
        if remaining is None:
            return ""
        resets = f", resets in {max(0, int(reset - time.time()))}s" if reset else ""
        return f" | rate {remaining} left{resets}"

    def update(self, what: str, done: int | None = None, total: int | None = None) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not self.live and now - self._last < self.interval:
            return
        self._last = now
        eta = ""
        if done and total and done < total:
            rate = done / max(1e-6, now - self._started)
            eta = f" | eta {int((total - done) / rate)}s"
        line = f"{what} | {self.client.stats.requests} requests{self._budget()}{eta}"
        if self.live:
            pad = max(0, self._width - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def __call__(self, what: str) -> None:
        self.update(what)

    def done(self) -> None:
        if self.stream is not None and self.live and self._width:
            self.stream.write("\n")
            self.stream.flush()
