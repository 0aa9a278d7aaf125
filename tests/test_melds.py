"""The meld solver against a plain exhaustive brute force (RULES.md D2, D3, R12, R13, R16-R21, A6, E1-E8).

The brute force below is deliberately naive: it lists every valid meld of a hand, walks every collection of
disjoint melds, and for the showdown walks every legal sequence of layoffs. It is slow and obviously correct;
the solver in hollywood_gin_env/rules/melds.py is fast and clever, and must agree with it.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from hollywood_gin_env.rules import melds
from hollywood_gin_env.rules.cards import cards_str, parse_cards, to_mask
from hollywood_gin_env.rules.showdown import showdown

# --- Brute force, written from RULES.md D1-D3 and R16-R21 only ----------------------------------------------


def rank(card: int) -> int:
    return card % 13


def suit(card: int) -> int:
    return card // 13


def value(card: int) -> int:
    """D1: A=1, 2..9 face value, T/J/Q/K=10."""
    return min(rank(card) + 1, 10)


def total(cards) -> int:
    return sum(value(c) for c in cards)


def is_valid_meld(cards) -> bool:
    """D2: a set is 3-4 cards of one rank; a run is >= 3 cards of one suit with consecutive ranks, ace low."""
    cards = set(cards)
    if len(cards) < 3:
        return False
    if len({rank(c) for c in cards}) == 1:
        return True  # 3 or 4 distinct cards of one rank
    if len({suit(c) for c in cards}) != 1:
        return False
    ranks = sorted(rank(c) for c in cards)
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def all_melds(hand) -> list[frozenset]:
    """Every valid meld inside a hand: each 3- or 4-subset of a rank, each window of >= 3 ranks of a suit."""
    hand = set(hand)
    found = []
    for r in range(13):
        same_rank = sorted(c for c in hand if rank(c) == r)
        for size in (3, 4):
            found += [frozenset(m) for m in itertools.combinations(same_rank, size)]
    for s in range(4):
        for lo in range(13):
            for hi in range(lo + 2, 13):
                run = frozenset(13 * s + r for r in range(lo, hi + 1))
                if run <= hand:
                    found.append(run)
    return found


def all_arrangements(hand):
    """Yield every collection of pairwise disjoint melds of the hand (as a list of frozensets)."""
    candidates = all_melds(hand)

    def extend(start, used, chosen):
        yield chosen
        for i in range(start, len(candidates)):
            if not candidates[i] & used:
                yield from extend(i + 1, used | candidates[i], [*chosen, candidates[i]])

    yield from extend(0, frozenset(), [])


def arrangement_deadwood(hand, arrangement) -> int:
    melded = set().union(*arrangement) if arrangement else set()
    return total(set(hand) - melded)


@functools.cache
def _brute_min_deadwood(hand: frozenset) -> int:
    return min(arrangement_deadwood(hand, a) for a in all_arrangements(hand))


def brute_min_deadwood(hand) -> int:
    """D3: min_dw(hand), the smallest deadwood count over all arrangements."""
    return _brute_min_deadwood(frozenset(hand))


def brute_min_arrangements(hand) -> list[list[frozenset]]:
    """Every arrangement of the hand whose deadwood is the minimum (long runs split every way included)."""
    arrangements = list(all_arrangements(hand))
    best = min(arrangement_deadwood(hand, a) for a in arrangements)
    return [a for a in arrangements if arrangement_deadwood(hand, a) == best]


def reachable_layoff_sets(knocker_melds, defender) -> set[frozenset]:
    """R18/R19: every set of defender cards that can be laid off in some legal sequence (chains included)."""
    defender = frozenset(defender)
    seen, results = set(), set()

    def visit(table, laid):
        if (table, laid) in seen:
            return
        seen.add((table, laid))
        results.add(laid)
        for x in defender - laid:
            for j, meld in enumerate(table):
                if is_valid_meld(meld | {x}):
                    visit((*table[:j], meld | {x}, *table[j + 1 :]), laid | {x})

    visit(tuple(frozenset(m) for m in knocker_melds), frozenset())
    return results


def brute_defender_optimum(knocker_melds, defender) -> int:
    """R17-R21: the defender's minimum deadwood over every legal layoff set L and own melds of the rest."""
    return min(brute_min_deadwood(set(defender) - laid) for laid in reachable_layoff_sets(knocker_melds, defender))


