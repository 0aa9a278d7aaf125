"""What a new player reads in the terminal game: the greeting points to `help`, examples name a card a player would
discard, `gin` says what gin needs, help fits the screen, the legal cards come in the hand's displayed order, and a
hand's result waits for Enter before the next deal. The page's `help` lists its commands one per line, without
`quit`."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from hollywood_gin_env.display.render import phase_words, position_text
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.commands import HELP, CommandError, legal_summary, parse_command
from hollywood_gin_env.play.session import Session
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import card_name
from hollywood_gin_env.rules.melds import arrange
from tests.play_helpers import E1_DECK


def e1_after_the_take() -> tuple[Game, int]:
    """RULES.md E1 after the non-dealer (returned) took 2C: it holds 3H 4H 5H, 8S 8D 8C, JS QS KS, 2C 9D."""
    game = Game(seed=0, deck=E1_DECK)
    player = game.current_player
    game.step(ACTION_TAKE)
    return game, player


def test_the_greeting_points_to_help_for_the_commands():
    """The greeting points to `help` for the commands, once."""
    game = Game(seed=0, deck=E1_DECK)
    line = play.opening_line(Session(game, 0, "greedy"))
    assert "Type help for the commands" in line and "hint for help" not in line, line


def test_every_example_card_is_one_a_player_would_discard():
    """The example discard is a deadwood card, not the lowest card id (8S, in a meld of three eights)."""
    game, player = e1_after_the_take()
    melded = {c for meld in arrange(game.hand(player))[0] for c in meld}
    legal = [a - DISCARD_BASE for a in game.legal_actions() if DISCARD_BASE <= a < KNOCK_BASE]
    assert legal[0] in melded  # the lowest id, which the example must not be
    with pytest.raises(CommandError) as missing:
        parse_command("discard", game, player)
    texts = [phase_words(game.position(), player), legal_summary(game), str(missing.value)]
    for text in texts:
        examples = re.findall(r"(?:e\.g\.|knock|discard) (\w\w)\b", text.replace("discard one", ""))
        assert examples and all(e.upper() in {"9D", "2C"} for e in examples), text


def test_gin_with_deadwood_says_gin_needs_none():
    """`gin 3h` with deadwood left says that gin needs no deadwood, not the knock's "over the limit of 10"."""
    game, player = e1_after_the_take()
    with pytest.raises(CommandError, match=r"Gin needs 0 deadwood: discarding 3H leaves \d+\.") as refused:
        parse_command("gin 3h", game, player)
    assert "limit" not in str(refused.value).split("Legal now")[0]


def test_help_lines_fit_100_columns():
    """Every help line fits 100 columns, so an ordinary terminal does not wrap it."""
    assert all(len(line) <= 100 for line in HELP.splitlines()), [len(line) for line in HELP.splitlines()]
    assert "quit" in HELP and "7h, 10d, TD" in HELP


def test_legal_now_lists_cards_in_the_order_the_hand_is_shown():
    """The "Legal now" line lists the cards in the order the hand is shown (melds first), not by suit (8S JS QS KS
    3H ...)."""
    game, player = e1_after_the_take()
    shown = next(
        line for line in position_text(game.position(), player).plain.splitlines() if line.startswith("Your hand:")
    )
    order = re.findall(r"\b[A2-9TJQK][SHDC]\b", shown)
    listed = re.search(r"discard one of ([\w ]+) \(e\.g\.", legal_summary(game)).group(1).split()
    assert listed == [c for c in order if c != "2C"], (listed, order)  # 2C was taken this turn: not discardable


def test_a_hands_result_waits_for_enter_before_the_next_deal():
    """After a hand's result the terminal waits for Enter before it shows the next deal, so the result stays on
    screen."""
    game = Game(seed=0, deck=E1_DECK)
    out, asked = io.StringIO(), []
    console = Console(file=out, width=120)
    console.input = lambda prompt="": asked.append((prompt, out.getvalue())) or ""
    terminal = play.Terminal(Session(game, game.current_player, "greedy"), console)
    terminal.command("t")
    terminal.command("knock 9d")
    terminal.news()
    assert len(asked) == 1 and "Enter" in asked[0][0], asked
    assert "points to you" in asked[0][1]  # the result is on screen while it waits
    assert card_name(game.hand(game.current_player)[0]) not in out.getvalue().split("Hand 1 ends")[1]


@pytest.mark.parametrize("answer", ["quit", "Q", " exit "])
def test_quit_where_the_hand_end_waits_for_enter_leaves_instead_of_dealing(answer):
    """Where a hand's result waits for Enter, quit (any of its spellings) leaves the match there, offering to save,
    instead of dealing the next hand; the prompt says so."""
    game = Game(seed=0, deck=E1_DECK)
    out, asked = io.StringIO(), []
    console = Console(file=out, width=120)
    answers = iter(["t", "knock 9d", answer, ""])  # the last: Enter, no to saving the match before leaving
    console.input = lambda prompt="": asked.append(prompt) or next(answers)
    terminal = play.Terminal(Session(game, game.current_player, "greedy"), console)
    assert terminal.run() == 0
    assert "quit: leave" in asked[2] and asked[3].startswith("Save the match to a file before leaving?"), asked
    assert len(game.actions_played()) == 2 and out.getvalue().rstrip().endswith("Bye.")  # nothing of hand 2 played


def test_the_pages_help_lists_one_command_a_line_without_quit():
    """On the page the help lists one command a line, without `quit`, which does nothing there."""
    pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")
    from starlette.testclient import TestClient

    from hollywood_gin_env.play.web.app import create_app
    from hollywood_gin_env.play.web.matches import Matches, session_maker

    first = Session(Game(seed=0, deck=E1_DECK), 0, "greedy", hold_hand_ends=True)
    client = TestClient(create_app(Matches(session_maker(first, "0"))), base_url="http://127.0.0.1")
    created = client.post("/api/matches", json={}).json()
    lines = client.post(
        f"/api/matches/{created['id']}/command", json={"seq": created["state"]["seq"], "text": "help"}
    ).json()["message"]
    assert not any(re.search(r"\bquit\b", line) for line in lines), lines
    rows = [line for line in lines[1:] if line[:1].islower() or line[:1].isdigit()]
    assert len(rows) >= 8 and all(": " in row and "  " not in row for row in rows), lines
