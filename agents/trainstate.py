"""Training checkpoints: everything a run needs to continue exactly, in a file `load_agent` can also play.

`last.pt` is a policy checkpoint (hollywood_gin_env.agents.policy's format: "config" and "state_dict" of the policy)
with one more key, "train": the run's config, counters, the whole actor-critic and optimizer, the opponent pool, the
arena's matches (engine arrays, env counters, seats) and every random state (Python, numpy, torch, the trainer's
generator). `agents.run.TrainingRun.save` writes it atomically; it is read with `weights_only=True`.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.config import Config, config_from_dict
from hollywood_gin_env.agents.policy import read_checkpoint

TRAIN_KEY = "train"


@dataclass
class Progress:
    """The run's counters."""

    update: int = 0  # PPO updates done
    global_step: int = 0  # decisions trained on (the warm start's teacher decisions included)
    wall_seconds: float = 0.0  # wall time spent training, over every resume
    best_lower: float = -1.0  # the best lower 95% bound of the win rate against eval.opponents[0]
    history: list[dict[str, float]] = field(default_factory=list)  # every evaluation's headline figures


def capture_rng(rng: np.random.Generator, generator: torch.Generator) -> dict[str, Any]:
    """Every random state of the process, as checkpoint-safe data."""
    python_state = random.getstate()
    return {
        "python": [python_state[0], list(python_state[1]), python_state[2]],
        "numpy": rng.bit_generator.state,
        "torch": torch.get_rng_state(),
        "generator": generator.get_state(),
    }


def restore_rng(state: dict[str, Any], rng: np.random.Generator, generator: torch.Generator | None) -> None:
    """Put back what `capture_rng` saved (the torch generator's state too, unless `generator` is None)."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    if generator is not None:
        generator.set_state(state["generator"])


def load_training(path: str | os.PathLike) -> tuple[Config, dict[str, Any]]:
    """(config, the "train" dict) of a training checkpoint; a run directory means its last.pt."""
    if os.path.isdir(path):
        path = os.path.join(path, "last.pt")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"--resume: no last.pt in the run directory {os.path.dirname(path)}")
    data = read_checkpoint(path)
    train = data.get(TRAIN_KEY)
    if not isinstance(train, dict) or "config" not in train:
        raise ValueError(
            f"{path} holds a policy but no training state (key {TRAIN_KEY!r}); resume from a run's last.pt"
        )
    return config_from_dict(train["config"]), train


def policy_metadata(config: Config, progress: Progress, commit: str) -> dict[str, Any]:
    """What a shipped policy records about how it was made."""
    return {
        "training": {
            "config": config.to_dict(),
            "updates": progress.update,
            "decisions": progress.global_step,
            "wall_seconds": round(progress.wall_seconds, 1),
            "commit": commit,
            "evaluations": progress.history[-1:] if progress.history else [],
        }
    }
