"""`GreedyAgent`: the plain deadwood-minimiser, batched in one numba kernel.

- Draw: takes the face-up card only when that lowers its deadwood (after its best discard) or the
  card joins a meld; otherwise draws from the stock (or passes the upcard).
- Discard: the card that leaves the lowest deadwood; ties go to the highest card, then to the one
  least likely to help the opponent (fewest of the opponent's known cards it could meld with).
- Knocks as soon as it may, with the discard that leaves the lowest deadwood (gin when it can).
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents._features import (
    card_value,
    check_hand_sizes,
    dw_after,
    face_up_card,
    first_legal,
    neighbours_in,
    phase_of,
    plane_mask,
    rediscard_allowed,
)
from hollywood_gin_env.agents.base import Agent
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.observation import O_HAND, O_OPP_TOOK
from hollywood_gin_env.engine.threads import kernel_threads, sliced
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.melds import BIG, discard_deadwoods_mask, min_deadwood_mask
from hollywood_gin_env.support.jit import njit


@njit
def best_by_deadwood(obs: np.ndarray, mask: np.ndarray, base: int) -> int:
    """The legal action base + c with the lowest deadwood after c; ties: highest value, least danger."""
    opp_took = plane_mask(obs, O_OPP_TOOK)
    best, best_key = -1, 1 << 60
    for c in range(52):
        if mask[base + c]:
            key = ((dw_after(obs, c) * 16 + 10 - card_value(c)) * 16 + neighbours_in(c, opp_took)) * 64 + 51 - c
            if key < best_key:
                best, best_key = base + c, key
    return best


@njit
def take_helps(hand: int, card: int, rediscard: bool, scratch: np.ndarray) -> bool:
    """True if taking `card` lowers the deadwood after the best discard, or the card joins a meld."""
    now = min_deadwood_mask(hand)
    if min_deadwood_mask(hand | (1 << card)) < now + card_value(card):
        return True
    discard_deadwoods_mask(hand | (1 << card), scratch)
    if not rediscard:
        scratch[card] = BIG
    return scratch.min() < now


@njit
def greedy_row(obs: np.ndarray, mask: np.ndarray, scratch: np.ndarray) -> int:
    """The greedy action of one observation row."""
    phase = phase_of(obs)
    if phase == col.PHASE_DISCARD:
        action = best_by_deadwood(obs, mask, KNOCK_BASE)
        if action < 0:
            action = best_by_deadwood(obs, mask, DISCARD_BASE)
        return action if action >= 0 else first_legal(mask)
    if phase == col.PHASE_LAST_DISCARD:
        return ACTION_TAKE if mask[ACTION_TAKE] else ACTION_PASS
    card = face_up_card(obs)
    if mask[ACTION_TAKE] and card >= 0 and take_helps(plane_mask(obs, O_HAND), card, rediscard_allowed(obs), scratch):
        return ACTION_TAKE
    if mask[ACTION_DRAW_STOCK]:
        return ACTION_DRAW_STOCK
    return ACTION_PASS if mask[ACTION_PASS] else first_legal(mask)


@njit
def greedy_kernel(observations: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
    """out[i] = the greedy action of row i."""
    scratch = np.zeros(52, dtype=np.int64)
    for i in range(observations.shape[0]):
        out[i] = greedy_row(observations[i], masks[i], scratch)


#: Fewest rows a thread's slice gets (a few microseconds of meld solving a row).
GREEDY_GRAIN = 16


class GreedyAgent(Agent):
    """Minimises deadwood, knocks at once; deterministic."""

    name = "greedy"

    def __init__(self, num_threads: int | None = None) -> None:
        self.threads = kernel_threads(num_threads)

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        check_hand_sizes(observations)
        out = np.zeros(observations.shape[0], dtype=np.int64)

        def work(lo: int, hi: int) -> None:
            greedy_kernel(*sliced(lo, hi, observations, action_masks, out))

        self.threads.run(out.shape[0], work, GREEDY_GRAIN)
        return out
