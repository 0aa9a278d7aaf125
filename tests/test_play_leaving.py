"""Leaving the terminal game and what it says about whom you play: the save question is a yes/no question (n and no
are answers, not file names), a file that exists is never written over, the opening line says who deals and plays
first, a heuristic opponent is named for what it is, a replay lays out the table as play does, and an error that names
a command to run is printed on one line."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.session import Session, load_match
from tests.play_helpers import E1_DECK


def quit_with(monkeypatch, tmp_path, answers: str, *args: str) -> None:
    """`play` in tmp_path against greedy: quit at the first prompt, then type `answers` (one per line)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"quit\n{answers}"))
    assert play.main(["--opponent", "greedy", "--seed", "1", "--no-color", *args]) == 0


@pytest.mark.parametrize("answer", ["n", "no", "N", "No", ""])
def test_the_save_question_takes_n_and_no_as_answers_not_as_file_names(monkeypatch, tmp_path, capsys, answer):
    """Answering the save question with n, no (any case) or Enter leaves without writing any file."""
    quit_with(monkeypatch, tmp_path, f"{answer}\n")
    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr().out.rstrip().endswith("Bye.")


def test_yes_asks_for_a_file_and_saves_the_match_there(monkeypatch, tmp_path, capsys):
    """y, then a new file name: the match is saved there and the resume command is printed, the name quoted."""
    quit_with(monkeypatch, tmp_path, "yes\nmy match.json\n")
    assert load_match(str(tmp_path / "my match.json"))[0].seed == 1
    assert "--resume 'my match.json'" in capsys.readouterr().out


def test_an_answer_that_is_not_yes_or_no_is_asked_again(monkeypatch, tmp_path, capsys):
    """A word that is neither yes nor no gets the question again, naming what was typed; nothing is written."""
    quit_with(monkeypatch, tmp_path, "maybe\nn\n")
    out = capsys.readouterr().out
    assert "Answer y (yes) or n (no), not 'maybe'." in out and out.count("Save the match to a file") == 2
    assert list(tmp_path.iterdir()) == []


def test_leaving_never_writes_over_an_existing_file(monkeypatch, tmp_path, capsys):
    """A file name that exists is refused with a message and another name is asked for: the existing file keeps
    its bytes and the match goes to the new name."""
    old = tmp_path / "old.json"
    old.write_text("an earlier match")
    quit_with(monkeypatch, tmp_path, "y\nold.json\nnew.json\n")
    assert old.read_text() == "an earlier match"
    assert "old.json already exists" in capsys.readouterr().out
    assert load_match(str(tmp_path / "new.json"))[0].seed == 1


def test_an_existing_name_then_enter_leaves_without_saving(monkeypatch, tmp_path):
    """After the refusal, Enter leaves without saving and the existing file is untouched."""
    old = tmp_path / "old.json"
    old.write_text("an earlier match")
    quit_with(monkeypatch, tmp_path, "y\nold.json\n\n")
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"] and old.read_text() == "an earlier match"


@pytest.mark.parametrize("seat", [0, 1])
def test_the_opening_line_says_who_deals_and_who_plays_first_not_a_seat_number(seat):
    """The greeting names the dealer and who plays first in words; no seat number."""
    game = Game(seed=0, deck=E1_DECK)
    line = play.opening_line(Session(game, seat, "greedy"))
    expected = "you deal the first hand, so Greedy plays first" if game.dealer == seat else "you play first"
    assert expected in line and "seat" not in line, line


@pytest.mark.parametrize("spec, name", [("expert", "Expert"), ("greedy", "Greedy"), ("random", "Random")])
def test_a_heuristic_opponent_is_named_for_what_it_is(spec, name):
    """The table, the sheet and the narration call a heuristic by its name, not "Bot"."""
    session = Session(Game(seed=0), 1, spec)
    assert session.names == (name, "You") and session.opponent_name == name


def test_without_torch_the_fallback_opponent_is_called_expert(monkeypatch, capsys):
    """Where torch is missing, play falls back to the expert heuristic, says so with the install command, and the
    table names it Expert."""
    monkeypatch.setattr(play.importlib.util, "find_spec", lambda name: None)
    spec = play.default_opponent()
    assert spec == "expert" and 'python -m pip install "hollywood-gin[torch]"' in capsys.readouterr().err
    assert Session(Game(seed=0), 0, spec).names == ("You", "Expert")


def test_replay_lists_your_score_column_first_as_play_does(monkeypatch, tmp_path, capsys):
    """From seat 1, play's sheet reads "You ... Greedy"; the replay of that match reads the same, not seat order."""
    path = tmp_path / "m.json"
    game = Game(seed=2)
    play.save_match(str(path), game, 1, "greedy")
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert play.main(["--replay", str(path), "--no-color"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("G1:")]
    assert rows and all(re.match(r"G1: You\s+0 \(0\)   Greedy", row) for row in rows), rows
    assert json.loads(path.read_text())["human_seat"] == 1


def test_the_web_extras_message_stays_on_one_line_in_a_narrow_terminal(monkeypatch, capsys):
    """Without the [web] extra, `play --web` says what to install in one line, even 40 columns wide (the terminal
    wraps it; the command in it is never broken by the program)."""
    monkeypatch.setitem(sys.modules, "hollywood_gin_env.play.web.server", None)
    monkeypatch.setenv("COLUMNS", "40")
    assert play.main(["--web", "--no-browser", "--opponent", "greedy", "--no-color"]) == 2
    lines = [line for line in capsys.readouterr().out.splitlines() if "--web needs the [web] extra" in line]
    assert len(lines) == 1 and lines[0].endswith('python -m pip install "hollywood-gin[web]"'), lines