def brute_showdown(knocker, defender) -> tuple[int, int]:
    """(k, d) under knocker_arrangement="auto" (A6): the min-deadwood spread maximising the defender's d."""
    spreads = brute_min_arrangements(knocker)
    k = arrangement_deadwood(knocker, spreads[0])
    if k == 0:
        return 0, brute_min_deadwood(defender)  # R16: after gin nothing is laid off
    return k, max(brute_defender_optimum(spread, defender) for spread in spreads)


def is_legal_chain(meld, cards) -> bool:
    """True if the cards can be laid onto the meld one at a time, every step a valid meld (R18, R19)."""
    meld, cards = frozenset(meld), frozenset(cards)
    if not cards:
        return True
    return any(is_valid_meld(meld | {x}) and is_legal_chain(meld | {x}, cards - {x}) for x in cards)


# --- Hand generators ----------------------------------------------------------------------------------------


def random_hand(rng, size: int) -> list[int]:
    return rng.choice(52, size=size, replace=False).tolist()


def meld_rich_hand(rng, size: int, n_ranks: int, consecutive: bool) -> list[int]:
    """`size` cards drawn from few ranks (all four suits), e.g. 11 of the 16 cards 5-8."""
    if consecutive:
        lo = int(rng.integers(0, 13 - n_ranks + 1))
        ranks = list(range(lo, lo + n_ranks))
    else:
        ranks = rng.choice(13, size=n_ranks, replace=False).tolist()
    pool = [13 * s + r for s in range(4) for r in ranks]
    hand = rng.choice(pool, size=min(size, len(pool)), replace=False).tolist()
    rest = [c for c in range(52) if c not in hand]
    return hand + rng.choice(rest, size=size - len(hand), replace=False).tolist()


def random_meld(rng, available: set[int]) -> set[int] | None:
    """A random set (3 or 4 cards) or run (3 to 5 cards) made of available cards, or None."""
    if rng.random() < 0.4:
        r = int(rng.integers(13))
        same_rank = [13 * s + r for s in range(4) if 13 * s + r in available]
        if len(same_rank) < 3:
            return None
        return set(rng.choice(same_rank, size=int(rng.integers(3, len(same_rank) + 1)), replace=False).tolist())
    s, length = int(rng.integers(4)), int(rng.integers(3, 6))
    lo = int(rng.integers(0, 13 - length + 1))
    run = {13 * s + r for r in range(lo, lo + length)}
    return run if run <= available else None


def neighbours(meld: set[int]) -> set[int]:
    """Cards that could extend a meld, directly or through a chain: the other cards of a set's rank,
    and up to three cards past each end of a run."""
    if len({rank(c) for c in meld}) == 1:
        r = rank(next(iter(meld)))
        return {13 * s + r for s in range(4)} - meld
    s = suit(next(iter(meld)))
    ranks = [rank(c) for c in meld]
    near = set(range(min(ranks) - 3, min(ranks))) | set(range(max(ranks) + 1, max(ranks) + 4))
    return {13 * s + r for r in near if 0 <= r < 13}


def crossing_melds(rng) -> list[set[int]]:
    """A run and a set that share one card x: either a run of 3-4 through x with two more of x's rank
    (2S 3S 4S + 3H 3D: one of the two is spread), or a run of 4-5 ending at x with all four of x's rank
    (5S-8S + 8H 8D 8C: all melded two ways, and only one of them takes 9S)."""
    x = int(rng.integers(52))
    others = [13 * s + rank(x) for s in range(4) if s != suit(x)]
    length = int(rng.integers(3, 5))
    if rng.random() < 0.5:
        lo = int(rng.integers(max(0, rank(x) - length + 1), min(rank(x), 13 - length) + 1))
        return [
            {13 * suit(x) + r for r in range(lo, lo + length)},
            {x, *rng.choice(others, 2, replace=False).tolist()},
        ]
    ranks = range(rank(x) - length, rank(x) + 1) if rank(x) >= length else range(rank(x), rank(x) + length + 1)
    return [{13 * suit(x) + r for r in ranks}, {x, *others}]


