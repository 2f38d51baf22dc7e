"""Who may call the API: token parsing, scope checks, and the loopback-only default."""

from __future__ import annotations

import pytest

from relore.serve import auth

TOKEN = "t0ken-with-enough-length"


def test_tokens_parse_with_scopes_and_default_to_read():
    tokens = auth.parse_tokens(f"{TOKEN}:read,label; other-token-0123456789\n")
    assert tokens == {
        TOKEN: frozenset({"read", "label"}),
        "other-token-0123456789": frozenset({"read"}),
    }


@pytest.mark.parametrize(
    ("value", "needle"),
    [("short:read", "at least 16"), (f"{TOKEN}:write", "unknown scopes")],
)
def test_bad_token_configuration_is_refused_with_the_reason(value, needle):
    with pytest.raises(auth.TokenConfigError, match=needle):
        auth.parse_tokens(value)


def test_only_the_exact_bearer_token_grants_its_scopes():
    tokens = auth.parse_tokens(f"{TOKEN}:read")
    assert auth.scopes_for(tokens, f"Bearer {TOKEN}") == frozenset({"read"})
    assert auth.scopes_for(tokens, f"Bearer {TOKEN}x") is None
    assert auth.scopes_for(tokens, TOKEN) is None
    assert auth.scopes_for(tokens, None) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::"])
def test_serving_a_network_without_tokens_is_refused_unless_trusted(host):
    with pytest.raises(auth.TokenConfigError, match="--trust-network"):
        auth.check_bind(host, {}, trust_network=False)
    auth.check_bind(host, {}, trust_network=True)
    auth.check_bind(host, auth.parse_tokens(TOKEN), trust_network=False)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_loopback_needs_no_tokens(host):
    auth.check_bind(host, {}, trust_network=False)
