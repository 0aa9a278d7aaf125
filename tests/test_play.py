"""The real `python play.py` in a pseudo-terminal (pexpect), driven by keystrokes on fixed seeds and decks, with
assertions on what the screen shows. The bot is `greedy` (deterministic, no checkpoint needed)."""

from __future__ import annotations

import json
import re
import time

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.rules.cards import card_name

pexpect = pytest.importorskip("pexpect", reason="pexpect is in the test extra")

from tests.play_helpers import BOT_CARDS, CARD, E1_DECK, FIRST_WAIT, leave, screen, spawn  # noqa: E402


def test_e1_an_illegal_command_and_a_hand_to_its_scored_end(tmp_path):
    """E1 in the terminal: the human sees its hand and no hidden card of the bot; `d` during the offer is explained;
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