def random_knocker(rng, gin: bool = False) -> tuple[list[int], list[set[int]]]:
    """10 cards with 1 <= min deadwood <= 10 (0 if gin), built around random melds, often crossing ones."""
    while True:
        built = crossing_melds(rng) if rng.random() < 0.5 else []
        for _ in range(20):
            used = set().union(*built)
            meld = random_meld(rng, set(range(52)) - used)
            if meld and len(used | meld) <= 10:
                built.append(meld)
        hand = set().union(*built)
        if gin and len(hand) != 10:
            continue
        low_cards = [c for c in range(52) if c not in hand and (rank(c) <= 4 or rng.random() < 0.2)]
        hand |= set(rng.choice(low_cards, size=10 - len(hand), replace=False).tolist())
        k = brute_min_deadwood(hand)
        if (k == 0) if gin else (1 <= k <= 10):
            return sorted(hand), built


def random_defender(rng, knocker: list[int], built: list[set[int]]) -> list[int]:
    """10 cards biased towards layoffs: neighbours of the knocker's melds, melds through them, random fill."""
    available = set(range(52)) - set(knocker)
    near = sorted(set().union(*(neighbours(m) for m in built)) & available) if built else []
    if near and rng.random() < 0.3:
        # Meld-rich: every card of the ranks next to the knocker's melds is a candidate.
        near_ranks = {rank(c) for c in near}
        near = sorted(c for c in available if rank(c) in near_ranks)
    size = int(rng.integers(min(2, len(near)), min(7, len(near)) + 1))
    hand = set(rng.choice(near, size=size, replace=False).tolist()) if near else set()
    # Often give the defender own melds that compete with the layoffs (E3, E8): cards of a near card's rank
    # or suit next to it.
    for x in list(hand)[:2]:
        if rng.random() < 0.5:
            same_rank = {13 * s + rank(x) for s in range(4)}
            same_suit = {c for c in (x - 2, x - 1, x + 1, x + 2) if 0 <= c < 52 and suit(c) == suit(x)}
            extra = sorted((same_rank if rng.random() < 0.5 else same_suit) & available)
            hand |= set(extra[: 10 - len(hand)])
    meld = random_meld(rng, available - hand)
    if meld and len(hand | meld) <= 10:
        hand |= meld
    hand |= set(rng.choice(sorted(available - hand), size=10 - len(hand), replace=False).tolist())
    return sorted(hand)


def random_pairs(seed: int, count: int, gin: bool = False):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        knocker, built = random_knocker(rng, gin)
        yield knocker, random_defender(rng, knocker, built)


# --- Checks shared by several tests -------------------------------------------------------------------------


def check_arrange(hand) -> None:
    """arrange() returns disjoint valid melds plus deadwood that partition the hand at the minimum count."""
    found, deadwood = melds.arrange(hand)
    flat = [c for m in found for c in m] + list(deadwood)
    assert sorted(flat) == sorted(hand), cards_str(hand)
    for m in found:
        assert is_valid_meld(m), f"{cards_str(m)} is not a meld ({cards_str(hand)})"
    assert total(deadwood) == brute_min_deadwood(hand), cards_str(hand)


def check_showdown(knocker, defender) -> dict:
    """showdown agrees with the brute force on k and d, and returns a consistent, legal spread."""
    result = showdown(knocker, defender)
    label = f"knocker {cards_str(knocker)} / defender {cards_str(defender)}"
    k, d = brute_showdown(knocker, defender)
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (k, d), label
    assert result["gin"] == (k == 0)
    spread = [frozenset(m) for m in result["knocker_melds"]]
    # The spread: disjoint valid melds of the knocker's cards, at the knocker's minimum deadwood.
    assert all(is_valid_meld(m) for m in spread), label
    assert sum(map(len, spread)) == len(set().union(*spread) if spread else ()), label
    assert all(m <= set(knocker) for m in spread), label
    assert arrangement_deadwood(knocker, spread) == k, label
    # The layoffs: one per knocker meld, disjoint, from the defender's cards, each a legal chain (R18, R19).
    layoffs = [frozenset(x) for x in result["layoffs"]]
    assert len(layoffs) == len(spread), label
    laid = set().union(*layoffs) if layoffs else set()
    assert sum(map(len, layoffs)) == len(laid) and laid <= set(defender), label
    assert all(is_legal_chain(m, x) for m, x in zip(spread, layoffs, strict=True)), label
    if k == 0:
        assert not laid, label  # R16
    else:
        # The listed spread is one that leaves the defender the brute-force maximum (A6).
        assert brute_defender_optimum(spread, defender) == d, label
    # The defender's own melds and deadwood partition the cards not laid off, and count to d.
    own = [frozenset(m) for m in result["defender_melds"]]
    assert all(is_valid_meld(m) for m in own), label
    rest = sorted([c for m in own for c in m] + result["defender_deadwood_cards"])
    assert rest == sorted(set(defender) - laid), label
    assert total(result["defender_deadwood_cards"]) == d, label
    return result


