"""Scenario tests of the single-match `Game` API with fixed decks (RULES.md R3-R30, E1-E8, E11, E12).

Every scenario deals a fixed deck (R3): the non-dealer gets deck[0], deck[2], ..., deck[18], the dealer
deck[1], ..., deck[19], deck[20] is the upcard and deck[21] is the top of the stock. `make_deck` builds such a
deck from two hands, an upcard and a stock order. Player 0 deals the first hand unless a test says otherwise,
so player 1 is the non-dealer who acts first. As in OpenSpiel's gin_rummy_test, each score is worked out in
prose before the assert.
"""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import cards_str, parse_card, parse_cards
from hollywood_gin_env.rules.options import MAX_HAND_TURNS, Rules

DEALER, NONDEALER = 0, 1
DRAW, TAKE, PASS = ACTION_DRAW_STOCK, ACTION_TAKE, ACTION_PASS


def discard(card: str) -> int:
    """The action that discards `card`."""
    return DISCARD_BASE + parse_card(card)


def knock(card: str) -> int:
    """The action that knocks, discarding `card`."""
    return KNOCK_BASE + parse_card(card)


def make_deck(nondealer: str, dealer: str, upcard: str, stock: str = "", at: dict[int, str] | None = None) -> list:
    """A 52-card deck that deals these hands (R3); the stock is `stock` (top first), then the unused cards.

    `at` moves stock cards to fixed deck positions, e.g. {49: "8C"} makes 8C the card drawn on turn 29.
    """
    hands = parse_cards(nondealer), parse_cards(dealer)
    assert len(hands[0]) == len(hands[1]) == 10
    head = [card for pair in zip(*hands, strict=True) for card in pair] + [parse_card(upcard)]
    head += parse_cards(stock) if stock else []
    assert len(set(head)) == len(head), "a card is used twice"
    deck = head + [c for c in range(52) if c not in head]
    for index, name in (at or {}).items():
        j = deck.index(parse_card(name))
        assert j >= 21 and index >= 21, "only stock cards can be moved"
        deck[index], deck[j] = deck[j], deck[index]
    return deck


def new_game(nondealer: str, dealer: str, upcard: str, stock: str = "", rules: Rules | None = None, **kw) -> Game:
    """A game whose first deal is fixed; player 0 deals."""
    return Game(rules or Rules(), seed=0, deck=make_deck(nondealer, dealer, upcard, stock, **kw), first_dealer=DEALER)


def names(cards) -> set[str]:
    """The set of card names of card ids."""
    return set(cards_str(cards).split())


def free_cards(*hands: str) -> list[str]:
    """Card names used by none of the given card strings, in id order."""
    used = {c for text in hands for c in parse_cards(text)}
    return [cards_str([c]) for c in range(52) if c not in used]


def last_event(game: Game, kind: str) -> dict:
    """The last event of a type."""
    return [e for e in game.events if e["type"] == kind][-1]


def knock_on_first_turn(knocker: str, defender: str, discard_card: str | None = None, rules: Rules | None = None):
    """Both players pass the upcard, the non-dealer (the knocker) draws `discard_card` and knocks with it.

    The knocker therefore spreads exactly the 10 cards given; the dealer is the defender.
    """
    spare = free_cards(knocker, defender, discard_card or "")
    discard_card = discard_card or spare[-1]
    game = new_game(knocker, defender, upcard=spare[0], stock=discard_card, rules=rules)
    game.step(PASS)
    game.step(PASS)
    game.step(knock(discard_card))
    return game


def draw_and_discard(game: Game, until_stock: int) -> None:
    """Both players draw from the stock and discard the card just drawn until the stock holds `until_stock`.

    The hand starts with two passes, so the non-dealer's first draw is the forced one (R6d).
    """
    if game.phase == "offer_nondealer":
        game.step(PASS)
        game.step(PASS)
    while True:
        if game.phase == "draw":
            game.step(DRAW)
        assert game.phase == "discard"
        if game.stock_size == until_stock:
            return
        game.step(DISCARD_BASE + last_event(game, "draw")["card"])


# --- R3, R4: the deal -------------------------------------------------------------------------------------

ND_HAND = "AS 3S 5S 7S 2H 4H 6H 3D 5D KC"
D_HAND = "9S TS JS 2C 3C 4C 8D 8H KH QD"


