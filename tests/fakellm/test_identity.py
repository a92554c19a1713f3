"""Machine identity in recorded traffic: real paths, home, user and secrets <-> tokens."""

from __future__ import annotations

from typing import Any

import pytest

from parity.fakellm.identity import REDACTED, USER, Identity, leaks, map_strings

RECORDER = Identity(
    # tmp first on purpose: the longest path must win whatever the mapping's order.
    paths={"tmp": "/tmp/parity-abc", "workdir": "/tmp/parity-abc/workdir"},
    user_home="/home/alice",
    user="alice",
    secrets=("sk-live-123456",),
)


# -- paths --------------------------------------------------------------------------------


def test_longest_path_first_workdir_below_tmp() -> None:
    text = "read /tmp/parity-abc/workdir/notes.md, scratch in /tmp/parity-abc/x"
    assert RECORDER.scrub(text) == "read <workdir>/notes.md, scratch in <tmp>/x"


def test_path_alone_and_at_end_of_sentence() -> None:
    assert RECORDER.scrub("/tmp/parity-abc/workdir") == "<workdir>"
    assert RECORDER.scrub("cd /tmp/parity-abc/workdir.") == "cd <workdir>."
    assert RECORDER.scrub('"/tmp/parity-abc/workdir"') == '"<workdir>"'


def test_sibling_path_is_not_taken_for_a_prefix() -> None:
    one = Identity(paths={"run": "/tmp/run-1"})
    assert one.scrub("/tmp/run-10/a") == "/tmp/run-10/a"
    assert one.scrub("/tmp/run-1x") == "/tmp/run-1x"
    assert one.scrub("/tmp/run-1/a and /tmp/run-10/b") == "<run>/a and /tmp/run-10/b"


def test_sibling_paths_both_named_keep_their_own_tokens() -> None:
    both = Identity(paths={"one": "/tmp/run-1", "ten": "/tmp/run-10"})
    assert both.scrub("/tmp/run-1/a /tmp/run-10/b") == "<one>/a <ten>/b"
    swapped = Identity(paths={"ten": "/tmp/run-10", "one": "/tmp/run-1"})
    assert swapped.scrub("/tmp/run-10 /tmp/run-1") == "<ten> <one>"


def test_trailing_slash_of_a_path_is_ignored() -> None:
    ident = Identity(paths={"workdir": "/tmp/w/"})
    assert ident.scrub("/tmp/w/a") == "<workdir>/a"
    assert ident.expand("<workdir>/a") == "/tmp/w/a"


def test_root_directory_is_never_a_path_to_scrub() -> None:
    ident = Identity(paths={"top": "/"}, user_home="/")
    assert ident.scrub("/etc/hosts and /") == "/etc/hosts and /"


# -- home ---------------------------------------------------------------------------------


def test_user_home_is_scrubbed_to_home() -> None:
    assert RECORDER.scrub("see /home/alice/.config/x") == "see <home>/.config/x"
    assert Identity(user_home="/home/alice/").scrub("/home/alice") == "<home>"


def test_user_home_is_never_expanded_to() -> None:
    ident = Identity(user_home="/home/alice")
    assert ident.expand("<home>/x") == "<home>/x"
    # only the run's own home (a named path) is put back
    run = Identity(paths={"home": "/tmp/r/home"}, user_home="/home/alice")
    assert run.expand("<home>/x") == "/tmp/r/home/x"


def test_run_home_and_user_home_both_scrub_to_home() -> None:
    run = Identity(paths={"home": "/tmp/r/home"}, user_home="/home/alice")
    assert run.scrub("/tmp/r/home/a /home/alice/b") == "<home>/a <home>/b"


# -- user name ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("alice", USER),
        ("by alice, today", f"by {USER}, today"),
        ("alice.", f"{USER}."),
        ("/Users/alice/x", f"/Users/{USER}/x"),
        ("user=alice", f"user={USER}"),
        ("malice", "malice"),
        ("alice2", "alice2"),
        ("alice_b", "alice_b"),
        ("alice-b", "alice-b"),
        ("b-alice", "b-alice"),
        ("bob.alice", "bob.alice"),
    ],
)
def test_user_name_is_scrubbed_as_a_whole_word_only(text: str, want: str) -> None:
    assert Identity(user="alice").scrub(text) == want


def test_user_name_is_expanded() -> None:
    assert Identity(user="bob").expand(f"hi {USER}") == "hi bob"
    assert Identity().expand(f"hi {USER}") == f"hi {USER}"


@pytest.mark.parametrize("user", ["root", "me", "ci", "x"])
def test_anonymous_and_short_user_names_are_left_alone(user: str) -> None:
    text = f"the root directory, me and ci: {user}"
    assert Identity(user=user).scrub(text) == text


def test_three_letter_user_name_is_scrubbed() -> None:
    assert Identity(user="bob").scrub("bob ran it") == f"{USER} ran it"


