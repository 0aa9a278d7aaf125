"""play.py refuses save files it does not know, naming the field, and what the terminal program prints is right
(the opening line, the hint's opponent name, the discard example, wrapping, the sheet)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.display.render import phase_words, position_text, sheet_text
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.hints import hint_lines
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import card_name, parse_cards
from tests.play_helpers import E1_DECK, FIRST_WAIT, ROOT, screen, spawn

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the test extra")


def save_file(tmp_path: Path, **changes) -> Path:
    """A valid save file of a fresh match (greedy opponent, the human at seat 0), with `changes` applied."""
    game = Game(seed=3)
    data = {"format": play.FILE_FORMAT, "version": 1, "human_seat": 0, "opponent": "greedy", "events": game.events}
    path = tmp_path / "match.json"
    path.write_text(json.dumps({**data, **changes}))
    return path


@pytest.mark.parametrize(
    "changes, named",
    [
        ({"version": 2}, "version 2"),
        ({"version": True}, "version True"),
        ({"version": "1"}, "version '1'"),
        ({"human_seat": True}, "human_seat True"),
        ({"human_seat": 1.0}, "human_seat 1.0"),
        ({"opponent": ["greedy"]}, "opponent ['greedy']"),
    ],
)
def test_a_save_file_with_an_unknown_version_or_a_mistyped_field_is_refused(tmp_path, capsys, changes, named):
    """A save file's `version: 2` or `human_seat: true` (True == 1 in Python) is refused, the error naming the
    field."""
    path = save_file(tmp_path, **changes)
    before = path.read_bytes()
    assert play.main(["--resume", str(path)]) == 2
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines between words
    assert f"{play.PROG}: error:" in out and named in out, out
    assert path.read_bytes() == before  # a refused file is never overwritten


def test_a_deeply_nested_save_file_is_one_clear_error(tmp_path, capsys):
    """A deeply nested JSON save file is refused in one line, without a RecursionError traceback."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    assert play.main(["--resume", str(path)]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert f"{play.PROG}: error:" in out and "nested too deeply" in out, out


def test_a_valid_save_file_loads(tmp_path):
    game, human, opponent = play.load_match(str(save_file(tmp_path)))
    assert (human, opponent, game.events) == (0, "greedy", Game(seed=3).events)


def e1_game() -> tuple[Game, int]:
    """RULES.md E1 at the upcard offer to the non-dealer (the returned seat), who holds no 7H."""
    game = Game(seed=0, deck=E1_DECK)
    return game, 1 - game.dealer


def test_the_discard_prompt_names_a_card_the_player_may_discard():
    """The discard prompt's example is a card the player holds and may discard."""
    game, human = e1_game()
    game.step(ACTION_TAKE)
    legal = game.legal_actions()
    words = phase_words(game.position(), human)
    examples = re.findall(r"e\.g\. (\w\w)", words) + re.findall(r"knock (\w\w)\)", words)
    assert len(examples) == 2, words
    discard, knock = (parse_cards(e)[0] for e in examples)
    assert DISCARD_BASE + discard in legal and KNOCK_BASE + knock in legal, words


def test_the_score_sheet_lists_the_viewer_first_in_either_seat():
    """The sheet's first column is the viewer's in either seat, so "You" stays on the left."""
    game, _ = e1_game()
    for viewer in (0, 1):
        names = ("You", "Bot") if viewer == 0 else ("Bot", "You")
        for text in (position_text(game.position(), viewer, names), sheet_text(game.position(), names, viewer)):
            rows = [line for line in text.plain.splitlines() if line.startswith("G1:")]
            assert len(rows) == 1 and rows[0].index("You") < rows[0].index("Bot"), rows


def test_the_hint_names_the_checkpoint_by_its_file_name():
    """The hint names a checkpoint opponent by its file name (`hollywood-ppo.safetensors would: ...`), not its whole
    path."""
    pytest.importorskip("torch", reason="a checkpoint agent needs torch")
    path = ROOT / "hollywood_gin_env" / "data" / "hollywood-ppo.safetensors"
    game, human = e1_game()
    lines = hint_lines(game, human, load_agent(f"checkpoint:{path}"))
    assert lines[0].startswith("hollywood-ppo.safetensors would: "), lines
    assert str(path.parent) not in " ".join(lines)


def test_the_program_opens_with_whom_you_play_and_help_and_wraps_at_word_boundaries(tmp_path):
    """The opening line says whom you play and that `help` exists; in 52 columns every line fits, and the sheet's
    row breaks between words, not mid-word."""
    game, human = e1_game()
    child = spawn(tmp_path, "--opponent", "greedy", "--seed", "0", "--seat", str(human), "--deck", E1_DECK, columns=52)
    shown = screen(child, timeout=FIRST_WAIT)
    child.sendline("sheet")
    shown += screen(child)
    child.sendeof()
    child.expect_exact("Save the match")
    child.sendeof()
    child.expect(pexpect.EOF)
    opening = " ".join(shown[: shown.index("Hand 1 ")].split())  # the lines before the table, wrapped
    first = "you play first" if game.dealer != human else "Greedy plays first"
    assert opening.startswith("You play greedy: ") and first in opening and "Type help for the commands" in opening
    long = [line for line in shown.splitlines() if len(line) > 52]
    assert not long, long
    cards = set(re.findall(r"\b[A2-9TJQK][SHDC]\b", shown))
    assert {card_name(c) for c in game.hand(human)} <= cards  # every card of the hand shown whole


def test_output_into_a_pipe_keeps_each_line_whole():
    """With stdout a pipe (a log, `| less`, a script) there is no terminal width to wrap at: the opening line and the
    help's rows come out whole, never broken at 80 columns mid-sentence."""
    done = subprocess.run(
        [sys.executable, "-m", "hollywood_gin_env", "play", "--opponent", "greedy", "--seed", "3", "--seat", "0"],
        input="help\nquit\n\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("You play greedy: ") and lines[0].endswith("hint shows what greedy would do."), lines
    assert any(line.endswith("pass the upcard (the offer only), or let the last discard go") for line in lines), lines
