"""The public record of a hand: `HandHistory` (one player's view of every action, in order) and `HistoryRecorder`
(one per match of an `Engine`, kept as it is stepped).

One observation holds the opponent's discards, takes and declines as sets, not in order, and not which of its
discards followed a draw; what reads the order of events (the belief of agents/belief.py, the search agent with a
history belief) reads a `HandHistory`: the viewer's seat, the dealer, the viewer's dealt hand and the upcard, then
every action of the hand in order (both players'), with the card the viewer drew when an action drew it one (the
viewer's own draw, or the draw forced on it after two passes). Nothing else: no card the viewer never saw. The
envs, the evaluator and the card table keep one for an agent that reads them (its `needs_history`).
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.cards import FULL_DECK_MASK, NUM_CARDS
from hollywood_gin_env.state import (
    HAND_SIZE,
    M_DEALER,
    M_PHASE,
    M_PLAYER,
    NUM_ACTIONS,
    PHASE_OVER,
    S_DRAWN,
    S_HAND_OVER,
)


def reads_history(agent: object) -> bool:
    """True for an agent whose `act` takes one `HandHistory` per row as a third argument (its `needs_history`)."""
    return getattr(agent, "needs_history", False) is True


class HandHistory:
    """The public record of one hand as one player (the viewer) saw it (module docstring)."""

    def __init__(self, viewer: int, dealer: int, hand: int, upcard: int) -> None:
        if viewer not in (0, 1) or dealer not in (0, 1):
            raise ValueError(f"viewer={viewer!r} and dealer={dealer!r} must each be 0 or 1")
        hand, upcard = int(hand), int(upcard)
        if not 0 <= hand <= FULL_DECK_MASK or bin(hand).count("1") != HAND_SIZE:
            raise ValueError(f"hand={hand:#x} must be a mask of {HAND_SIZE} cards")
        if not 0 <= upcard < NUM_CARDS or (hand >> upcard) & 1:
            raise ValueError(f"upcard={upcard!r} must be a card id (0..51) outside the hand")
        self.viewer, self.dealer, self.hand, self.upcard = viewer, dealer, hand, upcard
        self.actions: list[int] = []
        self.drawn: list[int] = []  # per action: the card it drew for the viewer, else -1

    def add(self, action: int, drawn: int = -1) -> None:
        """Append one action of either player (and the card it drew for the viewer, if it drew the viewer one)."""
        if not 0 <= int(action) < NUM_ACTIONS or not -1 <= int(drawn) < NUM_CARDS:
            raise ValueError(f"action={action!r} must lie in 0..{NUM_ACTIONS - 1} and drawn={drawn!r} in -1..51")
        self.actions.append(int(action))
        self.drawn.append(int(drawn))

    def copy(self) -> HandHistory:
        """An independent copy (the recorder keeps appending to the original)."""
        twin = HandHistory(self.viewer, self.dealer, self.hand, self.upcard)
        twin.actions, twin.drawn = list(self.actions), list(self.drawn)
        return twin

    def events(self) -> np.ndarray:
        """int64[K, 2]: (action, card drawn for the viewer or -1) of each action, in order."""
        return np.array([self.actions, self.drawn], dtype=np.int64).T.reshape(-1, 2).copy()

    def unknown_cards(self) -> int:
        """Mask of the cards the viewer was never shown: the opponent's dealt hand, its draws and the stock."""
        known = self.hand | (1 << self.upcard)
        for card in self.drawn:
            if card >= 0:
                known |= 1 << card
        return FULL_DECK_MASK & ~known


class HistoryRecorder:
    """One `HandHistory` per match of an `Engine`, for the seat viewers[m]; call `step` instead of engine.step (or
    `record` after it: two recorders, one per seat, can follow one engine) and `begin` after engine.new_matches."""

    def __init__(self, engine, viewers: np.ndarray) -> None:
        self.engine = engine
        self.viewers = np.asarray(viewers, dtype=np.int64)
        if self.viewers.shape != (engine.num_matches,) or not np.isin(self.viewers, (0, 1)).all():
            raise ValueError(f"viewers must hold 0 or 1 for each of the {engine.num_matches} matches")
        self.histories: list[HandHistory | None] = [None] * engine.num_matches
        self.begin(np.ones(engine.num_matches, dtype=np.bool_))

    def begin(self, selected: np.ndarray, viewers: np.ndarray | None = None) -> None:
        """Start the histories of the selected matches at their current deal (just dealt, nothing played), seen
        from viewers[m] where given (a new match may seat the viewer elsewhere)."""
        if viewers is not None:
            viewers = np.asarray(viewers, dtype=np.int64)
            if viewers.shape != self.viewers.shape or not np.isin(viewers[selected], (0, 1)).all():
                raise ValueError(f"viewers must hold 0 or 1 for each of the {self.engine.num_matches} matches")
            self.viewers[selected] = viewers[selected]
        s = self.engine.state
        for m in np.flatnonzero(selected):
            if s.match[m, M_PHASE] == PHASE_OVER:
                self.histories[m] = None
                continue
            viewer = int(self.viewers[m])
            self.histories[m] = HandHistory(
                viewer, int(s.match[m, M_DEALER]), int(s.hands[m, viewer]), int(s.pile[m, 0])
            )

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """engine.step(actions, active), each action recorded; a match whose hand ended starts its next history."""
        self.engine.step(actions, active)
        self.record(actions, active)

    def record(self, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Record the step the engine has just taken with these arguments (`step` without the stepping)."""
        engine = self.engine
        s = engine.state
        active = np.ones(engine.num_matches, dtype=np.bool_) if active is None else np.asarray(active, dtype=np.bool_)
        ended = np.zeros(engine.num_matches, dtype=np.bool_)
        for m in np.flatnonzero(active & ~engine.illegal):
            if s.last_step[m, S_HAND_OVER] == 1:
                ended[m] = True
                continue
            drawn = int(s.last_step[m, S_DRAWN])
            # after a draw the drawer is to discard: the card is the viewer's to know only if it drew it
            mine = drawn >= 0 and s.match[m, M_PLAYER] == self.viewers[m]
            self.histories[m].add(int(actions[m]), drawn if mine else -1)
        self.begin(ended)
