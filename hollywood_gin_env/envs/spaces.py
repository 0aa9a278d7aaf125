"""The spaces every env shares and the learner's worst reward."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from hollywood_gin_env.engine.observation import OBS_SIZE, observation_high
from hollywood_gin_env.envs.batch import CHANCE_PER_REWARD, POINTS_PER_REWARD
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules

#: More than any hand's deadwood difference (a hand scores at most a bonus plus this).
MAX_DEADWOOD_GAP = 100
__all__ = ["MAX_DEADWOOD_GAP", "observation_high", "observation_space", "worst_reward"]


def observation_space() -> spaces.Dict:
    """{"observation": Box(0, high, (OBS_SIZE,), float32), "action_mask": Box(0, 1, (107,), int8)}."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, observation_high(), (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
        }
    )


def worst_reward(rules: Rules, reward: str) -> float:
    """The reward of an illegal action: below any single hand, game or match result of the mode."""
    if reward == "hand":
        return -(max(rules.gin_bonus, rules.undercut_bonus) + MAX_DEADWOOD_GAP) / POINTS_PER_REWARD
    if reward == "game":
        return -float(rules.num_games)
    if reward == "chance":  # a hand moves the win chance by at most 1
        return -CHANCE_PER_REWARD
    return -1.0
