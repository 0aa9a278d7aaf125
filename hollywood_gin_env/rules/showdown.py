"""The showdown: the defender's joint optimum of own melds and chained layoffs, and the knocker's spread.

R16-R21 and A6 of RULES.md, exact: every legal layoff sequence onto a knocker meld adds a contiguous
stretch below and/or above a run, or the fourth card of a set of three, so enumerating those
stretches per meld, times the defender's own minimum-deadwood arrangement of the rest, covers every
combination (never greedy: E3 and E8 are the traps).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hollywood_gin_env.rules.bits import count_bits, lowest_card, next_combo, rank_cards
from hollywood_gin_env.rules.cards import NUM_RANKS, from_mask
from hollywood_gin_env.rules.melds import (
    BIG,
    MAX_ARRANGEMENTS,
    MAX_MELDS,
    MAX_SET_RANKS,
    arrange,
    hand_mask,
    min_arrangements_mask,
    min_deadwood_mask,
)
from hollywood_gin_env.support.jit import njit

#: Room for the layoff options of one knocker meld: a run with a free ranks above it and b below
#: (a + b <= 10 for a 10-card defender) has at most (a + 1)(b + 1) <= 36 of them; a set has at most 2.
MAX_EXTENSIONS = 200


@njit
def _meld_is_set(meld: int) -> bool:
    """True if all cards of a meld share one rank."""
    rank = lowest_card(meld) % NUM_RANKS
    return meld == rank_cards(meld, rank)


@njit
def _meld_extensions(meld: int, defender: int, ext: np.ndarray) -> int:
    """Layoff options of one knocker meld against the defender's cards: masks written to ext; count."""
    ext[0] = 0
    if _meld_is_set(meld):
        if count_bits(meld) == 3:
            fourth = rank_cards(-1, lowest_card(meld) % NUM_RANKS) & ~meld
            if defender & fourth:
                ext[1] = fourth
                return 2
        return 1
    lowest = lowest_card(meld)
    suit_base = 13 * (lowest // 13)
    highest = lowest
    while highest + 1 < suit_base + 13 and (meld >> (highest + 1)) & 1:
        highest += 1
    below = np.zeros(14, dtype=np.int64)
    n_below = 1
    card = lowest - 1
    while card >= suit_base and (defender >> card) & 1:
        below[n_below] = below[n_below - 1] | (1 << card)
        n_below += 1
        card -= 1
    n = 0
    above = 0
    card = highest + 1
    while True:
        for b in range(n_below):
            ext[n] = below[b] | above
            n += 1
        if card >= suit_base + 13 or not (defender >> card) & 1:
            break
        above |= 1 << card
        card += 1
    return n


@njit
def defender_optimum_mask(knocker_melds: np.ndarray, n_melds: int, defender: int, layoffs: np.ndarray) -> int:
    """Defender's minimum deadwood over own melds and chained layoffs (R17-R21); layoffs[j] gets meld j's.

    Every legal layoff sequence onto a meld adds a contiguous stretch below and/or above a run, or
    the fourth card of a set of three, so enumerating those stretches per meld covers all chains.
    """
    ext = np.zeros((n_melds, MAX_EXTENSIONS), dtype=np.int64)
    options = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    choice = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    for j in range(n_melds):
        options[j] = _meld_extensions(knocker_melds[j], defender, ext[j])
    best = BIG
    while True:
        laid, overlap = 0, False
        for j in range(n_melds):
            overlap = overlap or (laid & ext[j, choice[j]]) != 0
            laid |= ext[j, choice[j]]
        if not overlap:
            value = min_deadwood_mask(defender & ~laid)
            if value < best:
                best = value
                for j in range(n_melds):
                    layoffs[j] = ext[j, choice[j]]
        if not next_combo(choice, options, n_melds):
            break
    return best


@njit
def showdown_mask(knocker: int, defender: int, melds: np.ndarray, layoffs: np.ndarray) -> tuple[int, int, int]:
    """Knocker deadwood k, defender deadwood d, and the knocker's number of melds (R13-R22, A6).

    The knocker spreads the minimum-deadwood arrangement that leaves the defender the highest d
    (A6); after gin the defender lays nothing off (R16). melds/layoffs receive the chosen spread.
    """
    arrangements = np.zeros((MAX_ARRANGEMENTS, MAX_MELDS), dtype=np.int64)
    counts = np.zeros(MAX_ARRANGEMENTS, dtype=np.int64)
    found = min_arrangements_mask(knocker, arrangements, counts)
    knocker_deadwood = min_deadwood_mask(knocker)
    trial = np.zeros(MAX_MELDS, dtype=np.int64)
    best_d, best_a = -1, 0
    for a in range(found):
        trial[:] = 0
        if knocker_deadwood == 0:
            d = min_deadwood_mask(defender)
        else:
            d = defender_optimum_mask(arrangements[a], counts[a], defender, trial)
        if d > best_d:
            best_d, best_a = d, a
            for j in range(MAX_MELDS):
                layoffs[j] = trial[j] if knocker_deadwood > 0 else 0
    for j in range(MAX_MELDS):
        melds[j] = arrangements[best_a, j]
    return knocker_deadwood, best_d, counts[best_a]


def showdown(knocker: str | Iterable[int], defender: str | Iterable[int]) -> dict:
    """The automatic showdown of a knocker's 10 cards (after the discard) against the defender's 10.

    Returns {"knocker_deadwood", "defender_deadwood", "gin", "knocker_melds", "knocker_deadwood_cards",
    "layoffs" (per knocker meld), "defender_melds", "defender_deadwood_cards"}.
    """
    knocker_mask, defender_mask = hand_mask(knocker), hand_mask(defender)
    if knocker_mask & defender_mask:
        raise ValueError("the knocker's and the defender's cards overlap")
    melds = np.zeros(MAX_MELDS, dtype=np.int64)
    layoffs = np.zeros(MAX_MELDS, dtype=np.int64)
    k, d, n = showdown_mask(knocker_mask, defender_mask, melds, layoffs)
    laid = int(np.bitwise_or.reduce(layoffs[:n])) if n else 0
    own_melds, own_deadwood = arrange(from_mask(defender_mask & ~laid)) if defender_mask & ~laid else ([], [])
    return {
        "knocker_deadwood": int(k),
        "defender_deadwood": int(d),
        "gin": int(k) == 0,
        "knocker_melds": [from_mask(int(m)) for m in melds[:n]],
        "knocker_deadwood_cards": from_mask(knocker_mask & ~int(np.bitwise_or.reduce(melds[:n]) if n else 0)),
        "layoffs": [from_mask(int(m)) for m in layoffs[:n]],
        "defender_melds": own_melds,
        "defender_deadwood_cards": own_deadwood,
    }