@pytest.mark.nojit
@pytest.mark.parametrize("first_dealer", [0, 1])
def test_r3_r4_deal_follows_the_deck_convention(first_dealer):
    """R3: the non-dealer gets the even deck positions, the dealer the odd ones; R4: pile = upcard, 31 in stock."""
    deck = make_deck(ND_HAND, D_HAND, "QS", stock="7C 9H")
    game = Game(Rules(), seed=0, deck=deck, first_dealer=first_dealer)
    nondealer = 1 - first_dealer
    assert game.dealer == first_dealer
    assert names(game.hand(nondealer)) == set(ND_HAND.split())
    assert names(game.hand(first_dealer)) == set(D_HAND.split())
    assert game.discard_pile == [parse_card("QS")]
    assert game.stock_size == 31
    assert game.phase == "offer_nondealer"
    assert game.current_player == nondealer
    assert game.legal_actions() == [TAKE, PASS]
    deal = game.events[-1]
    assert deal["type"] == "deal" and deal["dealer"] == first_dealer and deal["hand"] == 1
    assert deal["upcard"] == parse_card("QS") and deal["deck"] == deck


def test_first_dealer_is_random_when_not_given():
    """R2: the first dealer comes from the seeded RNG: both seats deal first for some seed, and a seed repeats."""
    dealers = {Game(seed=seed).dealer for seed in range(24)}
    assert dealers == {0, 1}
    assert Game(seed=5).dealer == Game(seed=5).dealer


# --- R5-R10: turns, the upcard offer, the discard pile ----------------------------------------------------


@pytest.mark.nojit
def test_r6b_nondealer_takes_upcard_then_dealer_plays_a_normal_turn():
    """R6(a)(b), R5: the non-dealer takes the upcard (11 cards), discards (10), then the dealer draws normally."""
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C 9H")
    game.step(TAKE)
    assert (game.phase, game.current_player, len(game.hand(NONDEALER))) == ("discard", NONDEALER, 11)
    assert game.discard_pile == [] and game.stock_size == 31
    game.step(discard("KC"))
    assert len(game.hand(NONDEALER)) == 10
    assert (game.phase, game.current_player) == ("draw", DEALER)
    assert game.legal_actions() == [DRAW, TAKE]  # a normal turn: no more passing
    game.step(DRAW)
    # The dealer draws the top of the stock, deck[21] = 7C.
    assert "7C" in names(game.hand(DEALER)) and game.stock_size == 30


def test_r6c_dealer_takes_after_nondealer_passes_then_nondealer_plays():
    """R6(c): after the non-dealer passes, the dealer may take the upcard; then the non-dealer plays a normal turn."""
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C 9H")
    game.step(PASS)
    assert (game.phase, game.current_player) == ("offer_dealer", DEALER)
    assert game.legal_actions() == [TAKE, PASS]
    game.step(TAKE)
    assert (game.phase, game.current_player, len(game.hand(DEALER))) == ("discard", DEALER, 11)
    game.step(discard("KH"))
    assert (game.phase, game.current_player) == ("draw", NONDEALER)
    assert game.legal_actions() == [DRAW, TAKE]
    game.step(DRAW)
    assert "7C" in names(game.hand(NONDEALER))


@pytest.mark.nojit
def test_r6d_r7_both_pass_forces_a_stock_draw_by_the_nondealer():
    """R6(d), R7: two passes draw nothing; then the non-dealer must draw the stock, which the engine applies.

    The log shows pass, pass, then a "draw" with source "stock" and no action (it was not chosen).
    """
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C 9H")
    before = game.hand(NONDEALER), game.hand(DEALER)
    game.step(PASS)
    # R7: a pass is not a turn, nothing moves.
    assert (game.hand(NONDEALER), game.hand(DEALER)) == before
    assert game.stock_size == 31 and game.discard_pile == [parse_card("QS")]
    game.step(PASS)
    assert (game.phase, game.current_player) == ("discard", NONDEALER)
    assert len(game.hand(NONDEALER)) == 11 and "7C" in names(game.hand(NONDEALER))
    assert "QS" not in names(game.hand(NONDEALER)) and game.discard_pile == [parse_card("QS")]
    assert game.stock_size == 30
    assert game.hand(DEALER) == before[1]
    draw = game.events[-1]
    assert draw == {"type": "draw", "player": NONDEALER, "card": parse_card("7C"), "source": "stock"}
    assert [e["type"] for e in game.events[-3:]] == ["pass", "pass", "draw"]
    assert game.actions_played() == [PASS, PASS]


def test_r8_only_the_top_of_the_discard_pile_is_taken():
    """R8: after discards A then B on top of the upcard, taking gives B and leaves the rest of the pile."""
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C 9H 6C")
    game.step(PASS)
    game.step(PASS)
    game.step(discard("7C"))  # the non-dealer drew 7C and throws it
    game.step(DRAW)  # the dealer draws 9H
    game.step(discard("9H"))
    assert game.discard_pile == parse_cards("QS 7C 9H")
    game.step(TAKE)
    assert "9H" in names(game.hand(NONDEALER))
    assert game.discard_pile == parse_cards("QS 7C")
    assert game.stock_size == 29  # taking from the pile does not touch the stock (R27)
    assert last_event(game, "draw") == {
        "type": "draw",
        "player": NONDEALER,
        "card": parse_card("9H"),
        "source": "discard",
        "action": TAKE,
    }


