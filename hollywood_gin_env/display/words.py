"""A match's event log in words: cards styled by suit, each turn as a sentence, each hand's end with its score.

Reads `Game.events` only. A sentence told to a viewer never names the opponent's stock draws; a hand's end
names the cards both players spread, which the showdown makes public (RULES.md R13-R17).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text

from hollywood_gin_env.rules.cards import card_name, rank_of, suit_of
from hollywood_gin_env.rules.melds import arrange, min_deadwood
from hollywood_gin_env.rules.options import MAX_HAND_TURNS, Rules

#: Four-colour deck: hearts red, diamonds blue, clubs green, spades in the terminal's own colour.
SUIT_STYLES = ("bold", "bold red", "bold blue", "bold green")
MINUS = "\u2212"  # the minus sign RULES.md's worked examples use

Event = dict[str, Any]
TURN_OPENERS = ("pass", "draw")  # every turn of a hand opens with one of these events
LOG_MOVES = 100  # the moves the `log` command tells, the last of the hand: half a hand of MAX_HAND_TURNS


def card_text(card: int) -> Text:
    """A card's name styled by its suit."""
    return Text(card_name(card), style=SUIT_STYLES[suit_of(card)])


def cards_text(cards: Iterable[int], sep: str = " ") -> Text:
    """Card names styled by suit, joined by sep."""
    return Text(sep).join(card_text(c) for c in cards)


def by_rank(cards: Iterable[int]) -> list[int]:
    """Cards ordered by rank, then suit (how a player sorts them)."""
    return sorted(cards, key=lambda c: (rank_of(c), suit_of(c)))


def sorted_melds(melds: Iterable[Iterable[int]]) -> list[list[int]]:
    """Melds each by rank, ordered by their lowest rank (as the renderer shows them)."""
    return sorted((by_rank(m) for m in melds), key=lambda m: rank_of(m[0]))


def display_order(cards: Iterable[int]) -> list[int]:
    """A hand's cards in the order the renderer shows them: its best melds (`sorted_melds`), then its deadwood by
    rank."""
    melds, deadwood = arrange(list(cards))
    return [c for m in sorted_melds(melds) for c in m] + by_rank(deadwood)


def example_discard(hand: Sequence[int], allowed: Sequence[int]) -> int:
    """Of `allowed` (cards of `hand`, at least one), the one a player would discard: the one that leaves the least
    deadwood, of those the highest rank (so an example never breaks up a meld for nothing)."""
    return min(allowed, key=lambda c: (min_deadwood([x for x in hand if x != c]), -rank_of(c), suit_of(c)))


def poss(name: str) -> str:
    """Possessive of a seat name: "Your", "Bot's"."""
    return "Your" if name == "You" else f"{name}'s"


def obj(name: str) -> str:
    """A seat name as an object: "you", "Bot"."""
    return "you" if name == "You" else name


def verb(name: str, plural: str, singular: str) -> str:
    """The verb form that agrees with a seat name ("You win", "Bot wins")."""
    return plural if name == "You" else singular


def hand_events(events: Sequence[Event]) -> list[Event]:
    """The events of the current hand, from its "deal" event on (empty when the log has no deal)."""
    for i in range(len(events) - 1, -1, -1):
        if events[i]["type"] == "deal":
            return list(events[i:])
    return []


def public_took(events: Sequence[Event], seat: int) -> list[int]:
    """Cards the seat took from the discard pile this hand and still holds (everyone saw them taken)."""
    held: list[int] = []
    for e in events:
        if e.get("player") == seat and e["type"] == "draw" and e["source"] == "discard":
            held.append(e["card"])
        elif e.get("player") == seat and e["type"] in ("discard", "knock") and e["card"] in held:
            held.remove(e["card"])
    return held


def _draw_words(event: Event, viewer: int | None) -> Text:
    if event["source"] == "discard":
        return Text("took ") + card_text(event["card"]) + Text(" from the pile")
    shown = viewer is None or event["player"] == viewer
    drawn = Text("drew ") + card_text(event["card"]) if shown else Text("drew")
    forced = "" if "action" in event else " (both passed the upcard, so a stock draw)"
    return drawn + Text(f" from the stock{forced}")


