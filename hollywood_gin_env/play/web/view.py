"""The match as the human may know it, as JSON for the page: `page_view(session, seq)`.

It reads only what `render.position_text(position, viewer=human)` reads (the human's hand, the pile, the stock size,
the bot's card count and the pile cards it took, the hand's moves told as the human saw them, the score sheet) and,
once a hand has ended, that hand's showdown from the event log, which the rules make public (RULES.md R13-R17). Cards
are names ("7H"). The stock order, the deck and the bot's unseen cards are never read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hollywood_gin_env.display.render import RECENT_PILE, turn_line
from hollywood_gin_env.display.words import (
    by_rank,
    hand_end_lines,
    hand_events,
    move_sentences,
    public_took,
    sorted_melds,
    turn_count,
)
from hollywood_gin_env.play.session import Session
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import card_name
from hollywood_gin_env.rules.melds import arrange, min_deadwood

SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}  # as the page's card faces show them
WHO = ("you", "bot")  # how the page names the two players, whatever their seats
RECENT_MOVES = 60  # the hand's moves the page lists, the last ones (a hand runs to MAX_HAND_TURNS)


def names(cards: Sequence[int]) -> list[str]:
    """Card names, in the given order."""
    return [card_name(c) for c in cards]


def arranged(cards: Sequence[int]) -> dict[str, Any]:
    """A hand grouped by its best arrangement: melds, the deadwood cards and their total."""
    melds, deadwood = arrange(list(cards))
    return {
        "melds": [names(m) for m in sorted_melds(melds)],
        "deadwood": names(by_rank(deadwood)),
        "deadwood_total": min_deadwood(list(cards)),
    }


def who(session: Session, seat: int) -> str:
    """The page's name of a seat: "you" or "bot"."""
    return WHO[0] if seat == session.human else WHO[1]


def legal_moves(session: Session) -> list[dict[str, Any]]:
    """The moves the page enables now: the human's legal actions (with the deadwood each discard leaves), or
    `next` while a hand's end is held; `new-match` is always there."""
    if session.held_hand_end is not None:
        return [{"action": "next"}]
    if not session.humans_turn:
        return []
    game = session.game
    hand, moves = game.hand(session.human), []
    for action in game.legal_actions():
        if action == ACTION_DRAW_STOCK:
            moves.append({"action": "draw"})
        elif action == ACTION_PASS:
            moves.append({"action": "pass"})
        elif action == ACTION_TAKE:
            moves.append({"action": "take", "card": card_name(game.discard_pile[-1])})
        else:
            card = action - (KNOCK_BASE if action >= KNOCK_BASE else DISCARD_BASE)
            left = min_deadwood([c for c in hand if c != card])
            knock = action >= KNOCK_BASE
            moves.append(
                {
                    "action": "knock" if knock else "discard",
                    "card": card_name(card),
                    "deadwood": left,
                    "gin": knock and not left,
                }
            )
    return moves


def sheet(session: Session) -> list[dict[str, Any]]:
    """The Hollywood score sheet, the human's figures first."""
    s, you, bot = session.game.score_sheet, session.human, 1 - session.human
    rows = []
    for g, (totals, entries) in enumerate(zip(s["totals"], s["entries"], strict=True)):
        winner = s["winners"][g]
        rows.append(
            {
                "game": f"G{g + 1}",
                "points": [totals[you], totals[bot]],
                "entered": [entries[you], entries[bot]],
                "winner": None if winner is None else who(session, winner),
                "net": s["net"][g] if winner is not None else None,
            }
        )
    return rows


def _layoffs(spread: dict[str, Any]) -> list[dict[str, list[str]]]:
    return [
        {"cards": names(by_rank(cards)), "on": names(by_rank(meld))}
        for cards, meld in zip(spread["layoffs"], spread["knocker_melds"], strict=True)
        if cards
    ]


def spread_view(
    whose: str, role: str, melds: list[list[int]], deadwood: list[int], total: int, layoffs: list
) -> dict[str, Any]:
    """One player's cards at the showdown: melds, deadwood cards and total, and (the defender) the layoffs."""
    return {
        "who": whose,
        "role": role,
        "melds": [names(m) for m in sorted_melds(melds)],
        "deadwood": names(by_rank(deadwood)),
        "deadwood_total": total,
        "layoffs": layoffs,
    }


def hand_end(session: Session, index: int) -> dict[str, Any]:
    """The hand that ended at event `index` ("hand_result"): what its showdown made public, and its score."""
    events, game = session.game.events, session.game
    result = events[index]
    deal = next(e for e in reversed(events[:index]) if e["type"] == "deal")
    lines = hand_end_lines(events, index, game.rules, session.names, session.human)
    words = [line.plain for line in lines if not line.plain.startswith("  ")]  # the spreads go as cards instead
    out: dict[str, Any] = {
        "hand": deal["hand"],
        "kind": result["kind"],
        "lines": words,
        "knocker": None if result["kind"] == "dead" else who(session, result["knocker"]),
        "points": result["points"],
        "games": [g + 1 for g in result["credited_games"]],
        "winner": None if result["kind"] == "dead" else who(session, result["winner"]),
        "spreads": [],
    }
    if result["kind"] != "dead":  # a dead hand is thrown in unseen; a showdown is public
        spread, knocker = events[index - 1], result["knocker"]
        out["spreads"] = [
            spread_view(
                who(session, knocker),
                "knocker",
                spread["knocker_melds"],
                spread["knocker_deadwood_cards"],
                result["knocker_deadwood"],
                [],
            ),
            spread_view(
                who(session, 1 - knocker),
                "defender",
                spread["defender_melds"],
                spread["defender_deadwood_cards"],
                result["defender_deadwood"],
                _layoffs(spread),
            ),
        ]
    return out


