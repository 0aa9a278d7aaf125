"""A failing opponent (it raises, or answers with floats or the wrong number of actions) never half-steps an env or
the evaluator: the error names the opponent, and the env refuses to step until it is reset."""

from __future__ import annotations

import re

import numpy as np
import pytest
from gymnasium.error import ResetNeeded

from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv
from hollywood_gin_env.evaluation.evaluate import play_pair
from hollywood_gin_env.rules.actions import KNOCK_BASE
from hollywood_gin_env.rules.options import Rules

SHORT = Rules(game_target=30)


class Flaky:
    """Knocks when it may, else draws from the stock, else plays its last legal action (so hands end), and raises
    (or answers badly) on call number `fail_at`."""

    name = "flaky"

    def __init__(self, fail_at: int, answer: str = "raise") -> None:
        self.calls, self.fail_at, self.answer = 0, fail_at, answer

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        self.calls += 1
        actions = np.array([self.choose(m) for m in action_masks], dtype=np.int64)
        if self.calls == self.fail_at:
            if self.answer == "raise":
                raise RuntimeError("opponent crashed")
            if self.answer == "short":
                return actions[:-1]
            if self.answer == "float":
                return actions.astype(np.float64) + 0.5
        return actions

    @staticmethod
    def choose(mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if legal[-1] >= KNOCK_BASE:
            return int(legal[-1])
        return 0 if mask[0] else int(legal[-1])


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def step_until_the_opponent_fails(env: HollywoodGinEnv, opponent: Flaky) -> Exception:
    obs, _ = env.reset(seed=0)
    for _ in range(200):
        try:
            obs, _, terminated, _, _ = env.step(first_legal(obs["action_mask"]))
        except Exception as error:  # noqa: BLE001  (the opponent's failure, whatever its type)
            return error
        if terminated:
            obs, _ = env.reset()
    raise AssertionError("the opponent never failed")


@pytest.mark.parametrize(
    "answer, error, text",
    [
        ("raise", RuntimeError, "opponent crashed"),
        ("short", ValueError, r"actions of opponent 'flaky' must have shape \(1,\).*got shape \(0,\)"),
        ("float", TypeError, r"actions of opponent 'flaky' must be an integer array.*float64"),
    ],
)
def test_a_failing_opponent_leaves_the_single_env_needing_a_reset(answer, error, text):
    """After the failure the learner's next step raises ResetNeeded (it is never played as the opponent's move)."""
    opponent = Flaky(fail_at=3, answer=answer)
    env = HollywoodGinEnv(opponent=opponent, rules=SHORT, learner_seat=0)
    failure = step_until_the_opponent_fails(env, opponent)
    assert isinstance(failure, error) and re.search(text, str(failure)), failure
    assert not env.action_masks().any(), "a half-stepped match offers no legal action"
    with pytest.raises(ResetNeeded, match="failed part-way"):
        env.step(1)
    with pytest.raises(ResetNeeded):
        env.step(0)
    obs, info = env.reset(seed=5)  # a reset recovers: the match plays on normally
    fresh = HollywoodGinEnv(opponent=Flaky(fail_at=-1), rules=SHORT, learner_seat=0)
    expected, _ = fresh.reset(seed=5)
    np.testing.assert_array_equal(obs["observation"], expected["observation"])
    for _ in range(20):
        action = first_legal(obs["action_mask"])
        obs, reward, terminated, _, _ = env.step(action)
        expected, expected_reward, _, _, _ = fresh.step(action)
        np.testing.assert_array_equal(obs["observation"], expected["observation"])
        assert reward == expected_reward
        if terminated:
            break


def test_an_opponent_failing_during_reset_leaves_the_env_needing_a_reset():
    env = HollywoodGinEnv(opponent=Flaky(fail_at=1), learner_seat=1, rules=SHORT)  # the opponent acts first
    with pytest.raises(RuntimeError, match="opponent crashed"):
        env.reset(seed=0, options={"first_dealer": 1})
    with pytest.raises(ResetNeeded, match="RuntimeError: opponent crashed"):
        env.step(1)
    env.reset(seed=0, options={"first_dealer": 1})
    env.step(first_legal(env.action_masks()))


def test_a_failing_opponent_leaves_the_vector_env_needing_a_reset():
    vec = HollywoodGinVectorEnv(4, opponent=Flaky(fail_at=2), rules=SHORT, learner_seat=0)
    obs, _ = vec.reset(seed=0, options={"first_dealer": 1})  # the learner acts first: reset asks no opponent
    with pytest.raises(RuntimeError, match="opponent crashed"):
        for _ in range(50):
            handed_out, kept = obs["action_mask"], obs["action_mask"].copy()
            obs, *_ = vec.step(np.array([first_legal(m) for m in obs["action_mask"]]))
    np.testing.assert_array_equal(handed_out, kept)  # what the agent was given stays as it was
    assert not vec.action_masks().any(), "a half-stepped match offers no legal action"
    with pytest.raises(ResetNeeded, match="failed part-way"):
        vec.step(np.ones(4, dtype=np.int64))
    obs, _ = vec.reset(seed=1)
    obs, *_ = vec.step(np.array([first_legal(m) for m in obs["action_mask"]]))
    assert vec.action_masks().any(axis=1).all()


def test_a_wrong_number_of_actions_names_the_opponent_in_the_vector_env():
    vec = HollywoodGinVectorEnv(4, opponent=Flaky(fail_at=1, answer="short"), learner_seat=0)
    obs, _ = vec.reset(seed=0, options={"first_dealer": 1})  # the learner (seat 0) acts first everywhere
    with pytest.raises(ValueError, match=r"actions of opponent 'flaky' must have shape \(4,\).*got shape \(3,\)"):
        for _ in range(5):  # the opponent first acts in all four matches at once
            obs, *_ = vec.step(np.array([first_legal(m) for m in obs["action_mask"]]))


def test_the_evaluator_names_an_agent_answering_with_floats():
    """The evaluator steps the engine only after both agents answered, so a failure leaves nothing half-done."""
    flaky, other = Flaky(fail_at=2, answer="float"), Flaky(fail_at=-1)
    other.name = "steady"
    with pytest.raises(TypeError, match="actions of agent 'flaky' must be an integer array"):
        play_pair(flaky, other, 4, seed=0, rules=SHORT)
    with pytest.raises(RuntimeError, match="opponent crashed"):
        play_pair(Flaky(fail_at=3), other, 4, seed=0, rules=SHORT)