# --- The brute force itself ---------------------------------------------------------------------------------


@pytest.mark.nojit
@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("AS 2S 3S", True),  # ace low
        ("QS KS AS", False),  # ace is never high
        ("KS AS 2S", False),  # no wrapping
        ("7H 7D 7C", True),
        ("7H 7D 7C 7S", True),
        ("7H 7D", False),
        ("7H 8H 9H TH JH QH KH", True),
        ("7H 8H TH", False),
        ("7H 8H 9D", False),
        ("7H 7D 8H", False),
    ],
)
def test_brute_force_meld_definition(text, valid):
    """The test's own is_valid_meld follows D2 (checked on hand-picked cases)."""
    assert is_valid_meld(parse_cards(text)) is valid


@pytest.mark.nojit
def test_brute_force_meld_list_is_complete():
    """all_melds lists exactly the subsets of the hand that is_valid_meld accepts."""
    rng = np.random.default_rng(1)
    hands = [meld_rich_hand(rng, 11, 4, consecutive=True) for _ in range(5)] + [random_hand(rng, 13) for _ in range(5)]
    for hand in hands:
        by_subsets = {
            frozenset(s) for n in range(3, len(hand) + 1) for s in itertools.combinations(hand, n) if is_valid_meld(s)
        }
        assert set(all_melds(hand)) == by_subsets


# --- min_deadwood -------------------------------------------------------------------------------------------


@pytest.mark.nojit
@pytest.mark.parametrize(
    ("text", "deadwood"),
    [
        ("", 0),
        ("KS", 10),
        ("AS 2S 3S", 0),
        ("QS KS AS", 21),  # not a run: 10 + 10 + 1
        ("3H 4H 5H 8C 8D 8S JS QS KS 2C", 2),  # E1's knocker
        ("7S 7H 7D 7C 8S KC KH KS 2C 9H", 19),  # E8's defender alone: 7777 + KKK, 8S 2C 9H left
        ("4S AC 2C 3C 4C 5C 3D 4D 2H 3H 4H", 8),  # the trap's 11 cards: 4S 4C 4D + AC-3C + 2H-4H, 5C 3D left
    ],
)
def test_min_deadwood_examples(text, deadwood):
    """Hand-worked minimum deadwood counts."""
    assert melds.min_deadwood(text) == deadwood
    assert brute_min_deadwood(parse_cards(text)) == deadwood


@pytest.mark.nojit
def test_min_deadwood_random_small_sample():
    """A few dozen random and meld-rich 10/11-card hands (the pure-Python path runs this too)."""
    rng = np.random.default_rng(2024)
    hands = [random_hand(rng, 10) for _ in range(10)] + [random_hand(rng, 11) for _ in range(10)]
    hands += [meld_rich_hand(rng, 11, 4, consecutive=bool(i % 2)) for i in range(12)]
    for hand in hands:
        assert melds.min_deadwood(hand) == brute_min_deadwood(hand), cards_str(hand)


@pytest.mark.parametrize("size", [10, 11])
def test_min_deadwood_random_hands(size):
    """400 uniformly random hands of 10 and of 11 cards."""
    rng = np.random.default_rng(100 + size)
    for _ in range(400):
        hand = random_hand(rng, size)
        assert melds.min_deadwood(hand) == brute_min_deadwood(hand), cards_str(hand)


@pytest.mark.parametrize("size", [10, 11])
@pytest.mark.parametrize("n_ranks", [3, 4, 5])
@pytest.mark.parametrize("consecutive", [True, False])
def test_min_deadwood_meld_rich_hands(size, n_ranks, consecutive):
    """Hands from only 3-5 ranks (consecutive or not) across all suits: many overlapping sets and runs."""
    rng = np.random.default_rng(1000 * size + 10 * n_ranks + consecutive)
    for _ in range(100):
        hand = meld_rich_hand(rng, size, n_ranks, consecutive)
        assert melds.min_deadwood(hand) == brute_min_deadwood(hand), cards_str(hand)


