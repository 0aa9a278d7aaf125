"""What a "table" critic sees beyond the player's observation: the opponent's hand and deadwood, who the opponent is,
the score of `expert` playing the hand's deal out against itself, and the next stock cards in order.

Training only (`model.critic = "table"`): the value head is a baseline for PPO's advantages, never used to act, so it
may read the engine's hidden cards. A baseline that depends on the state but not on the action keeps the policy
gradient unbiased, and one that knows the opponent's hand and the stock explains much more of a hand's outcome (the
variance the player-view critic cannot remove): with the whole stock in view and a deterministic opponent, what is
left of a hand's outcome is the learner's own sampled actions. An MLP does not learn to play a hand out from its
cards (docs/TRAINING.md, "What was tried", round two), so the view also gives the result of one such play-out:
`expert` for both seats from the deal, on the same stock (`SelfPlayVectorEnv.play_out`, once a hand; `expert` is
deterministic, so it is exact). The arena reads the engine's state through the env's privileged view
(`true_state`), which is for training-time critics only: the shipped policy and every agent of the library read the
observation only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.state import M_STOCK_POS, EngineState
from hollywood_gin_env.threads import KernelThreads, pool

#: Fewest matches a thread's slice of the table view gets (a fraction of a microsecond a row).
TABLE_GRAIN = 256

OPPONENT_HAND, OPPONENT_DEADWOOD, OPPONENT_KIND = 0, NUM_CARDS, NUM_CARDS + 1
OPPONENT_KINDS = 4  # one-hot: self-play, a snapshot, expert, greedy (pool.py's ids, in kind_of_opponent)
DEAL_PLAYOUT = OPPONENT_KIND + OPPONENT_KINDS  # the player's score / 100 in expert's play-out of the deal (0: none)
STOCK = DEAL_PLAYOUT + 1  # then one one-hot of 52 per stock card, the top card first
MAX_STOCK_CARDS = NUM_CARDS - 21  # the stock after the deal (R3): 31 cards


def table_view_size(stock_cards: int) -> int:
    """Columns of a table view that shows the next `stock_cards` stock cards."""
    if not 1 <= stock_cards <= MAX_STOCK_CARDS:
        raise ValueError(f"stock_cards={stock_cards!r}: must lie in 1..{MAX_STOCK_CARDS}")
    return STOCK + stock_cards * NUM_CARDS


@njit(cache=True, nogil=True)
def table_view_kernel(
    players: np.ndarray,
    kinds: np.ndarray,
    deal: np.ndarray,
    hands: np.ndarray,
    deck: np.ndarray,
    match: np.ndarray,
    stock_cards: int,
    out: np.ndarray,
) -> None:
    """out[i] = the table view of players[i] in match i (module docstring); kinds[i] in 0..3 is the opponent's kind,
    deal[i] seat 0's score in the play-out of the deal."""
    for i in range(players.shape[0]):
        out[i, :] = 0.0
        opponent = hands[i, 1 - players[i]]
        for c in range(NUM_CARDS):
            if (opponent >> c) & 1:
                out[i, OPPONENT_HAND + c] = 1.0
        out[i, OPPONENT_DEADWOOD] = min_deadwood_mask(opponent) / 100.0
        out[i, OPPONENT_KIND + kinds[i]] = 1.0
        out[i, DEAL_PLAYOUT] = (deal[i] if players[i] == 0 else -deal[i]) / 100.0
        position = match[i, M_STOCK_POS]
        for k in range(stock_cards):
            if 0 <= position + k < NUM_CARDS:
                out[i, STOCK + k * NUM_CARDS + deck[i, position + k]] = 1.0


def table_view(
    state: EngineState,
    players: np.ndarray,
    kinds: np.ndarray,
    deal: np.ndarray,
    stock_cards: int,
    threads: KernelThreads | None = None,
) -> np.ndarray:
    """float32[N, table_view_size(stock_cards)]: the table view of players[i] in each match of an EngineState, whose
    opponent is of kind kinds[i] (0 self-play, 1 a snapshot, 2 expert, 3 greedy) and whose deal's play-out gave
    seat 0 deal[i] points; over slices of the matches on `threads` (default: the process's pool), the same for
    every count."""
    out = np.empty((players.shape[0], table_view_size(stock_cards)), dtype=np.float32)
    players = np.ascontiguousarray(players, dtype=np.int64)
    kinds = np.ascontiguousarray(kinds, dtype=np.int64)
    deal = np.ascontiguousarray(deal, dtype=np.float64)
    hands, deck, match = state.hands, state.deck, state.match

    def work(lo: int, hi: int) -> None:
        table_view_kernel(
            players[lo:hi], kinds[lo:hi], deal[lo:hi], hands[lo:hi], deck[lo:hi], match[lo:hi], stock_cards, out[lo:hi]
        )

    (pool() if threads is None else threads).run(out.shape[0], work, TABLE_GRAIN)
    return out