# -- secrets ------------------------------------------------------------------------------


def test_secret_is_redacted_everywhere() -> None:
    text = "key sk-live-123456 and again Bearer sk-live-123456"
    assert RECORDER.redact(text) == f"key {REDACTED} and again Bearer {REDACTED}"
    assert RECORDER.scrub(text) == f"key {REDACTED} and again Bearer {REDACTED}"


def test_secret_inside_a_path_is_redacted_before_paths() -> None:
    ident = Identity(paths={"workdir": "/tmp/w"}, secrets=("s3cr3t-value",))
    assert ident.scrub("/tmp/w/s3cr3t-value.txt") == f"<workdir>/{REDACTED}.txt"


def test_redacted_is_never_expanded_back() -> None:
    assert RECORDER.expand(f"key {REDACTED}") == f"key {REDACTED}"
    assert RECORDER.expand(RECORDER.scrub("sk-live-123456")) == REDACTED


def test_empty_secret_is_ignored() -> None:
    ident = Identity(secrets=("", "sk-1"))
    assert ident.redact("ab sk-1") == f"ab {REDACTED}"


# -- round trip ---------------------------------------------------------------------------


def test_expand_of_scrub_puts_the_new_runs_paths() -> None:
    text = "read /tmp/parity-abc/workdir/notes.md as alice; tmp at /tmp/parity-abc/t"
    recorded = RECORDER.scrub(text)
    assert recorded == f"read <workdir>/notes.md as {USER}; tmp at <tmp>/t"
    replay = Identity(paths={"tmp": "/var/t/p-9", "workdir": "/var/t/p-9/wd"}, user="bob")
    assert replay.expand(recorded) == "read /var/t/p-9/wd/notes.md as bob; tmp at /var/t/p-9/t"


def test_expand_of_scrub_is_the_identity_for_the_same_run() -> None:
    ident = Identity(paths={"tmp": "/tmp/p", "workdir": "/tmp/p/w"}, user="carol")
    text = "carol: /tmp/p/w/a, /tmp/p/b, /tmp/p-2/c"
    assert ident.scrub(text) != text
    assert ident.expand(ident.scrub(text)) == text


def test_expand_leaves_unknown_tokens_and_plain_text() -> None:
    ident = Identity(paths={"workdir": "/tmp/w"})
    assert ident.expand("a <other> b <time>") == "a <other> b <time>"
    assert ident.expand("no tokens") == "no tokens"


# -- values -------------------------------------------------------------------------------


def test_scrub_value_and_expand_value_walk_json_data() -> None:
    ident = Identity(paths={"workdir": "/tmp/w"})
    value: Any = {
        "/tmp/w/key": ["/tmp/w/a", ("/tmp/w/b", 3)],
        "n": 1.5,
        "ok": True,
        "none": None,
        "nested": {"path": "/tmp/w"},
    }
    scrubbed = ident.scrub_value(value)
    assert scrubbed == {
        "/tmp/w/key": ["<workdir>/a", ["<workdir>/b", 3]],
        "n": 1.5,
        "ok": True,
        "none": None,
        "nested": {"path": "<workdir>"},
    }
    assert value["nested"] == {"path": "/tmp/w"}  # not touched
    assert ident.expand_value(scrubbed) == {
        "/tmp/w/key": ["/tmp/w/a", ["/tmp/w/b", 3]],
        "n": 1.5,
        "ok": True,
        "none": None,
        "nested": {"path": "/tmp/w"},
    }


def test_map_strings_copies_and_keeps_keys() -> None:
    value = {"a": ["x", {"b": "y"}], "c": 2}
    out = map_strings(value, str.upper)
    assert out == {"a": ["X", {"b": "Y"}], "c": 2}
    assert value == {"a": ["x", {"b": "y"}], "c": 2}
    assert map_strings("s", str.upper) == "S"
    assert map_strings(7, str.upper) == 7


# -- leaks --------------------------------------------------------------------------------


def test_leaks_names_the_lines_with_a_secret() -> None:
    text = "clean\nkey: sk-1\nclean\n  also sk-1 here\nsk-2\n"
    assert leaks(text, ["sk-1"]) == [2, 4]
    assert leaks(text, ["sk-1", "sk-2"]) == [2, 4, 5]


def test_leaks_ignores_empty_secrets() -> None:
    assert leaks("a\nb\n", ["", "zzz"]) == []
    assert leaks("a\nb\n", []) == []


def test_a_user_named_like_a_token_leaves_the_tokens_alone() -> None:
    """A user `tmp` must not turn the `<tmp>` a path became into `<<user>>`."""
    me = Identity(paths={"tmp": "/srv/tmp-run"}, user="tmp")
    assert me.scrub("/srv/tmp-run/x, by tmp") == "<tmp>/x, by <user>"
