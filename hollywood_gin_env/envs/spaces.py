"""What every env shares: the spaces, the learner's worst reward, the `rules=` argument and the bound on matches."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from hollywood_gin_env.engine.observation import OBS_SIZE, observation_high
from hollywood_gin_env.envs.batch import CHANCE_PER_REWARD, POINTS_PER_REWARD
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.messages import shown_value

#: More than any hand's deadwood difference (a hand scores at most a bonus plus this).
MAX_DEADWOOD_GAP = 100
#: The most matches one vector env (`HollywoodGinVectorEnv`, `SelfPlayVectorEnv`) runs. A VectorEnv holds about 15 KB
#: a match at the peak of a step (the engine's state, both seats' observations, the step's outputs and infos), so
#: 65,536 matches take about 1 GB; the trainer's 8,192 fit well inside. More matches in one process gain no speed
#: (a step's fixed cost is spread thin by a few thousand): run more processes (Ray workers) instead.
MAX_NUM_ENVS = 65_536
__all__ = [
    "MAX_DEADWOOD_GAP",
    "MAX_NUM_ENVS",
    "check_num_envs",
    "env_rules",
    "observation_high",
    "observation_space",
    "worst_reward",
]


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


def check_num_envs(num_envs: Any) -> int:
    """num_envs as an int if it is an integer in 1..MAX_NUM_ENVS (True and 8.0 are none); else ValueError naming it."""
    if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)):
        raise ValueError(f"num_envs={shown_value(num_envs)} is not allowed: use an integer from 1 to {MAX_NUM_ENVS:,}")
    if not 1 <= num_envs <= MAX_NUM_ENVS:
        raise ValueError(
            f"num_envs={shown_value(num_envs)} is not allowed: use 1 to {MAX_NUM_ENVS:,} matches (about 15 KB each; "
            "more in one process gain no speed: run more processes)"
        )
    return int(num_envs)


def env_rules(rules: Rules | str | dict | None) -> Rules | None:
    """The rules an env's `rules=` names: a preset's name, a dict of options or a Rules (`Rules.from_spec`); None
    stays None (the env's default)."""
    return None if rules is None else Rules.from_spec(rules)
