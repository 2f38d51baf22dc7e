"""BM25 over rules, in plain Python: a handful to a few hundred short documents per request.

A rule's document is its text, its title and its trigger words twice, through the one text
pipeline (``text.terms``) plus the ``#topic`` terms those words belong to. The task is the
query. Topic terms weigh half a word on the query side: sharing an area is weaker evidence
than sharing a word.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from relore.contract.rules import text

K1 = 1.2
B = 0.75
TOPIC_WEIGHT = 0.5
TRIGGER_REPEAT = 2


def rule_terms(
    title: str, body: str, triggers: Sequence[str], env: Mapping[str, str] | None = None
) -> list[str]:
    words = text.terms(body) + text.terms(title)
    for trigger in triggers:
        words += text.terms(trigger) * TRIGGER_REPEAT
    return words + text.topics(words, env)


def query_weights(task: str, env: Mapping[str, str] | None = None) -> dict[str, float]:
    """The task's distinct terms with their weight (1 for a word, ``TOPIC_WEIGHT`` for a
    topic it belongs to; a term is counted once however often the task repeats it)."""
    words = text.terms(task)
    weights: dict[str, float] = dict.fromkeys(words, 1.0)
    for topic in text.topics(dict.fromkeys(words), env):
        weights[topic] = max(weights.get(topic, 0.0), TOPIC_WEIGHT)
    return weights


class Index:
    """Document frequencies and lengths over a corpus of term lists."""

    def __init__(self, documents: Mapping[str, Sequence[str]]):
        self.tf = {key: Counter(terms) for key, terms in documents.items()}
        self.length = {key: len(terms) for key, terms in documents.items()}
        self.n = len(documents)
        self.avg_length = (sum(self.length.values()) / self.n) if self.n else 0.0
        df: Counter[str] = Counter()
        for counts in self.tf.values():
            df.update(counts.keys())
        self.df = df

    def idf(self, term: str) -> float:
        n_t = self.df.get(term, 0)
        return math.log(1 + (self.n - n_t + 0.5) / (n_t + 0.5))

    def score(self, key: str, query: Mapping[str, float]) -> float:
        counts = self.tf[key]
        if not counts:
            return 0.0
        norm = K1 * (1 - B + B * self.length[key] / (self.avg_length or 1.0))
        total = 0.0
        for term, weight in query.items():
            f = counts.get(term)
            if f:
                total += weight * self.idf(term) * f * (K1 + 1) / (f + norm)
        return total
