"""Training checkpoints: everything a run needs to continue exactly, in a file `load_agent` can also play.

`last.pt` is a policy checkpoint (hollywood_gin_env.agents.policy's format: "config" and "state_dict" of the policy)
with one more key, "train": the run's config, counters, the whole actor-critic and optimizer, the opponent pool, the
arena's matches (engine arrays, env counters, seats) and every random state (Python, numpy, torch, the trainer's
generator). `hollywood_gin_trainer.run.TrainingRun.save` writes it atomically; it is read with `weights_only=True`.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.agents.policy import check_state_tensors, check_weights, read_checkpoint
from hollywood_gin_trainer.config import Config, config_from_dict

TRAIN_KEY = "train"
#: An Adam parameter's saved state (amsgrad off, as the trainer builds it).
ADAM_STATE_KEYS = {"step", "exp_avg", "exp_avg_sq"}
#: Adam's hyperparameters that are numbers; every other key of a saved group must equal the run's own.
ADAM_NUMBERS = ("lr", "betas", "eps", "weight_decay", "params", "initial_lr")


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
        if not os.path.lexists(path):  # anything else there is named by read_checkpoint (a FIFO, a device, ...)
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


def check_training_state(state: dict[str, Any], model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """ValueError in one line naming the field unless a saved training state's model, optimizer and progress fit
    this run: checked before anything is restored, so a damaged last.pt is refused at resume, not mid-run."""
    shapes = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    check_weights(state["model"], shapes, "model", "the run's model")
    check_optimizer(state["optimizer"], optimizer)
    check_progress(state["progress"])


def check_optimizer(saved: object, optimizer: torch.optim.Optimizer) -> None:
    """ValueError naming the field unless `saved` is an Adam state_dict that fits `optimizer` (its groups, their
    hyperparameters, each parameter's moments: shape, dense, finite)."""
    current = optimizer.state_dict()
    if not isinstance(saved, dict) or set(saved) != {"state", "param_groups"}:
        raise ValueError("optimizer: expected a dict with 'state' and 'param_groups'")
    groups = saved["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(current["param_groups"]):
        raise ValueError(f"optimizer.param_groups: expected a list of {len(current['param_groups'])} groups")
    for k, (group, own) in enumerate(zip(groups, current["param_groups"], strict=True)):
        _check_adam_group(group, own, f"optimizer.param_groups[{k}]")
    params = [p for group in optimizer.param_groups for p in group["params"]]
    moments = saved["state"]
    if not isinstance(moments, dict):
        raise ValueError("optimizer.state: expected a dict of parameter index -> Adam state")
    for index, entry in moments.items():
        where = f"optimizer.state[{index!r}]"
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(params):
            raise ValueError(f"{where}: the index must be an int in 0..{len(params) - 1}")
        if not isinstance(entry, dict) or set(entry) != ADAM_STATE_KEYS:
            raise ValueError(f"{where}: expected Adam's keys {sorted(ADAM_STATE_KEYS)}")
        _check_adam_entry(entry, tuple(params[index].shape), where)


def _check_adam_group(group: object, own: dict[str, Any], where: str) -> None:
    """ValueError naming the key unless a saved param group has this run's parameters, valid numbers and flags."""
    if not isinstance(group, dict):
        raise ValueError(f"{where}: expected a dict")
    if group.get("params") != own["params"]:
        raise ValueError(f"{where}.params: expected the parameter indices {own['params']}")
    betas = group.get("betas")
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2 and all(_number_in(b, 0.0, 1.0, True) for b in betas)):
        raise ValueError(f"{where}.betas={betas!r:.80}: expected two numbers in [0, 1)")
    for key, low in (("lr", 0.0), ("eps", 0.0), ("weight_decay", 0.0)):
        value = group.get(key)
        if not _number_in(value, low, math.inf) or (key == "eps" and value <= 0):
            raise ValueError(f"{where}.{key}={value!r:.80}: expected a finite number >= 0 (eps > 0)")
    for key, value in own.items():  # flags (amsgrad, fused, ...): a different one changes what Adam expects
        if key not in ADAM_NUMBERS and group.get(key, value) != value:
            raise ValueError(f"{where}.{key}={group.get(key)!r:.80}: this run's optimizer has {value!r}")


def _check_adam_entry(entry: dict[str, Any], shape: tuple[int, ...], where: str) -> None:
    """ValueError naming the key unless an Adam state's moments fit the parameter and its step is a count."""
    moments = {key: entry[key] for key in ("exp_avg", "exp_avg_sq")}
    check_weights(moments, {"exp_avg": shape, "exp_avg_sq": shape}, where, "its parameter")
    if bool((moments["exp_avg_sq"] < 0).any()):
        raise ValueError(f"{where}: exp_avg_sq holds negative values (a mean of squares)")
    step = entry["step"]
    if isinstance(step, torch.Tensor):
        check_state_tensors({"step": step}, where)
        step = step.item() if step.numel() == 1 else None
    if not _number_in(step, 0.0, math.inf) or not float(step).is_integer():
        raise ValueError(f"{where}.step={entry['step']!r:.80}: expected a whole number of steps >= 0")


def check_progress(saved: object) -> None:
    """ValueError naming the field unless a saved progress has Progress's fields, each of its type and range."""
    names = {f.name for f in fields(Progress)}
    if not isinstance(saved, dict) or set(saved) != names:
        found = sorted(map(str, saved)) if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"progress: expected the fields {sorted(names)}, found {found}")
    for key in ("update", "global_step"):
        if not _is_count(saved[key]):
            raise ValueError(f"progress.{key}={saved[key]!r:.80}: expected an int >= 0")
    if not _number_in(saved["wall_seconds"], 0.0, math.inf):
        raise ValueError(f"progress.wall_seconds={saved['wall_seconds']!r:.80}: expected a finite number >= 0")
    if not _number_in(saved["best_lower"], -1.0, 1.0):
        raise ValueError(f"progress.best_lower={saved['best_lower']!r:.80}: expected a number in [-1, 1]")
    history = saved["history"]
    if not isinstance(history, list) or len(history) > saved["update"] + 1:
        raise ValueError(f"progress.history: expected a list of at most one evaluation per update ({saved['update']})")
    for k, entry in enumerate(history):
        if not isinstance(entry, dict) or not all(
            isinstance(key, str) and _number_in(value, -math.inf, math.inf) for key, value in entry.items()
        ):
            raise ValueError(f"progress.history[{k}]: expected a dict of names to finite numbers")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number_in(value: object, low: float, high: float, open_high: bool = False) -> bool:
    """True if value is a finite int or float (not a bool) in [low, high] ([low, high) with open_high)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return low <= value < high if open_high else low <= value <= high
