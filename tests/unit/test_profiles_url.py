"""profiles.yml reads RELORE_DATABASE_URL with regular expressions: each field must come out
right for every URL relore prints, passwords of any shape included."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
import yaml

PROFILE = Path(__file__).resolve().parents[2] / "profiles.yml"


def _fields(url: str) -> dict[str, str]:
    output = yaml.safe_load(PROFILE.read_text())["relore"]["outputs"]["default"]
    environ = {"RELORE_DATABASE_URL": url, "PWD": "/repo"}
    env = jinja2.Environment()
    context = {
        "env_var": lambda name, default=None: environ.get(name, default),
        "modules": SimpleNamespace(re=re),
    }
    names = ("host", "port", "user", "password", "dbname")
    return {n: env.from_string(str(output[n])).render(**context) for n in names}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # a generated password that starts with digits once read as the port (".s.PGSQL.8")
        (
            "postgresql://relore_writer:8abc-_Z9@/relore?host=/tmp/h/run",
            {"host": "/tmp/h/run", "port": "5432", "user": "relore_writer"},
        ),
        (
            "postgresql://relore_writer:12345@/relore?host=/tmp/h/run",
            {"host": "/tmp/h/run", "port": "5432", "password": "12345"},
        ),
        (
            "postgresql://me:99pw@db.example:6543/warehouse",
            {"host": "db.example", "port": "6543", "dbname": "warehouse", "password": "99pw"},
        ),
        ("postgresql://me@db.example/relore", {"host": "db.example", "port": "5432"}),
    ],
)
def test_a_password_that_starts_with_digits_is_never_read_as_the_port(url, expected):
    fields = _fields(url)
    assert {k: fields[k] for k in expected} == expected
