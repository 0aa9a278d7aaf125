"""`RandomAgent`: a uniformly random legal action, batched."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents.base import Agent
from hollywood_gin_env.engine.sampling import sample_legal
from hollywood_gin_env.engine.threads import kernel_threads, sliced
from hollywood_gin_env.support.streams import check_seed

#: Fewest rows a thread's slice gets: sampling costs a fraction of a microsecond a row.
RANDOM_GRAIN = 4096


class RandomAgent(Agent):
    """Uniform over the legal actions; `reset(seed)` makes it reproducible."""

    name = "random"

    def __init__(self, seed: int | None = None, num_threads: int | None = None) -> None:
        self.threads = kernel_threads(num_threads)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the agent's generator."""
        self._rng = np.random.default_rng(None if seed is None else check_seed(seed))

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        uniforms = self._rng.random(observations.shape[0])  # one draw a row, whatever the threads

        def work(lo: int, hi: int) -> np.ndarray:
            return sample_legal(*sliced(lo, hi, action_masks, uniforms))

        return np.concatenate(self.threads.run(observations.shape[0], work, RANDOM_GRAIN))
