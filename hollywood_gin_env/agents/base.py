"""The batched agent protocol: `act(observations, action_masks) -> actions`, numpy in and out."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from hollywood_gin_env.engine.observation import OBS_SIZE
from hollywood_gin_env.rules.actions import NUM_ACTIONS


@runtime_checkable
class AgentProtocol(Protocol):
    """Anything with a batched `act` and a `name` can play (evaluate.py, the envs, play.py); it may also have
    `reset(seed)` and `rules` (the rules it was trained under, agents/provenance.py)."""

    name: str

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """int64[B] actions for float32[B, OBS_SIZE] observations and int8[B, 107] masks."""
        ...


class Agent:
    """Base class of the shipped agents: validates the batch, then calls `_act` on contiguous arrays.

    Agents see only observations and action masks (never the engine's state) and return one legal
    action per row. `reset(seed)` reseeds any randomness, so a run with the same seed is the same run.
    The heuristics' `threads` (a threads.KernelThreads; their `num_threads=`, default the CPUs this
    process may use) runs their kernels over slices of the rows: every count gives the same actions.
    """

    name = "agent"
    rules = None  # the rules it was trained under (a Rules); None: no preference (agents/provenance.py)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """int64[B] legal actions for float32[B, OBS_SIZE] observations and int8[B, 107] masks."""
        obs, masks = as_batch(observations, action_masks)
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        return self._act(obs, masks)

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        """Reseed the agent's randomness (deterministic agents ignore it)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def as_batch(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous float32[B, OBS_SIZE] and int8[B, 107] arrays; ValueError on any other shape."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    masks = np.ascontiguousarray(action_masks, dtype=np.int8)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (B, {OBS_SIZE}), got {obs.shape}")
    if masks.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(f"action_masks must have shape ({obs.shape[0]}, {NUM_ACTIONS}), got {masks.shape}")
    return obs, masks
