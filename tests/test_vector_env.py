"""Tests of the batched VectorEnv: make_vec, equality with N single envs seeded alike (through Gymnasium's
own SyncVectorEnv in SAME_STEP mode), the autoreset boundary, seeding and options."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv

import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)
from hollywood_gin_env.engine.observation import OBS_SIZE
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv
from hollywood_gin_env.rules.options import Rules

SHORT = Rules(game_target=30)
ONE_HAND = Rules(num_games=1, game_target=1)  # the first hand that is not drawn ends the match


def last_legal(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """A deterministic, row-independent opponent: the highest legal action (knocks when it can)."""
    return (action_masks.shape[1] - 1 - np.argmax(action_masks[:, ::-1], axis=1)).astype(np.int64)


def random_legal_batch(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int64)


def test_make_vec_builds_the_batched_env():
    env = gym.make_vec("HollywoodGin-v1", num_envs=8, vectorization_mode="vector_entry_point", reward="match")
    assert isinstance(env, HollywoodGinVectorEnv) and isinstance(env, VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, infos = env.reset(seed=0)
    assert obs in env.observation_space and obs["observation"].shape == (8, OBS_SIZE)
    assert env.action_space.shape == (8,) and env.single_action_space.n == 107
    assert infos["learner_seat"].shape == (8,) and env.unwrapped._matches.mode == 2


CASES = [
    pytest.param({"rules": SHORT}, id="match-episodes"),
    pytest.param({"episode": "hand", "reward": "game", "learner_seat": 1}, id="hand-episodes"),
    pytest.param({"rules": ONE_HAND, "reward": "match", "opponent": last_legal}, id="external-opponent"),
]


@pytest.mark.parametrize("kwargs", CASES)
def test_vector_env_equals_n_single_envs_seeded_alike(kwargs):
    n, steps = 4, 500
    vec = HollywoodGinVectorEnv(n, **kwargs)
    sync = SyncVectorEnv([lambda: HollywoodGinEnv(**kwargs)] * n, autoreset_mode=AutoresetMode.SAME_STEP)
    obs_v, info_v = vec.reset(seed=7)
    obs_s, info_s = sync.reset(seed=7)
    assert data_equivalence(obs_v, obs_s, exact=True) and data_equivalence(info_v, info_s, exact=True)
    rng, ended = np.random.default_rng(0), 0
    for t in range(steps):
        actions = random_legal_batch(rng, obs_v["action_mask"])
        if t % 101 == 50:
            actions[t % n] = 106 if obs_v["action_mask"][t % n, 106] == 0 else 105  # illegal: ends that episode
        obs_v, r_v, term_v, trunc_v, info_v = vec.step(actions)
        obs_s, r_s, term_s, trunc_s, info_s = sync.step(actions)
        assert data_equivalence(obs_v, obs_s, exact=True), f"observations differ at step {t}"
        np.testing.assert_array_equal(r_v, r_s.astype(np.float32))
        np.testing.assert_array_equal(term_v, term_s)
        np.testing.assert_array_equal(trunc_v, trunc_s)
        assert data_equivalence(info_v, info_s, exact=True), f"infos differ at step {t}"
        ended += int(term_v.sum())
    assert ended > n  # several autoresets were crossed


def test_autoreset_boundary_same_step():
    # The step that ends match 0's episode returns its reward and terminal observation (final_obs),
    # and already the next episode's first observation; the next step acts in the new episode.
    vec = HollywoodGinVectorEnv(2, episode="hand", learner_seat=0)
    single = HollywoodGinEnv(episode="hand", learner_seat=0)
    obs, _ = vec.reset(seed=3)
    single.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(2000):
        actions = random_legal_batch(rng, obs["action_mask"])
        obs, rewards, terminations, _, infos = vec.step(actions)
        s_obs, s_reward, s_terminated, _, _ = single.step(int(actions[0]))
        if terminations[0]:
            break
    else:
        pytest.fail("no hand ended")
    assert s_terminated and rewards[0] == np.float32(s_reward)
    assert infos["_final_obs"][0] and data_equivalence(infos["final_obs"][0], s_obs)
    assert infos["_final_info"][0] and not infos["final_info"]["illegal_action"][0]
    assert infos["_final_obs"][1] == terminations[1]
    first_obs, _ = single.reset()
    assert data_equivalence({k: v[0] for k, v in obs.items()}, first_obs)
    assert obs["action_mask"][0].any()  # the returned mask is the new episode's: the agent can act
    action = int(np.flatnonzero(obs["action_mask"][0])[0])
    _, rewards, terminations, _, infos = vec.step(np.array([action, int(np.flatnonzero(obs["action_mask"][1])[0])]))
    _, s_reward, s_terminated, _, s_info = single.step(action)
    assert not infos["illegal_action"][0] and rewards[0] == np.float32(s_reward)
    assert terminations[0] == s_terminated


def test_reset_seeds_and_options():
    vec = HollywoodGinVectorEnv(3)
    a, _ = vec.reset(seed=[5, 6, 7])
    b, _ = vec.reset(seed=5)
    assert data_equivalence(a, b)
    deck = np.random.default_rng(0).permutation(52)
    vec.reset(options={"deck": deck, "first_dealer": 1})
    assert (vec.engine.state.deck[:, :21] == deck[:21]).all()
    vec.reset(options={"deck": [deck, None, deck[::-1]]})
    assert (vec.engine.state.deck[2, :21] == deck[::-1][:21]).all()
    with pytest.raises(ValueError, match="3 integers"):
        vec.reset(seed=[1, 2])


def test_illegal_action_raise_names_the_match():
    vec = HollywoodGinVectorEnv(3, illegal_action="raise")
    obs, _ = vec.reset(seed=0)
    actions = random_legal_batch(np.random.default_rng(0), obs["action_mask"])
    actions[2] = 106 if not obs["action_mask"][2, 106] else 105
    with pytest.raises(ValueError, match="in match 2"):
        vec.step(actions)


def test_render_and_masks():
    vec = HollywoodGinVectorEnv(2, render_mode="ansi")
    obs, _ = vec.reset(seed=0)
    texts = vec.render()
    assert len(texts) == 2 and all(t.startswith("Hand 1") for t in texts)
    np.testing.assert_array_equal(vec.action_masks(), obs["action_mask"].astype(bool))


@pytest.mark.parametrize("kwargs", [{"rules": SHORT}, {"rules": SHORT, "episode": "hand", "reward": "game"}])
def test_builtin_opponent_kernel_plays_as_the_python_loop(kwargs):
    """The built-in opponent's turns run in one kernel call; a callable opponent drawing from the same
    streams goes through the Python loop, and both must stay equal."""
    from hollywood_gin_env.engine.batched import overflow_ok
    from hollywood_gin_env.engine.sampling import sample_legal_streams
    from hollywood_gin_env.envs.learner import LearnerMatches

    n = 6
    fast = LearnerMatches(n, **kwargs)

    def same_draws(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        out = np.full(n, -1, dtype=np.int64)
        with overflow_ok():
            sample_legal_streams(slow.engine.legal_mask, slow._need, slow.rng, out)
        return out[slow._need]

    slow = LearnerMatches(n, opponent=same_draws, **kwargs)
    everywhere, rng = np.ones(n, dtype=np.bool_), np.random.default_rng(0)
    for matches in (fast, slow):
        matches.reset(everywhere, seeds=np.arange(n, dtype=np.uint64))
    for _ in range(300):
        actions = random_legal_batch(rng, fast.mask)
        for matches in (fast, slow):
            matches.step(actions)
        for name in ("obs", "mask", "rewards", "ended", "illegal", "seats", "rng"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
        if fast.ended.any():
            for matches in (fast, slow):
                matches.new_outputs()
                matches.reset(fast.ended.copy())
