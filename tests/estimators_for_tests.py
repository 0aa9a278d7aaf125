"""Advantage estimators the tests name by reference (`tests.estimators_for_tests:FUNCTION`), as a researcher names
their own in `[ppo] advantages`: GAE written along one chain (what the trainer's kernel computes), n-step returns,
and estimators that break the contract."""

from __future__ import annotations

import numpy as np

from hollywood_gin_trainer.advantages import advantage_estimator

N = 3  # n_step's horizon: short, so a chain of the tests' rollouts is longer than it


@advantage_estimator
def chain_gae(rewards, values, next_value, ppo):
    """GAE along one chain, walked backward: the successor of each decision is the next one's value, then
    next_value."""
    successors = np.append(values[1:], next_value).astype(np.float64)
    out, following = np.zeros(len(rewards)), 0.0
    for k in reversed(range(len(rewards))):
        delta = float(rewards[k]) + ppo.gamma * successors[k] - float(values[k])
        following = delta + ppo.gamma * ppo.gae_lambda * following
        out[k] = following
    return out


@advantage_estimator
def n_step(rewards, values, next_value, ppo):
    """N-step returns minus the values, cut at the chain's end, where next_value takes over."""
    after = np.append(values, next_value).astype(np.float64)
    out = np.empty(len(rewards))
    for t in range(len(rewards)):
        end = min(t + N, len(rewards))
        out[t] = ppo.gamma ** np.arange(end - t) @ rewards[t:end] + ppo.gamma ** (end - t) * after[end] - values[t]
    return out


def undeclared(rewards, values, next_value, ppo):
    """A function of the right shape that no one declared an estimator."""
    return np.zeros(len(rewards))


@advantage_estimator
def one_short(rewards, values, next_value, ppo):
    """One advantage too few."""
    return np.zeros(len(rewards) - 1)


@advantage_estimator
def not_finite(rewards, values, next_value, ppo):
    """NaN where a reward is negative."""
    return np.where(rewards < 0, np.nan, rewards)


@advantage_estimator
def raises(rewards, values, next_value, ppo):
    """Refuses every chain."""
    raise RuntimeError("no estimate\nsecond line")


@advantage_estimator
def scribbles(rewards, values, next_value, ppo):
    """Writes into the arrays it is given, then returns zeros."""
    rewards[:], values[:] = 99.0, 99.0
    return np.zeros(len(rewards))


@advantage_estimator
def text(rewards, values, next_value, ppo):
    """Words, not numbers."""
    return ["high"] * len(rewards)