def test_min_deadwood_other_sizes():
    """min_deadwood takes any hand size from 0 to 11 cards."""
    rng = np.random.default_rng(5)
    for size in range(12):
        for _ in range(15):
            hand = meld_rich_hand(rng, size, 4, consecutive=True) if size >= 8 else random_hand(rng, size)
            assert melds.min_deadwood(hand) == brute_min_deadwood(hand), cards_str(hand)


def test_min_deadwood_batch_matches_single():
    """The batched kernel gives the same counts as the single-hand function."""
    rng = np.random.default_rng(6)
    hands = [meld_rich_hand(rng, 10, 4, consecutive=bool(i % 2)) for i in range(100)]
    masks = np.array([sum(1 << c for c in h) for h in hands], dtype=np.int64)
    out = np.zeros(len(hands), dtype=np.int64)
    melds.min_deadwood_batch(masks, out)
    assert out.tolist() == [melds.min_deadwood(h) for h in hands]


# --- arrange ------------------------------------------------------------------------------------------------


@pytest.mark.nojit
def test_arrange_small_sample():
    """arrange() on a few dozen hands: a partition into valid disjoint melds and deadwood at the minimum."""
    rng = np.random.default_rng(31)
    for i in range(24):
        check_arrange(meld_rich_hand(rng, 10, 4, consecutive=bool(i % 2)) if i % 3 else random_hand(rng, 10))
    check_arrange([])


def test_arrange_many_hands():
    """arrange() on 300 random and meld-rich hands of 10 and 11 cards."""
    rng = np.random.default_rng(32)
    for i in range(300):
        size = 10 + i % 2
        hand = random_hand(rng, size) if i % 3 == 0 else meld_rich_hand(rng, size, 3 + i % 3, consecutive=i % 4 < 2)
        check_arrange(hand)


def test_arrange_e1_knocker():
    """E1's knocker: 3H-5H, 8C 8D 8S, JS-KS melded, 2C left (the only min arrangement, A6)."""
    found, deadwood = melds.arrange("3H 4H 5H 8C 8D 8S JS QS KS 2C")
    assert sorted(map(sorted, found)) == sorted(sorted(parse_cards(t)) for t in ("3H 4H 5H", "8C 8D 8S", "JS QS KS"))
    assert deadwood == parse_cards("2C")


# --- best_discards ------------------------------------------------------------------------------------------


def brute_best_discards(hand11) -> tuple[int, list[int]]:
    """(min over discards c of min_dw(hand - c), every c reaching it)."""
    by_card = {c: brute_min_deadwood(set(hand11) - {c}) for c in hand11}
    best = min(by_card.values())
    return best, sorted(c for c, v in by_card.items() if v == best)


@pytest.mark.nojit
def test_best_discards_trap():
    """The trap hand: the greedy long run AC-5C is wrong; discarding leaves 3 at best.

    4S 4C 4D + AC 2C 3C + 2H 3H 4H meld nine cards; of 5C and 3D the knocker discards 5C and keeps 3D (3).
    """
    hand = parse_cards("4S AC 2C 3C 4C 5C 3D 4D 2H 3H 4H")
    deadwood, discards = melds.best_discards(hand)
    assert deadwood == 3
    assert (deadwood, discards) == brute_best_discards(hand)
    assert parse_cards("5C")[0] in discards


@pytest.mark.nojit
def test_best_discards_e12():
    """E12: holding 3H 4H 9C 9D 9S JS QS KS 2D 8C and taking 5H, discarding 8C leaves 2D, so k = 2."""
    deadwood, discards = melds.best_discards("3H 4H 9C 9D 9S JS QS KS 2D 8C 5H")
    assert (deadwood, discards) == (2, parse_cards("8C"))


@pytest.mark.nojit
def test_best_discards_small_sample():
    """best_discards against brute force on a few dozen 11-card hands."""
    rng = np.random.default_rng(41)
    for i in range(20):
        hand = meld_rich_hand(rng, 11, 3 + i % 3, consecutive=i % 2 == 0) if i % 4 else random_hand(rng, 11)
        assert melds.best_discards(hand) == brute_best_discards(hand), cards_str(hand)


def test_best_discards_many_hands():
    """best_discards against brute force on 300 random and meld-rich 11-card hands."""
    rng = np.random.default_rng(42)
    for i in range(300):
        hand = random_hand(rng, 11) if i % 3 == 0 else meld_rich_hand(rng, 11, 3 + i % 3, consecutive=i % 2 == 0)
        assert melds.best_discards(hand) == brute_best_discards(hand), cards_str(hand)


