"""Typed commands can never crash either front end: random commands (command words, cards, both, garbage) over real
positions reached by random play, through the terminal's command path (`commands.parse_command` and `play.Terminal`) and
the web API's `/command` endpoint. The only refusal is the parser's `CommandError` (a 4xx on the web), and a refused
command leaves the match as it was."""

from __future__ import annotations

import io
import random
import string

import pytest
from rich.console import Console

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.commands import WORDS, CommandError, parse_command
from hollywood_gin_env.play.session import Session
from hollywood_gin_env.rules.actions import ACTION_TAKE
from hollywood_gin_env.rules.cards import RANKS, SUITS

pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")
from starlette.testclient import TestClient  # noqa: E402

from hollywood_gin_env.play.web.app import create_app  # noqa: E402
from hollywood_gin_env.play.web.matches import Matches, session_maker  # noqa: E402

CARD_TOKENS = [r + s for r in [*RANKS, "10", "1"] for s in [*SUITS, *SUITS.lower(), "♥"]]
GARBAGE = ["", " ", "x", "7", "10", "zz", "take take", "2c 3d", "knock", "gin", "🂡", "\t", "discard -1", "h7", "9z"]


def random_command(rng: random.Random) -> str:
    """A command word, a card, a word and cards, a take naming a card, or garbage."""
    kind = rng.randrange(6)
    if kind == 5:  # often enough to meet the moment the pile is empty (the upcard just taken)
        return f"{rng.choice(['t', 'take', 'pile'])} {rng.choice(CARD_TOKENS)}"
    if kind == 0:
        return rng.choice(list(WORDS))
    if kind == 1:
        return rng.choice(CARD_TOKENS)
    if kind == 2:
        return " ".join([rng.choice(list(WORDS)), *rng.sample(CARD_TOKENS, rng.randrange(1, 3))])
    if kind == 3:
        return rng.choice(GARBAGE)
    return "".join(rng.choice(string.printable + "♠♥") for _ in range(rng.randrange(1, 12)))


def random_positions(seed: int, count: int) -> list[Game]:
    """`count` real positions (copies, by replay) met while two random players play matches from `seed`, each match
    for up to 400 decisions (a few hands: random play's matches run to tens of thousands, too long to replay)."""
    rng, positions = random.Random(seed), []
    game, horizon = Game(seed=seed), rng.randrange(1, 400)
    while len(positions) < count:
        if game.done or len(game.actions_played()) >= horizon:
            game, horizon = Game(seed=rng.getrandbits(32)), rng.randrange(1, 400)
        game.step(rng.choice(game.legal_actions()))
        if not game.done and (rng.random() < 0.2 or game.phase == "discard" and game.discard_pile == []):
            positions.append(Game.replay(game.events))
    return positions


def snapshot(game: Game) -> tuple:
    return [dict(e) for e in game.events], game.hand(0), game.hand(1), game.legal_actions(), game.phase


def test_take_naming_a_card_with_an_empty_pile_is_refused_in_both_front_ends():
    """Right after the upcard is taken the pile is empty: `take 2c` is a refusal saying the player must discard, in
    the terminal and on the web (no traceback, no 500)."""
    game = Game(seed=0)
    taker = game.current_player
    game.step(ACTION_TAKE)
    assert game.discard_pile == []
    before = snapshot(game)
    with pytest.raises(CommandError, match="You must discard"):
        parse_command("take 2c", game, taker)
    assert snapshot(game) == before

    first = Session(Game(seed=0), taker, "greedy", hold_hand_ends=True)
    first.play(ACTION_TAKE)
    client = TestClient(create_app(Matches(session_maker(first, str(taker)))), base_url="http://127.0.0.1")
    created = client.post("/api/matches", json={}).json()
    response = client.post(
        f"/api/matches/{created['id']}/command", json={"seq": created["state"]["seq"], "text": "take 2c"}
    )
    assert response.status_code == 400 and "You must discard" in response.json()["error"], response.text


def fuzz_terminal(seed: int, positions: int, commands: int) -> int:
    """Random commands at random positions through the parser and the terminal's `Terminal.command`; how many ran."""
    rng, ran = random.Random(seed), 0
    for game in random_positions(seed, positions):
        player, terminal = game.current_player, None
        for _ in range(commands):
            text = random_command(rng)
            before = snapshot(game)
            try:
                parse_command(text, game, player)
            except CommandError:
                assert snapshot(game) == before, text
            if terminal is None or len(terminal.game.events) != len(game.events):  # a fresh copy after a played move
                terminal = play.Terminal(
                    Session(Game.replay(game.events), player, "greedy"), Console(file=io.StringIO())
                )
            terminal.command(text)  # prints a refusal; plays a legal move
            ran += 1
    return ran


def fuzz_web(seed: int, matches: int, commands: int) -> int:
    """Random commands sent to the web API of matches played on by their legal ones; how many were sent."""
    rng, sent = random.Random(seed), 0
    for m in range(matches):
        first = Session(Game(seed=seed + m), m % 2, "greedy", hold_hand_ends=True)
        client = TestClient(create_app(Matches(session_maker(first, str(m % 2)))), base_url="http://127.0.0.1")
        created = client.post("/api/matches", json={}).json()
        match_id, seq = created["id"], created["state"]["seq"]
        for _ in range(commands):
            text = "next" if rng.random() < 0.05 else random_command(rng)
            if text == "next":
                response = client.post(f"/api/matches/{match_id}/move", json={"seq": seq, "action": "next"})
            else:
                response = client.post(f"/api/matches/{match_id}/command", json={"seq": seq, "text": text})
            assert response.status_code < 500, (text, response.text)
            if response.status_code >= 400:
                assert response.json()["error"], text
            seq = client.get(f"/api/matches/{match_id}").json()["state"]["seq"]
            sent += 1
    return sent


def test_random_commands_over_real_positions_never_crash_the_terminal():
    """Only CommandError leaves the parser, and the terminal's command loop never raises."""
    assert fuzz_terminal(seed=1, positions=150, commands=12) == 1800


@pytest.mark.slow  # thousands of HTTP requests (about 11 s): CI's second command runs it
def test_random_commands_to_the_web_api_are_never_a_server_error():
    """Every typed command at the web API is a 200 or a 4xx with a message, never a 5xx."""
    assert fuzz_web(seed=2, matches=3, commands=300) == 900


@pytest.mark.slow
def test_many_random_commands_never_crash_either_front_end():
    """The same fuzz, larger: 60,000 terminal commands and 6,000 web requests."""
    assert fuzz_terminal(seed=11, positions=3000, commands=20) == 60000
    assert fuzz_web(seed=12, matches=10, commands=600) == 6000
