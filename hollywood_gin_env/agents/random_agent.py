"""`RandomAgent`: a uniformly random legal action, batched."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit
from hollywood_gin_env.agents.base import Agent


@njit
def random_kernel(masks: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    """out[i] = the floor(uniforms[i] * k)-th of the k legal actions of row i (0 if none is legal)."""
    for i in range(masks.shape[0]):
        count = 0
        for a in range(masks.shape[1]):
            count += masks[i, a] != 0
        pick = min(int(uniforms[i] * count), count - 1)
        out[i] = 0
        for a in range(masks.shape[1]):
            if masks[i, a] != 0:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1


class RandomAgent(Agent):
    """Uniform over the legal actions; `reset(seed)` makes it reproducible."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the agent's generator."""
        self._rng = np.random.default_rng(seed)

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        out = np.zeros(observations.shape[0], dtype=np.int64)
        random_kernel(action_masks, self._rng.random(observations.shape[0]), out)
        return out
