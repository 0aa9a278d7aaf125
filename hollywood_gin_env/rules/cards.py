"""Cards: ids 0..51 (suit * 13 + rank), values, 52-bit masks, parsing and printing.

Ranks run A 2 3 4 5 6 7 8 9 T J Q K (rank index 0..12, ace low); suits are S H D C
(suit index 0..3), as in docs/RULES.md §1. Card `7H` is id 1 * 13 + 6 = 19.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hollywood_gin_env.support.messages import shown_value

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
RANKS = "A23456789TJQK"
SUITS = "SHDC"
FULL_DECK_MASK = (1 << NUM_CARDS) - 1

#: value[c] = D1 value of card c: A=1, 2..9 face value, T/J/Q/K = 10.
CARD_VALUES = np.array([min(c % NUM_RANKS + 1, 10) for c in range(NUM_CARDS)], dtype=np.int64)

_RANK_ALIASES = {"10": 9, "1": 0}


def rank_of(card: int) -> int:
    """Rank index 0..12 (A..K) of a card id."""
    return card % NUM_RANKS


def suit_of(card: int) -> int:
    """Suit index 0..3 (S, H, D, C) of a card id."""
    return card // NUM_RANKS


def card_value(card: int) -> int:
    """Deadwood value of a card (RULES.md D1)."""
    return int(CARD_VALUES[card])


def card_name(card: int) -> str:
    """Two-character name of a card id, e.g. 19 -> "7H"."""
    if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {shown_value(card)} is not an integer in 0..51")
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def parse_card(text: str) -> int:
    """Card id of a card string such as "7H", "TD", "10d" or "as" (case-insensitive)."""
    if not isinstance(text, str):
        raise ValueError(f"bad card string {shown_value(text)}: expected text such as '7H', 'TD', '10d', 'as'")
    token = text.strip().upper()
    rank_text, suit_text = token[:-1], token[-1:]
    if rank_text in _RANK_ALIASES:
        rank = _RANK_ALIASES[rank_text]
    elif len(rank_text) == 1 and rank_text in RANKS:
        rank = RANKS.index(rank_text)
    else:
        rank = -1
    if rank < 0 or suit_text not in SUITS or not suit_text:
        raise ValueError(
            f"bad card string {shown_value(text)}: expected a rank of {' '.join(RANKS)} (or 10) "
            f"followed by a suit of {' '.join(SUITS)}, e.g. '7H', 'TD', '10d', 'as'"
        )
    return SUITS.index(suit_text) * NUM_RANKS + rank


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Card ids of a space- or comma-separated card string (or an iterable of card strings)."""
    if not isinstance(text, (str, Iterable)):
        raise ValueError(f"bad cards {shown_value(text)}: expected a card string such as '7H 8H 9H' or a list of them")
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    cards = [parse_card(token) for token in tokens]
    duplicates = sorted({card_name(c) for c in cards if cards.count(c) > 1})
    if duplicates:
        raise ValueError(f"duplicate cards in {shown_value(text)}: {' '.join(duplicates)}")
    return cards


def cards_str(cards: Iterable[int]) -> str:
    """Space-separated names of card ids, in the given order."""
    return " ".join(card_name(int(c)) for c in cards)


def to_mask(cards: Iterable[int]) -> int:
    """52-bit mask with bit c set for each card id c."""
    mask = 0
    for card in cards:
        card_name(int(card))  # validates the id
        mask |= 1 << int(card)
    return mask


def from_mask(mask: int) -> list[int]:
    """Sorted card ids of a 52-bit mask."""
    return [c for c in range(NUM_CARDS) if (int(mask) >> c) & 1]


def as_cards(cards: str | Iterable[int] | Iterable[str]) -> list[int]:
    """Card ids from a card string, card strings or card ids (validated, no duplicates)."""
    if isinstance(cards, str):
        return parse_cards(cards)
    if not isinstance(cards, Iterable) or isinstance(cards, (bytes, dict)):
        raise ValueError(
            f"bad cards {shown_value(cards)}: expected a card string such as '7H 8H 9H' or a list of card "
            "ids (0..51) or card strings"
        )
    items = list(cards)
    if items and isinstance(items[0], str):
        return parse_cards(items)
    for card in items:
        card_name(card)
    ids = [int(c) for c in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate card ids in {ids}")
    return ids
