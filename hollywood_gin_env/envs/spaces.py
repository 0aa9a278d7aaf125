"""The spaces every env shares and the learner's worst reward."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from hollywood_gin_env.observation import OBS_LAYOUT, OBS_SIZE
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import (
    NUM_ACTIONS,
)

#: Counters with no upper bound (a hand's turns, hands in a match, sheet totals and entries).
UNBOUNDED = float(np.finfo(np.float32).max)
#: Upper bounds of the "rules" block: the largest values Rules accepts, scaled as OBS_LAYOUT says.
_RULES_HIGH = (90 / 10, 1000 / 25, 1000 / 10, 100000 / 100, 1, 1, 1, 1)


def observation_high() -> np.ndarray:
    """Upper bound of every feature of the observation vector (all features are >= 0)."""
    high = np.ones(OBS_SIZE, dtype=np.float32)
    for name in ("turns", "hand_number"):
        high[OBS_LAYOUT[name][0]] = UNBOUNDED
    sheet = OBS_LAYOUT["sheet"][0]
    for g in range(3):
        high[sheet + 7 * g : sheet + 7 * g + 4] = UNBOUNDED  # totals and entries of both players
    rules = OBS_LAYOUT["rules"][0]
    high[rules : rules + len(_RULES_HIGH)] = _RULES_HIGH
    return high


def observation_space() -> spaces.Dict:
    """{"observation": Box(0, high, (OBS_SIZE,), float32), "action_mask": Box(0, 1, (107,), int8)}."""
    return spaces.Dict({
        "observation": spaces.Box(0.0, observation_high(), (OBS_SIZE,), np.float32),
        "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
    })  # fmt: skip


def worst_reward(rules: Rules, reward: str) -> float:
    """The reward of an illegal action: below any single hand, game or match result of the mode."""
    if reward == "hand":
        return -(max(rules.gin_bonus, rules.undercut_bonus) + 100) / 100.0
    if reward == "game":
        return -float(rules.num_games)
    return -1.0
