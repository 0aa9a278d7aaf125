"""Issue 11, items 1 and 2: a failing opponent never half-steps an env, and no front end casts actions silently."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gymnasium.error import ResetNeeded

from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv, SelfPlayVectorEnv
from hollywood_gin_env.evaluate import play_pair
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import KNOCK_BASE

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
    """Today the learner's next step is played as the opponent's move; now it raises ResetNeeded until reset."""
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


# --- item 2: no silent casts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: HollywoodGinVectorEnv(8),
        lambda: SelfPlayVectorEnv(8),
    ],
    ids=["vector", "selfplay"],
)
@pytest.mark.parametrize(
    "actions, error, text",
    [
        (np.full(8, 1.7), TypeError, "got dtype float64"),
        (np.full(8, 1.0), TypeError, "got dtype float64"),
        (np.full(8, np.nan), TypeError, "got dtype float64"),
        (np.ones(8, dtype=bool), TypeError, "got dtype bool"),
        (np.array(["1"] * 8), TypeError, "got dtype <U1"),
        (np.ones((8, 1), dtype=np.int64), ValueError, r"shape \(8,\).*got shape \(8, 1\)"),
        (np.ones((2, 4), dtype=np.int64), ValueError, r"got shape \(2, 4\)"),
        (np.ones(7, dtype=np.int64), ValueError, r"got shape \(7,\)"),
        (np.int64(1), ValueError, r"got shape \(\)"),
        ([1.0] * 8, TypeError, "type float"),
    ],
)
def test_batched_envs_refuse_what_is_not_an_integer_array_of_shape_n(make, actions, error, text):
    """Today these are cast (1.7 plays as 1, (8, 1) is reshaped, NaN warns); now they raise, state unchanged."""
    env = make()
    env.reset(seed=0)
    before = env.engine.state.match.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy cast warning either
        with pytest.raises(error, match=text):
            env.step(actions)
    np.testing.assert_array_equal(env.engine.state.match, before)


def test_batched_envs_take_integer_arrays_and_lists_of_ints():
    for dtype in (np.int64, np.int32, np.uint8):
        vec = HollywoodGinVectorEnv(3)
        obs, _ = vec.reset(seed=0)
        actions = np.array([first_legal(m) for m in obs["action_mask"]], dtype=dtype)
        _, _, terminations, _, infos = vec.step(actions)
        assert not infos["illegal_action"].any() and not terminations.any()
    vec.step([first_legal(m) for m in vec.action_masks()])


def test_the_single_env_takes_integers_and_refuses_floats():
    """Today 1.0 is an 'illegal action' that ends the episode; now it is a TypeError like in the other front ends."""
    env = HollywoodGinEnv()
    obs, _ = env.reset(seed=0)
    with pytest.raises(TypeError, match="integer action id"):
        env.step(float(first_legal(obs["action_mask"])))
    for wrap in (np.int64, lambda a: np.array([a]), int):
        obs, _, terminated, _, info = env.step(wrap(first_legal(obs["action_mask"])))
        assert not info["illegal_action"]
        if terminated:
            obs, _ = env.reset()


def test_array_likes_such_as_tensors_follow_the_same_rule():
    torch = pytest.importorskip("torch")
    vec = HollywoodGinVectorEnv(3)
    obs, _ = vec.reset(seed=0)
    _, _, _, _, infos = vec.step(torch.tensor([first_legal(m) for m in obs["action_mask"]]))
    assert not infos["illegal_action"].any()
    with pytest.raises(TypeError, match="got dtype float32"):
        vec.step(torch.ones(3))
    with pytest.raises(TypeError, match="got a bool"):
        vec.step([1, True, 1])
    env = HollywoodGinEnv()
    obs, _ = env.reset(seed=0)
    _, _, _, _, info = env.step(torch.tensor(first_legal(obs["action_mask"])))
    assert not info["illegal_action"]
    with pytest.raises(TypeError, match="integer action id"):
        env.step(torch.tensor(1.0))
