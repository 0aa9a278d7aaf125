"""The engine's struct-of-arrays state for N matches: `EngineState`, its named arrays, and the deal's layout.

`EngineState` is a named tuple of arrays, so the numba kernels read the same names as Python
(`s.hands[i, p]`, `s.match[i, col.M_PHASE]`). The per-match integers are split by what they describe:
`match` (the match in progress), `last_step` (what the last `Engine.step` did) and `last_hand`
(the result of the hand that ended last); their columns are in columns.py. docs/ARCHITECTURE.md, "Glossary",
defines match, game, hand, turn.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.rules.scoring import MAX_GAMES
from hollywood_gin_env.support.jit import njit_inline

# The deal (R3): ten cards each, dealt alternately from the top of the deck, then the upcard; the rest is the stock.
HAND_SIZE = 10
UPCARD_POS = 2 * HAND_SIZE  # deck index of the upcard
FIRST_STOCK_POS = UPCARD_POS + 1  # deck index of the first stock card
STOCK_AFTER_DEAL = NUM_CARDS - FIRST_STOCK_POS  # 31 cards


class EngineState(NamedTuple):
    """All arrays of N matches; leading axis N everywhere. Kernels take `arrays()` and rebuild the names."""

    match: np.ndarray  # int64[N, col.NUM_MATCH_FIELDS]
    last_step: np.ndarray  # int64[N, col.NUM_STEP_FIELDS]
    last_hand: np.ndarray  # int64[N, col.NUM_HAND_FIELDS]
    hands: np.ndarray  # int64[N, 2] card masks
    deck: np.ndarray  # int64[N, 52] the current deal's deck order (R3)
    pile: np.ndarray  # int64[N, 52] the discard pile, bottom first
    took: np.ndarray  # int64[N, 2] cards each player took from the pile and still holds (public)
    discarded: np.ndarray  # int64[N, 2] cards each player discarded this hand (public)
    declined: np.ndarray  # int64[N, 2] cards each player declined: a passed upcard, a top card left for the stock
    totals: np.ndarray  # int64[N, 3, 2]
    entries: np.ndarray  # int64[N, 3, 2]
    game_winner: np.ndarray  # int64[N, 3], -1 while open
    game_net: np.ndarray  # int64[N, 3]
    hand_wins: np.ndarray  # int64[N, 2] hands won this match
    rng: np.ndarray  # uint64[N] per-match random state (splitmix64)
    legal: np.ndarray  # int8[N, 107] legal actions of the player to act
    discard_dw: np.ndarray  # int64[N, 52] in the discard phase: deadwood after each discard of the player to act

    @classmethod
    def allocate(cls, n: int) -> EngineState:
        """Zeroed arrays for n matches."""

        def z(*shape: int) -> np.ndarray:
            return np.zeros((n, *shape), dtype=np.int64)

        return cls(
            match=z(col.NUM_MATCH_FIELDS),
            last_step=z(col.NUM_STEP_FIELDS),
            last_hand=z(col.NUM_HAND_FIELDS),
            hands=z(2),
            deck=z(NUM_CARDS),
            pile=z(NUM_CARDS),
            took=z(2),
            discarded=z(2),
            declined=z(2),
            totals=z(MAX_GAMES, 2),
            entries=z(MAX_GAMES, 2),
            game_winner=z(MAX_GAMES),
            game_net=z(MAX_GAMES),
            hand_wins=z(2),
            rng=np.zeros(n, dtype=np.uint64),
            legal=np.zeros((n, NUM_ACTIONS), dtype=np.int8),
            discard_dw=z(NUM_CARDS),
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays as a plain tuple, as the kernels take them (see `named`)."""
        return tuple(self)

    def sheet(self) -> tuple[np.ndarray, ...]:
        """The score sheet as `envs.batch.credit` reads it: (totals, entries, game_winner, game_net, hand_wins)."""
        return self.totals, self.entries, self.game_winner, self.game_net, self.hand_wins

    def copy_match(self, src: int, dst: EngineState, dst_index: int) -> None:
        """Copy match src of this state into match dst_index of dst."""
        for mine, theirs in zip(self, dst, strict=True):
            theirs[dst_index] = mine[src]


@njit_inline
def named(arrays: tuple) -> EngineState:
    """The `EngineState` of a plain tuple of its arrays, inside a kernel.

    Kernels take the plain tuple: numba's dispatcher types a plain tuple of arrays faster than a
    named one, and a step calls a kernel several times. Inlined, the rebuild costs nothing.
    """
    return EngineState(*arrays)
