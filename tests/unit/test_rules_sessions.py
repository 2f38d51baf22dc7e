"""Session state for rules (expiry, bound, refresh) and the served-events log."""

from __future__ import annotations

import json

from relore.contract.rules.choose import Served
from relore.serve.rules import sessions


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def served(*ids, refresh=False):
    return Served(sent=ids, listed=(), notes=(), refresh=refresh)


def test_a_session_remembers_what_it_was_sent_per_repository():
    store = sessions.SessionStore()
    store.record("s1", "o/a", served("r1"))
    assert store.view("s1", "o/a").sent == {"r1"}
    assert store.view("s1", "o/b").sent == set()
    assert store.view("s2", "o/a").sent == set()


def test_a_session_unused_past_its_expiry_is_forgotten():
    clock = Clock()
    store = sessions.SessionStore(ttl=60, clock=clock)
    store.record("s", "o/a", served("r1"))
    clock.now = 59
    assert store.view("s", "o/a").sent == {"r1"}
    store.record("s", "o/a", served("r2"))  # use renews it
    clock.now = 59 + 61
    assert store.view("s", "o/a").sent == set()
    assert len(store) == 0


def test_the_least_recently_used_session_goes_first_past_the_bound():
    store = sessions.SessionStore(max_sessions=2)
    store.record("a", "o/n", served("r"))
    store.record("b", "o/n", served("r"))
    store.record("a", "o/n", served("r2"))
    store.record("c", "o/n", served("r"))
    assert len(store) == 2
    assert store.view("b", "o/n").sent == set()
    assert store.view("a", "o/n").sent == {"r", "r2"}


def test_refresh_starts_the_session_over_with_what_it_just_sent():
    store = sessions.SessionStore()
    store.record("s", "o/n", served("r1", "r2"))
    store.record("s", "o/n", served("r3", refresh=True))
    assert store.view("s", "o/n").sent == {"r3"}


def test_no_session_id_remembers_nothing():
    store = sessions.SessionStore()
    store.record(None, "o/n", served("r1"))
    assert len(store) == 0
    assert store.view(None, "o/n").sent == set()


def test_a_view_is_a_copy_the_caller_cannot_change_the_store_through():
    store = sessions.SessionStore()
    store.record("s", "o/n", served("r1"))
    store.view("s", "o/n").sent.add("forged")
    assert store.view("s", "o/n").sent == {"r1"}


def _reply(*ids):
    return {
        "rules": [{"id": i} for i in ids],
        "eligible": 5,
        "tokens": 40,
        "mode": "ranked",
        "refresh": False,
    }


def test_the_log_gets_one_line_per_reply_that_sent_rules_and_never_the_session_id(tmp_path):
    path = tmp_path / "home" / "rules-served.jsonl"
    sessions.append_event(path, "o/n", "my-secret-session", _reply("r1", "r2"))
    sessions.append_event(path, "o/n", "my-secret-session", _reply())
    events = sessions.read_events(path)
    assert len(events) == 1
    assert events[0]["sent"] == ["r1", "r2"]
    assert "my-secret-session" not in path.read_text()
    assert events[0]["session"] == sessions.session_digest("my-secret-session")


def test_a_torn_last_line_does_not_lose_the_rest(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"repo": "o/n", "sent": ["a"]}) + '\n{"repo": "o/')
    assert len(sessions.read_events(path)) == 1


def test_the_log_path_follows_the_environment(tmp_path):
    assert sessions.log_path({"RELORE_RULES_LOG": "/x/y.jsonl"}).as_posix() == "/x/y.jsonl"
    home = sessions.log_path({"RELORE_HOME": str(tmp_path)})
    assert home == tmp_path / "rules-served.jsonl"