@pytest.mark.nojit
def test_best_discards_needs_eleven_cards():
    """best_discards rejects anything but 11 cards."""
    with pytest.raises(ValueError, match="11"):
        melds.best_discards("AS 2S 3S")


def brute_pair_discards(hand) -> dict[int, int]:
    """For each card c: min over the other cards d of min_dw(hand - c - d)."""
    return {c: min(brute_min_deadwood(set(hand) - {c, d}) for d in hand if d != c) for c in hand}


def pair_discards(hand) -> dict[int, int]:
    """melds.pair_discard_deadwoods_mask's answer for the cards of hand (checking the other cards stay BIG)."""
    out = np.zeros(52, dtype=np.int64)
    melds.pair_discard_deadwoods_mask(to_mask(hand), out)
    assert all(out[c] == melds.BIG for c in range(52) if c not in hand)
    return {c: int(out[c]) for c in hand}


@pytest.mark.nojit
def test_pair_discard_deadwoods_small_sample():
    """The deadwood after throwing each card and the best second card, against brute force on 11-card hands."""
    rng = np.random.default_rng(43)
    for i in range(6):
        hand = meld_rich_hand(rng, 11, 3 + i % 3, consecutive=i % 2 == 0) if i % 3 else random_hand(rng, 11)
        assert pair_discards(hand) == brute_pair_discards(hand), cards_str(hand)


def test_pair_discard_deadwoods_many_hands():
    """The same against the single-hand solver on 400 hands of 2 to 13 cards, meld-rich ones and 12 cards in four
    sets of three (the one 12-card shape with four set ranks)."""
    rng = np.random.default_rng(44)
    hands = [random_hand(rng, size) for size in (2, 3, 10, 12, 13) for _ in range(20)]
    hands += [meld_rich_hand(rng, 11 + i % 2, 3 + i % 3, consecutive=i % 4 < 2) for i in range(200)]
    for _ in range(100):
        hands.append([13 * s + r for r in rng.choice(13, 4, replace=False) for s in rng.choice(4, 3, replace=False)])
    for hand in hands:
        mask = to_mask(hand)
        want = {c: min(melds.min_deadwood_mask(mask & ~(1 << c) & ~(1 << d)) for d in hand if d != c) for c in hand}
        assert pair_discards(hand) == want, cards_str(hand)


# --- showdown: worked examples (RULES.md §5 E1-E8 and A6) ---------------------------------------------------


@pytest.mark.nojit
def test_showdown_e1_knock_with_layoffs():
    """E1: 6H extends 3H-5H, 8H is the 4th eight; AD 2D 3D own meld."""
    result = check_showdown(parse_cards("3H 4H 5H 8C 8D 8S JS QS KS 2C"), parse_cards("6H 8H AD 2D 3D 7C 7D 5S 9S KH"))
    # k = 2C = 2. d = 7C 7D 5S 9S KH = 7+7+5+9+10 = 38. Knock, 2 < 38: the knocker scores 38-2 = 36.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (2, 38)
    # Without layoffs the defender would keep 6H and 8H too: 38 + 6 + 8 = 52.
    assert melds.min_deadwood("6H 8H AD 2D 3D 7C 7D 5S 9S KH") == 52


@pytest.mark.nojit
def test_showdown_e2_undercut_with_chain():
    """E2: 7S then 8S onto 4S-6S; own JC QC KC and 5D 5C 5H; AC 2D left."""
    result = check_showdown(parse_cards("4S 5S 6S 9C 9D 9H TH JH QH 8C"), parse_cards("7S 8S JC QC KC 5D 5C 5H AC 2D"))
    # k = 8C = 8. d = AC + 2D = 3. 8 >= 3, undercut: the defender scores 10 + (8-3) = 15.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (8, 3)


@pytest.mark.nojit
def test_showdown_e3_tie_through_layoffs():
    """E3: KS to the kings, 9D TD onto 6D-8D, 4S 5S onto AS-3S, own 4C 4H 4D; 5C 2C left."""
    defender = parse_cards("KS 9D TD 4S 5S 4C 4H 4D 5C 2C")
    result = check_showdown(parse_cards("AS 2S 3S 6D 7D 8D KC KD KH 7C"), defender)
    # k = 7C = 7. d = 5C + 2C = 7. Tie 7 >= 7 is an undercut: the defender scores 10 + 0 = 10.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (7, 7)
    # With no layoffs the defender keeps 4444 and the rest: 10+9+10+5+5+2 = 41 (a wrong knock win of 34).
    assert melds.min_deadwood(defender) == 41


