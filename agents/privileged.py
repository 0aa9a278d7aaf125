"""What the critic may know and the policy may not: the opponent's hand and the stock's order.

PPO's value is only a baseline: it may depend on anything that the action does not change, so a critic fed the
hidden cards ("asymmetric actor-critic") stays unbiased and explains far more of a hand's outcome than one that
sees what the player sees (the cards still to come decide most of it). Only the training critic reads these
features; the policy, the only network a checkpoint holds, never does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.state import M_STOCK_POS, EngineState

PRIVILEGED_SIZE = 2 * NUM_CARDS  # the opponent's hand (0/1 per card), then the stock's order
STOCK_ORDER_SCALE = 32.0  # the next stock card is 1, the one after 1 - 1/32, ...: more than the 31 a stock holds


@njit(cache=True)
def privileged_kernel(hands, deck, match, players, out) -> None:
    """out[i] = the hidden cards of match i as seen from players[i]'s seat (module docstring)."""
    out[:] = 0.0
    for i in range(players.shape[0]):
        opponent = hands[i, 1 - players[i]]
        for c in range(NUM_CARDS):
            out[i, c] = (opponent >> c) & 1
        top = match[i, M_STOCK_POS]
        for k in range(top, NUM_CARDS):
            out[i, NUM_CARDS + deck[i, k]] = 1.0 - (k - top) / STOCK_ORDER_SCALE


def privileged_view(state: EngineState, players: np.ndarray) -> np.ndarray:
    """float32[N, PRIVILEGED_SIZE]: the opponent's hand and the stock order, from players[i]'s seat in match i."""
    out = np.zeros((players.shape[0], PRIVILEGED_SIZE), dtype=np.float32)
    privileged_kernel(state.hands, state.deck, state.match, np.ascontiguousarray(players, dtype=np.int64), out)
    return out
