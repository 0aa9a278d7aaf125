"""`Position`: one match at one moment as plain values, what the renderers draw.

The text renderer (render.py) and the picture (picture.py) read only this record, so they need neither a `Game`
nor an engine: `Game.position()` makes one, and `position_of(engine, i)` (game.py) one of a batched match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Position:
    """One match at one moment; the fields mean what `Game`'s accessors of the same names return."""

    hands: tuple[list[int], list[int]]  # the cards of seats 0 and 1, sorted by id
    discard_pile: list[int]  # bottom first: the last card is the face-up one
    stock_size: int
    phase: str  # offer_nondealer, offer_dealer, draw, discard, last_discard or over
    legal_actions: list[int]  # the legal action ids of the player to act (empty once the match is over)
    current_player: int  # -1 once the match is over
    dealer: int
    hand_number: int
    done: bool
    winner: int | None  # None until the match is over
    score_sheet: dict[str, list]  # per game: totals, entries, winners, net (`Game.score_sheet`)
    events: list[dict[str, Any]]  # the event log (`Game.events`); empty for a batched match's view

    def hand(self, player: int) -> list[int]:
        """The cards seat `player` (0 or 1) holds, sorted by id."""
        return self.hands[player]
