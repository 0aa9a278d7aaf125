"""The search bot as the play program's opponent: it plays under the match's rules (not the default ones) and the
`hint` against it names its choice, in the terminal and on the web page."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from hollywood_gin_env import play
from hollywood_gin_env.agents import ExpertAgent
from hollywood_gin_env.game import Game
from hollywood_gin_env.observation import O_SEAT
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.session import Session

SEARCH = "search:rollouts=2,candidates=1"


def test_the_search_bot_plays_a_match_under_non_default_rules():
    """`play.py --opponent search --rules knock_limit=5` built the search bot with the default rules, so its first
    move raised "observation row 0 was made under other rules"."""
    session = play.first_session(
        play.parse_args(["--opponent", SEARCH, "--rules", "knock_limit=5", "--seed", "4"]), False
    )
    assert session.agent.rules == Rules(knock_limit=5)
    for _ in range(12):  # both seats act: the human's moves by the greedy heuristic's choice
        if session.game.current_player == session.human:
            session.play(session.game.legal_actions()[0])
        else:
            session.bot_move()
    assert len(session.game.actions_played()) == 12


def test_the_hint_against_the_search_bot_names_its_choice():
    """`hint` treated the search agent's rollout policy (a heuristic) as a torch network: a traceback in the
    terminal, a 500 on the web page."""
    session = Session(Game(seed=1), 0, SEARCH)
    session.advance()
    lines = session.hint()
    assert lines[0].startswith("search:") and " would " in lines[0], lines
    out = io.StringIO()
    assert play.Table(session, Console(file=out, width=200)).command("hint") is True
    assert out.getvalue().startswith(lines[0]), out.getvalue()


def test_the_web_hint_against_the_search_bot_is_not_a_server_error():
    pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")
    from starlette.testclient import TestClient

    from hollywood_gin_env.web.app import create_app
    from hollywood_gin_env.web.matches import Matches, session_maker

    first = Session(Game(Rules(knock_limit=5), seed=1), 0, SEARCH, hold_hand_ends=True)
    client = TestClient(create_app(Matches(session_maker(first, "0"))), base_url="http://127.0.0.1")
    match_id = client.post("/api/matches", json={}).json()["id"]
    response = client.get(f"/api/matches/{match_id}/hint")
    assert response.status_code == 200 and " would " in response.json()["lines"][0], response.text


def test_the_evaluator_plays_the_search_agent_under_the_evaluation_rules():
    """`evaluate.py --agents search random --rules knock_limit=5` built the search agent with the default rules, so
    its first decision raised "made under other rules"; the evaluator now hands each agent the evaluation's rules."""
    from hollywood_gin_env.evaluate import round_robin

    report = round_robin([SEARCH, "random"], num_matches=2, seed=3, rules=Rules(knock_limit=5))
    (pair,) = report["pairs"]
    assert pair["matches"] == 2


class _HistoryReader(ExpertAgent):
    """`expert`, reading the histories an env hands it and keeping (seat, its view, actions so far) per row."""

    needs_history = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[int, int, int]] = []

    def act(self, observations, action_masks, histories=None):
        for row, history in zip(observations, histories, strict=True):
            self.seen.append((int(round(float(row[O_SEAT]))), history.viewer, len(history.actions)))
        return super().act(observations, action_masks)


def test_the_env_keeps_the_hand_history_for_an_opponent_that_reads_it():
    """An opponent with needs_history gets one history per row, from its own seat, growing through each hand and
    starting again at the next; the play is exactly that of the same opponent without histories, across resets."""
    import gymnasium as gym

    def trajectory(opponent) -> list:
        env = gym.make("HollywoodGin-v1", opponent=opponent, episode="hand")
        steps, rng = [], np.random.default_rng(0)
        for episode in range(6):
            obs, _ = env.reset(seed=None if episode % 2 else episode)  # unseeded: the stream goes on
            for _ in range(40):
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
                obs, reward, terminated, truncated, _ = env.step(action)
                steps.append((obs["observation"].tobytes(), reward))
                if terminated or truncated:
                    break
        return steps

    reader = _HistoryReader()
    assert trajectory(reader) == trajectory(ExpertAgent())
    assert reader.seen and all(seat == viewer for seat, viewer, _ in reader.seen)
    counts = [n for _, _, n in reader.seen]
    assert max(counts) >= 8 and counts.count(0) + counts.count(1) >= 3  # long hands, and several fresh ones


def test_the_card_table_hands_the_bot_and_its_hint_the_hand_history_when_it_reads_it():
    """A bot with needs_history gets its own seat's history of the hand at each of its moves at the card table,
    and the human's `hint` from it asks with the human's history; the moves are those of the same bot without."""
    reader = _HistoryReader()
    games = []
    for bot in (reader, ExpertAgent()):
        session = Session(Game(seed=5), 0, bot)
        session.advance()
        for _ in range(20):
            if session.game.done:
                break
            session.hint()
            session.play(session.game.legal_actions()[-1])
            session.advance()
        games.append(session.game.actions_played())
    assert games[0] == games[1]
    assert {viewer for seat, viewer, _ in reader.seen if seat == 1} == {1}  # the bot's moves: its own view
    assert {viewer for seat, viewer, _ in reader.seen if seat == 0} == {0}  # the hints: the human's
    assert max(n for _, _, n in reader.seen) >= 10