@pytest.mark.nojit
def test_showdown_e4_gin_against_zero():
    """E4: gin against a defender with 0 deadwood."""
    result = check_showdown(parse_cards("AH 2H 3H 5C 5D 5S 9S TS JS QS"), parse_cards("7C 7D 7H 2C 3C 4C 8D 9D TD JD"))
    # k = 0 (gin), d = 0. The knocker scores 25 + 0 = 25; the defender scores nothing (not an undercut).
    assert (result["knocker_deadwood"], result["defender_deadwood"], result["gin"]) == (0, 0, True)


@pytest.mark.nojit
def test_showdown_e5_gin_no_layoffs():
    """E5: after gin, 9C, QC and AS would fit the knocker's melds but are not laid off."""
    result = check_showdown(parse_cards("6C 7C 8C QH QD QS 2S 3S 4S 5S"), parse_cards("9C QC AS 4D 5D 6D KH KD 3H 8H"))
    # k = 0. Own run 4D 5D 6D; d = 9+10+1+10+10+3+8 = 51. The knocker scores 25 + 51 = 76.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (0, 51)
    assert all(not laid for laid in result["layoffs"])


@pytest.mark.nojit
def test_showdown_e6_run_extended_at_both_ends():
    """E6: 4H then 3H below, 8H then 9H above 5H-7H; own 7S 7D 7C; KD 2C 6S left."""
    result = check_showdown(parse_cards("5H 6H 7H JC JD JS 2D 3D 4D AC"), parse_cards("4H 3H 8H 9H 7S 7D 7C KD 2C 6S"))
    # k = AC = 1. d = 10 + 2 + 6 = 18. Knock: the knocker scores 18 - 1 = 17.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (1, 18)


@pytest.mark.nojit
def test_showdown_e7_set_takes_fourth_only():
    """E7: 9C to the nines, 5C 6C onto 2C-4C, own 8D 8S 8H; 3H 3S cannot join the knocker's deadwood 3D."""
    result = check_showdown(parse_cards("9S 9H 9D 2C 3C 4C KH KD KS 3D"), parse_cards("9C 5C 6C 3H 3S 8D 8S 8H QS JH"))
    # k = 3D = 3. d = 3H + 3S + QS + JH = 3+3+10+10 = 26. The knocker scores 26 - 3 = 23.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (3, 26)


@pytest.mark.nojit
def test_showdown_e8_joint_optimum_beats_greedy():
    """E8: own 7H 7D 7C and KC KH KS, lay off 7S then 8S onto 4S-6S; 2C 9H left."""
    defender = parse_cards("7S 7H 7D 7C 8S KC KH KS 2C 9H")
    result = check_showdown(parse_cards("4S 5S 6S TD JD QD 2H 3H 4H 5C"), defender)
    # k = 5C = 5. d = 2 + 9 = 11. Knock: the knocker scores 11 - 5 = 6.
    # Greedy (own 7777 first) strands 8S: d = 8 + 2 + 9 = 19, which is the no-layoff minimum here.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (5, 11)
    assert melds.min_deadwood(defender) == 19


A6_KNOCKER = "2S 3S 4S 3H 3D 8C 9C TC JC AH"


@pytest.mark.nojit
def test_showdown_a6_run_is_spread():
    """A6: 2S-4S or 3S 3H 3D both give k = 7; against this defender the run is spread (3C has no place)."""
    result = check_showdown(parse_cards(A6_KNOCKER), parse_cards("3C KH KD QS JH 9H 7D 6C 8H 2D"))
    # k = 3H + 3D + AH = 7 (run spread). d = 3+10+10+10+10+9+7+6+8+2 = 75 (the set would take 3C: 72).
    # The knocker scores 75 - 7 = 68.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (7, 75)
    assert len(brute_min_arrangements(parse_cards(A6_KNOCKER))) == 2


@pytest.mark.nojit
def test_showdown_a6_set_is_spread():
    """A6: against AS and 5S (which would extend the run) the set is spread, and 3C is laid off on it."""
    result = check_showdown(parse_cards(A6_KNOCKER), parse_cards("AS 5S 3C KH KD QS JH 9H 7D 6C"))
    # k = 2S + 4S + AH = 7 (set spread). 3C laid off; d = 1+5+10+10+10+10+9+7+6 = 68 (the run: 65).
    # The knocker scores 68 - 7 = 61.
    assert (result["knocker_deadwood"], result["defender_deadwood"]) == (7, 68)


