"""The one renderer (render.py) and the words (narrate.py): what a viewer may see, both hands for debugging,
hand ends worked out as RULES.md's examples, and the envs' ansi render through the same code."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hollywood_gin_env.display.render import render, render_match
from hollywood_gin_env.display.words import hand_end_lines, hand_events
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.game import Game, position_of
from hollywood_gin_env.rules.actions import ACTION_PASS, ACTION_TAKE, KNOCK_BASE
from hollywood_gin_env.rules.cards import card_name, parse_card, parse_cards
from hollywood_gin_env.rules.options import Rules

CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")


def deck(nondealer: str, dealer: str, upcard: str, stock: str = "") -> list[int]:
    """A deck that deals these hands (R3: the non-dealer gets the even positions), then the stock, top first."""
    hands = parse_cards(nondealer), parse_cards(dealer)
    top = [c for pair in zip(*hands, strict=True) for c in pair] + [parse_card(upcard)] + parse_cards(stock)
    return top + [c for c in range(52) if c not in top]


def seen_by(game: Game, viewer: int) -> set[str]:
    """Every card the viewer has seen this hand: its own cards, the upcard, the pile, every card taken or thrown."""
    seen = set(game.hand(viewer)) | set(game.discard_pile)
    for e in hand_events(game.events):
        if e["type"] not in ("deal", "pass", "draw", "discard", "knock"):
            continue
        if e["type"] == "deal":
            seen |= set(e["hands"][viewer]) | {e["upcard"]}
        elif e["type"] != "draw" or e["source"] == "discard" or e["player"] == viewer:
            seen.add(e["card"])  # a pass, discard or knock, a take from the pile, or the viewer's own stock draw
    return {card_name(c) for c in seen}


def random_positions(seed: int, steps: int):
    """Games after each of `steps` random legal actions (knocks preferred, so hands end and new ones start)."""
    rng = np.random.default_rng(seed)
    game = Game(Rules(), seed=seed)
    for _ in range(steps):
        if game.done:
            return
        legal = game.legal_actions()
        knocks = [a for a in legal if a >= KNOCK_BASE]
        game.step(int(rng.choice(knocks if knocks and rng.random() < 0.5 else legal)))
        yield game


@pytest.mark.parametrize("seed", range(3))
def test_a_viewer_never_sees_a_card_it_may_not_know(seed):
    """Over hundreds of random positions the viewer's text names only cards it has seen (in colour every fourth
    time); the opponent's unseen cards and the stock never appear, while the viewer's own hand always does."""
    checked = 0
    for game in random_positions(seed, 250):
        for viewer in (0, 1):
            allowed = seen_by(game, viewer)
            text = re.sub(r"\x1b\[[0-9;]*m", "", render(game.position(), viewer, color=checked % 4 == 0))
            named = set(CARD.findall(text))
            assert named <= allowed, f"viewer {viewer} sees {named - allowed}:\n{text}"
            assert {card_name(c) for c in game.hand(viewer)} <= named
            checked += 1
    assert checked >= 300


def test_without_a_viewer_everything_is_shown():
    """viewer=None (debugging): both hands, the whole pile and the stock order, top first."""
    game = Game(Rules(), seed=11)
    game.step(ACTION_PASS)
    text = render(game.position())
    shown = set(CARD.findall(text))
    stock_line = next(line for line in text.splitlines() if line.startswith("Stock (top first)"))
    assert {card_name(c) for c in game.hand(0) + game.hand(1) + game.discard_pile} <= shown
    assert len(CARD.findall(stock_line)) == game.stock_size == 31
    assert text.startswith("Hand 1") and str(game) == text


def test_viewer_sees_opponent_pile_cards_and_stock_draws_unnamed():
    """The opponent's take from the pile is public (named, and listed as held); its stock draw is not."""
    nd, dl = "AS 3S 5S 7S 2H 4H 6H 3D 5D KC", "9S TS JS 2C 3C 4C 8D 8H KH QD"
    game = Game(Rules(), seed=0, deck=deck(nd, dl, "QS", stock="7C"), first_dealer=0)  # player 1 is the non-dealer
    game.step(ACTION_TAKE)  # the non-dealer takes QS
    game.step(3 + parse_card("KC"))
    text = render(game.position(), viewer=0, names=("You", "Bot"))
    assert "Bot took QS from the pile and discarded KC." in text and "holds QS (taken from the pile)" in text
    game.step(0)  # the dealer (player 0) draws 7C from the stock
    game.step(3 + parse_card("7C"))
    game.step(0)  # player 1 draws from the stock: player 0 must not learn the card
    drawn = game.events[-1]["card"]
    text = render(game.position(), viewer=0, names=("You", "Bot"))
    assert "You drew 7C from the stock and discarded 7C." in text and "Bot drew from the stock." in text
    assert card_name(drawn) not in text and card_name(drawn) in render(game.position(), viewer=1)


def knock_hand(knocker: str, defender: str, upcard: str, knock_card: str, rules: Rules | None = None) -> Game:
    """The non-dealer (player 1) takes the upcard and knocks at once, discarding knock_card."""
    game = Game(rules or Rules(), seed=0, deck=deck(knocker, defender, upcard), first_dealer=0)
    game.step(ACTION_TAKE)
    game.step(KNOCK_BASE + parse_card(knock_card))
    return game


