"""The library's entry points refuse bad input early and clearly, never late, raw or as a silent cast.

evaluate.py checks --json before the run and survives Ctrl-C; Rules rejects unknown keywords like from_dict and
stores plain Python values; from_strings refuses repeated keys, non-ASCII digits and a bare string; Game refuses
odd decks, event logs, players, seeds and dealers; the meld solver refuses hands of more than 11 cards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.evaluation.evaluate import main
from hollywood_gin_env.rules import melds
from hollywood_gin_env.rules.options import Rules
from tests.subprocess_signals import default_sigint

ROOT = Path(__file__).resolve().parents[1]


# --- evaluate.py --json and Ctrl-C ----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["missing_folder", "directory"])
def test_json_path_is_checked_before_the_run(tmp_path, monkeypatch, capsys, where):
    """A --json path that cannot be written stops the CLI at once, before any match is played."""
    import hollywood_gin_env.evaluation.evaluate as evaluate

    played = []
    monkeypatch.setattr(evaluate, "round_robin", lambda *a, **k: played.append(1))
    path = tmp_path / "no_such_folder" / "report.json" if where == "missing_folder" else tmp_path
    with pytest.raises(SystemExit) as info:
        main(["--agents", "greedy", "random", "--matches", "4", "--no-progress", "--json", str(path)])
    assert info.value.code == 2 and played == []
    error = capsys.readouterr().err
    assert str(path) in error
    assert ("does not exist" if where == "missing_folder" else "is a directory") in error


def test_a_writable_json_path_is_written(tmp_path):
    """The early check leaves nothing behind, and the report is still written at the end."""
    path = tmp_path / "report.json"
    assert main(["--agents", "greedy", "random", "--matches", "2", "--no-progress", "--json", str(path)]) == 0
    assert json.loads(path.read_text())["matches_per_pair"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_ctrl_c_prints_finished_pairs_and_exits_130(tmp_path):
    """A real SIGINT during the second pair: the first pair's line is printed, exit status 130, no traceback."""
    script = textwrap.dedent(
        f"""
        import os, runpy, signal, sys, time
        import hollywood_gin_env.evaluation.evaluate as evaluate

        real_play_job, calls = evaluate.play_job, []

        def play_job(*args, **kwargs):  # one chunk: each pair of 2 matches is one
            calls.append(1)
            if len(calls) == 2:  # the user presses Ctrl-C while the second pair runs
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(30)
            return real_play_job(*args, **kwargs)

        evaluate.play_job = play_job
        sys.argv = ["evaluate.py", "--agents", "greedy", "random", "expert", "--matches", "2", "--no-progress",
                    "--json", {str(tmp_path / "r.json")!r}]
        runpy.run_path({str(ROOT / "evaluate.py")!r}, run_name="__main__")
        """
    )
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300, preexec_fn=default_sigint
    )
    assert out.returncode == 130, out.stderr
    assert time.perf_counter() - start < 30 + 240  # the sleep was interrupted, not waited out
    assert "Traceback" not in out.stderr
    assert "greedy vs random" in out.stdout and "greedy vs expert" not in out.stdout
    assert "interrupted: 1 of 3 pairs finished" in out.stderr
    assert not (tmp_path / "r.json").exists()


# --- Rules --------------------------------------------------------------------------------------------------------


def test_unknown_keyword_raises_the_from_dict_value_error():
    """Rules(foo=1) is a ValueError naming foo and listing the keys, exactly as Rules.from_dict({"foo": 1})."""
    with pytest.raises(ValueError) as direct:
        Rules(foo=1)
    with pytest.raises(ValueError) as from_dict:
        Rules.from_dict({"foo": 1})
    assert str(direct.value) == str(from_dict.value)
    assert "foo=1" in str(direct.value) and "knock_limit" in str(direct.value)
    with pytest.raises(ValueError, match="knock_limt=3"):
        Rules().replace(knock_limt=3)


def test_rules_store_plain_python_values():
    """numpy scalars are accepted but stored as int / bool / str, so to_dict() is plain JSON-ready data."""
    rules = Rules(
        knock_limit=np.int64(5),
        undercut_on_tie=np.bool_(False),
        num_games=np.int32(1),
        dealer_rule=np.str_("alternate"),
        game_bonus=np.uint8(7),
    )
    values = rules.to_dict()
    assert type(values["knock_limit"]) is int and type(values["game_bonus"]) is int
    assert type(values["num_games"]) is int and values["undercut_on_tie"] is False
    assert type(values["dealer_rule"]) is str
    assert rules == Rules(knock_limit=5, undercut_on_tie=False, num_games=1, dealer_rule="alternate", game_bonus=7)
    json.dumps(values)  # numpy scalars would raise TypeError here


@pytest.mark.parametrize(
    ("pairs", "fragments"),
    [
        (["knock_limit=0", "knock_limit=5"], ["'knock_limit'", "twice"]),
        (["gin_bonus=20", " gin_bonus = 20"], ["'gin_bonus'", "twice"]),
        (["knock_limit=٣"], ["knock_limit='٣'", "0..90"]),  # an Arabic-Indic three
        (["knock_limit=５"], ["knock_limit='５'", "0..90"]),  # a full-width five
        ("knock_limit=0", ["'knock_limit=0'", "list of 'key=value' strings"]),
        ([5], ["5", "'key=value' string"]),
    ],
)
def test_from_strings_refuses_repeats_foreign_digits_and_bare_strings(pairs, fragments):
    """Each refusal names the offending text and what is expected."""
    with pytest.raises(ValueError) as info:
        Rules.from_strings(pairs)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_rule_value_of_thousands_of_digits_is_refused_naming_its_key():
    """A 5,000-digit value (past the 4,300 digits int() reads) is refused in a line naming the rule key and the
    number of digits, like any other value out of range."""
    with pytest.raises(ValueError) as info:
        Rules.from_strings(["gin_bonus=20", "knock_limit=" + "9" * 5000])
    message = str(info.value)
    assert message.startswith("rule knock_limit=999") and "5,000 digits" in message and len(message) < 300, message


