"""The one text renderer of a match: `render(position, viewer=None|0|1)`, used by `str(Game)`, the envs and the
terminal program.

With a viewer it shows only what that seat may know: its own hand (grouped by its best arrangement), the
face-up card and the pile, the stock size, the opponent's card count and the cards the opponent took from the
pile (public), the last moves in words (the opponent's stock draws unnamed) and the score sheet. Without a
viewer it shows everything, the stock order included, for debugging. It reads only a `Position`
(position.py: `Game.position()`, or `position_of(engine, i)` for a batched match), and builds `rich` text, so a
terminal gets suits in colour and everything else gets plain text.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from hollywood_gin_env.display.position import Position
from hollywood_gin_env.display.words import (
    by_rank,
    card_text,
    cards_text,
    example_discard,
    hand_events,
    move_sentences,
    poss,
    public_took,
    verb,
)
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import card_name, rank_of
from hollywood_gin_env.rules.melds import arrange, min_deadwood
from hollywood_gin_env.support.messages import shown_value

RECENT_PILE = 6  # discards shown to a seat: enough to read the opponent, short enough for one line
LAST_MOVES = 2  # move sentences shown under the match: the opponent's turn and your own draw


def seat_names(viewer: int | None, names: Sequence[str] | None = None) -> tuple[str, str]:
    """Display names of seats 0 and 1: given ones, else "You"/"Opponent" for a viewer, else "P0"/"P1"."""
    if names is not None:
        if len(names) != 2 or not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"names={shown_value(names)} must be two non-empty strings (seat 0, seat 1)")
        return names[0], names[1]
    if viewer is None:
        return "P0", "P1"
    return ("You", "Opponent") if viewer == 0 else ("Opponent", "You")


def arranged_text(cards: Sequence[int]) -> Text:
    """A hand grouped by its best arrangement: melds in brackets, then the deadwood cards and their total."""
    melds, deadwood = arrange(list(cards))
    melds = sorted((by_rank(m) for m in melds), key=lambda m: rank_of(m[0]))
    parts = [Text("[") + cards_text(m) + Text("]") for m in melds]
    if deadwood:
        parts.append(cards_text(by_rank(deadwood)))
    body = Text("  ").join(parts) if parts else Text("(no cards)")
    return body + Text(f"   deadwood {min_deadwood(list(cards))}", style="dim")


def phase_words(position: Position, player: int) -> str:
    """What the player to act may do now, with the commands that do it."""
    pile, legal = position.discard_pile, position.legal_actions
    top = card_name(pile[-1]) if pile else "--"
    if position.phase.startswith("offer"):
        return f"upcard offer: take {top} (t) or pass (p)"
    if position.phase == "draw":
        take = f" or take {top} from the pile (t)" if ACTION_TAKE in legal else ""
        return f"draw from the stock (d){take}"
    if position.phase == "discard":
        discards = [a - DISCARD_BASE for a in legal if DISCARD_BASE <= a < KNOCK_BASE]
        knocks = [a - KNOCK_BASE for a in legal if a >= KNOCK_BASE]
        hand = position.hand(player)
        knock = f" or knock (knock {card_name(example_discard(hand, knocks)).lower()})" if knocks else ""
        if not discards:  # the last discard taken: only a knock is legal
            return f"you hold {len(hand)} cards: knock (knock {card_name(example_discard(hand, knocks)).lower()})"
        example = card_name(example_discard(hand, discards)).lower()
        return f"you hold {len(hand)} cards: discard one (e.g. {example}){knock}"
    if position.phase == "last_discard":
        stock = position.stock_size
        return f"the stock is down to {stock}: take {top} only to knock (t), or pass (p) and the hand is dead"
    return position.phase


def turn_line(position: Position, viewer: int | None, names: tuple[str, str]) -> Text:
    """Whose turn it is and what they may do; the series result once the match is over."""
    if position.done:
        winner = names[position.winner]
        return Text(f"Match over: {winner} {verb(winner, 'win', 'wins')} the series", style="bold")
    player = position.current_player
    if viewer is not None and player != viewer:
        return Text(f"{poss(names[player])} turn ({position.phase.replace('_', ' ')})", style="bold")
    return Text.assemble((f"{poss(names[player])} turn: ", "bold"), phase_words(position, player))


def sheet_text(position: Position, names: tuple[str, str], viewer: int | None = None) -> Text:
    """The Hollywood score sheet: per game both players' points and hands entered, and open or won; the viewer's
    column first, so it stays on the left whichever seat the viewer has."""
    sheet = position.score_sheet
    width = max(len(n) for n in names)
    columns = (0, 1) if viewer is None else (viewer, 1 - viewer)
    out = Text("Score sheet (points, hands entered):", style="dim")
    for g, (totals, entries) in enumerate(zip(sheet["totals"], sheet["entries"], strict=True)):
        winner = sheet["winners"][g]
        status = "open" if winner is None else f"won by {names[winner]} (net {sheet['net'][g]})"
        cells = "   ".join(f"{names[p]:<{width}} {totals[p]:>3} ({entries[p]})" for p in columns)
        out.append(f"\nG{g + 1}: {cells}   ")
        out.append(status, style="green" if winner is None else "bold")
    return out


def _pile_line(position: Position, viewer: int | None) -> Text:
    pile = position.discard_pile
    shown = pile if viewer is None else pile[-RECENT_PILE:]
    line = Text(f"Stock {position.stock_size} · Face-up ") + (card_text(pile[-1]) if pile else Text("none"))
    more = "… " if len(shown) < len(pile) else ""
    line += Text(f" · Pile ({len(pile)} card{'' if len(pile) == 1 else 's'}, newest last): {more}")
    return line + (cards_text(shown) if pile else Text("empty"))


def _hidden_hand_line(position: Position, seat: int, names: tuple[str, str]) -> Text:
    """The opponent as a viewer sees it: a card count and the cards it took from the pile and still holds."""
    line = Text(f"{names[seat]}: {len(position.hand(seat))} cards")
    known = public_took(hand_events(position.events), seat)
    if known:
        line += Text("; holds ") + cards_text(by_rank(known)) + Text(" (taken from the pile)")
    return line


def position_text(
    position: Position, viewer: int | None = None, names: Sequence[str] | None = None, own_seat: int | None = None
) -> Text:
    """The match as rich text, from `viewer`'s seat (0 or 1) or, with None, with every card shown; `own_seat` is laid
    out as the player's own, its hand last and its score column first (default: the viewer's; else seat order)."""
    for name, value in (("viewer", viewer), ("own_seat", own_seat)):
        if value not in (None, 0, 1) or isinstance(value, bool):
            raise ValueError(f"{name}={shown_value(value)} is not allowed: use 0, 1 or None (everything)")
    seat = seat_names(viewer, names)
    own = viewer if own_seat is None else own_seat
    dealer = seat[position.dealer]
    lines = [
        Text(f"Hand {position.hand_number} · {dealer} {verb(dealer, 'deal', 'deals')} · ")
        + _pile_line(position, viewer)
    ]
    for p in (0, 1) if own is None else (1 - own, own):
        if p == viewer or viewer is None:
            label = "Your hand" if seat[p] == "You" else seat[p]
            lines.append(Text.assemble((f"{label}: ", "bold"), arranged_text(position.hand(p))))
        else:
            lines.append(_hidden_hand_line(position, p, seat))
    events = hand_events(position.events)
    if viewer is None and events and position.stock_size:
        lines.append(
            Text.assemble(("Stock (top first): ", "dim"), cards_text(events[0]["deck"][-position.stock_size :]))
        )
    moves = move_sentences(events, viewer, seat, last=LAST_MOVES)
    if moves:
        lines.append(Text.assemble(("Last: ", "dim"), Text("\n      ").join(moves)))
    lines += [turn_line(position, viewer, seat), sheet_text(position, seat, own)]
    return Text("\n").join(lines)


def to_str(text: Text, color: bool = False) -> str:
    """Plain text, or text with ANSI colour codes (rich's standard 16 colours) when color is True."""
    if not color:
        return text.plain
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, color_system="standard", width=10_000, highlight=False).print(
        text, end="", soft_wrap=True
    )
    return buffer.getvalue()


def render(
    position: Position, viewer: int | None = None, names: Sequence[str] | None = None, color: bool = False
) -> str:
    """The match as a string from `viewer`'s seat (0 or 1), or everything with viewer=None."""
    return to_str(position_text(position, viewer, names), color)


def render_match(position: Position, learner_seat: int | None = None) -> str:
    """A match with every card shown (the envs' "ansi" render), the learner's seat marked."""
    names = tuple(f"P{p} (learner)" if p == learner_seat else f"P{p}" for p in (0, 1))
    return render(position, names=names)
