"""Session state for rules, as the signed token carries it (tamper, expiry, binding, cap,
the key), and the served-events log."""

from __future__ import annotations

import json

import pytest

from relore.contract.limits import MAX_SESSION_TOKEN_CHARS
from relore.contract.rules.choose import Served
from relore.serve.rules import sessions

KEY = b"k" * 32
NOW = 1_800_000_000.0


def served(*ids, listed=(), notes=(), refresh=False):
    return Served(sent=ids, listed=listed, notes=notes, refresh=refresh)


def token_for(state, *, key=KEY, repo="o/a", session="s1", now=NOW, ttl=3600):
    return sessions.issue(key, repo, session, state, now, ttl=ttl)[0]


def test_a_token_carries_what_was_sent_listed_and_noted_back_to_the_daemon():
    state = sessions.State().after(served("R1", "r2", listed=("r3",), notes=("untagged",)))
    back = sessions.decode(KEY, "o/a", "s1", token_for(state), NOW + 10)
    assert back == state
    view = back.view(["r1", "R2", "r3", "r4"])  # ids compare case-insensitively, as loaded
    assert (view.sent, view.listed, view.notes) == ({"r1", "R2"}, {"r3"}, {"untagged"})


def test_a_listed_rule_sent_later_leaves_the_listed_set_and_is_kept_once():
    state = sessions.State().after(served("r1", listed=("r2",)))
    state = state.after(served("r2", "r1", listed=("r3",)))
    assert state.sent == (sessions.rule_key("r1"), sessions.rule_key("r2"))
    assert state.listed == (sessions.rule_key("r3"),)


def test_refresh_starts_the_session_over_with_what_it_just_sent():
    state = sessions.State().after(served("r1", "r2", notes=("hidden",)))
    state = state.after(served("r2", refresh=True))
    assert state.sent == (sessions.rule_key("r2"),) and state.notes == ()


def test_a_tampered_token_is_refused_not_read():
    token = token_for(sessions.State().after(served("r1")))
    flipped = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    assert sessions.decode(KEY, "o/a", "s1", flipped, NOW) == "foreign"
    for garbage in ("", "x", "not base64!", token + "=", token[:-3], "A" * 40):
        assert sessions.decode(KEY, "o/a", "s1", garbage, NOW) in ("unreadable", "foreign")


def test_a_token_answers_only_for_its_key_repository_and_session():
    token = token_for(sessions.State().after(served("r1")))
    assert sessions.decode(b"other" * 8, "o/a", "s1", token, NOW) == "foreign"
    assert sessions.decode(KEY, "o/b", "s1", token, NOW) == "foreign"
    assert sessions.decode(KEY, "o/a", "s2", token, NOW) == "foreign"


def test_a_token_unused_past_its_lifetime_is_expired():
    token = token_for(sessions.State().after(served("r1")), ttl=60)
    assert isinstance(sessions.decode(KEY, "o/a", "s1", token, NOW + 59), sessions.State)
    assert sessions.decode(KEY, "o/a", "s1", token, NOW + 61) == "expired"


def test_a_full_token_forgets_listed_titles_then_the_oldest_rules_sent_and_counts_them():
    many = sessions.State().after(served(*(f"r{i}" for i in range(700)), listed=("t1", "t2")))
    token, forgot = sessions.issue(KEY, "o/a", "s1", many, NOW)
    assert len(token) <= MAX_SESSION_TOKEN_CHARS
    kept = sessions.decode(KEY, "o/a", "s1", token, NOW)
    assert kept.listed == () and forgot == 700 - len(kept.sent) > 0
    assert kept.sent == many.sent[forgot:]  # the newest stay
    assert sessions.issue(KEY, "o/a", "s1", kept, NOW)[1] == 0


def test_the_key_file_is_made_once_private_and_shared_by_every_process(tmp_path):
    env = {"RELORE_HOME": str(tmp_path / "home")}
    first = sessions.load_key(env)
    path = tmp_path / "home" / sessions.KEY_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    assert sessions.load_key(env) == first and len(first) >= sessions.MIN_KEY_CHARS
    assert [p.name for p in path.parent.iterdir()] == [sessions.KEY_FILE]
    path.chmod(0o644)
    with pytest.raises(sessions.SessionKeyError, match="chmod 600"):
        sessions.load_key(env)


def test_the_environment_key_wins_and_a_short_one_is_refused(tmp_path):
    env = {"RELORE_HOME": str(tmp_path), sessions.KEY_ENV: "z" * 40}
    assert sessions.load_key(env) == b"z" * 40
    assert not (tmp_path / sessions.KEY_FILE).exists()
    with pytest.raises(sessions.SessionKeyError, match="at least 32"):
        sessions.load_key({sessions.KEY_ENV: "short"})


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


def _append_many(path, n):
    for i in range(n):
        sessions.append_event(path, "o/n", f"s{i}", _reply(*(f"rule-{j}" for j in range(40))))


def test_processes_appending_to_one_log_never_tear_each_others_lines(tmp_path):
    import multiprocessing

    path = tmp_path / "rules-served.jsonl"
    workers = [
        multiprocessing.get_context("fork").Process(target=_append_many, args=(path, 150))
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    lines = path.read_text().splitlines()
    assert len(lines) == 450 and all(len(json.loads(line)["sent"]) == 40 for line in lines)