def test_r9_taken_card_may_not_be_discarded_later_in_the_hand_either():
    """R9: the ban also holds for a card taken from the pile mid-hand (not only the upcard)."""
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C 9H 6C")
    game.step(PASS)
    game.step(PASS)
    game.step(discard("7C"))
    game.step(DRAW)
    game.step(discard("9H"))
    game.step(TAKE)
    legal = game.legal_actions()
    assert discard("9H") not in legal and knock("9H") not in legal
    assert {discard(c) for c in ND_HAND.split()} <= set(legal)
    with pytest.raises(ValueError, match="illegal action"):
        game.step(discard("9H"))


KNOCK_HAND = "AS 2S 3S 4H 5H 6H 7C 7D 7S 9D"  # melds AS-3S, 4H-6H, 7C7D7S; deadwood 9D = 9


@pytest.mark.parametrize("allow", [False, True])
def test_r9_rediscard_of_the_upcard_and_the_option(allow):
    """R9: taking the upcard KC bans discarding KC, the knock discard included; allow_rediscard lifts the ban.

    With the 10 dealt cards at deadwood 9, throwing KC back would knock with k = 9; throwing 9D instead
    knocks with k = KC = 10, which is legal either way.
    """
    game = new_game(KNOCK_HAND, D_HAND, "KC", rules=Rules(allow_rediscard_taken_card=allow))
    game.step(TAKE)
    legal = set(game.legal_actions())
    assert (discard("KC") in legal) is allow
    assert (knock("KC") in legal) is allow
    assert knock("9D") in legal
    if allow:
        game.step(knock("KC"))
        assert game.last_result["knocker_deadwood"] == 9
    else:
        with pytest.raises(ValueError, match=f"illegal action {knock('KC')}:"):
            game.step(knock("KC"))


def test_r10_the_card_just_drawn_from_the_stock_may_be_discarded():
    """R10 (and E12's second half): after the forced stock draw, every one of the 11 cards may be discarded."""
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C")
    game.step(PASS)
    game.step(PASS)
    discards = {a - DISCARD_BASE for a in game.legal_actions() if DISCARD_BASE <= a < KNOCK_BASE}
    assert discards == set(game.hand(NONDEALER)) and parse_card("7C") in discards


# --- R11, R12, E12: knocking -------------------------------------------------------------------------------

E12_HAND = "3H 4H 9C 9D 9S JS QS KS 2D 8C"
E12_DEFENDER = "AC 2C 4C 6D 8D TD JH QH 5S 7S"  # no meld, and nothing fits 3H-5H, 9C9D9S or JS-KS


@pytest.mark.nojit
def test_e12_first_turn_knock_after_taking_the_upcard():
    """E12, R11: the non-dealer takes 5H, may not throw it back (R9), discards 8C and knocks at once.

    Knocker 3H 4H 5H | 9C 9D 9S | JS QS KS | 2D: k = 2. The defender AC 2C 4C 6D 8D TD JH QH 5S 7S has no
    meld and nothing to lay off (2H, 6H, 9H, TS are elsewhere): d = 1+2+4+6+8+10+10+10+5+7 = 63.
    The knocker scores 63 - 2 = 61.
    """
    game = new_game(E12_HAND, E12_DEFENDER, "5H")
    game.step(TAKE)
    legal = game.legal_actions()
    assert discard("5H") not in legal and knock("5H") not in legal
    # Throwing 8C leaves k = 2D = 2; throwing 2D leaves k = 8C = 8; any other discard breaks a meld.
    assert {a for a in legal if a >= KNOCK_BASE} == {knock("8C"), knock("2D")}
    game.step(knock("8C"))
    result = game.last_result
    assert (result["kind"], result["knocker"], result["winner"]) == ("knock", NONDEALER, NONDEALER)
    assert (result["knocker_deadwood"], result["defender_deadwood"], result["points"]) == (2, 63, 61)
    assert result["knock_discard"] == parse_card("8C") and result["turns"] == 1


def knock_actions(game: Game) -> set[int]:
    """The legal knock actions."""
    return {a for a in game.legal_actions() if a >= KNOCK_BASE}


@pytest.mark.parametrize(("limit", "expected"), [(10, {"KD", "8C"}), (9, {"KD"}), (8, {"KD"}), (7, set()), (0, set())])
def test_r12_knock_actions_follow_the_knock_limit(limit, expected):
    """R12: AS 2S 3S 4H 5H 6H 7C 7D 7S KD + 8C from the stock. Throwing KD leaves 8; throwing 8C leaves KD = 10;
    any other discard breaks a meld (e.g. AS: 2+3+10+8 = 23). So KD knocks up to limit 8 and 8C at limit 10.
    """
    game = new_game("AS 2S 3S 4H 5H 6H 7C 7D 7S KD", D_HAND, "QC", stock="8C", rules=Rules(knock_limit=limit))
    game.step(PASS)
    game.step(PASS)
    assert knock_actions(game) == {knock(c) for c in expected}


