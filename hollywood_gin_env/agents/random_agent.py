"""`RandomAgent`: a uniformly random legal action, batched."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents.base import Agent
from hollywood_gin_env.sampling import check_seed, sample_legal


class RandomAgent(Agent):
    """Uniform over the legal actions; `reset(seed)` makes it reproducible."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the agent's generator."""
        self._rng = np.random.default_rng(None if seed is None else check_seed(seed))

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return sample_legal(action_masks, self._rng.random(observations.shape[0]))
