"""Tests of the PettingZoo AEC env (optional extra [pettingzoo]): api_test, a full match, illegal moves."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test  # noqa: E402

from hollywood_gin_env.engine.game import Game  # noqa: E402
from hollywood_gin_env.envs.pettingzoo import env, raw_env  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402

ONE_HAND = Rules(num_games=1, game_target=1)


# The classic {"observation", "action_mask"} dict draws these two generic notes from api_test.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("kwargs", [{}, {"rules": ONE_HAND, "reward": "match"}, {"reward": "game"}])
def test_api_test_passes(kwargs):
    api_test(env(**kwargs), num_cycles=1000)


def test_a_match_equals_a_game_and_rewards_are_zero_sum():
    # The AEC env plays the match a Game seeded alike plays; the final rewards are ±1 to the winner.
    aec = env(rules=Rules(num_games=1, game_target=20), reward="hand")
    aec.reset(seed=5)
    game = Game(Rules(num_games=1, game_target=20), seed=5)
    rng, totals = np.random.default_rng(0), {"player_0": 0.0, "player_1": 0.0}
    for agent in aec.agent_iter():
        observation, reward, termination, truncation, _ = aec.last()
        totals[agent] += reward
        if termination or truncation:
            aec.step(None)
            continue
        assert agent == f"player_{game.current_player}"
        np.testing.assert_array_equal(observation["observation"], game.observation(game.current_player)["observation"])
        legal = np.flatnonzero(observation["action_mask"])
        knocks = legal[legal >= 55]
        action = int(knocks[0] if len(knocks) else rng.choice(legal))
        aec.step(action)
        game.step(action)
    assert game.done
    points = [sum(e["points"] for e in game.events if e["type"] == "hand_result" and e["winner"] == p) for p in (0, 1)]
    assert totals["player_0"] == pytest.approx((points[0] - points[1]) / 100)
    assert totals["player_1"] == pytest.approx(-totals["player_0"])


def test_illegal_move_ends_the_match_with_the_worst_reward():
    aec = env()
    aec.reset(seed=0)
    offender = aec.agent_selection
    aec.step(0)  # the upcard offer: drawing from the stock is not legal (PettingZoo logs a warning)
    assert all(aec.terminations.values())
    assert aec.rewards[offender] == -(25 + 100) / 100


def test_raw_env_raises_on_illegal_actions_and_renders():
    aec = raw_env(render_mode="ansi")
    aec.reset(seed=0, options={"first_dealer": 1})
    assert aec.agent_selection == "player_0" and aec.render().startswith("Hand 1")
    with pytest.raises(ValueError, match="illegal action 0"):
        aec.step(0)