def test_r12_knock_limit_zero_allows_only_gin():
    """R12, knock_limit=0: with 4S drawn, throwing KD leaves AS-4S, 4H-6H, 7C7D7S: gin, the only knock.

    Defender 9S TS JS 2C 3C 4C 8D 8H KH QD: own melds 9S-JS and 2C-4C, d = 8+8+10+10 = 36 (no layoffs on
    gin, R16). The knocker scores 25 + 36 = 61.
    """
    game = new_game("AS 2S 3S 4H 5H 6H 7C 7D 7S KD", D_HAND, "QC", stock="4S", rules=Rules(knock_limit=0))
    game.step(PASS)
    game.step(PASS)
    assert knock_actions(game) == {knock("KD")}
    game.step(knock("KD"))
    result = game.last_result
    assert (result["kind"], result["knocker_deadwood"], result["defender_deadwood"], result["points"]) == (
        "gin",
        0,
        36,
        61,
    )


def test_r12_no_knock_above_the_limit():
    """R12: the E12 hand with the forced stock draw QC: the best discard (QC) leaves 3H 4H 2D 8C = 17 > 10."""
    game = new_game(E12_HAND, E12_DEFENDER, "5H", stock="QC")
    game.step(PASS)
    game.step(PASS)
    assert knock_actions(game) == set()


# --- E1-E8 and A6 end to end: R13-R25 ---------------------------------------------------------------------

# (id, knocker's 10 cards, defender's 10 cards, knock discard or None, rules, kind, k, d, points, winner)
SHOWDOWNS = [
    # E1: own meld AD 2D 3D, 6H -> 3H-5H, 8H -> 8C8D8S; d = 7C 7D 5S 9S KH = 38, so 38 - 2 = 36.
    (
        "E1",
        "3H 4H 5H 8C 8D 8S JS QS KS 2C",
        "6H 8H AD 2D 3D 7C 7D 5S 9S KH",
        "9D",
        Rules(),
        "knock",
        2,
        38,
        36,
        "knocker",
    ),
    # E2: own JC QC KC and 5D 5C 5H, 7S then 8S onto 4S-6S; d = AC+2D = 3 <= k = 8: undercut, 10 + 5 = 15.
    (
        "E2",
        "4S 5S 6S 9C 9D 9H TH JH QH 8C",
        "7S 8S JC QC KC 5D 5C 5H AC 2D",
        None,
        Rules(),
        "undercut",
        8,
        3,
        15,
        "defender",
    ),
    # E2 with undercut_bonus 25: 25 + 5 = 30.
    (
        "E2-bonus25",
        "4S 5S 6S 9C 9D 9H TH JH QH 8C",
        "7S 8S JC QC KC 5D 5C 5H AC 2D",
        None,
        Rules(undercut_bonus=25),
        "undercut",
        8,
        3,
        30,
        "defender",
    ),
    # E3: layoffs KS, 9D TD, 4S 5S and own 4C 4H 4D leave 5C+2C = 7 = k: a tie is an undercut, 10 + 0 = 10.
    (
        "E3",
        "AS 2S 3S 6D 7D 8D KC KD KH 7C",
        "KS 9D TD 4S 5S 4C 4H 4D 5C 2C",
        None,
        Rules(),
        "undercut",
        7,
        7,
        10,
        "defender",
    ),
    # E3 with undercut_on_tie=False: the tie goes to the knocker, who scores d - k = 0.
    (
        "E3-tie-to-knocker",
        "AS 2S 3S 6D 7D 8D KC KD KH 7C",
        "KS 9D TD 4S 5S 4C 4H 4D 5C 2C",
        None,
        Rules(undercut_on_tie=False),
        "knock",
        7,
        7,
        0,
        "knocker",
    ),
    # E4: gin against a defender with 0 deadwood: 25 + 0 = 25 to the knocker; not an undercut.
    ("E4", "AH 2H 3H 5C 5D 5S 9S TS JS QS", "7C 7D 7H 2C 3C 4C 8D 9D TD JD", "KD", Rules(), "gin", 0, 0, 25, "knocker"),
    (
        "E4-gin20",
        "AH 2H 3H 5C 5D 5S 9S TS JS QS",
        "7C 7D 7H 2C 3C 4C 8D 9D TD JD",
        "KD",
        Rules(gin_bonus=20),
        "gin",
        0,
        0,
        20,
        "knocker",
    ),
    # E5: gin, so 9C QC AS stay deadwood; own 4D-6D; d = 9+10+1+10+10+3+8 = 51; 25 + 51 = 76.
    (
        "E5",
        "6C 7C 8C QH QD QS 2S 3S 4S 5S",
        "9C QC AS 4D 5D 6D KH KD 3H 8H",
        None,
        Rules(),
        "gin",
        0,
        51,
        76,
        "knocker",
    ),
    (
        "E5-gin20",
        "6C 7C 8C QH QD QS 2S 3S 4S 5S",
        "9C QC AS 4D 5D 6D KH KD 3H 8H",
        None,
        Rules(gin_bonus=20),
        "gin",
        0,
        51,
        71,
        "knocker",
    ),
    # E6: 4H 3H below and 8H 9H above 5H-7H, own 7S7D7C; d = KD+2C+6S = 18; 18 - 1 = 17.
    (
        "E6",
        "5H 6H 7H JC JD JS 2D 3D 4D AC",
        "4H 3H 8H 9H 7S 7D 7C KD 2C 6S",
        None,
        Rules(),
        "knock",
        1,
        18,
        17,
        "knocker",
    ),
    # E7: 9C -> nines, 5C 6C -> 2C-4C, own 8D8S8H; 3H 3S can't join the knocker's deadwood 3D; d = 26; 23.
    (
        "E7",
        "9S 9H 9D 2C 3C 4C KH KD KS 3D",
        "9C 5C 6C 3H 3S 8D 8S 8H QS JH",
        None,
        Rules(),
        "knock",
        3,
        26,
        23,
        "knocker",
    ),
    # E8: own 7H7D7C and KC KH KS, 7S then 8S onto 4S-6S; d = 2C+9H = 11; 11 - 5 = 6.
    (
        "E8",
        "4S 5S 6S TD JD QD 2H 3H 4H 5C",
        "7S 7H 7D 7C 8S KC KH KS 2C 9H",
        None,
        Rules(),
        "knock",
        5,
        11,
        6,
        "knocker",
    ),
    # A6: the run 2S-4S is spread (not 3S3H3D): 3C has nowhere to go, d = 75, 75 - 7 = 68.
    (
        "A6-run",
        "2S 3S 4S 3H 3D 8C 9C TC JC AH",
        "3C KH KD QS JH 9H 7D 6C 8H 2D",
        None,
        Rules(),
        "knock",
        7,
        75,
        68,
        "knocker",
    ),
    # A6: here the set 3S3H3D is spread, so AS and 5S can't extend a run; 3C goes on the set; d = 68; 61.
    (
        "A6-set",
        "2S 3S 4S 3H 3D 8C 9C TC JC AH",
        "AS 5S 3C KH KD QS JH 9H 7D 6C",
        None,
        Rules(),
        "knock",
        7,
        68,
        61,
        "knocker",
    ),
]


