"""`expert` play-outs in one compiled loop per match (agents/playout.py) give exactly what the batched Python loop of
`search.rollout_scores` gives with the same agent, on any number of kernel threads."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env import threads
from hollywood_gin_env.agents import ExpertAgent
from hollywood_gin_env.agents.search import rollout_scores
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.sampling import sample_legal
from hollywood_gin_env.state import EngineState

MATCHES = 48


class _SameExpert:
    """Acts as `expert` does, but is not an ExpertAgent, so rollout_scores takes its batched Python loop."""

    name = "expert-through-python"

    def __init__(self) -> None:
        self.expert = ExpertAgent()

    def act(self, observations, action_masks):
        return self.expert.act(observations, action_masks)


def _positions(steps: int) -> tuple[SelfPlayVectorEnv, EngineState]:
    """Matches after `steps` random legal decisions: deals, offers, draws and discards of every kind."""
    env = SelfPlayVectorEnv(MATCHES, num_threads=1)
    obs, _ = env.reset(seed=steps)
    rng = np.random.default_rng(steps)
    for _ in range(steps):
        obs, *_ = env.step(sample_legal(obs["action_mask"], rng.random(MATCHES)))
    return env, EngineState(*(array.copy() for array in env.engine.state))


def _copy(state: EngineState) -> EngineState:
    return EngineState(*(array.copy() for array in state))


@pytest.mark.parametrize("steps", [0, 7, 30])
@pytest.mark.parametrize("with_first", [False, True], ids=["from-the-position", "after-a-first-action"])
def test_the_compiled_expert_playout_equals_the_python_loop(monkeypatch, steps, with_first):
    """Scores and every engine array (but last_step, the flags of each call) agree with the batched loop, whether
    the play-out starts at the position or after a given first action."""
    import hollywood_gin_env.agents.search as search

    compiled = []
    real = search.expert_playouts
    monkeypatch.setattr(search, "expert_playouts", lambda *args: compiled.append(1) or real(*args))
    env, state = _positions(steps)
    seats = np.arange(MATCHES, dtype=np.int64) % 2
    first = sample_legal(state.legal, np.linspace(0, 0.99, MATCHES)) if with_first else None
    fast, slow = _copy(state), _copy(state)
    fast_values = rollout_scores(fast.arrays(), first, seats, ExpertAgent(), env.engine.params, threads.pool(1))
    slow_values = rollout_scores(slow.arrays(), first, seats, _SameExpert(), env.engine.params, threads.pool(1))
    assert compiled == [1]  # the ExpertAgent took the compiled path, the other agent the Python loop
    assert np.array_equal(fast_values, slow_values)
    assert np.count_nonzero(fast_values) > MATCHES // 2  # most hands are won by someone: real scores compared
    for name, a, b in zip(state._fields, fast, slow, strict=True):
        if name != "last_step":
            assert np.array_equal(a, b), name


def test_the_compiled_expert_playout_is_the_same_on_every_thread_count():
    """The matches are independent: 1, 2, 3 and 5 kernel threads (even slices and uneven ones) agree."""
    env, state = _positions(5)
    seats = np.zeros(MATCHES, dtype=np.int64)
    results = []
    for k in (1, 2, 3, 5):
        copy = _copy(state)
        values = rollout_scores(copy.arrays(), None, seats, ExpertAgent(), env.engine.params, threads.pool(k))
        results.append((values, copy.hands.copy(), copy.sheet()[0].copy()))
    for values, hands, totals in results[1:]:
        assert np.array_equal(values, results[0][0])
        assert np.array_equal(hands, results[0][1]) and np.array_equal(totals, results[0][2])


class _SeatRecorder:
    """Acts as `expert` does and records the seat of every observation it is asked about."""

    def __init__(self) -> None:
        self.expert, self.seats = ExpertAgent(), []
        self.name = "recorder"

    def act(self, observations, action_masks):
        from hollywood_gin_env.observation import O_SEAT

        self.seats.extend(np.round(observations[:, O_SEAT]).astype(int).tolist())
        return self.expert.act(observations, action_masks)


def test_with_an_opponent_each_policy_plays_only_its_own_seat():
    """rollout_scores(..., opponent=): the policy is asked only for the seat it scores for, the opponent only for
    the other; with both acting as `expert` the scores equal expert playing both seats."""
    env, state = _positions(7)
    seats = np.zeros(MATCHES, dtype=np.int64)
    mine, theirs = _SeatRecorder(), _SeatRecorder()
    split = _copy(state)
    values = rollout_scores(split.arrays(), None, seats, mine, env.engine.params, threads.pool(1), opponent=theirs)
    both = rollout_scores(_copy(state).arrays(), None, seats, ExpertAgent(), env.engine.params, threads.pool(1))
    assert np.array_equal(values, both)
    assert set(mine.seats) == {0} and set(theirs.seats) == {1}


def test_with_a_different_opponent_the_scores_change():
    """A random opponent loses more than `expert` does: rollout_scores uses the opponent it is given."""
    from hollywood_gin_env.agents import RandomAgent

    env, state = _positions(0)
    seats = np.zeros(MATCHES, dtype=np.int64)
    versus_expert = rollout_scores(_copy(state).arrays(), None, seats, ExpertAgent(), env.engine.params)
    versus_random = rollout_scores(
        _copy(state).arrays(), None, seats, ExpertAgent(), env.engine.params, opponent=RandomAgent(seed=1)
    )
    assert versus_random.mean() > versus_expert.mean() + 2.0
