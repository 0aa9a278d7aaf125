"""A match as an RGB picture (`render_mode="rgb_array"`): both hands, the stock, the pile and the score sheet.

`draw_position(position)` returns uint8[540, 960, 3] for a `Position` (`Game.position()`, or
`position_of(engine, i)` for a batched match): every card face up, as the env's "ansi" text shows them, each hand
grouped into its best melds and then its deadwood. Suit symbols are drawn as shapes rather than font glyphs, so
the picture looks the same whatever fonts the machine has; ranks use Pillow's bundled font. 960 x 540 is even in
both directions, as video encoders (RecordVideo's ffmpeg, yuv420p) require.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from hollywood_gin_env.display.position import Position
from hollywood_gin_env.rules.cards import RANKS, rank_of, suit_of
from hollywood_gin_env.rules.melds import arrange
from hollywood_gin_env.support.messages import shown_value

WIDTH, HEIGHT = 960, 540
CARD_W, CARD_H = 54, 78
CARD_STEP = 58  # horizontal distance between cards of a hand (no overlap: every card is read whole)
MELD_GAP = 10  # extra space between melds, and before the deadwood cards
PILE_STEP = 26  # the discard pile fans out, each card covering the left part of the one below
PILE_SHOWN = 10  # the newest discards drawn; the count of all of them is written above

FELT = (22, 94, 50)
FELT_DARK = (16, 70, 38)
CARD_FACE = (250, 250, 246)
CARD_EDGE = (90, 90, 90)
CARD_BACK = (40, 70, 160)
RED = (200, 24, 32)
BLACK = (20, 20, 20)
TEXT = (240, 240, 230)
HIGHLIGHT = (250, 210, 60)  # the player to act
RED_SUITS = (1, 2)  # hearts and diamonds (suit indices of cards.SUITS = "SHDC")

HAND_X = 20
TOP_HAND_Y, PILE_Y, BOTTOM_HAND_Y = 48, 214, 392
SHEET_X = 712


@lru_cache(maxsize=8)
def _font(size: int) -> Any:
    """Pillow's bundled scalable font (Pillow >= 10.1 with FreeType), else its fixed bitmap font."""
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # an old Pillow or one built without FreeType
        return ImageFont.load_default()


def rank_label(card: int) -> str:
    """The rank as printed on the card: A, 2..10, J, Q, K."""
    rank = RANKS[rank_of(card)]
    return "10" if rank == "T" else rank


def suit_color(card: int) -> tuple[int, int, int]:
    """Red for hearts and diamonds, black for spades and clubs."""
    return RED if suit_of(card) in RED_SUITS else BLACK


def _suit(draw: ImageDraw.ImageDraw, suit: int, cx: float, cy: float, s: float, color: tuple[int, int, int]) -> None:
    """A suit symbol (S H D C = 0 1 2 3) of half-height s centred on (cx, cy)."""
    r = s * 0.5
    if suit == 2:  # diamond
        draw.polygon([(cx, cy - s), (cx + 0.72 * s, cy), (cx, cy + s), (cx - 0.72 * s, cy)], fill=color)
    elif suit == 1:  # heart: two lobes over a point
        for dx in (-r, r):
            draw.ellipse([cx + dx - r, cy - 0.45 * s - r, cx + dx + r, cy - 0.45 * s + r], fill=color)
        draw.polygon([(cx - 2 * r + 0.5, cy - 0.3 * s), (cx + 2 * r - 0.5, cy - 0.3 * s), (cx, cy + s)], fill=color)
    elif suit == 0:  # spade: an upside-down heart on a stem
        for dx in (-r, r):
            draw.ellipse([cx + dx - r, cy + 0.2 * s - r, cx + dx + r, cy + 0.2 * s + r], fill=color)
        draw.polygon([(cx - 2 * r + 0.5, cy + 0.1 * s), (cx + 2 * r - 0.5, cy + 0.1 * s), (cx, cy - s)], fill=color)
        draw.polygon([(cx, cy + 0.2 * s), (cx - 0.4 * s, cy + s), (cx + 0.4 * s, cy + s)], fill=color)
    else:  # club: three leaves on a stem
        leaf = s * 0.42
        for lx, ly in ((cx, cy - 0.48 * s), (cx - 0.5 * s, cy + 0.12 * s), (cx + 0.5 * s, cy + 0.12 * s)):
            draw.ellipse([lx - leaf, ly - leaf, lx + leaf, ly + leaf], fill=color)
        draw.polygon([(cx, cy), (cx - 0.4 * s, cy + s), (cx + 0.4 * s, cy + s)], fill=color)


def draw_card(draw: ImageDraw.ImageDraw, card: int, x: int, y: int) -> None:
    """One card face at (x, y): the rank and a small suit in the top-left corner, a large suit in the middle."""
    color = suit_color(card)
    draw.rounded_rectangle([x, y, x + CARD_W - 1, y + CARD_H - 1], radius=6, fill=CARD_FACE, outline=CARD_EDGE)
    draw.text((x + 4, y + 2), rank_label(card), font=_font(20), fill=color)
    _suit(draw, suit_of(card), x + 12, y + 33, 6, color)
    _suit(draw, suit_of(card), x + CARD_W * 0.6, y + CARD_H * 0.64, 13, color)