@pytest.mark.parametrize(
    ("knocker", "defender", "discard_card", "rules", "kind", "k", "d", "points", "winner"),
    [case[1:] for case in SHOWDOWNS],
    ids=[case[0] for case in SHOWDOWNS],
)
def test_showdown_examples_end_to_end(knocker, defender, discard_card, rules, kind, k, d, points, winner):
    """E1-E8, A6: the non-dealer draws the knock discard and knocks; the worked score is in SHOWDOWNS."""
    game = knock_on_first_turn(knocker, defender, discard_card, rules)
    result = game.last_result
    winner_seat = NONDEALER if winner == "knocker" else DEALER
    assert (result["kind"], result["knocker"], result["winner"]) == (kind, NONDEALER, winner_seat)
    assert (result["knocker_deadwood"], result["defender_deadwood"], result["points"]) == (k, d, points)
    if kind == "gin":
        assert all(layoff == [] for layoff in result["layoffs"]), "R16: no layoffs on gin"
    # R25, R32: exactly the hand winner is credited, in G1 only (a first win).
    sheet = game.score_sheet
    assert sheet["totals"][0][winner_seat] == points and sheet["totals"][0][1 - winner_seat] == 0
    assert sheet["entries"][0] == [int(winner_seat == 0), int(winner_seat == 1)]
    assert sheet["totals"][1] == [0, 0] and sheet["totals"][2] == [0, 0]
    assert result["credited_games"] == [0]


