"""The exact meld solver: minimum deadwood, arrangements, best discards, and the showdown optimum.

Hands are 52-bit masks (int64, bit c = card c, see cards.py). Within one suit, with the sets taken
out, the best use of runs is fixed: every card of a maximal stretch of >= 3 consecutive ranks is
melded, the rest is deadwood. So a 8,192-entry table gives each suit's run-only deadwood, and a
hand's minimum is the best, over the few ways to use its sets (ranks with 3 or 4 cards), of four
table lookups (benchmarks/README.md). The numba kernels (`*_mask`, `_` prefix) are what
the engine calls; the list-based functions at the bottom are the public Python API.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hollywood_gin_env.rules.bits import LOWEST_RANK, SUIT_BITS, count_bits, next_combo, rank_cards
from hollywood_gin_env.rules.cards import CARD_VALUES, NUM_RANKS, as_cards, cards_str, from_mask, to_mask
from hollywood_gin_env.support.jit import njit

MAX_MELDS = 17  # 52 cards make at most 17 melds of 3
MAX_SET_RANKS = 13
#: Arrangements of one hand the solver may list: a hand of <= 11 cards has at most 3 ranks of >= 3 cards,
#: each with at most 6 ways to use it (none, all four, or one of the four sets of three).
MAX_ARRANGEMENTS = 6**3
BIG = 1 << 30  # more deadwood than any hand: "no such option"


def _stretches(suit_mask: int) -> list[tuple[int, int]]:
    """Maximal stretches (lo, hi) of consecutive ranks in a 13-bit suit mask."""
    out, rank = [], 0
    while rank < NUM_RANKS:
        if suit_mask >> rank & 1:
            lo = rank
            while rank + 1 < NUM_RANKS and suit_mask >> (rank + 1) & 1:
                rank += 1
            out.append((lo, rank))
        rank += 1
    return out


def _build_suit_tables() -> tuple[np.ndarray, np.ndarray]:
    deadwood = np.zeros(1 << NUM_RANKS, dtype=np.int64)
    melded = np.zeros(1 << NUM_RANKS, dtype=np.int64)
    for mask in range(1 << NUM_RANKS):
        for lo, hi in _stretches(mask):
            bits = ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)
            if hi - lo >= 2:
                melded[mask] |= bits
            else:
                deadwood[mask] += sum(int(CARD_VALUES[r]) for r in range(lo, hi + 1))
    return deadwood, melded


#: SUIT_DEADWOOD[m]: run-only deadwood of the single-suit mask m; SUIT_MELDED[m]: its melded ranks.
SUIT_DEADWOOD, SUIT_MELDED = _build_suit_tables()


def _build_drop_table() -> np.ndarray:
    masks = np.arange(1 << NUM_RANKS)
    best = np.full(masks.shape, BIG, dtype=np.int64)
    for rank in range(NUM_RANKS):
        held = (masks >> rank) & 1 == 1
        best[held] = np.minimum(best[held], SUIT_DEADWOOD[masks[held] ^ (1 << rank)])
    return best


#: SUIT_BEST_DROP[m]: the lowest run-only deadwood of m less one of its cards (BIG for the empty mask).
SUIT_BEST_DROP = _build_drop_table()


@njit
def _runs_deadwood(rest: int) -> int:
    """Run-only deadwood of a hand mask (the sum of four table lookups)."""
    return (
        SUIT_DEADWOOD[rest & SUIT_BITS]
        + SUIT_DEADWOOD[(rest >> 13) & SUIT_BITS]
        + SUIT_DEADWOOD[(rest >> 26) & SUIT_BITS]
        + SUIT_DEADWOOD[(rest >> 39) & SUIT_BITS]
    )


@njit
def _set_option(cards: int, option: int) -> int:
    """Cards of set option `option` of a rank (0 none, 1 all, 2..5 all but suit option-2); -1 if invalid."""
    if option == 0:
        return 0
    if option == 1:
        return cards
    if count_bits(cards) < 4:
        return -1
    return cards & ~(cards & (SUIT_BITS << (13 * (option - 2))))


@njit
def _set_ranks(hand: int, ranks: np.ndarray, options: np.ndarray) -> int:
    """Fill the ranks with >= 3 cards and their option counts (2 or 6); return how many."""
    count = 0
    for rank in range(NUM_RANKS):
        held = count_bits(rank_cards(hand, rank))
        if held >= 3:
            ranks[count] = rank
            options[count] = 2 if held == 3 else 6
            count += 1
    return count


@njit
def _combo_sets(hand: int, ranks: np.ndarray, choice: np.ndarray, count: int) -> int:
    """Union of the set cards of one combination of set options; -1 if the combination is invalid."""
    removed = 0
    for i in range(count):
        cards = _set_option(rank_cards(hand, ranks[i]), choice[i])
        if cards < 0:
            return -1
        removed |= cards
    return removed


@njit
def _set_ranks3(hand: int) -> tuple[int, int, int, int, int, int, int]:
    """(count, rank, options) x 3 of the first three ranks with >= 3 cards; count 4 means "more than 3"."""
    n, r0, o0, r1, o1, r2, o2 = 0, 0, 1, 0, 1, 0, 1
    for rank in range(NUM_RANKS):
        held = ((hand >> rank) & 1) + ((hand >> (rank + 13)) & 1) + ((hand >> (rank + 26)) & 1)
        held += (hand >> (rank + 39)) & 1
        if held >= 3:
            options = 2 if held == 3 else 6
            if n == 0:
                r0, o0 = rank, options
            elif n == 1:
                r1, o1 = rank, options
            elif n == 2:
                r2, o2 = rank, options
            else:
                return 4, r0, o0, r1, o1, r2, o2
            n += 1
    return n, r0, o0, r1, o1, r2, o2


@njit
def _combo3(c0: int, c1: int, c2: int, o0: int, o1: int, combo: int) -> int:
    """Set cards of combination `combo` (mixed radix o0, o1, ...) of three ranks' set options; -1 if invalid."""
    s0 = _set_option(c0, combo % o0)
    s1 = _set_option(c1, (combo // o0) % o1)
    s2 = _set_option(c2, combo // (o0 * o1))
    if s0 < 0 or s1 < 0 or s2 < 0:
        return -1
    return s0 | s1 | s2


@njit
def _min_deadwood_general(hand: int) -> int:
    """Minimum deadwood for hands with any number of set ranks (the mixed-radix enumeration)."""
    ranks = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    options = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    choice = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    count = _set_ranks(hand, ranks, options)
    best = _runs_deadwood(hand)
    while next_combo(choice, options, count):
        removed = _combo_sets(hand, ranks, choice, count)
        if removed >= 0:
            best = min(best, _runs_deadwood(hand & ~removed))
    return best


@njit
def min_deadwood_mask(hand: int) -> int:
    """Minimum deadwood count of a hand mask of any size.

    Up to three set ranks (every hand of at most 11 cards) are enumerated without allocation; larger
    hands take the general path.
    """
    n, r0, o0, r1, o1, r2, o2 = _set_ranks3(hand)
    if n == 0:
        return _runs_deadwood(hand)
    if n > 3:
        return _min_deadwood_general(hand)
    c0, c1, c2 = rank_cards(hand, r0), rank_cards(hand, r1), rank_cards(hand, r2)
    best = BIG
    for combo in range(o0 * o1 * o2):
        removed = _combo3(c0, c1, c2, o0, o1, combo)
        if removed >= 0:
            best = min(best, _runs_deadwood(hand & ~removed))
    return best


@njit
def min_deadwood_batch(hands: np.ndarray, out: np.ndarray) -> None:
    """out[i] = minimum deadwood of hands[i] (int64 masks)."""
    for i in range(hands.shape[0]):
        out[i] = min_deadwood_mask(hands[i])


@njit
def _discard_update(hand: int, removed: int, out: np.ndarray) -> None:
    """Lower out[c] to the deadwood of hand - c under one set combination, for each card c outside its sets.

    Dropping card c changes only the lookup of its own suit.
    """
    rest = hand & ~removed
    total = _runs_deadwood(rest)
    for suit in range(4):
        shift = 13 * suit
        bits = (rest >> shift) & SUIT_BITS
        base = total - SUIT_DEADWOOD[bits]
        remaining = bits
        while remaining:
            rank = LOWEST_RANK[remaining]
            remaining ^= 1 << rank
            value = base + SUIT_DEADWOOD[bits ^ (1 << rank)]
            if value < out[shift + rank]:
                out[shift + rank] = value


@njit
def discard_deadwoods_mask(hand: int, out: np.ndarray) -> None:
    """out[c] = minimum deadwood of hand minus card c, for each card c in hand (others: BIG).

    Every set combination of hand - c is a combination of hand that leaves c out of its sets, so
    one pass over the combinations of the whole hand serves all discards.
    """
    out[:] = BIG
    n, r0, o0, r1, o1, r2, o2 = _set_ranks3(hand)
    if n > 3:
        for card in range(52):
            if (hand >> card) & 1:
                out[card] = _min_deadwood_general(hand & ~(1 << card))
        return
    c0, c1, c2 = rank_cards(hand, r0), rank_cards(hand, r1), rank_cards(hand, r2)
    for combo in range(o0 * o1 * o2):
        removed = _combo3(c0, c1, c2, o0, o1, combo)
        if removed >= 0:
            _discard_update(hand, removed, out)


@njit
def _pair_update(hand: int, removed: int, out: np.ndarray) -> None:
    """Lower out[c] and out[d] to the deadwood of hand - c - d under one set combination, for each pair of cards
    c, d outside its sets.

    Dropping two cards changes only the lookups of their suits: one lookup if they share a suit, two if not.
    """
    rest = hand & ~removed
    total = _runs_deadwood(rest)
    for suit in range(4):
        bits = (rest >> (NUM_RANKS * suit)) & SUIT_BITS
        base = total - SUIT_DEADWOOD[bits]
        remaining = bits
        while remaining:
            rank = LOWEST_RANK[remaining]
            remaining ^= 1 << rank
            card, without = NUM_RANKS * suit + rank, bits ^ (1 << rank)
            higher = remaining  # the same suit's higher ranks: each pair once
            while higher:
                other = LOWEST_RANK[higher]
                higher ^= 1 << other
                value = base + SUIT_DEADWOOD[without ^ (1 << other)]
                out[card] = min(out[card], value)
                out[NUM_RANKS * suit + other] = min(out[NUM_RANKS * suit + other], value)
            dropped = base + SUIT_DEADWOOD[without]  # the deadwood of rest - card
            for other_suit in range(suit + 1, 4):
                other_bits = (rest >> (NUM_RANKS * other_suit)) & SUIT_BITS
                other_base = dropped - SUIT_DEADWOOD[other_bits]
                others = other_bits
                while others:
                    other = LOWEST_RANK[others]
                    others ^= 1 << other
                    value = other_base + SUIT_DEADWOOD[other_bits ^ (1 << other)]
                    out[card] = min(out[card], value)
                    out[NUM_RANKS * other_suit + other] = min(out[NUM_RANKS * other_suit + other], value)


@njit
def pair_discard_deadwoods_mask(hand: int, out: np.ndarray) -> None:
    """out[c] = minimum deadwood of hand minus card c and the best other card, for each card c in hand (others: BIG).

    As in `discard_deadwoods_mask`, one pass over the set combinations of the whole hand serves every pair of
    discards (a set combination of hand - c - d is one of hand that leaves c and d out of its sets).
    """
    out[:] = BIG
    n, r0, o0, r1, o1, r2, o2 = _set_ranks3(hand)
    if n > 3:  # only hands of 12 cards or more; hand - c has fewer set ranks
        single = np.empty(52, dtype=np.int64)
        for card in range(52):
            if (hand >> card) & 1:
                discard_deadwoods_mask(hand & ~(1 << card), single)
                out[card] = single.min()
        return
    c0, c1, c2 = rank_cards(hand, r0), rank_cards(hand, r1), rank_cards(hand, r2)
    for combo in range(o0 * o1 * o2):
        removed = _combo3(c0, c1, c2, o0, o1, combo)
        if removed >= 0:
            _pair_update(hand, removed, out)


@njit
def best_deadwood_taking(hand: int, card: int, may_discard_card: bool) -> int:
    """Lowest deadwood of hand + card after one discard (the taken card itself excluded unless may_discard_card).

    The same one pass over the set combinations as `discard_deadwoods_mask`, keeping only the minimum.
    """
    full = hand | (1 << card)
    n, r0, o0, r1, o1, r2, o2 = _set_ranks3(full)
    best = BIG
    if n > 3:  # only hands of 12 cards or more
        for c in range(52):
            if (full >> c) & 1 and (c != card or may_discard_card):
                best = min(best, _min_deadwood_general(full & ~(1 << c)))
        return best
    barred_suit, barred = (card // NUM_RANKS, 1 << (card % NUM_RANKS)) if not may_discard_card else (-1, 0)
    c0, c1, c2 = rank_cards(full, r0), rank_cards(full, r1), rank_cards(full, r2)
    for combo in range(o0 * o1 * o2):
        removed = _combo3(c0, c1, c2, o0, o1, combo)
        if removed < 0:
            continue
        rest = full & ~removed
        total = _runs_deadwood(rest)
        for suit in range(4):
            bits = (rest >> (NUM_RANKS * suit)) & SUIT_BITS
            base = total - SUIT_DEADWOOD[bits]
            if suit != barred_suit:
                best = min(best, base + SUIT_BEST_DROP[bits])
                continue
            remaining = bits & ~barred
            while remaining:
                rank = LOWEST_RANK[remaining]
                remaining ^= 1 << rank
                best = min(best, base + SUIT_DEADWOOD[bits ^ (1 << rank)])
    return best


@njit
def _append_runs(melded: int, melds: np.ndarray, n: int) -> int:
    """Append each maximal stretch of a run-melded mask as one run; return the new meld count."""
    for suit in range(4):
        bits = (melded >> (13 * suit)) & SUIT_BITS
        rank = 0
        while rank < NUM_RANKS:
            if (bits >> rank) & 1:
                run = 0
                while rank < NUM_RANKS and (bits >> rank) & 1:
                    run |= 1 << (rank + 13 * suit)
                    rank += 1
                melds[n] = run
                n += 1
            rank += 1
    return n


@njit
def _runs_melded(rest: int) -> int:
    """Mask of the cards that runs meld in a hand mask."""
    melded = 0
    for suit in range(4):
        melded |= SUIT_MELDED[(rest >> (13 * suit)) & SUIT_BITS] << (13 * suit)
    return melded


@njit
def _write_arrangement(hand: int, ranks: np.ndarray, choice: np.ndarray, count: int, melds: np.ndarray) -> int:
    """Write the melds of one set combination (sets, then runs) into melds; return their number."""
    n = 0
    removed = 0
    for i in range(count):
        cards = _set_option(rank_cards(hand, ranks[i]), choice[i])
        if cards > 0:
            melds[n] = cards
            n += 1
            removed |= cards
    return _append_runs(_runs_melded(hand & ~removed), melds, n)


@njit
def min_arrangements_mask(hand: int, out_melds: np.ndarray, out_counts: np.ndarray) -> int:
    """Write every minimum-deadwood arrangement (distinct set choices); return how many.

    out_melds[a, j] is meld j of arrangement a, out_counts[a] its number of melds.
    """
    ranks = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    options = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    choice = np.zeros(MAX_SET_RANKS, dtype=np.int64)
    count = _set_ranks(hand, ranks, options)
    best = min_deadwood_mask(hand)
    found = 0
    while found < out_melds.shape[0]:
        removed = _combo_sets(hand, ranks, choice, count)
        if removed >= 0 and _runs_deadwood(hand & ~removed) == best:
            out_counts[found] = _write_arrangement(hand, ranks, choice, count, out_melds[found])
            found += 1
        if not next_combo(choice, options, count):
            break
    return found


# --- Public Python API on card lists --------------------------------------------------------


#: The most cards a gin hand holds. The solver enumerates the ways to use every rank held 3 or 4 times, which is
#: instant for a hand but grows as 5^ranks: a whole deck would run for minutes, so larger inputs are refused.
MAX_HAND_CARDS = 11


def hand_mask(cards: str | Iterable[int] | Iterable[str]) -> int:
    """The mask of a hand of at most MAX_HAND_CARDS cards (card ids or strings); ValueError otherwise."""
    ids = as_cards(cards)
    if len(ids) > MAX_HAND_CARDS:
        raise ValueError(f"a hand holds at most {MAX_HAND_CARDS} cards, got {len(ids)}: {cards_str(ids)}")
    return to_mask(ids)


def min_deadwood(cards: str | Iterable[int]) -> int:
    """Minimum deadwood count of a hand of 0 to 11 cards (card ids or a card string)."""
    return int(min_deadwood_mask(hand_mask(cards)))


def arrange(cards: str | Iterable[int]) -> tuple[list[list[int]], list[int]]:
    """One optimal arrangement of 0 to 11 cards: (melds as sorted card-id lists, deadwood cards)."""
    hand = hand_mask(cards)
    melds = np.zeros((MAX_ARRANGEMENTS, MAX_MELDS), dtype=np.int64)
    counts = np.zeros(MAX_ARRANGEMENTS, dtype=np.int64)
    min_arrangements_mask(hand, melds, counts)
    meld_lists = [from_mask(int(m)) for m in melds[0, : counts[0]]]
    melded = to_mask(c for meld in meld_lists for c in meld)
    return meld_lists, from_mask(hand & ~melded)


def best_discards(cards11: str | Iterable[int]) -> tuple[int, list[int]]:
    """(lowest deadwood after one discard, every card whose discard reaches it) for 11 cards."""
    cards = as_cards(cards11)
    if len(cards) != 11:
        raise ValueError(f"best_discards takes 11 cards, got {len(cards)}")
    out = np.zeros(52, dtype=np.int64)
    discard_deadwoods_mask(to_mask(cards), out)
    best = int(out.min())
    return best, sorted(c for c in cards if out[c] == best)
