"""Long matches: take-and-discard cycles make every hand dead at MAX_HAND_TURNS (A22) and a match of dead hands goes
on without end, so a save file, a resume and the page's requests must stay bounded. A save that `play --resume` would
refuse is never written (the file keeps the last save that resumes), a file with more moves than a save may hold is
refused before it is replayed, and the page and the `log` command tell only a hand's last moves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hollywood_gin_env.display.words import LOG_MOVES, hand_events, hand_log, move_sentences, turn_count
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play import session as session_module
from hollywood_gin_env.play.session import (
    FILE_FORMAT,
    MAX_FILE_BYTES,
    MAX_MATCH_ACTIONS,
    MatchTooLongError,
    Session,
    load_match,
    save_match,
)
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE


def always_take(game: Game, actions: int) -> Game:
    """Play `actions` moves in which both players take the face-up card whenever they may, else discard their
    lowest legal card: the stock is never drawn, so each hand runs to MAX_HAND_TURNS and is dead."""
    for _ in range(actions):
        legal = game.legal_actions()
        discards = [a for a in legal if DISCARD_BASE <= a < KNOCK_BASE]
        game.step(ACTION_TAKE if ACTION_TAKE in legal else min(discards))
    return game


def test_move_sentences_told_for_the_last_turns_equal_the_tail_of_all_of_them():
    """`move_sentences(..., last=k)` is the last k sentences of the whole hand, for random hands and every k."""
    rng = np.random.default_rng(3)
    for seed in range(6):
        game = Game(seed=seed)
        for _ in range(int(rng.integers(1, 120))):
            if game.done:
                break
            game.step(int(rng.choice(game.legal_actions())))
        events = hand_events(game.events)
        whole = [t.plain for t in move_sentences(events, 0, ("You", "Bot"))]
        assert turn_count(events) == len(whole)
        for k in (1, 2, 5, len(whole), len(whole) + 3):
            assert [t.plain for t in move_sentences(events, 0, ("You", "Bot"), last=k)] == whole[-k:], (seed, k)


def in_a_long_hand(game: Game, turns: int) -> Game:
    """Play take-and-discard cycles until the current hand has at least `turns` moves and it is seat 0's turn."""
    while turn_count(hand_events(game.events)) < turns or game.current_player != 0:
        always_take(game, 1)
    return game


def test_the_log_of_a_long_hand_tells_its_last_moves_after_a_count_of_the_others():
    """A hand of 150 moves: `log` tells the last LOG_MOVES turns after one line counting the earlier ones."""
    game = in_a_long_hand(Game(seed=1), LOG_MOVES + 50)
    lines = [t.plain for t in hand_log(game.events, 0, ("You", "Bot"))]
    earlier = turn_count(hand_events(game.events)) - LOG_MOVES
    assert len(lines) == LOG_MOVES + 1 and lines[0] == f"({earlier:,} earlier moves not shown)", lines[:2]


def test_the_pages_state_of_a_long_hand_is_a_few_kilobytes():
    """The state the page asks for after every move holds the hand's last moves and a count of the earlier ones,
    so its size does not grow with the hand or the match (a hand of 150 moves after 20,000: under 16 KB)."""
    view = pytest.importorskip("hollywood_gin_env.play.web.view")
    game = in_a_long_hand(always_take(Game(seed=1), 20_000), view.RECENT_MOVES + 90)
    state = view.page_view(Session(game, 0, "greedy", hold_hand_ends=True), 0)
    assert len(json.dumps(state)) < 16_000
    assert len(state["moves"]) == view.RECENT_MOVES
    assert state["earlier_moves"] + view.RECENT_MOVES == turn_count(hand_events(game.events))


def test_a_match_longer_than_a_save_may_hold_is_not_written_and_the_last_save_stays(tmp_path, monkeypatch):
    """Past the moves a save may hold, the session writes nothing and says so; the file keeps the last save, which
    resumes."""
    monkeypatch.setattr(session_module, "MAX_MATCH_ACTIONS", 30)
    path = tmp_path / "m.json"
    session = Session(always_take(Game(seed=1), 30), 0, "greedy", str(path))
    assert session.save() and session.save_error is None
    saved = path.read_bytes()
    always_take(session.game, 1)
    assert not session.save()
    assert "no longer saved: the match has 31 moves, more than the 30 a saved match may hold" in session.save_error
    assert f"{path} keeps it as last saved" in session.save_error
    assert path.read_bytes() == saved and len(load_match(str(path))[0].actions_played()) == 30


def test_a_save_larger_than_a_resume_reads_is_not_written(tmp_path, monkeypatch):
    """A log over the bytes `load_match` reads is refused before writing, naming both sizes."""
    monkeypatch.setattr(session_module, "MAX_FILE_BYTES", 4000)
    path = tmp_path / "m.json"
    with pytest.raises(MatchTooLongError, match=r"the match's log is [\d.]+ KiB, more than the 3.9 KiB"):
        save_match(str(path), always_take(Game(seed=1), 200), 0, "greedy")
    assert not path.exists()


def test_a_saved_match_with_more_moves_than_a_save_holds_is_refused_before_replaying(tmp_path):
    """A hand-made file of MAX_MATCH_ACTIONS + 1 one-key moves (a few hundred kilobytes) is refused at once with
    the count, not replayed for a minute into a match whose next save could never be read."""
    start = Game(seed=1).events[0]
    data = {"format": FILE_FORMAT, "version": 1, "human_seat": 0, "opponent": "greedy"}
    data["events"] = [start] + [{"action": ACTION_TAKE}] * (MAX_MATCH_ACTIONS + 1)
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"has {MAX_MATCH_ACTIONS + 1:,} moves, more than the {MAX_MATCH_ACTIONS:,}"):
        load_match(str(path))


def test_every_match_a_save_may_hold_saves_back_within_the_bytes_a_resume_reads(tmp_path):
    """The longest match `load_match` accepts (take-and-discard cycles, the largest moves in the log) writes back a
    file under MAX_FILE_BYTES, so resuming and quitting never makes a file that cannot be resumed."""
    game = always_take(Game(seed=1), MAX_MATCH_ACTIONS)
    path = tmp_path / "m.json"
    save_match(str(path), game, 0, "greedy")
    assert path.stat().st_size < MAX_FILE_BYTES