@pytest.mark.nojit
def test_e1_knock_logs_spread_and_next_deal():
    """E1 through the log: knock event, spread with the right deadwoods, hand result, then hand 2's deal.

    The knocker (the non-dealer) wins 36 and deals the next hand (R30).
    """
    game = knock_on_first_turn("3H 4H 5H 8C 8D 8S JS QS KS 2C", "6H 8H AD 2D 3D 7C 7D 5S 9S KH", "9D")
    kinds = [e["type"] for e in game.events]
    assert kinds[-5:] == ["draw", "knock", "spread", "hand_result", "deal"]
    assert game.events[-4] == {"type": "knock", "player": NONDEALER, "card": parse_card("9D"), "action": knock("9D")}
    spread = game.events[-3]
    assert (spread["knocker"], spread["knocker_deadwood"], spread["defender_deadwood"]) == (NONDEALER, 2, 38)
    assert game.last_result["points"] == 36
    deal = game.events[-1]
    assert deal["hand"] == 2 and deal["dealer"] == NONDEALER and game.dealer == NONDEALER
    assert game.stock_size == 31 and game.phase == "offer_nondealer"


def test_dealer_can_knock_after_taking_the_upcard():
    """R6(c) + R11, E2 with the dealer as knocker: the dealer takes QH and knocks throwing KD.

    The dealer's 4S 5S 6S | 9C 9D 9H | TH JH QH | 8C gives k = 8; the non-dealer's E2 cards give d = 3:
    an undercut, so the non-dealer scores 10 + (8 - 3) = 15 and deals the next hand (R30).
    """
    game = new_game("7S 8S JC QC KC 5D 5C 5H AC 2D", "4S 5S 6S 9C 9D 9H TH JH 8C KD", "QH")
    game.step(PASS)
    game.step(TAKE)
    game.step(knock("KD"))
    result = game.last_result
    assert (result["kind"], result["knocker"], result["winner"], result["points"]) == (
        "undercut",
        DEALER,
        NONDEALER,
        15,
    )
    assert game.score_sheet["totals"][0] == [0, 15]
    assert game.events[-1]["type"] == "deal" and game.events[-1]["dealer"] == NONDEALER


# --- R29, R30: dealer rotation -----------------------------------------------------------------------------

E1_CARDS = ("3H 4H 5H 8C 8D 8S JS QS KS 2C", "6H 8H AD 2D 3D 7C 7D 5S 9S KH", "9D")  # the knocker wins
E2_CARDS = ("4S 5S 6S 9C 9D 9H TH JH QH 8C", "7S 8S JC QC KC 5D 5C 5H AC 2D", None)  # the defender wins


@pytest.mark.parametrize(
    ("dealer_rule", "cards", "next_dealer"),
    [
        ("winner_deals", E1_CARDS, NONDEALER),  # the knocker (non-dealer) won
        ("winner_deals", E2_CARDS, DEALER),  # the undercutter (dealer) won and deals again
        ("alternate", E1_CARDS, NONDEALER),  # the deal passes whoever won
        ("alternate", E2_CARDS, NONDEALER),
        ("loser_deals", E1_CARDS, DEALER),
        ("loser_deals", E2_CARDS, NONDEALER),
    ],
)
def test_r30_next_dealer(dealer_rule, cards, next_dealer):
    """R30 / A11: who deals the next hand under each dealer_rule."""
    game = knock_on_first_turn(*cards, rules=Rules(dealer_rule=dealer_rule))
    assert game.events[-1]["type"] == "deal"
    assert game.events[-1]["dealer"] == next_dealer == game.dealer


# --- R26-R29, E11: the drawn hand and the last discard ----------------------------------------------------


@pytest.mark.parametrize("dealer_rule", ["winner_deals", "alternate", "loser_deals"])
def test_e11_dead_hand_after_turn_29(dealer_rule):
    """E11, R26, R29: both pass and every turn draws the stock and throws the card drawn.

    Turn t leaves 31 - t cards; turn 29 is the non-dealer's and leaves 2. Its discard without a knock kills
    the hand: no score, no entry, and the same dealer deals hand 2 whatever the dealer_rule.
    """
    game = new_game(ND_HAND, D_HAND, "QS", rules=Rules(dealer_rule=dealer_rule))
    draw_and_discard(game, until_stock=3)
    assert (game.current_player, game.phase) == (DEALER, "discard")  # turn 28 left 3
    game.step(DISCARD_BASE + last_event(game, "draw")["card"])
    assert (game.phase, game.stock_size) == ("draw", 3)  # I2: the last turn starts with 3
    game.step(DRAW)
    assert (game.current_player, game.stock_size) == (NONDEALER, 2)
    game.step(DISCARD_BASE + last_event(game, "draw")["card"])
    result = game.last_result
    assert (result["kind"], result["winner"], result["points"], result["turns"]) == ("dead", -1, 0, 29)
    assert result["credited_games"] == []
    sheet = game.score_sheet
    assert sheet["totals"] == [[0, 0]] * 3 and sheet["entries"] == [[0, 0]] * 3
    assert sheet["winners"] == [None] * 3
    deal = game.events[-1]
    assert deal["type"] == "deal" and deal["hand"] == 2 and deal["dealer"] == DEALER
    assert game.stock_size == 31 and game.phase == "offer_nondealer" and game.current_player == NONDEALER


