"""`expert`'s play-out of a hand in one compiled loop per match (hollywood_gin_trainer/privileged.py) scores what
`expert` scores playing both seats of the same matches in the public env, from any point of a hand, on any number
of kernel threads, and leaves the engine as it was."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.agents import ExpertAgent
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
from hollywood_gin_env.engine import threads
from hollywood_gin_env.engine.sampling import sample_legal
from hollywood_gin_env.envs import SelfPlayVectorEnv

pytest.importorskip("torch")  # the trainer's package imports torch

from hollywood_gin_trainer.privileged import expert_deal_scores  # noqa: E402

MATCHES = 48


def _positions(steps: int) -> tuple[SelfPlayVectorEnv, dict]:
    """Matches after `steps` random legal decisions (deals, offers, draws and discards of every kind), hand
    episodes; and their state."""
    env = SelfPlayVectorEnv(MATCHES, episode="hand", num_threads=1)
    obs, _ = env.reset(seed=steps)
    rng = np.random.default_rng(steps)
    for _ in range(steps):
        obs, *_ = env.step(sample_legal(obs["action_mask"], rng.random(MATCHES)))
    return env, env.state_dict()


def _expert_plays_the_hands_out(state: dict) -> np.ndarray:
    """The oracle: seat 0's score of each match's current hand when `expert` plays both seats in the public env."""
    env = SelfPlayVectorEnv(MATCHES, episode="hand", num_threads=1)
    env.load_state_dict(state)
    obs, expert = env.observe(env.current_player), ExpertAgent()
    played = np.full(MATCHES, np.nan)
    while np.isnan(played).any():
        obs, _, _, _, infos = env.step(expert.act(obs["observation"], obs["action_mask"]))
        ended = infos["hand_over"] & np.isnan(played)
        winner, points = infos["hand_winner"][ended], infos["hand_points"][ended]
        played[ended] = np.where(winner == 0, points, np.where(winner < 0, 0, -points))
    return played


@pytest.mark.parametrize("steps", [0, 7, 30])
def test_the_compiled_playout_scores_what_expert_scores_in_the_env(steps):
    """From a deal, a few decisions in and deep into hands, every match's score equals the public env's when
    `expert` plays it out, and the engine's matches are left as they were."""
    env, state = _positions(steps)
    scores = expert_deal_scores(env.engine, np.arange(MATCHES), DEFAULT_WEIGHTS, threads.kernel_threads(1))
    after = env.state_dict()["engine"]
    assert all(np.array_equal(state["engine"][name], array) for name, array in after.items())
    assert np.array_equal(scores, _expert_plays_the_hands_out(state))
    assert np.count_nonzero(scores) > MATCHES // 2  # most hands are won by someone: real scores compared


def test_the_compiled_playout_is_the_same_on_every_thread_count_and_for_any_rows():
    """The matches are independent: 1, 2, 3 and 5 kernel threads (even slices and uneven ones) agree, and a subset
    of the rows scores what those rows score in the whole batch."""
    env, _ = _positions(5)
    rows = np.arange(MATCHES)
    results = [expert_deal_scores(env.engine, rows, DEFAULT_WEIGHTS, threads.kernel_threads(k)) for k in (1, 2, 3, 5)]
    for values in results[1:]:
        assert np.array_equal(values, results[0])
    some = np.array([3, 17, 40])
    assert np.array_equal(
        expert_deal_scores(env.engine, some, DEFAULT_WEIGHTS, threads.kernel_threads(2)), results[0][some]
    )