def shown_hand_end(session: Session) -> int | None:
    """The "hand_result" event the page shows: the held one, or the last one once the match is over."""
    if session.held_hand_end is not None:
        return session.held_hand_end
    if session.game.done:
        return max(i for i, e in enumerate(session.game.events) if e["type"] == "hand_result")
    return None


def match_end(session: Session) -> dict[str, Any] | None:
    """The series result once the match is over: the winner and the games each won."""
    game = session.game
    if not game.done:
        return None
    won = game.score_sheet["winners"]
    return {
        "winner": who(session, game.winner),
        "games": [won.count(session.human), won.count(1 - session.human)],
        "line": turn_line(game.position(), session.human, session.names).plain,
    }


def face(card: int) -> str:
    """A card as its face's corner shows it: "A\u2666", "10\u2660"."""
    name = card_name(card)
    return ("10" if name[0] == "T" else name[0]) + SUIT_SYMBOLS[name[1]]


def page_prompt(session: Session) -> str:
    """The status line in the page's words (what to click, cards as their faces show them), not the terminal's
    commands: "Your turn: the upcard A\u2666 is offered: click it to take it, or Pass."; otherwise whose turn it is,
    or the series result."""
    game = session.game
    if session.held_hand_end is not None:
        return "The hand is over."
    if not session.humans_turn:
        return turn_line(game.position(), session.human, session.names).plain
    legal, pile = set(game.legal_actions()), game.discard_pile
    top = face(pile[-1]) if pile else ""
    knock = ", or its knock button to knock" if any(a >= KNOCK_BASE for a in legal) else ""
    if game.phase.startswith("offer"):
        words = f"the upcard {top} is offered: click it to take it, or Pass"
    elif game.phase == "draw":
        words = "click the stock to draw" + (f", or {top} to take it" if ACTION_TAKE in legal else "")
    elif game.phase == "last_discard":
        words = f"the stock is down to {game.stock_size}: click {top} to take it (only to knock), or Pass: a dead hand"
    elif any(DISCARD_BASE <= a < KNOCK_BASE for a in legal):
        words = f"you hold {len(game.hand(session.human))} cards: click one to discard it{knock}"
    else:  # the last discard taken: only a knock is legal
        words = f"you hold {len(game.hand(session.human))} cards: knock with a card's knock button"
    return f"Your turn: {words}."


def just_drawn(events: Sequence[dict[str, Any]], human: int) -> str | None:
    """The card the human drew this turn (the last move of the hand was its draw), else None."""
    moves = [e for e in events if e["type"] in ("pass", "draw", "discard", "knock")]
    last = moves[-1] if moves else None
    return card_name(last["card"]) if last and last["type"] == "draw" and last["player"] == human else None


def page_view(session: Session, seq: int) -> dict[str, Any]:
    """Everything the page shows, from the human's seat only; `seq` numbers this state (a move must name it)."""
    game, human = session.game, session.human
    events, pile = hand_events(game.events), game.discard_pile
    held = session.held_hand_end is not None
    ended = shown_hand_end(session)
    moves = move_sentences(events, human, session.names, last=RECENT_MOVES)
    return {
        "seq": seq,
        "opponent": session.opponent_label,
        "opponent_name": session.opponent_name,
        "seat": human,
        "hand_number": game.hand_number,
        "dealer": who(session, game.dealer),
        "phase": game.phase,
        "turn": None if game.done or held else who(session, game.current_player),
        "prompt": page_prompt(session),
        "hand": {**arranged(game.hand(human)), "drawn": just_drawn(events, human)},
        "bot": {"cards": len(game.hand(1 - human)), "took": names(by_rank(public_took(events, 1 - human)))},
        "pile": {
            "face_up": card_name(pile[-1]) if pile else None,
            "recent": names(pile[-RECENT_PILE:]),
            "size": len(pile),
        },
        "stock": game.stock_size,
        "moves": [m.plain for m in moves],
        "earlier_moves": turn_count(events) - len(moves),
        "legal": legal_moves(session),
        "sheet": sheet(session),
        "rules": {
            "summary": game.rules.describe(),
            "knock_limit": game.rules.knock_limit,
            "game_target": game.rules.game_target,
            "num_games": game.rules.num_games,
        },
        "hand_end": None if ended is None else hand_end(session, ended),
        "match_end": match_end(session),
        "save": {"path": session.save_path, "error": session.save_error},
    }
