"""Neural policies: a small MLP (observation -> 107 logits) and its checkpoint format.

A checkpoint is a plain dict saved with `torch.save` and read with `torch.load(path, map_location="cpu",
weights_only=True)`, so loading never runs pickled code:

    {"format": "hollywood-gin-policy", "version": 1,
     "config": {"obs_size": 564, "num_actions": 107, "hidden_sizes": [256, 256],
                "activation": "relu" | "tanh", "deterministic": True},
     "state_dict": MLPPolicy(...).state_dict()}

Extra top-level keys (training metadata) are allowed and ignored. This module imports torch; the rest
of the package imports it only for "checkpoint:PATH" agents.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.base import Agent
from hollywood_gin_env.atomic import atomic_write
from hollywood_gin_env.observation import OBS_SIZE
from hollywood_gin_env.state import NUM_ACTIONS

CHECKPOINT_FORMAT = "hollywood-gin-policy"
CHECKPOINT_VERSION = 1
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}
DEFAULT_CONFIG: dict[str, Any] = {
    "obs_size": OBS_SIZE,
    "num_actions": NUM_ACTIONS,
    "hidden_sizes": [256, 256],
    "activation": "relu",
    "deterministic": True,
}


class MLPPolicy(nn.Module):
    """Observation -> action logits through fully connected hidden layers."""

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: list[int], activation: str) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is not one of {', '.join(ACTIVATIONS)}")
        layers: list[nn.Module] = []
        width = obs_size
        for size in hidden_sizes:
            layers += [nn.Linear(width, int(size)), ACTIVATIONS[activation]()]
            width = int(size)
        layers.append(nn.Linear(width, num_actions))
        self.net = nn.Sequential(*layers)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Logits of shape (B, num_actions)."""
        return self.net(observations)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> MLPPolicy:
        """The policy a checkpoint config describes."""
        return cls(config["obs_size"], config["num_actions"], list(config["hidden_sizes"]), config["activation"])


class PolicyAgent(Agent):
    """A neural policy behind the batched protocol: masked argmax, or masked sampling."""

    def __init__(self, policy: nn.Module, deterministic: bool = True, name: str = "policy", seed: int | None = None):
        self.policy = policy.eval()
        self.deterministic = deterministic
        self.name = name
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator."""
        self._rng = np.random.default_rng(seed)

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = self.policy(torch.from_numpy(observations)).double().numpy()
        if not self.deterministic:
            logits = logits + self._rng.gumbel(size=logits.shape)
        logits[action_masks == 0] = -np.inf
        return np.argmax(logits, axis=1).astype(np.int64)


def save_checkpoint(path: str | os.PathLike, policy: MLPPolicy, config: dict[str, Any], **extra: Any) -> None:
    """Save a policy and its config in the checkpoint format above, atomically (extra keys: plain data only)."""
    full = {**DEFAULT_CONFIG, **config}
    data = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "config": full,
            "state_dict": policy.state_dict(), **extra}  # fmt: skip
    atomic_write(path, lambda f: torch.save(data, f))


def load_checkpoint(path: str | os.PathLike) -> tuple[MLPPolicy, dict[str, Any]]:
    """(policy, config) from a checkpoint file; a clear error if it is missing, unreadable or malformed."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint file not found: {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for corrupt or unsafe files
        raise ValueError(f"{path} is not a readable checkpoint (torch.load failed: {error})") from error
    if not isinstance(data, dict) or "config" not in data or "state_dict" not in data:
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path} is not a {CHECKPOINT_FORMAT} checkpoint: expected a dict with keys "
                         f"'config' and 'state_dict', found {found}")  # fmt: skip
    config = {**DEFAULT_CONFIG, **dict(data["config"])}
    if config["obs_size"] != OBS_SIZE or config["num_actions"] != NUM_ACTIONS:
        raise ValueError(f"{path}: the policy takes obs_size={config['obs_size']}, num_actions="
                         f"{config['num_actions']}; this engine has {OBS_SIZE} and {NUM_ACTIONS}")  # fmt: skip
    policy = MLPPolicy.from_config(config)
    try:
        policy.load_state_dict(data["state_dict"])
    except RuntimeError as error:
        raise ValueError(f"{path}: the state_dict does not fit the config {config}: {error}") from error
    return policy, config


def load_checkpoint_agent(path: str | os.PathLike, seed: int | None = None) -> PolicyAgent:
    """The agent of a checkpoint file (named "checkpoint:PATH")."""
    policy, config = load_checkpoint(path)
    return PolicyAgent(policy, bool(config["deterministic"]), name=f"checkpoint:{path}", seed=seed)
