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


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8080", "127.0.0.1"),
        ("LOCALHOST", "localhost"),
        ("[::1]:8080", "::1"),
        ("[::1]", "::1"),
        ("evil.example:80", "evil.example"),
        ("127.0.0.1.evil.example", "127.0.0.1.evil.example"),
    ],
)
def test_host_header_names_drop_the_port_and_brackets(header, name):
    assert auth.host_name(header) == name


def test_allowed_hosts_are_the_configured_names_and_a_specific_bind_address():
    assert auth.allowed_hosts("0.0.0.0", "relore.lan, Other.Example") == (
        "relore.lan",
        "other.example",
    )
    assert auth.allowed_hosts("192.168.1.5", None) == ("192.168.1.5",)
    assert auth.allowed_hosts("::", "") == ()


def test_a_label_only_token_is_scoped_to_the_label_route():
    assert auth.scope_for_path("/api/v1/label") == "label"
    assert auth.scope_for_path("/api/v1/search") == "read"