def draw_back(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    """A face-down card (the stock)."""
    draw.rounded_rectangle([x, y, x + CARD_W - 1, y + CARD_H - 1], radius=6, fill=CARD_BACK, outline=CARD_FACE, width=2)
    draw.rounded_rectangle([x + 6, y + 6, x + CARD_W - 7, y + CARD_H - 7], radius=4, outline=(120, 150, 220))


def hand_layout(cards: list[int], x: int = HAND_X) -> tuple[list[tuple[int, int]], list[list[int]], list[int]]:
    """[(card, left x)] of a hand drawn as its best melds (by rank) and then its deadwood; and the groups."""
    melds, deadwood = arrange(cards) if cards else ([], [])
    melds = sorted((sorted(m, key=rank_of) for m in melds), key=lambda m: rank_of(m[0]))
    groups = melds + ([sorted(deadwood, key=lambda c: (rank_of(c), suit_of(c)))] if deadwood else [])
    placed = []
    for group in groups:
        for card in group:
            placed.append((card, x))
            x += CARD_STEP
        x += MELD_GAP
    return placed, melds, deadwood


def _player_label(position: Position, p: int, learner_seat: int | None) -> str:
    role = " (learner)" if p == learner_seat else ""
    dealer = "  dealer" if position.dealer == p else ""
    return f"P{p}{role}{dealer}"


def _hand_row(draw: ImageDraw.ImageDraw, position: Position, p: int, y: int, learner_seat: int | None) -> None:
    cards = position.hand(p)
    placed, melds, deadwood = hand_layout(cards)
    to_act = not position.done and position.current_player == p
    label = _player_label(position, p, learner_seat) + f"   deadwood {sum(min(rank_of(c) + 1, 10) for c in deadwood)}"
    if to_act:
        label += "   to act"
    draw.text((HAND_X, y - 26), label, font=_font(18), fill=HIGHLIGHT if to_act else TEXT)
    for card, x in placed:
        draw_card(draw, card, x, y)
    for meld in melds:  # a bar under each meld, so melds read apart from the deadwood cards
        xs = [x for card, x in placed if card in meld]
        draw.rectangle([min(xs) + 2, y + CARD_H + 4, max(xs) + CARD_W - 3, y + CARD_H + 7], fill=HIGHLIGHT)


def _pile_row(draw: ImageDraw.ImageDraw, position: Position) -> None:
    stock = position.stock_size
    draw.text((HAND_X, PILE_Y - 26), f"stock {stock}", font=_font(18), fill=TEXT)
    if stock:
        draw_back(draw, HAND_X, PILE_Y)
    else:
        draw.rounded_rectangle(
            [HAND_X, PILE_Y, HAND_X + CARD_W - 1, PILE_Y + CARD_H - 1], radius=6, outline=FELT_DARK, width=2
        )
    pile = position.discard_pile
    x0 = HAND_X + CARD_W + 40
    draw.text((x0, PILE_Y - 26), f"discard pile {len(pile)}, face-up card on the right", font=_font(18), fill=TEXT)
    for k, card in enumerate(pile[-PILE_SHOWN:]):
        draw_card(draw, card, x0 + k * PILE_STEP, PILE_Y)


def _sheet(draw: ImageDraw.ImageDraw, position: Position, learner_seat: int | None) -> None:
    """The right-hand panel: hand number, phase, and the Hollywood sheet (totals, hands entered, status)."""
    draw.rectangle([SHEET_X - 12, 0, WIDTH, HEIGHT], fill=FELT_DARK)
    font, small = _font(18), _font(16)
    y = 16
    draw.text((SHEET_X, y), f"Hand {position.hand_number}", font=_font(24), fill=TEXT)
    y += 36
    status = "match over" if position.done else f"{position.phase.replace('_', ' ')}, P{position.current_player} to act"
    draw.text((SHEET_X, y), status, font=small, fill=HIGHLIGHT)
    y += 40
    draw.text((SHEET_X, y), "Score sheet", font=font, fill=TEXT)
    y += 28
    names = [f"P{p}" + ("*" if p == learner_seat else "") for p in (0, 1)]
    draw.text((SHEET_X + 40, y), names[0], font=small, fill=TEXT)
    draw.text((SHEET_X + 120, y), names[1], font=small, fill=TEXT)
    y += 24
    sheet = position.score_sheet
    for g, (totals, entries) in enumerate(zip(sheet["totals"], sheet["entries"], strict=True)):
        winner = sheet["winners"][g]
        draw.text((SHEET_X, y), f"G{g + 1}", font=font, fill=TEXT)
        for p, column in ((0, 40), (1, 120)):
            color = HIGHLIGHT if winner == p else TEXT
            draw.text((SHEET_X + column, y), f"{totals[p]:>3} ({entries[p]})", font=font, fill=color)
        y += 24
        draw.text((SHEET_X + 40, y), "open" if winner is None else f"won by P{winner}", font=small, fill=TEXT)
        y += 30
    if learner_seat is not None:
        draw.text((SHEET_X, y), "* the learner", font=small, fill=TEXT)
        y += 24
    if position.done:
        draw.text((SHEET_X, y + 10), f"P{position.winner} wins the series", font=_font(20), fill=HIGHLIGHT)


def draw_position(position: Position, learner_seat: int | None = None) -> np.ndarray:
    """A match as uint8[HEIGHT, WIDTH, 3]: P0's hand above, the stock and pile, P1's hand below."""
    if learner_seat not in (None, 0, 1) or isinstance(learner_seat, bool):
        raise ValueError(f"learner_seat={shown_value(learner_seat)} is not allowed: use 0, 1 or None")
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(image)
    _hand_row(draw, position, 0, TOP_HAND_Y, learner_seat)
    _pile_row(draw, position)
    _hand_row(draw, position, 1, BOTTOM_HAND_Y, learner_seat)
    _sheet(draw, position, learner_seat)
    return np.asarray(image, dtype=np.uint8).copy()
