"""Training checkpoints: everything a run needs to continue exactly.

`last.pt` is a torch.save dict with one key, "train": the run's config, counters, the whole actor-critic and
optimizer, the opponent pool, the arena's matches (engine arrays, env counters, seats) and every random state (Python,
numpy, torch, the trainer's generator). `hollywood_gin_trainer.run.TrainingRun.save` writes it atomically; it is read
with `weights_only=True` from a regular file of at most MAX_TRAINING_BYTES.
"""

from __future__ import annotations

import io
import itertools
import math
import os
import random
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.support.atomic import atomic_write
from hollywood_gin_env.support.userfiles import open_user_file
from hollywood_gin_trainer.config import Config, config_from_dict

TRAIN_KEY = "train"
MAX_TRAINING_BYTES = 1 << 30  # larger files are refused before torch.load reads them
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
        if not os.path.lexists(path):  # anything else there is named by read_training_file (a FIFO, a device, ...)
            raise FileNotFoundError(f"--resume: no last.pt in the run directory {os.path.dirname(path)}")
    data = read_training_file(path)
    train = data.get(TRAIN_KEY) if isinstance(data, dict) else None
    if not isinstance(train, dict) or "config" not in train:
        raise ValueError(
            f"{path} holds a policy but no training state (key {TRAIN_KEY!r}); resume from a run's last.pt"
        )
    return config_from_dict(train["config"]), train


def save_training_file(path: str | os.PathLike, data: dict[str, Any]) -> None:
    """Write a training state (torch.save) to path atomically."""
    buffer = io.BytesIO()
    torch.save(data, buffer)
    atomic_write(path, buffer.getvalue())


def read_training_file(path: str | os.PathLike) -> object:
    """What a training state file holds (torch.load, weights_only); one-line errors for a file that is missing, not
    a regular file of at most MAX_TRAINING_BYTES, or unreadable."""
    with open_user_file(path, MAX_TRAINING_BYTES, "training state") as f:
        if f.read(2) != b"PK":  # torch.save's zip; a policy checkpoint (safetensors) holds no training state
            raise ValueError(f"{path} holds a policy but no training state; resume from a run's last.pt")
        f.seek(0)
        try:
            return torch.load(f, map_location="cpu", weights_only=True)
        except Exception as error:  # torch raises many types for corrupt or unsafe files
            detail = " ".join(str(error).split()) or type(error).__name__  # torch's messages span lines
            raise ValueError(f"{path} is not a readable training state (torch.load failed: {detail})") from error


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


def check_weights(state: object, expected: dict[str, tuple[int, ...]], where: str, fit: str = "the network") -> None:
    """ValueError unless state holds exactly the expected parameter names and shapes, as dense, contiguous, finite
    float tensors (`check_state_tensors`); the message names `where` and the first parameters that differ."""
    check_state_tensors(state, where)
    found = {name: tuple(t.shape) for name, t in state.items()}
    if found != expected:
        wrong = sorted(k for k in set(expected) | set(found) if expected.get(k) != found.get(k))
        raise ValueError(
            f"{where} does not fit {fit}: parameters {wrong[:6]} "
            f"expected {[expected.get(k) for k in wrong[:6]]}, found {[found.get(k) for k in wrong[:6]]}"
        )
    for name, t in state.items():
        if not t.is_floating_point() or not bool(torch.isfinite(t).all()):
            raise ValueError(f"{where}: parameter {name!r} holds non-finite or non-float weights ({t.dtype})")


def check_state_tensors(state: object, where: str) -> None:
    """ValueError unless state maps names to dense contiguous tensors, each fitting its storage, none overlapping.

    torch.load builds tensors of any shape and strides over the storages a file holds: one float expanded with
    stride 0 has every shape, so shapes alone do not bound what reading the values costs.
    """
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise ValueError(f"{where}: state_dict must map parameter names to tensors")
    names = [name for name in state if not isinstance(name, str)]
    if names:
        raise ValueError(f"{where}: state_dict key {names[0]!r} is not a parameter name (a string)")
    spans: dict[int, list[tuple[int, int, str]]] = {}
    for name, t in state.items():
        if t.layout != torch.strided or not t.is_contiguous():
            raise ValueError(
                f"{where}: parameter {name!r} is not a dense contiguous tensor (shape {tuple(t.shape)}, "
                f"strides {t.stride()})"
            )
        storage, size = t.untyped_storage(), t.element_size()
        start, end = t.storage_offset() * size, (t.storage_offset() + t.numel()) * size
        if end > storage.nbytes():
            raise ValueError(
                f"{where}: parameter {name!r} declares {t.numel()} values, but its storage holds "
                f"{storage.nbytes()} bytes"
            )
        if t.numel():
            spans.setdefault(storage.data_ptr(), []).append((start, end, name))
    for parts in spans.values():
        parts.sort()
        for (_, end, first), (start, _, second) in itertools.pairwise(parts):
            if start < end:
                raise ValueError(f"{where}: parameters {first!r} and {second!r} overlap in one storage")