def _knock_words(events: Sequence[Event], i: int) -> str:
    result = next((e for e in events[i:] if e["type"] == "hand_result"), None)
    return "went gin" if result is not None and result["kind"] == "gin" else "knocked"


def turn_count(events: Sequence[Event]) -> int:
    """How many sentences `move_sentences` tells of these events: one per turn, each opening with a pass or a draw."""
    return sum(e["type"] in TURN_OPENERS for e in events)


def _start_of_last_turns(events: Sequence[Event], last: int) -> int:
    """The index of the event that opens the `last`-th turn from the end (0 if there are fewer turns)."""
    seen = 0
    for i in range(len(events) - 1, -1, -1):
        if events[i]["type"] in TURN_OPENERS:
            seen += 1
            if seen == last:
                return i
    return 0


def move_sentences(
    events: Sequence[Event], viewer: int | None, names: Sequence[str], last: int | None = None
) -> list[Text]:
    """One sentence per turn (or pass) of the given events, told as `viewer` may know it; with `last`, only the
    last that many (the earlier turns are never put in words, so a long hand costs little)."""
    out: list[Text] = []
    pending: tuple[int, Text] | None = None  # a draw waiting for its discard
    start = 0 if last is None else _start_of_last_turns(events, last)
    discarded = any(e["type"] == "discard" for e in events[:start])
    for i in range(start, len(events)):
        e = events[i]
        if e["type"] not in ("pass", "draw", "discard", "knock"):
            continue
        who = names[e["player"]]
        if e["type"] in ("pass", "draw") and pending is not None:
            out.append(Text(f"{names[pending[0]]} ") + pending[1] + Text("."))
            pending = None
        if e["type"] == "pass":
            what = "let the last discard go, so the hand is dead: " if discarded else "passed the upcard "
            out.append(Text(f"{who} {what}") + card_text(e["card"]) + Text("."))
        elif e["type"] == "draw":
            pending = (e["player"], _draw_words(e, viewer))
        else:
            action = "discarded " if e["type"] == "discard" else f"{_knock_words(events, i)}, discarding "
            drawn = pending[1] + Text(" and ") if pending is not None and pending[0] == e["player"] else Text()
            out.append(Text(f"{who} ") + drawn + Text(action) + card_text(e["card"]) + Text("."))
            pending, discarded = None, True
    if pending is not None:
        out.append(Text(f"{names[pending[0]]} ") + pending[1] + Text("."))
    return out


def hand_log(events: Sequence[Event], viewer: int | None, names: Sequence[str], last: int = LOG_MOVES) -> list[Text]:
    """The `log` command's answer: the current hand's last `last` moves in words, after a line counting the earlier
    ones left out (a hand runs to MAX_HAND_TURNS moves), or a line saying there are none yet."""
    hand = hand_events(events)
    moves = move_sentences(hand, viewer, names, last=last)
    if not moves:
        return [Text("No moves yet this hand.")]
    earlier = turn_count(hand) - len(moves)
    return [Text(f"({earlier:,} earlier moves not shown)", style="dim")] * (earlier > 0) + moves


def _spread_line(name: str, melds: list[list[int]], deadwood: list[int], count: int, layoffs: Text | None) -> Text:
    parts = [Text("[") + cards_text(m) + Text("]") for m in sorted_melds(melds)]
    if layoffs is not None:
        parts.append(layoffs)
    if deadwood:
        parts.append(cards_text(by_rank(deadwood)))
    return Text.assemble((f"  {name}: ", "bold"), Text("  ").join(parts), (f"   deadwood {count}", "dim"))


def _layoff_text(spread: Event) -> Text | None:
    laid = [(cards, meld) for cards, meld in zip(spread["layoffs"], spread["knocker_melds"], strict=True) if cards]
    if not laid:
        return None
    each = [Text("laid off ") + cards_text(c) + Text(" on ") + cards_text(by_rank(m)) for c, m in laid]
    return Text("(") + Text(", ").join(each) + Text(")")


