"""`SimpleAgent`: the EAAI-2021 gin rummy challenge's baseline player, `SimpleGinRummyPlayer`, batched.

The challenge's framework (Todd Neller's `ginrummy` package) ships it as the yardstick every entry was measured
against. Its policy, as the framework documents and plays it, in this engine's actions:

- Take or draw: take the face-up card (the upcard during the offer, the pile's top afterwards, the last discard
  under `may_take_to_knock`) exactly when it joins a meld of the hand plus that card: two more cards of its rank, or
  two cards of its suit that make a run of three with it. No deadwood is counted. Otherwise draw from the stock, or
  pass the offer.
- Discard: a uniformly random card among those whose discard leaves the least deadwood (the exact meld solver's,
  the observation's "deadwood_after_discard"), never the face-up card just taken.
- Knock: the framework's player discards first and then knocks when the ten cards left have deadwood at most the
  knock limit. So it knocks at the first legal chance, discarding a uniformly random one of the least-deadwood
  cards (gin when it can); the engine arranges the melds (RULES.md A6), where the framework's player spreads a
  random minimum-deadwood arrangement.

Where it differs from the framework's player, for lack of what the observation holds: the framework's player also never
repeats a (drawn card, discarded card) pair within a hand, its guard against endless take-and-discard cycles; the
observation keeps no such history (the engine ends an endless hand at 200 turns, RULES.md A22). The card just
taken is left out by the action mask (RULES.md R9); under `allow_rediscard_taken_card=True` the observation does
not say which card was taken, so the player may then throw it back. docs/EVALUATION.md compares it with
OpenSpiel's port.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents._features import (
    check_hand_sizes,
    dw_after,
    face_up_card,
    first_legal,
    phase_of,
    plane_mask,
)
from hollywood_gin_env.agents.base import Agent, as_batch
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.observation import O_HAND
from hollywood_gin_env.engine.sampling import sample_legal
from hollywood_gin_env.engine.threads import kernel_threads, sliced
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.bits import SUIT_BITS, count_bits, rank_cards
from hollywood_gin_env.rules.cards import NUM_CARDS, NUM_RANKS
from hollywood_gin_env.rules.melds import BIG
from hollywood_gin_env.support.jit import njit
from hollywood_gin_env.support.streams import check_seed

#: Fewest rows a thread's slice gets: a row costs well under a microsecond (no meld solving).
SIMPLE_GRAIN = 256


@njit
def joins_meld(hand: int, card: int) -> bool:
    """True if some meld of hand + card holds card: two more cards of its rank, or a run of three through it."""
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    ranks = ((hand >> (suit * NUM_RANKS)) & SUIT_BITS) | (1 << rank)  # the ranks held in its suit, its own added
    run_starts = ranks & (ranks >> 1) & (ranks >> 2)  # bit r: ranks r, r + 1 and r + 2 all there
    through = run_starts & ((7 << rank) >> 2)  # runs of three starting at rank - 2, rank - 1 or rank
    return count_bits(rank_cards(hand, rank) & ~(1 << card)) >= 2 or through != 0


@njit
def discard_choices(obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """Mark in out every least-deadwood discard the mask allows: as a knock where the knock is legal."""
    best = BIG
    for c in range(NUM_CARDS):
        if mask[DISCARD_BASE + c] or mask[KNOCK_BASE + c]:
            best = min(best, dw_after(obs, c))
    for c in range(NUM_CARDS):
        if (mask[DISCARD_BASE + c] or mask[KNOCK_BASE + c]) and dw_after(obs, c) == best:
            out[KNOCK_BASE + c if mask[KNOCK_BASE + c] else DISCARD_BASE + c] = 1


@njit
def simple_row(obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """Mark in out (zeroed int8[107]) the actions the player chooses among, uniformly, for one observation row."""
    if phase_of(obs) == col.PHASE_DISCARD:
        discard_choices(obs, mask, out)
    else:
        card = face_up_card(obs)
        if mask[ACTION_TAKE] and card >= 0 and joins_meld(plane_mask(obs, O_HAND), card):
            out[ACTION_TAKE] = 1
        elif mask[ACTION_DRAW_STOCK]:
            out[ACTION_DRAW_STOCK] = 1
        elif mask[ACTION_PASS]:
            out[ACTION_PASS] = 1
    if not out.any() and mask.any():  # no choice above is legal: keep to the mask
        out[first_legal(mask)] = 1


@njit
def simple_kernel(observations: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
    """out[i] (zeroed) = the actions the player chooses among for row i."""
    for i in range(observations.shape[0]):
        simple_row(observations[i], masks[i], out[i])


class SimpleAgent(Agent):
    """The EAAI challenge's `SimpleGinRummyPlayer` (module docstring); `reset(seed)` makes its tie-breaks
    reproducible."""

    name = "simple"

    def __init__(self, seed: int | None = None, num_threads: int | None = None) -> None:
        self.threads = kernel_threads(num_threads)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator of the tie-breaks."""
        self._rng = np.random.default_rng(None if seed is None else check_seed(seed))

    def choices(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """int8[B, 107]: 1 for each action the player chooses with positive (equal) probability in each row; `act`
        draws one of them uniformly."""
        observations, action_masks = as_batch(observations, action_masks)
        check_hand_sizes(observations)
        out = np.zeros(action_masks.shape, dtype=np.int8)

        def work(lo: int, hi: int) -> None:
            simple_kernel(*sliced(lo, hi, observations, action_masks, out))

        self.threads.run(out.shape[0], work, SIMPLE_GRAIN)
        return out

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        uniforms = self._rng.random(observations.shape[0])  # one draw a row, whatever the threads
        return sample_legal(self.choices(observations, action_masks), uniforms)
