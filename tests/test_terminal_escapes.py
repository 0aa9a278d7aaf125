"""A name, a path or a saved field never sends control characters to the terminal: `play` and `evaluate` print
them escaped (`\\x1b`), so a file named with an escape sequence cannot retitle or clear the player's terminal."""

from __future__ import annotations

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.evaluation import evaluate
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.session import load_match
from hollywood_gin_env.support.messages import escape_controls, printable_message

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"  # retitle the terminal, then clear it


def assert_escaped(text: str) -> None:
    """No control character but line breaks in `text`, and the hostile sequence shown escaped."""
    assert not any(ch in text for ch in "\x1b\x07"), repr(text)
    assert r"\x1b]0;PWNED\x07\x1b[2J" in text, text


def test_escape_controls_writes_each_control_character_as_an_escape():
    """Controls, a bidi override and a lone surrogate (an undecodable file name) become escapes; printable text,
    including non-ASCII letters and suit symbols, stays."""
    assert escape_controls(f"a{HOSTILE}b") == r"a\x1b]0;PWNED\x07\x1b[2Jb"
    assert escape_controls("\u202etxt.exe \udcff é ♥") == r"\u202etxt.exe \udcff é ♥"
    assert escape_controls("two\nlines") == r"two\nlines" and printable_message("two\nlines\x1b") == "two\nlines\\x1b"


def test_a_checkpoint_name_with_escapes_is_printed_escaped_by_play(capsys):
    """`play --opponent checkpoint:<escapes>.pt` (no such file) says so with the name escaped."""
    assert play.main(["--opponent", f"checkpoint:{HOSTILE}.pt", "--no-color"]) == 2
    out = capsys.readouterr().out
    assert_escaped(out)


def test_a_saved_match_whose_opponent_holds_escapes_is_refused_with_it_escaped(tmp_path, capsys):
    """A saved match's opponent field with control characters is refused by `load_match`, and `play --resume`
    prints the refusal escaped."""
    path = tmp_path / "evil.json"
    play.save_match(str(path), Game(seed=1), 0, f"checkpoint:{HOSTILE}.pt")
    with pytest.raises(ValueError, match="printable characters only"):
        load_match(str(path))
    assert play.main(["--resume", str(path), "--no-color"]) == 2
    assert_escaped(capsys.readouterr().out)


def test_a_resume_path_with_escapes_is_printed_escaped(tmp_path, monkeypatch, capsys):
    """`play --resume <escapes>.json` (no such file): the not-found message shows the name escaped."""
    monkeypatch.chdir(tmp_path)
    assert play.main(["--resume", f"{HOSTILE}.json", "--no-color"]) == 2
    assert_escaped(capsys.readouterr().out)


def test_a_save_path_with_escapes_is_printed_escaped(tmp_path, monkeypatch, capsys):
    """`play --save <escapes>/x` (a folder that does not exist): the save error shows the path escaped."""
    monkeypatch.chdir(tmp_path)
    assert play.main(["--save", f"{HOSTILE}/x.json", "--opponent", "greedy", "--no-color"]) == 2
    assert_escaped(capsys.readouterr().out)


@pytest.mark.parametrize("program", [play.main, evaluate.main])
def test_usage_errors_show_the_arguments_escaped(program, capsys):
    """argparse quotes unrecognized arguments as typed; both programs print them escaped."""
    with pytest.raises(SystemExit) as exited:
        program(["--bogus", HOSTILE])
    assert exited.value.code == 2
    assert_escaped(capsys.readouterr().err)


def test_evaluate_prints_a_named_checkpoints_path_escaped(capsys):
    """`evaluate --agents expert x=checkpoint:<escapes>.pt`: the not-found error shows the path escaped."""
    pytest.importorskip("torch")
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "expert", f"x=checkpoint:{HOSTILE}.pt", "--matches", "2", "--no-progress"])
    assert_escaped(capsys.readouterr().err)
