"""The API against its own contract: a bounded schemathesis run over ``/api/v1/openapi.json``,
in-process against the ASGI app, over the shared indexed world (tests/fixtures/world.py).

Every operation gets generated requests, valid and invalid (derandomized, so a failure
replays); none may answer a 5xx the document does not promise, and every answer must conform
to the document (status code, content type, body schema, headers). Bounded by
``max_examples`` per operation, not by a clock.

The schema is loaded eagerly from ``openapi.document()`` (the test below checks that is what
the app serves) and each case is sent to the app in-process: schemathesis' lazy
``pytest.from_fixture`` loader reads ``Item._nodeid``, which pytest 9.2 no longer has.
"""

from __future__ import annotations

import pytest
import schemathesis
from fixtures import corpus
from fixtures import world as worlds
from hypothesis import HealthCheck, Phase, settings
from schemathesis import checks
from schemathesis.python import asgi

from relore.contract import wire
from relore.contract.version import __version__
from relore.serve import openapi
from relore.serve.app import Settings, create_app

REPO = "acme/contract"

schema = schemathesis.openapi.from_dict(openapi.document())


def no_server_error(ctx, response, case):
    """No 5xx, except the operational 503s the document promises (the index not built, a
    query cancelled, no working clone). A 503 from the catch-all database handler is never
    one of those: against a database that is up, it is an unhandled error (a NUL, a bad
    cast) that should have been a 400."""
    if response.status_code < 500:
        return None
    try:
        said = str(response.json().get("error", ""))
    except (ValueError, AttributeError):
        said = ""
    if response.status_code == 503 and said and not said.startswith("database error"):
        return None
    raise AssertionError(f"{response.status_code} from {case.path}: {response.text[:300]}")


# Every answer as the document says (status, content type, body, headers). The two
# request-side checks stay off: the service refuses requests the schema cannot describe (a
# search needs a word or a signal; mode=comment needs comment=ID) with a clear 400, and reads
# an empty optional parameter as absent, as an HTML form sends it.
CHECKS = [
    no_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]


WORLD_PART = worlds.Part(REPO, corpus=lambda: corpus.generate(seed=5, threads=20, repo=REPO))


@pytest.fixture(scope="module")
def app(indexed_world, tmp_path_factory):
    reader = indexed_world.reader
    labels = tmp_path_factory.mktemp("labels") / "labels.jsonl"
    # schemathesis addresses the app as `testserver`: a name this daemon is told to answer to
    yield create_app(Settings(reader, labels_path=str(labels), allowed_hosts=("testserver",)))
    asgi.shutdown_lifespans()  # close the app's pool before the session's Postgres stops


def test_the_document_under_test_is_the_one_the_app_serves(app):
    served = schemathesis.openapi.from_asgi(
        f"{wire.API_PREFIX}/openapi.json", app, headers={wire.CLIENT_HEADER: __version__}
    )
    assert served.raw_schema == openapi.document()


@schema.parametrize()
@settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_5xx_or_outside_its_schema(case, app):
    case.call_and_validate(app=app, headers={wire.CLIENT_HEADER: __version__}, checks=CHECKS)


@pytest.mark.parametrize(
    "target",
    [
        "search?q=error&since=2024-13-45",
        "search?q=error&since=%D9%A2%D9%A0%D9%A2%D9%A4-%D9%A0%D9%A1-%D9%A0%D9%A1",  # Arabic digits
        "search?q=error&author=nul%00author",
        "search?q=error&repo=nul%00/repo",
        "search?q=error&file=%FF%FE%ED%B3%BF",  # invalid UTF-8, a surrogate's bytes
        "status?repo=nul%00/repo",
        f"thread?repo={REPO}&number={'9' * 30}",
        f"thread?repo={REPO}&number=1&after=nul%00",
        f"thread?repo={REPO}&number=1&mode=comment&comment=nul%00",
        f"inflight?repo={REPO}&number=-1",
        "rules?repo=acme/contract&file=a%00b",
    ],
)
def test_inputs_the_generator_rarely_reaches_are_a_4xx_or_an_answer_never_a_5xx(app, target):
    with asgi.get_client(app) as client:
        response = client.get(
            f"{wire.API_PREFIX}/{target}", headers={wire.CLIENT_HEADER: __version__}
        )
    assert response.status_code < 500, response.text