def score_words(result: Event, rules: Rules, names: Sequence[str]) -> str:
    """The hand's score worked out as RULES.md's examples do ("Knock: 23 − 7 = 16 points to you, ...")."""
    k, d, points = result["knocker_deadwood"], result["defender_deadwood"], result["points"]
    sums = {
        "gin": f"Gin: {rules.gin_bonus} + {d}",
        "knock": f"Knock: {d} {MINUS} {k}",
        "undercut": f"Undercut: {rules.undercut_bonus} + ({k} {MINUS} {d})",
    }
    games = [str(g + 1) for g in result["credited_games"]]
    if not games:
        where = "entered in no game (the games it would go to are closed)"
    else:
        listed = games[0] if len(games) == 1 else f"{', '.join(games[:-1])} and {games[-1]}"
        where = f"entered in game{'s' if len(games) > 1 else ''} {listed}"
    return f"{sums[result['kind']]} = {points} points to {obj(names[result['winner']])}, {where}."


def _close_words(close: Event, rules: Rules, names: Sequence[str]) -> str:
    w = close["winner"]
    (tw, tl), (ew, el) = (close["totals"][w], close["totals"][1 - w]), (close["entries"][w], close["entries"][1 - w])
    line = f"Game {close['game'] + 1} closes: {verb(names[w], 'you win', names[w] + ' wins')} it, {tw} to {tl}"
    bonuses = []
    if rules.game_bonus:
        bonuses.append(f"game bonus {rules.game_bonus}")
    if rules.box_bonus:
        bonuses.append(f"{rules.box_bonus} a hand entered ({ew} to {el})")
    if el == 0 and rules.shutout_rule != "none":
        bonuses.append(f"shutout: {rules.shutout_rule}")
    return line + (f"; net {close['net']} ({', '.join(bonuses)})." if bonuses else f"; net {close['net']}.")


def hand_end_lines(
    events: Sequence[Event], index: int, rules: Rules, names: Sequence[str], viewer: int | None = None
) -> list[Text]:
    """The hand that ended at events[index] (its "hand_result"): its last turn as `viewer` saw it, both spreads,
    the score, closed games and the match result."""
    result = events[index]
    lines = move_sentences(hand_events(events[: index + 1]), viewer, names, last=1)
    if result["kind"] == "dead":
        deal = next((e for e in events[index:] if e["type"] == "deal"), None)
        again = f" {names[deal['dealer']]} {verb(names[deal['dealer']], 'deal', 'deals')} again." if deal else ""
        why = (
            f"{MAX_HAND_TURNS} turns without a knock"
            if result["turns"] >= MAX_HAND_TURNS
            else f"the stock is down to {rules.dead_hand_stock_size} cards"
        )
        lines.append(Text(f"Dead hand: {why}. Nobody scores.{again}"))
    else:
        spread, knocker = events[index - 1], result["knocker"]
        lines += [
            _spread_line(
                names[knocker],
                spread["knocker_melds"],
                spread["knocker_deadwood_cards"],
                result["knocker_deadwood"],
                None,
            ),
            _spread_line(
                names[1 - knocker],
                spread["defender_melds"],
                spread["defender_deadwood_cards"],
                result["defender_deadwood"],
                _layoff_text(spread),
            ),
            Text(score_words(result, rules, names), style="bold"),
        ]
    for j in range(index + 1, len(events)):
        e = events[j]
        if e["type"] == "deal":
            break
        if e["type"] == "game_close":
            lines.append(Text(_close_words(e, rules, names), style="bold"))
        elif e["type"] == "match_end":
            won = [c["winner"] for c in events[:j] if c["type"] == "game_close"]
            w = e["winner"]
            lines.append(
                Text(
                    f"Match over: {names[w]} {verb(names[w], 'win', 'wins')} the series, "
                    f"{won.count(w)} games to {won.count(1 - w)}.",
                    style="bold",
                )
            )
    return lines
