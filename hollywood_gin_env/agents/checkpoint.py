"""Policy checkpoints: a policy's weights and what made it, in one safetensors file (support/tensorfile.py).

    tensors:   the network's state_dict, float32, by parameter name ("torso.0.weight", ...); a training state may
               ride along under names starting with EXTRA_PREFIX ("train/"), which the policy loader leaves unread
    metadata:  {"format": "hollywood-gin-policy", "version": 5,
                "config": {"arch": "cards", "obs_size": 567, "num_actions": 107, "hidden_sizes": [256, 256],
                           "activation": "relu" | "tanh", "card_channels": 64, "take_features": false,
                           "lookahead_features": false, "deterministic": true},
                ...whatever else the writer records (how the policy was made: "training": config, progress, commit)}

Loading a file from anyone runs no code: the metadata's config is checked first (check_policy_config: bounded
layers and parameters), the network it names gives every tensor's expected shape (`expected_shapes`), and only
tensors of exactly those shapes are read, so a file costs no more memory than the network its config names. A policy
saved with torch.save (the `.pt` format) converts with scripts/convert_checkpoint.py.
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.policy import PolicyAgent, build_policy, check_policy_config, expected_shapes
from hollywood_gin_env.agents.provenance import recorded_rules
from hollywood_gin_env.agents.torch_threads import check_torch_threads
from hollywood_gin_env.support.tensorfile import (
    NotSafetensorsError,
    Spec,
    read_tensor_header,
    read_tensors,
    write_tensor_file,
)
from hollywood_gin_env.support.userfiles import shown

CHECKPOINT_FORMAT = "hollywood-gin-policy"
CHECKPOINT_VERSION = 5
CHECKPOINT_SUFFIX = ".safetensors"
EXTRA_PREFIX = "train/"
WHAT = "checkpoint file"
CONVERT_HINT = "convert a policy saved with torch.save: python scripts/convert_checkpoint.py OLD.pt NEW.safetensors"
_RESERVED = ("format", "version", "config")


def save_checkpoint(
    path: str | os.PathLike,
    policy: nn.Module,
    config: dict[str, Any],
    extra_tensors: Mapping[str, np.ndarray] | None = None,
    **metadata: Any,
) -> None:
    """Write a policy, its config and `metadata` (JSON values: how it was made) to path atomically; `extra_tensors`
    are stored under EXTRA_PREFIX + name (a training state's)."""
    clash = sorted(set(metadata) & set(_RESERVED))
    if clash:
        raise ValueError(f"metadata keys {clash} are the checkpoint's own; use other names")
    full = check_policy_config(dict(config), where=str(path))
    tensors = {name: t.detach().cpu().numpy() for name, t in policy.state_dict().items()}
    tensors |= {EXTRA_PREFIX + name: array for name, array in (extra_tensors or {}).items()}
    header = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "config": full}
    write_tensor_file(path, tensors, {**header, **metadata})


def read_checkpoint_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """A checkpoint's metadata, its format and version checked and its config filled in (check_policy_config); reads
    only the file's header."""
    try:
        metadata = read_tensor_header(path, what=WHAT).metadata
    except NotSafetensorsError as error:
        raise NotSafetensorsError(f"{error}; {CONVERT_HINT}") from None
    where = shown(path)
    if metadata.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{where} is not a policy checkpoint: its metadata has no format {CHECKPOINT_FORMAT!r}")
    version = metadata.get("version")
    if type(version) is not int or version != CHECKPOINT_VERSION:
        raise ValueError(
            f"{where}: version {reprlib.repr(version)} is not the one this library reads ({CHECKPOINT_VERSION})"
        )
    return {**metadata, "config": check_policy_config(metadata.get("config"), where=f"{where}: config")}


def policy_specs(config: dict[str, Any]) -> dict[str, Spec]:
    """The tensors a checkpoint of this (checked) config holds: name -> ("float32", shape)."""
    return {name: ("float32", shape) for name, shape in expected_shapes(config).items()}


def load_checkpoint(path: str | os.PathLike) -> tuple[nn.Module, dict[str, Any]]:
    """(policy, config) from a checkpoint file; one clear ValueError (or FileNotFoundError) otherwise."""
    config = read_checkpoint_metadata(path)["config"]
    weights = read_tensors(path, policy_specs(config), unread_prefix=EXTRA_PREFIX, what=WHAT)
    for name, array in weights.items():
        if not np.isfinite(array).all():
            raise ValueError(f"{shown(path)}: parameter {name!r} holds non-finite weights (NaN or infinity)")
    policy = build_policy(config)
    policy.load_state_dict({name: torch.from_numpy(array) for name, array in weights.items()})
    return policy, config


def load_checkpoint_agent(
    path: str | os.PathLike,
    seed: int | None = None,
    num_threads: int | None = None,
    name: str | None = None,
    torch_threads: int | None = None,
) -> PolicyAgent:
    """The agent of a checkpoint file (named `name`, default "checkpoint:PATH"), its CPU kernels on `num_threads`
    threads, torch on `torch_threads` (default: agents/torch_threads.py's), its `rules` those the file records."""
    policy, config = load_checkpoint(path)
    rules = recorded_rules(read_checkpoint_metadata(path), shown(path))
    name = f"checkpoint:{path}" if name is None else name
    return PolicyAgent(
        policy,
        config["deterministic"],
        name=name,
        seed=seed,
        num_threads=num_threads,
        rules=rules,
        torch_threads=check_torch_threads(torch_threads),
    )
