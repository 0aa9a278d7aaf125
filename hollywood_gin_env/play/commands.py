"""The command parser of the play program: `parse_command(text, game, player)` -> a `Command`, or a `CommandError`.

Forms (case-insensitive; cards as `7h`, `7H`, `10h`, `TH`, `th`, `1h` for an ace, or with a suit symbol `7♥`):
`d`/`draw`, `t`/`take` (optionally naming the face-up card), `p`/`pass`, `7h` or `discard 7h`, `k 7h`/`knock 7h`,
`gin 7h` (a knock that must leave no deadwood), and the commands that make no move: `hint`, `sheet`, `log`, `help`,
`quit`.
A command that is not legal now raises `CommandError` saying why and what is legal; nothing is ever applied
here, so the game is unchanged whatever was typed.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hollywood_gin_env.display.words import display_order, example_discard, hand_events
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import RANKS, SUITS, card_name, parse_card
from hollywood_gin_env.rules.melds import min_deadwood
from hollywood_gin_env.support.messages import shown_value

if TYPE_CHECKING:
    from hollywood_gin_env.engine.game import Game

MAX_LENGTH = 40  # the longest real command ("discard 10h") is 11 characters
SUIT_SYMBOLS = str.maketrans("♠♥♦♣♤♡♢♧", "SHDCSHDC")
#: Every spelling of each command word.
WORDS = {
    **dict.fromkeys(("d", "draw", "stock"), "draw"),
    **dict.fromkeys(("t", "take", "pile"), "take"),
    **dict.fromkeys(("p", "pass"), "pass"),
    **dict.fromkeys(("discard", "drop"), "discard"),
    **dict.fromkeys(("k", "knock"), "knock"),
    "gin": "gin",
    **dict.fromkeys(("hint", "h", "?"), "hint"),
    **dict.fromkeys(("sheet", "score", "s"), "sheet"),
    **dict.fromkeys(("log", "l"), "log"),
    "help": "help",
    **dict.fromkeys(("quit", "q", "exit"), "quit"),
}
TABLE_COMMANDS = ("hint", "sheet", "log", "help", "quit")
CARD_HELP = f"a card is a rank ({' '.join(RANKS)}, or 10) and a suit ({' '.join(SUITS)}): 7h, 10d, TD, as"
#: (what to type, what it does) of every command; the page leaves out the rows that apply to the terminal only.
HELP_ROWS = (
    ("d, draw", "draw from the stock"),
    ("t, take", "take the face-up card (the upcard during the offer)"),
    ("p, pass", "pass the upcard (the offer only), or let the last discard go"),
    ("7h, discard 7h", "discard a card"),
    ("k 7h, knock 7h", "knock, discarding 7H"),
    ("gin 7h", "the same knock, when it leaves no deadwood"),
    ("hint", "what the bot would do here, and the deadwood each discard would leave"),
    ("sheet, log", "the Hollywood score sheet; this hand's moves"),
    ("help", "this list"),
    ("quit", "leave (offering to save)"),
)
TERMINAL_ONLY = ("quit",)
HELP = "\n".join(
    [
        "Commands (any case):",
        *(f"  {typed:<18} {meaning}" for typed, meaning in HELP_ROWS),
        f"{CARD_HELP[0].upper()}{CARD_HELP[1:]}.",
    ]
)


def help_lines(terminal: bool = True) -> list[str]:
    """The help as lines: the terminal's columns, or for the page "typed: meaning" lines without `quit`."""
    if terminal:
        return HELP.splitlines()
    rows = [f"{typed}: {meaning}" for typed, meaning in HELP_ROWS if typed not in TERMINAL_ONLY]
    return ["Commands (any case):", *rows, HELP.splitlines()[-1]]


class CommandError(ValueError):
    """A command that was not understood or is not legal now; the message says why and what is allowed."""


@dataclass(frozen=True)
class Command:
    """A parsed command: kind "play" with the action id to apply, or one of TABLE_COMMANDS."""

    kind: str
    action: int | None = None


