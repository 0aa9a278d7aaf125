"""The play program's command parser: every command form, every card spelling, and garbage answered with a clear
message (a CommandError, which is a ValueError) while the game stays exactly as it was."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.commands import Command, CommandError, parse_card_token, parse_command
from hollywood_gin_env.play.hints import hint_lines
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import SUITS, card_name, parse_card, parse_cards
from hollywood_gin_env.rules.options import Rules

# Player 1 is the non-dealer: TH 9H 8H, 7C 7D 7S, AS; upcard 2S; the stock starts 5C.
ND, DL = "TH 9H 8H 7C 7D 7S AS KC QD 4C", "2H 3H 4H 5D 6D JS JC 9C 9D 3S"


def table_game(rules: Rules | None = None) -> Game:
    """The game above, at the upcard offer to player 1."""
    top = [c for pair in zip(parse_cards(ND), parse_cards(DL), strict=True) for c in pair] + parse_cards("2S 5C")
    return Game(rules or Rules(), seed=0, deck=top + [c for c in range(52) if c not in top], first_dealer=0)


def at_discard(take: bool = True) -> Game:
    """Player 1 holding 11 cards: after taking the upcard 2S, or (take=False) after both passed and 5C was drawn."""
    game = table_game()
    game.step(ACTION_TAKE if take else ACTION_PASS)
    if not take:
        game.step(ACTION_PASS)  # the dealer passes too; player 1 must draw 5C (R6d)
    return game


def state(game: Game):
    return [dict(e) for e in game.events], game.hand(0), game.hand(1), game.legal_actions(), game.phase


@pytest.mark.nojit
@pytest.mark.parametrize("card", range(52))
def test_every_card_spelling(card):
    """Any case; T or 10 for a ten, A or 1 for an ace; a suit letter or symbol."""
    name = card_name(card)
    rank, suit = name
    ranks = {rank, rank.lower()} | ({"10"} if rank == "T" else {"1"} if rank == "A" else set())
    suits = {suit, suit.lower(), "♠♥♦♣"[SUITS.index(suit)]}
    for r in ranks:
        for s in suits:
            assert parse_card_token(r + s) == card


@pytest.mark.nojit
@pytest.mark.parametrize("token", ["9z", "1", "11h", "0s", "zz", "7", "h7", "7hh"])
def test_bad_card_tokens_are_explained(token):
    with pytest.raises(CommandError, match=rf"^'{token}' is not a command or a card \(a card is a rank and a suit"):
        parse_card_token(token)


def test_offer_forms():
    game = table_game()
    for text in ("t", "take", "T", "TAKE", " take ", "take 2s", "take 2S", "pile"):
        assert parse_command(text, game, 1) == Command("play", ACTION_TAKE)
    for text in ("p", "pass", "P", "Pass"):
        assert parse_command(text, game, 1) == Command("play", ACTION_PASS)


def test_draw_forms():
    game = table_game()
    game.step(ACTION_PASS)
    game.step(ACTION_PASS)  # the forced draw of 5C leaves player 1 to discard
    game.step(DISCARD_BASE + parse_card("5C"))
    assert game.current_player == 0 and game.phase == "draw"
    for text in ("d", "draw", "D", "stock"):
        assert parse_command(text, game, 0) == Command("play", ACTION_DRAW_STOCK)
    assert parse_command("t", game, 0) == Command("play", ACTION_TAKE)


def test_discard_and_knock_forms():
    game = at_discard(take=False)  # player 1 holds TH..AS, KC QD 4C and the drawn 5C
    for text in ("kc", "KC", "discard kc", "discard KC", "drop kc", "k♣", "discard, kc"):
        assert parse_command(text, game, 1) == Command("play", DISCARD_BASE + parse_card("KC"))
    for text in ("th", "10h", "10H", "T♥", "discard 10h"):
        assert parse_command(text, game, 1) == Command("play", DISCARD_BASE + parse_card("TH"))
    for text in ("as", "1s", "AS"):
        assert parse_command(text, game, 1) == Command("play", DISCARD_BASE + parse_card("AS"))


def test_knock_and_gin_forms():
    """knock and gin name the discard; gin must leave no deadwood, a knock at most the knock limit (10)."""
    game = table_game()
    game.step(ACTION_PASS)
    game.step(ACTION_PASS)  # 5C is drawn: without KC the deadwood is AS 4C 5C QD = 1 + 4 + 5 + 10 = 20
    with pytest.raises(CommandError, match="can't knock discarding KC: it leaves deadwood 20, over the limit of 10"):
        parse_command("knock kc", game, 1)
    gin_game = Game(Rules(), seed=0, deck=gin_deck(), first_dealer=0)
    gin_game.step(ACTION_TAKE)  # player 1 takes 4S: 8H 9H TH, 7S 7D 7C, AS 2S 3S 4S and KC: discard KC for gin
    for text in ("k kc", "knock kc", "KNOCK KC", "gin kc", "knock K♣"):
        assert parse_command(text, gin_game, 1) == Command("play", KNOCK_BASE + parse_card("KC"))
    before = state(gin_game)
    with pytest.raises(CommandError, match=r"Discarding AS leaves deadwood 10: that is a knock, not gin \(knock as\)"):
        parse_command("gin as", gin_game, 1)  # 2S 3S 4S stays a run; KC = 10 is left
    assert parse_command("knock as", gin_game, 1) == Command("play", KNOCK_BASE + parse_card("AS"))
    with pytest.raises(CommandError, match="Gin needs 0 deadwood: discarding 7S leaves 24"):
        parse_command("gin 7s", gin_game, 1)  # the set breaks: 7C 7D and KC are left, 7 + 7 + 10 = 24
    assert state(gin_game) == before


def gin_deck() -> list[int]:
    nondealer, dealer = parse_cards("TH 9H 8H 7C 7D 7S AS 2S 3S KC"), parse_cards(DL.replace("3S", "8S"))
    top = [c for pair in zip(nondealer, dealer, strict=True) for c in pair] + parse_cards("4S")
    return top + [c for c in range(52) if c not in top]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("hint", "hint"),
        ("h", "hint"),
        ("?", "hint"),
        ("sheet", "sheet"),
        ("score", "sheet"),
        ("s", "sheet"),
        ("log", "log"),
        ("l", "log"),
        ("help", "help"),
        ("HELP", "help"),
        ("quit", "quit"),
        ("q", "quit"),
        ("exit", "quit"),
    ],
)
def test_table_commands(text, kind):
    assert parse_command(text, table_game(), 1) == Command(kind)


GARBAGE = [
    ("", "Type a command: d, t, p, 7h, knock 7h"),
    ("   ", "Type a command"),
    ("knock", r"knock takes one card, e.g. knock .. \(got none\)\. Legal now: take 2S \(t\); pass \(p\)\."),
    ("9z", "'9z' is not a command or a card"),
    ("discard AS AS", r"discard takes one card, e.g. discard .. \(got 'as as'\)"),
    ("take 2s please", "take takes the face-up card and nothing more: take or take 2s, not take '2s please'."),
    ("x" * 10_000, "That is 10000 characters; commands are at most 40"),
    ("\x1b[A", r"control characters \('\\x1b'"),
    ("d\x00", "control characters"),
    ("\x04", "control characters"),
    ("take 5c", "You can only take the face-up card, 2S, not 5C."),
    ("hint me", "hint takes nothing after it"),
    ("draw 7h", "draw takes nothing after it"),
    ("zz top", "Unknown command 'zz'"),
    ("d", r"upcard 2S is on offer: take it or pass first\. Legal now: take 2S \(t\); pass \(p\)\."),
    ("th", "upcard 2S is on offer"),
    ("knock th", "upcard 2S is on offer"),
]


@pytest.mark.parametrize(("text", "message"), GARBAGE)
def test_garbage_gets_a_clear_message_and_changes_nothing(text, message):
    game = table_game()
    before = state(game)
    with pytest.raises(CommandError, match=message) as caught:
        parse_command(text, game, 1)
    assert isinstance(caught.value, ValueError) and state(game) == before


def test_a_non_text_command_is_refused():
    with pytest.raises(CommandError, match="a command is text, got int"):
        parse_command(123, table_game(), 1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("t", r"You must discard: you hold 11 cards\. Legal now: discard one of .* \(e\.g\. .*\)\."),
        ("d", "You must discard: you hold 11 cards."),
        ("p", "You must discard: you hold 11 cards."),
        ("2s", r"You took 2S from the pile this turn and may not discard it \(RULES\.md R9\)"),
        ("5h", "You don't hold 5H."),
        ("knock kc", "can't knock discarding KC: it leaves deadwood 17, over the limit of 10"),  # AS 2S 4C QD
    ],
)
def test_illegal_now_says_why_and_what_is_legal(text, message):
    game = at_discard(take=True)
    before = state(game)
    with pytest.raises(CommandError, match=message):
        parse_command(text, game, 1)
    assert state(game) == before


def test_not_your_turn_and_match_over():
    game = table_game()
    with pytest.raises(CommandError, match="It is not your turn"):
        parse_command("p", game, 0)
    game = Game(Rules(num_games=1, game_target=1), seed=0, deck=gin_deck(), first_dealer=0)
    game.step(ACTION_TAKE)
    game.step(KNOCK_BASE + parse_card("KC"))
    assert game.done
    with pytest.raises(CommandError, match="The match is over"):
        parse_command("d", game, 1)


def test_pass_outside_the_offer():
    game = table_game()
    game.step(ACTION_PASS)
    game.step(ACTION_PASS)
    game.step(DISCARD_BASE + parse_card("5C"))
    with pytest.raises(CommandError, match="You can pass only on the upcard offer or the last discard"):
        parse_command("p", game, 0)


def test_last_discard_phase_under_may_take_to_knock():
    """With 2 stock cards left the opponent may take the last discard only to knock (R28), or pass: the hand dies."""
    game = Game(Rules(last_discard_rule="may_take_to_knock"), seed=9)
    rng = np.random.default_rng(9)
    while game.phase != "last_discard":
        game.step(int(rng.choice([a for a in game.legal_actions() if a < KNOCK_BASE])))
    player, top = game.current_player, card_name(game.discard_pile[-1])
    with pytest.raises(CommandError, match=f"The stock is down to 2: you may only take {top} to knock, or pass"):
        parse_command("d", game, player)
    assert parse_command("p", game, player) == Command("play", ACTION_PASS)
    assert parse_command("t", game, player) == Command("play", ACTION_TAKE)
    game.step(ACTION_TAKE)
    held = [c for c in game.hand(player) if DISCARD_BASE + c not in game.legal_actions() and c != parse_card(top)]
    with pytest.raises(CommandError, match="You took the last discard, so you must knock, not discard"):
        parse_command(card_name(held[0]), game, player)


def test_hint_of_a_heuristic_and_of_a_checkpoint(tmp_path):
    """A heuristic names its choice; a checkpoint gives its top probabilities (a zero network: uniform over the
    legal actions). Both add the deadwood figures, and neither changes the game."""
    game = at_discard(take=False)
    before = state(game)
    lines = hint_lines(game, 1, load_agent("greedy"))
    assert lines[0] == "greedy would discard KC."
    assert lines[1].startswith("Deadwood after each discard: QD 20, KC 20, 5C 25, ")
    torch = pytest.importorskip("torch")
    from hollywood_gin_env.agents.checkpoint import save_checkpoint
    from hollywood_gin_env.agents.networks import build_network

    network = {"name": "cards", "kwargs": {"hidden_sizes": [8], "card_channels": 4}}
    policy = build_network(network)
    for parameter in policy.parameters():
        torch.nn.init.zeros_(parameter)
    save_checkpoint(tmp_path / "zero.pt", policy, network)
    offer = table_game()
    lines = hint_lines(offer, 1, load_agent(f"checkpoint:{tmp_path / 'zero.pt'}"))
    assert lines[0].endswith("would: take 2S 50%, pass 50%")
    assert lines[1] == "Your deadwood is 25; taking 2S and discarding QD or KC would leave 17."
    assert state(game) == before