@pytest.mark.nojit
@pytest.mark.parametrize(
    "knocker",
    [
        "3H 4H 5H 8C 8D 8S JS QS KS 2C",
        "4S 5S 6S 9C 9D 9H TH JH QH 8C",
        "AS 2S 3S 6D 7D 8D KC KD KH 7C",
        "AH 2H 3H 5C 5D 5S 9S TS JS QS",
        "6C 7C 8C QH QD QS 2S 3S 4S 5S",
        "5H 6H 7H JC JD JS 2D 3D 4D AC",
        "9S 9H 9D 2C 3C 4C KH KD KS 3D",
        "4S 5S 6S TD JD QD 2H 3H 4H 5C",
    ],
)
def test_worked_examples_have_one_min_arrangement(knocker):
    """RULES.md A6: in E1-E8 the stated spread is the only min-deadwood arrangement (up to splitting runs)."""
    spreads = brute_min_arrangements(parse_cards(knocker))
    assert len({frozenset().union(*a) for a in spreads}) == 1
    assert all(len(a) == 3 for a in spreads)


# --- showdown: random knocker/defender pairs ----------------------------------------------------------------


@pytest.mark.nojit
def test_showdown_random_small_sample():
    """A dozen random knock and gin showdowns (the pure-Python path runs this too)."""
    for knocker, defender in random_pairs(seed=7, count=10):
        check_showdown(knocker, defender)
    for knocker, defender in random_pairs(seed=8, count=3, gin=True):
        check_showdown(knocker, defender)


@pytest.mark.parametrize("seed", range(4))
def test_showdown_random_knocks(seed):
    """150 random knocks (k <= 10) per seed against defenders biased towards layoffs and competing melds."""
    for knocker, defender in random_pairs(seed=seed, count=150):
        check_showdown(knocker, defender)


def test_showdown_random_gins():
    """100 random gins: d is the defender's own minimum and nothing is laid off (R16)."""
    for knocker, defender in random_pairs(seed=99, count=100, gin=True):
        result = check_showdown(knocker, defender)
        assert result["gin"] and result["defender_deadwood"] == melds.min_deadwood(defender)


def test_showdown_generator_makes_interesting_pairs():
    """The random pairs exercise what they should: layoffs often, and spreads between which A6 must choose."""
    pairs = list(random_pairs(seed=0, count=100))
    with_layoffs = sum(brute_showdown(k, d)[1] < brute_min_deadwood(d) for k, d in pairs)
    spread_matters = sum(
        len({brute_defender_optimum(spread, d) for spread in brute_min_arrangements(k)}) > 1 for k, d in pairs
    )
    assert with_layoffs >= 40
    assert spread_matters >= 5


@pytest.mark.nojit
def test_showdown_rejects_overlapping_hands():
    """The knocker's and the defender's cards must be disjoint."""
    with pytest.raises(ValueError, match="overlap"):
        showdown("AS 2S 3S", "3S 4S 5S")


@pytest.mark.nojit
@pytest.mark.parametrize("may_discard_card", [False, True])
def test_best_deadwood_taking_is_the_best_discard_after_taking(may_discard_card):
    """best_deadwood_taking(hand, card, may) is the lowest deadwood of hand + card less one discard, the taken card
    excluded unless `may` (R9), against the plain solver on every discard of random hands (sets included)."""
    rng = np.random.default_rng(11 + may_discard_card)
    trials = 300
    for _ in range(trials):
        cards = [int(c) for c in rng.choice(52, 11, replace=False)]
        if rng.random() < 0.5:  # often a set rank or two, where the set options matter
            r = int(rng.integers(0, 13))
            cards = list(dict.fromkeys([r, 13 + r, 26 + r, *cards]))[:11]
        hand, card = melds.hand_mask(cards[:10]), cards[10]
        full = hand | (1 << card)
        discards = [c for c in range(52) if (full >> c) & 1 and (c != card or may_discard_card)]
        want = min(melds.min_deadwood_mask(full & ~(1 << c)) for c in discards)
        assert melds.best_deadwood_taking(hand, card, may_discard_card) == want, (cards_str(cards[:10]), card)