def test_a22_a_hand_of_takes_and_discards_is_dead_after_200_turns():
    """A22: both players always take the face-up card and throw another, so the stock stays at 31 and nobody knocks.

    Turn 200's discard ends the hand as a drawn one: nobody scores, nothing is entered, the same dealer deals hand 2.
    """
    game = Game(seed=0)
    dealer = game.dealer
    while game.last_result is None:
        legal = game.legal_actions()
        game.step(TAKE if TAKE in legal else next(a for a in legal if DISCARD_BASE <= a < KNOCK_BASE))
    result = game.last_result
    assert (result["kind"], result["winner"], result["points"], result["turns"]) == ("dead", -1, 0, MAX_HAND_TURNS)
    assert game.score_sheet["totals"] == [[0, 0]] * 3 and game.score_sheet["entries"] == [[0, 0]] * 3
    deal = game.events[-1]
    assert (deal["type"], deal["hand"], deal["dealer"], game.stock_size) == ("deal", 2, dealer, 31)


def test_r27_knock_allowed_on_the_turn_the_stock_reaches_2():
    """R27, E11: on turn 29 the non-dealer draws 8C (deck[49]) down to 2 cards and may still knock.

    Knocker AS 2S 3S | 4H 5H 6H | 7C 7D 7S | 8C after throwing KD: k = 8. Defender 9S TS QS 2C 4C 6C 8D TD QD
    KH: no meld, nothing fits AS-3S (4S), 4H-6H (3H, 7H) or the sevens (7H): d = 79. The knocker scores 71.
    """
    game = new_game("AS 2S 3S 4H 5H 6H 7C 7D 7S KD", "9S TS QS 2C 4C 6C 8D TD QD KH", "JH", at={49: "8C"})
    draw_and_discard(game, until_stock=2)
    assert game.current_player == NONDEALER and last_event(game, "draw")["card"] == parse_card("8C")
    assert knock("KD") in game.legal_actions()
    game.step(knock("KD"))
    result = game.last_result
    assert (result["kind"], result["winner"], result["turns"]) == ("knock", NONDEALER, 29)
    assert (result["knocker_deadwood"], result["defender_deadwood"], result["points"]) == (8, 79, 71)
    assert game.score_sheet["totals"][0] == [0, 71]


# The dealer 9S TS JS | 2C 3C 4C | 8D 8H KH QD (d 36) can knock only if 8C comes: throw KH or QD, k = 10.
# The non-dealer AS 3S 5S 7S 2H 4H 6H 3D 5D KC has no meld and nothing fits 9S-JS (8S, QS), 2C-4C (AC, 5C)
# or 8D 8H 8C (8S): d = 1+3+5+7+2+4+6+3+5+10 = 46.
LAST_RULES = Rules(last_discard_rule="may_take_to_knock")


def last_discard_game(rules: Rules, last_card: str) -> Game:
    """Play to turn 29 (the non-dealer's), who drew 8C and now throws `last_card`."""
    game = new_game(ND_HAND, D_HAND, "QS", rules=rules, at={49: "8C"})
    draw_and_discard(game, until_stock=2)
    game.step(discard(last_card))
    return game


def test_r28_default_last_discard_is_dead():
    """R28 default ("dead"): even though 8C would let the dealer knock, the hand dies at once."""
    game = last_discard_game(Rules(), "8C")
    assert game.last_result["kind"] == "dead"
    assert game.events[-1]["type"] == "deal" and game.events[-1]["dealer"] == DEALER


def test_r28_may_take_to_knock_take_then_knock():
    """R28 tournament variant: the dealer may take 8C, then only knocks are legal (not throwing 8C back).

    The dealer throws KH: k = QD = 10 against d = 46, so the dealer scores 36.
    """
    game = last_discard_game(LAST_RULES, "8C")
    assert (game.phase, game.current_player, game.stock_size) == ("last_discard", DEALER, 2)
    assert game.legal_actions() == [TAKE, PASS]
    game.step(TAKE)
    assert game.phase == "discard"
    assert set(game.legal_actions()) == {knock("KH"), knock("QD")}
    with pytest.raises(ValueError, match="illegal action"):
        game.step(discard("KH"))
    game.step(knock("KH"))
    result = game.last_result
    assert (result["kind"], result["knocker"], result["winner"]) == ("knock", DEALER, DEALER)
    assert (result["knocker_deadwood"], result["defender_deadwood"], result["points"]) == (10, 46, 36)
    assert game.score_sheet["totals"][0] == [36, 0]