def end_text(game: Game, names=("P0", "P1")) -> str:
    index = next(i for i, e in enumerate(game.events) if e["type"] == "hand_result")
    return "\n".join(line.plain for line in hand_end_lines(game.events, index, game.rules, names))


def test_hand_end_e1_knock_with_layoffs():
    """E1: knocker 3H4H5H 8C8D8S JSQSKS + 2C (k=2, 9D discarded); the defender lays off 6H and 8H, keeps AD2D3D,
    and counts 7C 7D 5S 9S KH = 38: 38 - 2 = 36 to the knocker, entered in game 1."""
    game = knock_hand("3H 4H 5H 8C 8D 8S JS QS KS 9D", "6H 8H AD 2D 3D 7C 7D 5S 9S KH", "2C", "9D")
    spread = next(e for e in game.events if e["type"] == "spread")
    assert spread["knocker_deadwood_cards"] == [parse_card("2C")]
    text = end_text(game, ("Bot", "You"))
    assert "You took 2C from the pile and knocked, discarding 9D." in text
    assert re.search(r"You: \[3H 4H 5H\]  \[8S 8D 8C\]  \[JS QS KS\]  2C   deadwood 2", text)
    assert "laid off 6H on 3H 4H 5H" in text and "laid off 8H on 8S 8D 8C" in text
    assert re.search(r"Bot: \[AD 2D 3D\] .* 5S 7D 7C 9S KH   deadwood 38", text)
    assert "Knock: 38 \u2212 2 = 36 points to you, entered in game 1." in text


def test_hand_end_gin_and_undercut_words():
    """E5 gin: 25 + 51 = 76. E2 undercut: the defender scores 10 + (8 - 3) = 15."""
    gin = knock_hand("6C 7C 8C QH QD QS 2S 3S 4S KC", "9C QC AS 4D 5D 6D KH KD 3H 8H", "5S", "KC")
    assert "P1 took 5S from the pile and went gin, discarding KC." in end_text(gin)
    assert "Gin: 25 + 51 = 76 points to P1" in end_text(gin)
    under = knock_hand("4S 5S 6S 9C 9D 9H TH JH QH KD", "7S 8S JC QC KC 5D 5C 5H AC 2D", "8C", "KD")
    assert "Undercut: 10 + (8 \u2212 3) = 15 points to P0, entered in game 1." in end_text(under)


def test_dead_hand_game_close_and_match_end_are_told():
    """A random series holds dead hands, closed games and the match end; each is said in words."""
    game = Game(Rules(game_target=30), seed=5)
    rng = np.random.default_rng(5)
    while not game.done:
        legal = game.legal_actions()
        knocks = [a for a in legal if a >= KNOCK_BASE]
        game.step(int(rng.choice(knocks if knocks and rng.random() < 0.3 else legal)))
    texts = [end_text_at(game, i) for i, e in enumerate(game.events) if e["type"] == "hand_result"]
    assert any("discarded" in t and "\nDead hand: the stock is down to 2 cards. Nobody scores." in t for t in texts)
    assert sum("closes:" in t for t in texts) == 3 and f"Match over: P{game.winner} wins the series" in texts[-1]
    assert f"Match over: P{game.winner} wins the series" in render(game.position())


def end_text_at(game: Game, index: int) -> str:
    return "\n".join(line.plain for line in hand_end_lines(game.events, index, game.rules, ("P0", "P1")))


def test_a_snapshot_is_the_game_at_that_moment():
    """Game.position() holds what the game's accessors return; later moves change neither it nor its text."""
    game = Game(Rules(), seed=5)
    snap = game.position()
    assert snap.hands == (game.hand(0), game.hand(1)) and snap.hand(1) == game.hand(1)
    assert (snap.discard_pile, snap.stock_size, snap.phase) == (game.discard_pile, game.stock_size, game.phase)
    assert (snap.legal_actions, snap.current_player, snap.dealer) == (
        game.legal_actions(),
        game.current_player,
        game.dealer,
    )
    assert (snap.hand_number, snap.done, snap.winner) == (game.hand_number, game.done, game.winner)
    assert snap.score_sheet == game.score_sheet and snap.events == game.events
    text = render(snap)
    assert text == str(game)
    game.step(ACTION_PASS)
    assert len(snap.events) < len(game.events) and snap.phase != game.phase
    assert render(snap) == text != str(game)


def test_envs_render_through_the_same_renderer():
    """The envs' ansi text is render() of a Game view of the engine's match: both hands, the learner marked."""
    engine = Engine(2, Rules())
    engine.new_matches(seeds=np.array([7, 3], dtype=np.uint64))
    game, view = Game(Rules(), seed=3), Game.view_of(engine, 1)  # the same seed deals the same cards
    assert view.hand(0) == game.hand(0) and view.discard_pile == game.discard_pile and view.events == []
    text = render_match(position_of(engine, 1), learner_seat=1)
    assert "P1 (learner): " in text and text.startswith("Hand 1")
    assert {card_name(c) for c in game.hand(0) + game.hand(1)} <= set(CARD.findall(text))
    with pytest.raises(ValueError, match="viewer=2 is not allowed"):
        render(game.position(), viewer=2)
