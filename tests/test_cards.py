"""Tests of hollywood_gin_env.rules.cards: ids, values, parsing, printing and masks (RULES.md §1, D1)."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.rules import cards
from hollywood_gin_env.rules.cards import (
    CARD_VALUES,
    FULL_DECK_MASK,
    as_cards,
    card_name,
    card_value,
    cards_str,
    from_mask,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
    to_mask,
)

ALL_NAMES = [r + s for s in "SHDC" for r in "A23456789TJQK"]

pytestmark = pytest.mark.nojit  # every test here is fast in pure Python too


@pytest.mark.parametrize(
    ("text", "card_id"),
    [
        ("AS", 0),
        ("7H", 19),  # 1 * 13 + 6, the example in cards.py
        ("TD", 2 * 13 + 9),
        ("10d", 2 * 13 + 9),
        ("10D", 2 * 13 + 9),
        ("as", 0),
        ("kc", 51),
        ("Qh", 13 + 11),
        (" 2s ", 1),
    ],
)
def test_parse_card(text, card_id):
    """Single cards parse case-insensitively; "10" is an alias of "T"; surrounding blanks are ignored."""
    assert parse_card(text) == card_id


def test_ids_ranks_suits_and_values():
    """Card id = suit * 13 + rank with ranks A..K and suits S H D C; D1 values A=1, 2..9, T/J/Q/K=10."""
    for card_id, name in enumerate(ALL_NAMES):
        assert rank_of(card_id) == "A23456789TJQK".index(name[0])
        assert suit_of(card_id) == "SHDC".index(name[1])
        expected_value = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}.get(name[0]) or int(name[0])
        assert card_value(card_id) == expected_value == CARD_VALUES[card_id]
    assert CARD_VALUES.sum() == 4 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 10 + 10 + 10)


def test_round_trip_all_52():
    """card_name and parse_card are inverse on all 52 cards, in upper and lower case."""
    assert [card_name(c) for c in range(52)] == ALL_NAMES
    for card_id, name in enumerate(ALL_NAMES):
        assert parse_card(name) == card_id
        assert parse_card(name.lower()) == card_id
    assert parse_cards(cards_str(range(52))) == list(range(52))


def test_card_name_accepts_numpy_integers():
    """Numpy integer ids (as kernels return them) print like Python ints."""
    assert card_name(np.int64(19)) == "7H"
    assert cards_str(np.array([0, 51], dtype=np.int64)) == "AS KC"


@pytest.mark.parametrize(
    "text",
    ["7H 8H 9H", "7H,8H,9H", "7H, 8H, 9H", " 7h  8H\t9h ", "7H,,8H 9H", "7h 8H 9h"],
)
def test_parse_cards_separators(text):
    """parse_cards splits on commas and any whitespace, keeping the order given."""
    assert parse_cards(text) == [19, 20, 21]


def test_parse_cards_keeps_order_and_accepts_iterables():
    """The given order is kept; a list of card strings works like one string."""
    assert parse_cards("KC 10d as") == [51, 35, 0]
    assert parse_cards(["KC", "10d", "as"]) == [51, 35, 0]
    assert parse_cards("") == []
    assert cards_str(parse_cards("kc 10d as")) == "KC TD AS"


@pytest.mark.parametrize("bad", ["7X", "1H0", "11H", "0S", "ZZ", "7", "H", "", "7HH", "AH7", "T", "10"])
def test_parse_card_rejects_bad_strings(bad):
    """A bad card string raises ValueError whose message shows the bad string."""
    with pytest.raises(ValueError, match="bad card string") as info:
        parse_card(bad)
    assert repr(bad) in str(info.value)


def test_parse_cards_names_the_bad_token():
    """In a list of cards, the error names the bad token, not just the whole string."""
    with pytest.raises(ValueError) as info:
        parse_cards("7H 8H QX 9H")
    assert "'QX'" in str(info.value)


@pytest.mark.parametrize(
    ("text", "duplicate"),
    [("7H 8H 7H", "7H"), ("TD 10d", "TD"), ("as AS", "AS"), (["KC", "kc"], "KC")],
)
def test_parse_cards_rejects_duplicates(text, duplicate):
    """The same card twice (in any spelling) raises ValueError naming the card."""
    with pytest.raises(ValueError, match="duplicate") as info:
        parse_cards(text)
    assert duplicate in str(info.value)


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_card_name_rejects_bad_ids(bad):
    """Ids outside 0..51 raise ValueError naming the id."""
    with pytest.raises(ValueError) as info:
        card_name(bad)
    assert str(bad) in str(info.value)


def test_masks_round_trip():
    """to_mask sets bit c per card; from_mask returns the sorted ids; the full deck is 52 ones."""
    assert to_mask([]) == 0
    assert to_mask([0]) == 1
    assert to_mask([51]) == 1 << 51
    assert to_mask(range(52)) == FULL_DECK_MASK == (1 << 52) - 1
    assert from_mask(FULL_DECK_MASK) == list(range(52))
    assert from_mask(0) == []
    assert from_mask(np.int64(to_mask([3, 40]))) == [3, 40]
    rng = np.random.default_rng(7)
    for _ in range(50):
        ids = rng.choice(52, size=rng.integers(0, 53), replace=False).tolist()
        assert from_mask(to_mask(ids)) == sorted(ids)
        assert bin(to_mask(ids)).count("1") == len(ids)


def test_to_mask_rejects_bad_ids():
    """to_mask validates each id."""
    with pytest.raises(ValueError, match="52"):
        to_mask([3, 52])
    with pytest.raises(ValueError, match="-1"):
        to_mask([-1])


def test_as_cards_accepts_strings_names_and_ids():
    """as_cards takes a card string, a list of names, or a list of ids, and validates them."""
    assert as_cards("7H 8H") == [19, 20]
    assert as_cards(["7H", "8H"]) == [19, 20]
    assert as_cards([19, 20]) == [19, 20]
    assert as_cards(np.array([19, 20])) == [19, 20]
    assert as_cards([]) == []
    with pytest.raises(ValueError, match="duplicate"):
        as_cards([19, 19])
    with pytest.raises(ValueError, match="duplicate"):
        as_cards("7H 7h")
    with pytest.raises(ValueError, match="52"):
        as_cards([52])


def test_module_constants():
    """The rank and suit orders are those of RULES.md §1."""
    assert cards.RANKS == "A23456789TJQK"
    assert cards.SUITS == "SHDC"
    assert (cards.NUM_CARDS, cards.NUM_RANKS, cards.NUM_SUITS) == (52, 13, 4)
