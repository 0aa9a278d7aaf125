"""Tests of the PettingZoo AEC env (optional extra [pettingzoo]): api_test in both episode modes, a full match,
illegal moves and actions outside the action space."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test  # noqa: E402

from hollywood_gin_env.engine import columns as col  # noqa: E402
from hollywood_gin_env.engine.game import Game  # noqa: E402
from hollywood_gin_env.envs.pettingzoo import env, raw_env  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402

ONE_HAND = Rules(num_games=1, game_target=1)
ROOT = Path(__file__).resolve().parents[1]


# The classic {"observation", "action_mask"} dict draws these two generic notes from api_test.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"rules": ONE_HAND, "reward": "match"},
        {"reward": "game"},
        {"episode": "hand"},
        {"episode": "hand", "reward": "match", "rules": "openspiel"},
    ],
)
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


BAD_ACTIONS = [(-1, ValueError), (107, ValueError), (2**70, ValueError), (1.0, TypeError), (True, TypeError)]
BAD_ACTIONS += [("1", TypeError), (np.float32(1), TypeError), (None, TypeError)]


@pytest.mark.parametrize("action, error", BAD_ACTIONS)
def test_an_action_outside_the_space_raises_what_the_single_env_raises(action, error):
    """-1, 107, 1.0, True, "1" and None (for an agent that is to act) raise the single env's errors: ValueError naming
    the action and the legal ones, or TypeError for what is no integer; never PettingZoo's assert nor an IndexError
    into the mask; the match stays as it was."""
    aec = env()
    aec.reset(seed=0)
    agent, before = aec.agent_selection, aec.unwrapped.engine.state.match.copy()
    with pytest.raises(error) as info:
        aec.step(action)
    assert type(info.value) is error
    expected = "illegal action .* for player_.: legal actions are" if error is ValueError else "integer action id"
    assert re.search(expected, str(info.value)), str(info.value)
    assert aec.agent_selection == agent and not any(aec.terminations.values())
    np.testing.assert_array_equal(aec.unwrapped.engine.state.match, before)


def test_actions_outside_the_space_raise_the_same_errors_under_python_o():
    """Under `python -O` (asserts removed) the same actions raise the same ValueError and TypeError."""
    code = (
        "import numpy as np\n"
        "from hollywood_gin_env.envs.pettingzoo import env\n"
        "for action in (-1, 107, 1.0, True, '1', np.float32(1)):\n"
        "    aec = env(); aec.reset(seed=0)\n"
        "    try:\n"
        "        aec.step(action)\n"
        "    except Exception as error:\n"
        "        print(type(error).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-O", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ValueError", "ValueError", "TypeError", "TypeError", "TypeError", "TypeError"]


def test_an_illegal_action_inside_the_space_still_ends_the_episode_in_hand_episodes():
    """An id inside 0..106 but not in the mask ends the episode at the worst reward (TerminateIllegalWrapper), also
    for hand episodes; the next reset starts a new match."""
    aec = env(episode="hand")
    aec.reset(seed=0)
    for _ in range(6):  # a few turns into the hand
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    offender, match = aec.agent_selection, aec.unwrapped.engine.state.match
    assert match[0, col.M_TURNS] > 0 and not any(aec.terminations.values())
    aec.step(int(np.flatnonzero(aec.observe(offender)["action_mask"] == 0)[0]))
    assert all(aec.terminations.values()) and aec.rewards[offender] == -(25 + 100) / 100
    aec.reset()
    assert match[0, col.M_HAND_NO] == 1 and match[0, col.M_TURNS] == 0  # a new match, not the interrupted hand