def test_from_strings_parses_signed_ascii_integers():
    assert Rules.from_strings(["knock_limit=+7", "gin_bonus=020"]) == Rules(knock_limit=7, gin_bonus=20)


# --- Game ---------------------------------------------------------------------------------------------------------


@pytest.mark.nojit
@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        ({"deck": 42}, ["42", "card string", "card ids"]),
        ({"deck": 4.5}, ["4.5", "card ids"]),
        ({"seed": 1.5}, ["seed=1.5", "integer"]),
        ({"seed": True}, ["seed=True", "integer"]),
        ({"seed": "7"}, ["seed='7'", "integer"]),
        ({"first_dealer": True}, ["first_dealer=True", "0, 1 or None"]),
        ({"first_dealer": 1.0}, ["first_dealer=1.0", "0, 1 or None"]),
        ({"first_dealer": np.bool_(False)}, ["first_dealer=", "0, 1 or None"]),
    ],
)
def test_game_constructor_refuses_odd_arguments(kwargs, fragments):
    with pytest.raises(ValueError) as info:
        Game(**kwargs)
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.nojit
def test_game_accepts_numpy_integers_and_logs_plain_ints():
    game = Game(seed=np.int64(5), first_dealer=np.int64(1))
    assert game.dealer == 1 and type(game.events[0]["seed"]) is int and type(game.events[0]["first_dealer"]) is int
    assert Game(seed=5, first_dealer=1).events == game.events


@pytest.mark.nojit
@pytest.mark.parametrize("events", [[], "start", {"type": "start"}, [{"type": "deal"}], [{"type": "start"}], [7]])
def test_replay_refuses_what_is_not_an_event_log(events):
    with pytest.raises(ValueError, match="start"):
        Game.replay(events)


@pytest.mark.nojit
@pytest.mark.parametrize("player", [True, False, 0.0, 1.0, 2, -1, "0", None])
def test_hand_and_observation_refuse_anything_but_0_or_1(player):
    game = Game(seed=3)
    before = (game.events[:], game.hand(0), game.hand(1))
    with pytest.raises(ValueError, match=r"player=.*0 or 1"):
        game.hand(player)
    with pytest.raises(ValueError, match=r"player=.*0 or 1"):
        game.observation(player)
    assert (game.events, game.hand(0), game.hand(1)) == before
    assert game.hand(np.int64(1)) == game.hand(1)


# --- the meld solver ----------------------------------------------------------------------------------------------


@pytest.mark.nojit
@pytest.mark.parametrize("size", [12, 20, 52])
def test_solver_refuses_more_than_eleven_cards_at_once(size):
    """More than 11 cards is an immediate ValueError naming the limit and the count (52 would run for minutes)."""
    hand = list(range(size))
    for solve in (melds.min_deadwood, melds.arrange):
        start = time.perf_counter()
        with pytest.raises(ValueError, match=f"at most 11 cards, got {size}"):
            solve(hand)
        assert time.perf_counter() - start < 1.0


@pytest.mark.nojit
def test_the_solver_takes_eleven_cards():
    assert melds.min_deadwood("4S AC 2C 3C 4C 5C 3D 4D 2H 3H 4H") == 8
    assert melds.arrange("AS 2S 3S")[0] == [[0, 1, 2]]


# --- what a message echoes ----------------------------------------------------------------------------------------


def huge_value_refusal(source: str, tmp_path: Path) -> str:
    """The message refusing a huge value from `source` (a file, an argument)."""
    from hollywood_gin_env.play.session import load_match
    from hollywood_gin_env.support.streams import check_seed
    from hollywood_gin_env.support.tensorfile import read_tensors

    path = tmp_path / "file"
    with pytest.raises(ValueError) as info:
        if source == "a saved match's 16 MB human_seat":
            saved = {"format": "hollywood-gin-match", "version": 1, "human_seat": "x" * (15 << 20), "events": []}
            path.write_text(json.dumps(saved))
            load_match(str(path))
        elif source == "a tensor of 10,000 dimensions":
            header = json.dumps({"w": {"dtype": "F32", "shape": [1] * 10_000, "data_offsets": [0, 4]}}).encode()
            path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(4))
            read_tensors(path, {"w": ("float32", (2,))})
        elif source == "a seed of 2**4000":
            check_seed(2**4000)
        else:
            Rules(gin_bonus=-(2**20000))
    return str(info.value)


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("a saved match's 16 MB human_seat", "human_seat 'xxx"),
        ("a tensor of 10,000 dimensions", "10,000 dimensions"),
        ("a seed of 2**4000", "integer of about 1,205 digits"),
        ("a rule of 20,000 binary digits", "gin_bonus=<a negative integer of about 6,021 digits>"),
    ],
)
def test_an_error_message_echoes_a_huge_value_in_a_few_characters(source, named, tmp_path):
    """A message names a bad value by its first characters (a long string, a long shape) or its size (an integer of
    thousands of digits, which Python refuses to print past 4,300): a line of a few hundred characters at most."""
    message = huge_value_refusal(source, tmp_path)
    assert named in message and len(message) < 400 and "\n" not in message, message[:1000]
