"""`Session`, the match both front ends drive: the human's moves checked, the bot's reseeded per decision, a hand's end
held for the page, every move saved (a failed save said, not raised)."""

from __future__ import annotations

import json

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.session import Session, SessionError, choose_seat, load_match
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_TAKE, KNOCK_BASE
from hollywood_gin_env.rules.cards import parse_card
from tests.play_helpers import E1_DECK


def e1(hold: bool = False, save: str | None = None) -> Session:
    """RULES.md E1 at the upcard offer to the human, the non-dealer; the bot is greedy."""
    game = Game(seed=0, deck=E1_DECK)
    return Session(game, 1 - game.dealer, "greedy", save, hold_hand_ends=hold)


def test_a_move_the_human_may_not_make_is_refused_and_changes_nothing():
    session = e1()
    events = [dict(e) for e in session.game.events]
    for action in (ACTION_DRAW_STOCK, KNOCK_BASE + parse_card("9D"), 999, "1", True):
        with pytest.raises(SessionError, match="not allowed|illegal|legal"):
            session.play(action)
    with pytest.raises(SessionError, match="not the bot's turn"):
        session.bot_move()
    assert session.game.events == events


def test_a_hand_end_is_held_until_continue_play_then_the_bot_opens_the_next_hand():
    """E1: take 2C, knock with 9D (36 points to the human). Held: nothing plays and the human may not move; after
    continue_play the next hand is played up to the human's turn."""
    session = e1(hold=True)
    session.play(ACTION_TAKE)
    session.play(KNOCK_BASE + parse_card("9D"))
    assert session.held_hand_end is not None and session.game.events[session.held_hand_end]["points"] == 36
    assert not session.humans_turn
    with pytest.raises(SessionError, match="continue to the next hand"):
        session.play(ACTION_DRAW_STOCK)
    session.continue_play()
    assert session.held_hand_end is None and session.humans_turn and session.game.hand_number == 2
    with pytest.raises(SessionError, match="no finished hand"):
        session.continue_play()


def test_without_holding_the_terminal_plays_straight_on():
    session = e1(hold=False)
    session.play(ACTION_TAKE)
    session.play(KNOCK_BASE + parse_card("9D"))
    assert session.held_hand_end is None and session.game.hand_number == 2


def test_every_move_is_saved_and_a_failed_save_is_reported_not_raised(tmp_path):
    path = tmp_path / "m.json"
    session = e1(save=str(path))
    session.play(ACTION_TAKE)
    game, human, opponent = load_match(str(path))
    assert (game.events, human, opponent) == (session.game.events, session.human, "greedy")
    assert json.loads(path.read_text())["version"] == 1
    session.save_path = str(tmp_path / "missing" / "m.json")
    session.play(KNOCK_BASE + parse_card("9D"))
    assert session.save_error and "Could not save the match to" in session.save_error
    assert session.game.hand_number == 2  # the move stands; the front end shows the error


@pytest.mark.parametrize("seat", ["2", 0, "", None])
def test_choose_seat_refuses_what_seat_does_not_allow(seat):
    with pytest.raises(ValueError, match="seat="):
        choose_seat(seat, 1)
    assert {choose_seat("random", s) for s in range(20)} == {0, 1} and choose_seat("1", 5) == 1
