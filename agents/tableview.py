"""What a "table" critic sees beyond the player's observation: the opponent's hand, its deadwood, the next stock card.

Training only (`model.critic = "table"`): the value head is a baseline for PPO's advantages, never used to act, so it
may read the engine's hidden cards. A baseline that depends on the state but not on the action keeps the policy
gradient unbiased, and one that knows the opponent's hand explains much more of a hand's outcome (the variance the
player-view critic cannot remove). The shipped policy and every agent of the library read the observation only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.state import M_STOCK_POS

TABLE_VIEW_SIZE = 2 * NUM_CARDS + 1  # opponent's hand bits, the next stock card one-hot, opponent's deadwood / 100
OPPONENT_HAND, NEXT_STOCK, OPPONENT_DEADWOOD = 0, NUM_CARDS, 2 * NUM_CARDS


@njit(cache=True)
def table_view_kernel(players: np.ndarray, hands: np.ndarray, deck: np.ndarray, match: np.ndarray,
                      out: np.ndarray) -> None:  # fmt: skip
    """out[i] = the table view of players[i] in match i (module docstring); out is float32[N, TABLE_VIEW_SIZE]."""
    for i in range(players.shape[0]):
        out[i, :] = 0.0
        opponent = hands[i, 1 - players[i]]
        for c in range(NUM_CARDS):
            if (opponent >> c) & 1:
                out[i, OPPONENT_HAND + c] = 1.0
        position = match[i, M_STOCK_POS]
        if 0 <= position < NUM_CARDS:
            out[i, NEXT_STOCK + deck[i, position]] = 1.0
        out[i, OPPONENT_DEADWOOD] = min_deadwood_mask(opponent) / 100.0


def table_view(state, players: np.ndarray) -> np.ndarray:
    """float32[N, TABLE_VIEW_SIZE]: the table view of players[i] in each match of an EngineState."""
    out = np.empty((players.shape[0], TABLE_VIEW_SIZE), dtype=np.float32)
    table_view_kernel(np.ascontiguousarray(players, dtype=np.int64), state.hands, state.deck, state.match, out)
    return out