def test_r28_may_take_to_knock_pass_is_dead():
    """R28: passing the last discard kills the hand; the same dealer deals again (R29)."""
    game = last_discard_game(LAST_RULES, "8C")
    game.step(PASS)
    assert game.last_result["kind"] == "dead" and game.last_result["points"] == 0
    assert game.score_sheet["totals"] == [[0, 0]] * 3
    assert game.events[-1]["type"] == "deal" and game.events[-1]["dealer"] == DEALER


def test_r28_may_take_to_knock_useless_discard_is_dead_at_once():
    """R28: KC would not let the dealer knock (KH + KC = 20 > 10 at best), so there is no offer: dead."""
    game = last_discard_game(LAST_RULES, "KC")
    assert game.last_result["kind"] == "dead"
    assert game.phase == "offer_nondealer" and game.hand_number == 2


# --- whole-match behaviour ---------------------------------------------------------------------------------


@pytest.mark.nojit
def test_match_ends_when_the_only_game_closes():
    """num_games=1, game_target=10: E1's 36 closes G1 for the knocker, the match is over and logged so."""
    game = knock_on_first_turn(*E1_CARDS, rules=Rules(num_games=1, game_target=10))
    assert game.done and game.winner == NONDEALER and game.phase == "over"
    assert game.current_player == -1 and game.legal_actions() == []
    assert [e["type"] for e in game.events[-3:]] == ["hand_result", "game_close", "match_end"]
    assert game.events[-2]["winner"] == NONDEALER and game.events[-2]["totals"] == [0, 36]
    with pytest.raises(ValueError, match="match is over"):
        game.step(DRAW)


def snapshot(game: Game):
    """Everything a step could change, as plain values."""
    return (
        [dict(e) for e in game.events],
        game.hand(0),
        game.hand(1),
        game.discard_pile,
        game.stock_size,
        game.phase,
        game.current_player,
        game.legal_actions(),
        game.score_sheet,
        str(game),
    )


@pytest.mark.nojit
def test_illegal_actions_raise_and_change_nothing():
    """A19: an illegal action raises ValueError naming it and the legal ones; the state is unchanged."""
    game = new_game(ND_HAND, D_HAND, "QS", stock="7C")
    before = snapshot(game)
    with pytest.raises(ValueError, match=r"illegal action 0\b.*1 \(take face-up card\), 2 \(pass\)"):
        game.step(DRAW)
    for bad in (-1, 107, 1000, True, 1.0, discard("9S")):
        with pytest.raises(ValueError, match="illegal action"):
            game.step(bad)
    assert snapshot(game) == before
    game.step(PASS)
    game.step(PASS)
    before = snapshot(game)
    with pytest.raises(ValueError, match=f"illegal action {discard('2S')}:.*discard 7C"):
        game.step(discard("2S"))  # the non-dealer does not hold 2S
    with pytest.raises(ValueError, match="illegal action"):
        game.step(knock("KC"))  # deadwood far above 10
    assert snapshot(game) == before


def random_play(game: Game, rng: np.random.Generator, max_steps: int) -> None:
    """Uniformly random legal actions, preferring a knock when one is legal (so hands end)."""
    for _ in range(max_steps):
        legal = game.legal_actions()
        if not legal:
            return
        knocks = [a for a in legal if a >= KNOCK_BASE]
        game.step(int(rng.choice(knocks if knocks and rng.random() < 0.7 else legal)))


def test_same_seed_same_event_log_and_replay():
    """Same seed and same actions give the same log; Game.replay(events) rebuilds it exactly."""
    logs = []
    for _ in range(2):
        game = Game(Rules(), seed=1234)
        random_play(game, np.random.default_rng(7), 1500)
        logs.append(game.events)
    assert logs[0] == logs[1]
    assert sum(e["type"] == "hand_result" for e in logs[0]) >= 3
    assert Game.replay(logs[0]).events == logs[0]
    assert Game(Rules(), seed=1235).events[1] != logs[0][1]


@pytest.mark.parametrize("rules", [Rules(), Rules(last_discard_rule="may_take_to_knock", num_games=1)])
def test_replay_of_a_fixed_deck_game(rules):
    """Game.replay keeps the fixed first deck, the first dealer and the rules."""
    game = Game(rules, seed=3, deck=make_deck(ND_HAND, D_HAND, "QS"), first_dealer=1)
    random_play(game, np.random.default_rng(3), 400)
    replayed = Game.replay(game.events)
    assert replayed.events == game.events
    assert replayed.rules == rules and str(replayed) == str(game)


def test_str_shows_both_hands_and_the_sheet():
    """str(game) shows both hands, the face-up card and the three games' totals and entries."""
    game = knock_on_first_turn(*E1_CARDS)
    text = str(game)
    assert set(cards_str(game.hand(0) + game.hand(1)).split()) <= set(text.split())
    for line in ("G1: P0   0 (0)   P1  36 (1)   open", "G2: P0   0 (0)   P1   0 (0)   open", "G3:"):
        assert line in text
