"""Numba helpers that read an observation row (observation.py's `OBS_BLOCKS`) into card masks and numbers.

The heuristics see only these: nothing here touches the engine's state. Every offset and scale comes from
`OBS_BLOCKS`, so a changed normaliser changes encoder and decoders together.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.observation import (
    DW_AFTER_SCALE,
    O_DW_AFTER,
    O_FACE_UP,
    O_HAND,
    O_OPP_DECLINED,
    O_OPP_DISCARDED,
    O_OPP_TOOK,
    O_PHASE,
    O_PILE,
    O_RULES,
    O_STOCK_SIZE,
    O_TURNS,
    O_UNSEEN,
    RULE_INDEX,
    RULE_SCALES,
    STOCK_SCALE,
    TURNS_BLOCK_SCALE,
)
from hollywood_gin_env.rules.bits import count_bits
from hollywood_gin_env.rules.cards import CARD_VALUES, NUM_CARDS, NUM_RANKS, NUM_SUITS
from hollywood_gin_env.rules.melds import MAX_HAND_CARDS
from hollywood_gin_env.support.jit import njit

_KNOCK_LIMIT = RULE_INDEX["knock_limit"]
_KNOCK_LIMIT_SCALE = float(RULE_SCALES[_KNOCK_LIMIT])
_REDISCARD = RULE_INDEX["allow_rediscard_taken_card"]


@njit
def plane_mask(obs: np.ndarray, offset: int) -> int:
    """The 52-bit card mask of a 0/1 card plane starting at obs[offset]."""
    mask = 0
    for c in range(NUM_CARDS):
        if obs[offset + c] > 0.5:
            mask |= 1 << c
    return mask


@njit
def card_value(card: int) -> int:
    """Deadwood value of a card id (cards.CARD_VALUES, RULES.md D1)."""
    return CARD_VALUES[card]


popcount = count_bits  # number of cards in a mask (melds.count_bits)


@njit
def face_up_card(obs: np.ndarray) -> int:
    """The face-up card (upcard or top of the pile), or -1."""
    for c in range(NUM_CARDS):
        if obs[O_FACE_UP + c] > 0.5:
            return c
    return -1


@njit
def phase_of(obs: np.ndarray) -> int:
    """The phase of the one-hot phase block (state.PHASE_*)."""
    for k in range(col.NUM_PHASES):
        if obs[O_PHASE + k] > 0.5:
            return k
    return col.PHASE_OVER


@njit
def dw_after(obs: np.ndarray, card: int) -> int:
    """Own deadwood after discarding `card` (discard phase)."""
    return int(round(obs[O_DW_AFTER + card] * DW_AFTER_SCALE))


@njit
def stock_size(obs: np.ndarray) -> int:
    """Cards left in the stock."""
    return int(round(obs[O_STOCK_SIZE] * STOCK_SCALE))


@njit
def turns(obs: np.ndarray) -> int:
    """Draws made in this hand so far."""
    return int(round(obs[O_TURNS] * TURNS_BLOCK_SCALE))


@njit
def knock_limit(obs: np.ndarray) -> int:
    """The knock limit of the rules (block "rules")."""
    return int(round(obs[O_RULES + _KNOCK_LIMIT] * _KNOCK_LIMIT_SCALE))


@njit
def rediscard_allowed(obs: np.ndarray) -> bool:
    """True if the rules let a player discard the card just taken from the pile."""
    return obs[O_RULES + _REDISCARD] > 0.5


@njit
def card_masks(obs: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """(hand, pile, opponent took, opponent discarded, opponent declined, unseen) masks."""
    return (
        plane_mask(obs, O_HAND),
        plane_mask(obs, O_PILE),
        plane_mask(obs, O_OPP_TOOK),
        plane_mask(obs, O_OPP_DISCARDED),
        plane_mask(obs, O_OPP_DECLINED),
        plane_mask(obs, O_UNSEEN),
    )


@njit
def first_legal(mask: np.ndarray) -> int:
    """The lowest legal action id, or 0 when none is legal."""
    for a in range(mask.shape[0]):
        if mask[a]:
            return a
    return 0


@njit
def neighbours_in(card: int, mask: int) -> int:
    """How many cards of `mask` could share a meld with `card`: same rank, or same suit within 2 ranks."""
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    count = 0
    for s in range(NUM_SUITS):
        if s != suit and (mask >> (s * NUM_RANKS + rank)) & 1:
            count += 1
    for d in (-2, -1, 1, 2):
        r = rank + d
        if 0 <= r < NUM_RANKS and (mask >> (suit * NUM_RANKS + r)) & 1:
            count += 1
    return count


def check_hand_sizes(observations: np.ndarray) -> None:
    """ValueError for a row whose hand plane holds more than 11 cards: no position has one, and the meld solver's
    set enumeration on such a "hand" grows as 5^ranks (minutes for a whole deck), so the heuristics refuse it."""
    held = (observations[:, O_HAND : O_HAND + NUM_CARDS] > 0.5).sum(axis=1)
    rows = np.flatnonzero(held > MAX_HAND_CARDS)
    if rows.size:
        i = int(rows[0])
        raise ValueError(
            f"observation row {i}: its hand plane holds {held[i]} cards, but a hand holds at most "
            f"{MAX_HAND_CARDS}; pass observations made by this package's encoder"
        )
