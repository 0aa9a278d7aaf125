"""The real `python play.py` in a pseudo-terminal (pexpect), driven by keystrokes on fixed seeds and decks, with
assertions on what the screen shows. The bot is `greedy` (deterministic, no checkpoint needed)."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from hollywood_gin_env.cards import card_name
from hollywood_gin_env.game import Game
from tests.subprocess_signals import default_sigint

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the test extra")

ROOT = Path(__file__).resolve().parents[1]
CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = "\n> "
# E1 of RULES.md: the non-dealer holds 3H 4H 5H, 8C 8D 8S, JS QS KS and 9D; the upcard is 2C; the dealer holds:
BOT_CARDS = "6H 8H AD 2D 3D 7C 7D 5S 9S KH"
E1_DECK = (
    "3H 6H 4H 8H 5H AD 8C 2D 8D 3D 8S 7C JS 7D QS 5S KS 9S 9D KH 2C AS 2S 3S 4S 6S 7S TS AH 2H 7H 9H TH "
    "JH QH 4D 5D 6D TD JD QD KD AC 3C 4C 5C 6C 9C TC JC QC KC"
)
FIRST_WAIT = 300  # a cold numba cache compiles the kernels on the first start


def spawn(cwd: Path, *args: str):
    """play.py with plain output in a 50x200 pseudo-terminal."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return pexpect.spawn(
        sys.executable,
        [str(ROOT / "play.py"), "--no-color", *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
        preexec_fn=default_sigint,
    )


def screen(child, pattern: str = PROMPT, timeout: int = 60) -> str:
    """The text shown up to the next `pattern`, without escape codes."""
    child.expect_exact(pattern, timeout=timeout)
    return ANSI.sub("", child.before).replace("\r\n", "\n")


def leave(child, expected: str) -> None:
    """Ctrl-D at the prompt: `expected` is shown, then "Bye.", and the program exits with status 0."""
    child.sendeof()
    screen(child, expected)
    if "Save the match" in expected:
        child.sendeof()
    screen(child, "Bye.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_table_an_illegal_command_and_a_hand_to_its_scored_end(tmp_path):
    """E1 at the table: the human sees its hand and no hidden card of the bot; `d` during the offer is explained;
    `t`, then `knock 9d`, ends the hand with the score worked out; Ctrl-D then leaves, offering to save."""
    human = 1 - Game(seed=0, deck=E1_DECK).dealer  # the human is the non-dealer, the knocker of E1
    child = spawn(tmp_path, "--opponent", "greedy", "--seed", "0", "--seat", str(human), "--deck", E1_DECK)
    shown = screen(child, timeout=FIRST_WAIT)
    assert "Your hand: [3H 4H 5H]  [8S 8D 8C]  [JS QS KS]  9D   deadwood 9" in shown
    assert "Your turn: upcard offer: take 2C (t) or pass (p)" in shown and "Greedy: 10 cards" in shown
    child.sendline("d")
    answer = screen(child)
    shown += answer
    assert "You hold 10 cards and the upcard 2C is on offer: take it or pass first." in answer
    assert "Legal now: take 2C (t); pass (p)." in answer
    child.sendline("t")
    shown += screen(child)
    assert "Your hand: [3H 4H 5H]  [8S 8D 8C]  [JS QS KS]  2C 9D   deadwood 11" in shown
    assert not set(CARD.findall(shown)) & set(BOT_CARDS.split()), "a hidden card of the bot was shown"
    child.sendline("knock 9d")
    end = screen(child, "Enter: deal the next hand ")  # the result stays on screen until Enter
    assert "You took 2C from the pile and knocked, discarding 9D." in end
    assert "laid off 6H on 3H 4H 5H" in end and "5S 7D 7C 9S KH   deadwood 38" in end
    assert "Knock: 38 \u2212 2 = 36 points to you, entered in game 1." in end
    child.sendline("")  # Enter: the next hand's table, with the score sheet
    end = screen(child)
    assert re.search(r"G1: You\s+36 \(1\)   Greedy   0 \(0\)   open", end)
    leave(child, "Save the match to a file before leaving?")
    assert list(tmp_path.iterdir()) == []


DREW = re.compile(r"You drew (\w\w) from the stock(?: \(both passed the upcard, so a stock draw\))?\.\n")


def play(child, decisions: int, first_wait: int = 60) -> None:
    """A simple player: pass every upcard, draw from the stock, throw back the card drawn."""
    for i in range(decisions):
        shown = screen(child, timeout=first_wait if i == 0 else 60)
        turn = shown[shown.rindex("Your turn: ") :]
        if turn.startswith("Your turn: upcard offer"):
            child.sendline("p")
        elif turn.startswith("Your turn: draw"):
            child.sendline("d")
        else:
            child.sendline(DREW.findall(shown)[-1].lower())


def test_save_and_resume_equal_playing_on_and_replay_steps_through(tmp_path):
    """Eight decisions in one sitting give the same saved match as four, Ctrl-D, --resume, and four more."""
    args = ("--opponent", "greedy", "--seed", "7", "--seat", "0")
    child = spawn(tmp_path, *args, "--save", "whole.json")
    play(child, 8, first_wait=FIRST_WAIT)
    leave(child, "Saved. Resume with: python play.py --resume whole.json")
    child = spawn(tmp_path, *args, "--save", "split.json")
    play(child, 4)
    leave(child, "Saved. Resume with: python play.py --resume split.json")
    child = spawn(tmp_path, "--resume", "split.json")
    play(child, 4)
    leave(child, "Saved. Resume with: python play.py --resume split.json")
    whole, split = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("whole", "split"))
    assert whole == split and whole["human_seat"] == 0 and whole["opponent"] == "greedy"
    game = Game.replay(whole["events"])
    assert len([e for e in game.events if "action" in e and e["player"] == 0]) >= 8

    child = spawn(tmp_path, "--replay", "whole.json")
    first = screen(child, "Enter: next move, q: stop > ")
    both = {card_name(c) for hand in whole["events"][1]["hands"] for c in hand}
    assert len(both) == 20 and both <= set(CARD.findall(first))  # a replay shows both hands
    child.sendline("")
    screen(child, "Enter: next move, q: stop > ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_offers_to_save(tmp_path):
    """Ctrl-C at the prompt leaves cleanly, offering to save; the saved file replays through Game.replay."""
    child = spawn(tmp_path, "--opponent", "greedy", "--seed", "3")
    screen(child, timeout=FIRST_WAIT)
    time.sleep(0.5)  # the prompt is on screen a moment before input() waits; a Ctrl-C in between can be lost
    child.sendintr()
    screen(child, "Save the match to a file before leaving? (y/N)")
    child.sendline("y")
    screen(child, "File to save it to")
    child.sendline("kept.json")
    screen(child, "Saved. Resume with: python play.py --resume kept.json")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    saved = json.loads((tmp_path / "kept.json").read_text())
    assert Game.replay(saved["events"]).events == saved["events"]
