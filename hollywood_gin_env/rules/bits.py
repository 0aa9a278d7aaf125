"""Bit helpers on 52-bit card masks (bit c = card c, cards.py), shared by the meld solver, showdown and engine."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.rules.cards import NUM_RANKS
from hollywood_gin_env.support.jit import njit

#: The 13 rank bits of one suit.
SUIT_BITS = (1 << NUM_RANKS) - 1
#: LOWEST_RANK[m]: the lowest rank in the single-suit mask m (m > 0).
LOWEST_RANK = np.array([0] + [(m & -m).bit_length() - 1 for m in range(1, 1 << NUM_RANKS)], dtype=np.int64)


@njit
def count_bits(mask: int) -> int:
    """Number of set bits of a mask."""
    count = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count


@njit
def lowest_card(mask: int) -> int:
    """The lowest card id in a non-empty mask."""
    card = 0
    while not (mask >> card) & 1:
        card += 1
    return card


@njit
def rank_cards(hand: int, rank: int) -> int:
    """The cards of one rank that a hand holds, as a mask."""
    return hand & ((1 << rank) | (1 << (rank + 13)) | (1 << (rank + 26)) | (1 << (rank + 39)))


@njit
def next_combo(choice: np.ndarray, options: np.ndarray, count: int) -> bool:
    """Advance a mixed-radix counter (digit i runs over 0..options[i] - 1); False once all combinations were seen."""
    for i in range(count):
        choice[i] += 1
        if choice[i] < options[i]:
            return True
        choice[i] = 0
    return False