def is_quit(text: str) -> bool:
    """True if text is one of quit's spellings (quit, q, exit; any case, spaces around)."""
    return WORDS.get(text.strip().lower()) == "quit"


def action_words(action: int, game: Game) -> str:
    """An action in words for the player to act: "draw from the stock", "take 7H", "knock discarding 7H"."""
    pile = game.discard_pile
    if action in (ACTION_DRAW_STOCK, ACTION_PASS):
        return "draw from the stock" if action == ACTION_DRAW_STOCK else "pass"
    if action == ACTION_TAKE:
        return f"take {card_name(pile[-1])}"
    if action >= KNOCK_BASE:
        return f"knock discarding {card_name(action - KNOCK_BASE)}"
    return f"discard {card_name(action - DISCARD_BASE)}"


def legal_summary(game: Game) -> str:
    """What the player to act may do now, as commands; cards in the order the renderer shows the hand."""
    legal = game.legal_actions()
    keys = {ACTION_DRAW_STOCK: "d", ACTION_TAKE: "t", ACTION_PASS: "p"}
    plain = [f"{action_words(a, game)} ({keys[a]})" for a in legal if a in keys]
    hand = game.hand(game.current_player) if not game.done else []
    for base, words in (
        (DISCARD_BASE, "discard one of {} (e.g. {})"),
        (KNOCK_BASE, "knock discarding one of {} (knock {})"),
    ):
        cards = [c for c in display_order(hand) if base + c in legal]
        if cards:
            names = " ".join(card_name(c) for c in cards)
            plain.append(words.format(names, card_name(example_discard(hand, cards)).lower()))
    return "Legal now: " + "; ".join(plain) + "." if plain else "Nothing is legal: the match is over."


def parse_card_token(token: str) -> int:
    """The card id of one typed card ("7h", "10H", "TD", "7♥"); CommandError otherwise."""
    try:
        return parse_card(token.translate(SUIT_SYMBOLS))
    except ValueError:
        raise CommandError(
            f"{shown_value(token)} is not a command or a card (a card is a rank and a suit: 7h, 10d, as); type help."
        ) from None


def _tokens(text: object) -> list[str]:
    if not isinstance(text, str):
        raise CommandError(f"a command is text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise CommandError(
            f"That is {len(text)} characters; commands are at most {MAX_LENGTH} (d, t, p, 7h, "
            "knock 7h). Type help for the commands."
        )
    odd = [ch for ch in text if unicodedata.category(ch)[0] == "C" and ch != "\t"]
    if odd:
        raise CommandError(
            f"The command holds control characters ({ascii(''.join(odd))}, e.g. an arrow key); "
            "type d, t, p, 7h or knock 7h. Type help for the commands."
        )
    tokens = text.lower().replace(",", " ").split()
    if not tokens:
        raise CommandError("Type a command: d, t, p, 7h, knock 7h, hint, help.")
    return tokens


def parse_command(text: str, game: Game, player: int) -> Command:
    """The command `text` typed by `player`; CommandError (a ValueError) with the reason if it cannot be played."""
    tokens = _tokens(text)
    word, args = tokens[0], tokens[1:]
    if word not in WORDS:
        if args:
            raise CommandError(f"Unknown command {shown_value(word)}. Type help for the commands.")
        word, args = "discard", [word]  # a bare card is a discard
    kind = WORDS[word]
    if kind in TABLE_COMMANDS:
        if args:
            raise CommandError(f"{word} takes nothing after it (got {shown_value(' '.join(args))}).")
        return Command(kind)
    if game.done:
        raise CommandError("The match is over: nothing more can be played.")
    if game.current_player != player:
        raise CommandError(f"It is not your turn: the other player is to act ({game.phase.replace('_', ' ')}).")
    return Command("play", _action(kind, word, args, game, player))


def example_card(word: str, game: Game) -> int:
    """A card to show in an example of `word`: the face-up card to take, else the card the player would discard."""
    hand, legal = game.hand(game.current_player), game.legal_actions()
    if WORDS[word] == "take" and game.discard_pile:
        return game.discard_pile[-1]
    allowed = [c for c in hand if {DISCARD_BASE + c, KNOCK_BASE + c} & set(legal)]
    return example_discard(hand, allowed or hand)


