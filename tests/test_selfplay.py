"""Tests of the two-player self-play env: equality with the engine, zero-sum rewards, the bookkeeping of
which decision a reward belongs to, episode modes and autoreset."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.observation import encode_one
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.rules.actions import KNOCK_BASE
from hollywood_gin_env.rules.options import Rules

SHORT = Rules(game_target=30)


def random_legal_batch(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int64)


def knock_or_random(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """Knock whenever some knock is legal (hands end fast), else a random legal action."""
    actions = random_legal_batch(rng, masks)
    knocks = masks[:, KNOCK_BASE:].any(axis=1)
    actions[knocks] = KNOCK_BASE + np.argmax(masks[knocks, KNOCK_BASE:], axis=1)
    return actions


def test_self_play_equals_the_engine_seeded_alike():
    n = 6
    env = SelfPlayVectorEnv(n)
    engine = Engine(n)
    obs, info = env.reset(seed=10)
    engine.new_matches(seeds=10 + np.arange(n, dtype=np.uint64))
    rng = np.random.default_rng(0)
    for _ in range(200):
        np.testing.assert_array_equal(info["current_player"], engine.current_player)
        for i in range(n):
            expected = encode_one(engine, i, int(engine.current_player[i]))
            np.testing.assert_array_equal(obs["observation"][i], expected["observation"])
            np.testing.assert_array_equal(obs["action_mask"][i], expected["action_mask"])
        actions = random_legal_batch(rng, obs["action_mask"])
        obs, _, _, _, info = env.step(actions)
        engine.step(actions)


def test_rewards_are_zero_sum_and_belong_to_the_latest_decision():
    n = 8
    env = SelfPlayVectorEnv(n, rules=SHORT, reward="hand")
    obs, info = env.reset(seed=1)
    last = np.full((n, 2), -1)
    rng, scored, knocks = np.random.default_rng(3), 0, 0
    for t in range(3000):
        actions = random_legal_batch(rng, obs["action_mask"])
        acting = info["current_player"]
        obs, rewards, terminations, _, info = env.step(actions)
        last[np.arange(n), acting] = t
        assert info["step"] == t
        np.testing.assert_array_equal(info["acting_player"], acting)
        np.testing.assert_array_equal(info["decision_step"], last)
        np.testing.assert_array_equal(rewards[:, 0], -rewards[:, 1])
        knocked = actions >= KNOCK_BASE
        knocks += int(knocked.sum())
        assert (rewards[knocked].any(axis=1)).all()  # a knock always scores (gin, knock or undercut)
        scored += int((rewards != 0).any(axis=1).sum())
        last[terminations] = -1
    assert knocks > 0 and scored >= knocks


def test_match_rewards_and_winner():
    env = SelfPlayVectorEnv(16, rules=Rules(num_games=1, game_target=1), reward="match")
    obs, info = env.reset(seed=0)
    rng, ends = np.random.default_rng(0), 0
    for _ in range(400):
        obs, rewards, terminations, _, info = env.step(knock_or_random(rng, obs["action_mask"]))
        winners = info["match_winner"]
        np.testing.assert_array_equal(winners >= 0, terminations)
        for i in np.flatnonzero(terminations):
            assert rewards[i, winners[i]] == 1.0 and rewards[i, 1 - winners[i]] == -1.0
        assert not rewards[~terminations].any()
        ends += int(terminations.sum())
    assert ends >= 8


def test_hand_episodes_go_on_with_the_same_match():
    env = SelfPlayVectorEnv(4, episode="hand")
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(0)
    hands_before = env.engine.state.match[:, col.M_HAND_NO].copy()
    for _ in range(400):
        obs, _, terminations, _, _ = env.step(random_legal_batch(rng, obs["action_mask"]))
        hands = env.engine.state.match[:, col.M_HAND_NO]
        np.testing.assert_array_equal(hands != hands_before, terminations)  # one episode per hand
        hands_before = hands.copy()
    assert hands_before.min() > 1


def test_same_seed_same_rollout_and_reset_continues_streams():
    def rollout(env):
        obs, _ = env.reset(seed=4)
        rng, out = np.random.default_rng(9), []
        for _ in range(100):
            obs, r, term, _, _ = env.step(random_legal_batch(rng, obs["action_mask"]))
            out.append((obs["observation"].tobytes(), r.tobytes(), term.tobytes()))
        return out, env.reset()[0]["observation"]

    (a, next_a), (b, next_b) = rollout(SelfPlayVectorEnv(3)), rollout(SelfPlayVectorEnv(3))
    assert a == b
    np.testing.assert_array_equal(next_a, next_b)


def test_observe_the_waiting_player_and_illegal_actions():
    env = SelfPlayVectorEnv(2)
    obs, info = env.reset(seed=0)
    waiting = 1 - info["current_player"]
    seen = env.observe(waiting)
    assert not seen["action_mask"].any()
    np.testing.assert_array_equal(seen["observation"][1], encode_one(env.engine, 1, int(waiting[1]))["observation"])
    with pytest.raises(ValueError, match="illegal action 0 in match 0"):
        env.step(np.array([0, 1]))  # the upcard offer: 0 (draw) is not legal


def test_state_dict_continues_the_matches_exactly():
    """A copy of the env restored from state_dict plays on step for step like the original."""
    env, copy = SelfPlayVectorEnv(4), SelfPlayVectorEnv(4)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, *_ = env.step([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
    copy.load_state_dict(env.state_dict())
    assert copy.next_step == env.next_step
    assert (copy.observe(env.engine.current_player)["observation"] == obs["observation"]).all()
    for _ in range(60):
        actions = [rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]]
        obs, rewards, terms, _, infos = env.step(actions)
        obs2, rewards2, terms2, _, infos2 = copy.step(actions)
        assert (obs["observation"] == obs2["observation"]).all() and (rewards == rewards2).all()
        assert (infos["decision_step"] == infos2["decision_step"]).all() and (terms == terms2).all()


def test_the_engine_is_offered_read_only_as_a_property():
    """`engine` is the env's batched Engine, the one its steps advance; it cannot be replaced."""
    env = SelfPlayVectorEnv(3)
    obs, _ = env.reset(seed=4)
    env.step(np.argmax(obs["action_mask"], axis=1))
    assert np.array_equal(env.engine.state.match, env.state_dict()["engine"]["match"])
    with pytest.raises(AttributeError):
        env.engine = None
