"""Reviews of pull requests, batched over GraphQL.

GitHub has no repository-wide reviews endpoint; one REST call per pull request would cost a
request per PR. A GraphQL query aliases ~25 ``pullRequest(number:)`` fields at once. Each
node is landed exactly as GitHub sent it, as object type ``review_graphql`` (its
``databaseId`` is the REST review id, so staging unites the two shapes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import psycopg

from relore.extract import checkpoints
from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.landing import RawObject, Repo, land, live_heads

PASS_NAME = "reviews"
BATCH = 25
_FIELDS = (
    "databaseId id author { login __typename } authorAssociation body state "
    "submittedAt createdAt updatedAt url commit { oid }"
)


def _query(numbers: list[int], after: dict[int, str] | None = None) -> str:
    after = after or {}
    fields = []
    for n in numbers:
        cursor = f', after: "{after[n]}"' if n in after else ""
        fields.append(
            f"pr{n}: pullRequest(number: {n}) {{ number reviews(first: 100{cursor}) "
            f"{{ pageInfo {{ hasNextPage endCursor }} nodes {{ {_FIELDS} }} }} }}"
        )
    body = "\n    ".join(fields)
    return (
        "query($owner: String!, $name: String!) {\n"
        "  repository(owner: $owner, name: $name) {\n"
        f"    {body}\n  }}\n}}"
    )


def prs_since(
    conn: psycopg.Connection, repo: Repo, mark: datetime | None
) -> list[tuple[int, datetime]]:
    """PRs (open ones too: their reviews are what an in-flight question reads) whose head
    was updated at or after the mark, oldest first."""
    prs = [
        (number, updated)
        for number, is_pr, updated in live_heads(conn, repo)
        if is_pr and updated is not None and (mark is None or updated >= mark)
    ]
    return sorted(prs, key=lambda pr: (pr[1], pr[0]))


def fetch_reviews(client: GitHubClient, repo: Repo, numbers: list[int]) -> list[RawObject]:
    owner, name = repo.full_name.split("/", 1)
    variables = {"owner": owner, "name": name}
    objects: list[RawObject] = []
    pending = list(numbers)
    after: dict[int, str] = {}
    while pending:
        body = client.graphql(_query(pending, after), variables)
        repository = (body.get("data") or {}).get("repository") or {}
        next_round = []
        for n in pending:
            pr = repository.get(f"pr{n}")
            if pr is None:  # NOT_FOUND: the PR is gone; a sweep will tombstone it
                continue
            reviews = pr["reviews"]
            objects += [
                RawObject("review_graphql", int(node["databaseId"]), n, node)
                for node in reviews["nodes"]
                if node.get("databaseId") is not None
            ]
            if reviews["pageInfo"]["hasNextPage"]:
                after[n] = reviews["pageInfo"]["endCursor"]
                next_round.append(n)
        pending = next_round
    return objects


@dataclass
class ReviewsResult:
    pass_name: str = PASS_NAME
    prs: int = 0
    written: int = 0
    high_water: datetime | None = None


def run_reviews(
    conn: psycopg.Connection,
    client: GitHubClient,
    repo: Repo,
    progress: Callable[[str], None] = lambda _: None,
) -> ReviewsResult:
    mark, done = checkpoints.mark_and_done(conn, repo.repo_id, PASS_NAME)
    result = ReviewsResult(high_water=mark)
    todo = [(n, t) for n, t in prs_since(conn, repo, mark) if not (t == mark and n in done)]
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        try:
            objects = fetch_reviews(client, repo, [n for n, _ in batch])
        except GitHubError as exc:
            raise GitHubError(
                f"reviews of PRs #{batch[0][0]}..#{batch[-1][0]}: {exc.message}", url=exc.url
            ) from exc
        mark = max(updated for _, updated in batch)
        with conn.transaction(), conn.cursor() as cur:
            result.written += land(cur, repo, PASS_NAME, objects)
            checkpoints.advance_threads(
                cur, repo.repo_id, PASS_NAME, mark, [n for n, t in batch if t == mark]
            )
        result.prs += len(batch)
        result.high_water = mark
        progress(f"reviews: {result.prs}/{len(todo)} PRs, {result.written} written")
    return result