def _one_card(word: str, args: list[str], game: Game) -> int:
    if len(args) == 1:
        return parse_card_token(args[0])
    example = card_name(example_card(word, game)).lower()
    if args and WORDS[word] == "take":  # the card is optional: only the extra words are wrong
        raise CommandError(
            f"{word} takes the face-up card and nothing more: {word} or {word} {example}, not {word} "
            f"{shown_value(' '.join(args))}."
        )
    got = f"got {shown_value(' '.join(args))}" if args else "got none"
    raise CommandError(f"{word} takes one card, e.g. {word} {example} ({got}). {legal_summary(game)}")


def _action(kind: str, word: str, args: list[str], game: Game, player: int) -> int:
    card = None
    if kind in ("draw", "pass") and args:
        raise CommandError(f"{word} takes nothing after it (got {shown_value(' '.join(args))}).")
    if kind == "take" and args:
        card = _one_card(word, args, game)
        top = game.discard_pile[-1] if game.discard_pile else None  # empty right after the upcard is taken
        if top is not None and card != top:
            raise CommandError(f"You can only take the face-up card, {card_name(top)}, not {card_name(card)}.")
    if kind in ("discard", "knock", "gin"):
        card = _one_card(word, args, game)
    fixed = {"draw": ACTION_DRAW_STOCK, "take": ACTION_TAKE, "pass": ACTION_PASS}
    action = fixed[kind] if kind in fixed else (DISCARD_BASE if kind == "discard" else KNOCK_BASE) + card
    if action not in game.legal_actions():
        raise CommandError(f"{why_not(kind, card, game, player)} {legal_summary(game)}")
    if kind == "gin":
        left = min_deadwood([c for c in game.hand(player) if c != card])
        if left:
            raise CommandError(
                f"Discarding {card_name(card)} leaves deadwood {left}: that is a knock, not gin "
                f"(knock {card_name(card).lower()})."
            )
    return action


def _taken_this_turn(game: Game, player: int) -> int | None:
    moves = [e for e in hand_events(game.events) if e["type"] in ("draw", "discard", "knock", "pass")]
    last = moves[-1] if moves else None
    if last and last["type"] == "draw" and last["player"] == player and last["source"] == "discard":
        return last["card"]
    return None


def why_not(kind: str, card: int | None, game: Game, player: int) -> str:
    """Why the command of this kind (with this card) is not legal for the player to act."""
    phase, held = game.phase, game.hand(player)
    pile = game.discard_pile
    top = card_name(pile[-1]) if pile else "--"
    if phase == "discard" and kind in ("draw", "take", "pass"):
        return f"You must discard: you hold {len(held)} cards."
    if phase.startswith("offer") and kind in ("draw", "discard", "knock", "gin"):
        return f"You hold {len(held)} cards and the upcard {top} is on offer: take it or pass first."
    if phase == "draw" and kind == "pass":
        return "You can pass only on the upcard offer or the last discard."
    if phase == "draw":
        return f"You hold {len(held)} cards: draw a card first."
    if phase == "last_discard":
        return f"The stock is down to {game.stock_size}: you may only take {top} to knock, or pass (the hand is dead)."
    if card not in held:
        return f"You don't hold {card_name(card)}."
    if card == _taken_this_turn(game, player) and not game.rules.allow_rediscard_taken_card:
        return f"You took {card_name(card)} from the pile this turn and may not discard it (RULES.md R9)."
    if kind == "gin":
        left = min_deadwood([c for c in held if c != card])
        return f"Gin needs 0 deadwood: discarding {card_name(card)} leaves {left}."
    if kind == "knock":
        left = min_deadwood([c for c in held if c != card])
        return (
            f"You can't knock discarding {card_name(card)}: it leaves deadwood {left}, over the limit of "
            f"{game.rules.knock_limit}."
        )
    return f"You took the last discard, so you must knock, not discard {card_name(card)}."
