"""Policy checkpoints: a network's weights, the network's name and arguments, and what made it, in one safetensors
file (support/tensorfile.py).

    tensors:   the network's state_dict by tensor name ("torso.0.weight", ...); a training state may ride along under
               names starting with EXTRA_PREFIX ("train/"), which the policy loader leaves unread
    metadata:  {"format": "hollywood-gin-policy", "version": 6,
                "network": {"name": "cards", "kwargs": {"hidden_sizes": [256, 256], "card_channels": 32, ...}},
                "deterministic": true,
                "rules": {...every option of the Rules it was trained under} (absent: no preference),
                ...whatever else the writer records (how the policy was made: "training": config, progress, commit)}

The network is named as agents/networks.py says: a shipped name ("cards", "mlp"), a name an installed package
registers, or MODULE:FACTORY of a module already imported, called with "kwargs". A file of version 5 (its metadata's
"config": {"arch": "cards", ...}, agents/policy.py's policy config) reads as the network "cards" with the config's
arguments.

Loading a file from anyone runs no code and imports nothing it names: the metadata is checked first; the network it
names is built on the meta device, which bounds its size and gives every tensor's dtype and shape, and only tensors
of exactly those are read, so a file costs no more memory than the network it names. Every floating weight must be
finite and within ±MAX_WEIGHT (the training state's bound too, hollywood_gin_trainer/trainstate.py): weights far
beyond any trained network's overflow a forward pass into infinite logits, which no agent can sample from. Subnormal
weights (magnitudes below 1.2e-38 in float32) are read as 0: no sum of float32 products can tell them from 0 next to
one ordinary term, and some CPUs compute with them many times slower. The writer refuses what the reader would
refuse: tensors the named network would not load (names, dtypes and shapes), weights out of bounds. A policy saved
with torch.save (the `.pt` format) converts with scripts/convert_checkpoint.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.networks import (
    ObservationPolicy,
    build_network,
    check_network_spec,
    network_tensors,
    tensor_specs,
)
from hollywood_gin_env.agents.policy import PolicyAgent, check_policy_config, config_network
from hollywood_gin_env.agents.provenance import recorded_rules
from hollywood_gin_env.agents.torch_threads import check_torch_threads
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_env.support.tensorfile import (
    NotSafetensorsError,
    check_tensor_specs,
    read_tensor_header,
    read_tensors,
    write_tensor_file,
)
from hollywood_gin_env.support.userfiles import shown

CHECKPOINT_FORMAT = "hollywood-gin-policy"
CHECKPOINT_VERSION = 6
#: The versions this library reads: 5 names its network by a policy config (module docstring).
READ_VERSIONS = (5, CHECKPOINT_VERSION)
CHECKPOINT_SUFFIX = ".safetensors"
EXTRA_PREFIX = "train/"
WHAT = "checkpoint file"
CONVERT_HINT = "convert a policy saved with torch.save: python scripts/convert_checkpoint.py OLD.pt NEW.safetensors"
#: Far above any weight a run trains (the shipped bot's largest is 1.6), far below what overflows a forward pass.
MAX_WEIGHT = 1e4
_RESERVED = ("format", "version", "network", "deterministic", "rules", "config")


def save_checkpoint(
    path: str | os.PathLike,
    network: nn.Module,
    spec: Mapping[str, Any],
    extra_tensors: Mapping[str, np.ndarray] | None = None,
    *,
    deterministic: bool = True,
    rules: Rules | Mapping[str, Any] | None = None,
    **metadata: Any,
) -> None:
    """Write a network, the spec that names it ({"name", "kwargs"}: agents/networks.py), whether its agent plays its
    argmax, the rules it was trained under (None: no preference) and `metadata` (JSON values: how it was made) to
    path atomically; `extra_tensors` are stored under EXTRA_PREFIX + name (a training state's). ValueError in one
    line, nothing written, for tensors the named network would not load or weights the loader refuses."""
    where = shown(path)
    clash = sorted(set(metadata) & set(_RESERVED))
    if clash:
        raise ValueError(f"metadata keys {clash} are the checkpoint's own; use other names")
    if not isinstance(deterministic, bool):
        raise ValueError(f"deterministic={shown_value(deterministic)} must be true or false (a bool)")
    spec = check_network_spec(spec, where)
    state = network.state_dict()
    try:
        check_tensor_specs(path, tensor_specs(state), network_tensors(spec, where))
    except ValueError as error:
        raise ValueError(f"{error} (the network {spec['name']!r} of these kwargs); nothing written") from None
    tensors = {name: t.detach().cpu().numpy() for name, t in state.items()}
    check_weights(tensors, where)
    tensors |= {EXTRA_PREFIX + name: array for name, array in (extra_tensors or {}).items()}
    header = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "network": spec}
    header |= {"deterministic": deterministic} | ({} if rules is None else {"rules": Rules.from_spec(rules).to_dict()})
    write_tensor_file(path, tensors, {**header, **metadata})


def read_checkpoint_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """A checkpoint's metadata, checked: its format and version, its "network" spec (not yet resolved), its
    "deterministic", its "rules" if present (every option filled in); a version-5 file's "config" read as its
    network. Reads only the file's header."""
    try:
        metadata = read_tensor_header(path, what=WHAT).metadata
    except NotSafetensorsError as error:
        raise NotSafetensorsError(f"{error}; {CONVERT_HINT}") from None
    where = shown(path)
    if metadata.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{where} is not a policy checkpoint: its metadata has no format {CHECKPOINT_FORMAT!r}")
    version = metadata.get("version")
    if type(version) is not int or version not in READ_VERSIONS:
        versions = " and ".join(map(str, READ_VERSIONS))
        raise ValueError(f"{where}: version {shown_value(version)} is not one this library reads ({versions})")
    if version == 5:
        metadata = _version_5(metadata, where)
    network = check_network_spec(metadata.get("network"), where)
    if not isinstance(metadata.get("deterministic"), bool):
        raise ValueError(f"{where}: deterministic={shown_value(metadata.get('deterministic'))} must be a bool")
    checked = {**metadata, "network": network}
    if "rules" in metadata:
        try:
            checked["rules"] = Rules.from_dict(metadata["rules"]).to_dict()
        except (ValueError, TypeError) as error:
            raise ValueError(f"{where}: rules: {' '.join(str(error).split())}") from None
    return checked


def _version_5(metadata: dict[str, Any], where: str) -> dict[str, Any]:
    """A version-5 file's metadata with its "config" read as the network "cards" and "deterministic"."""
    config = check_policy_config(metadata.get("config"), where=f"{where}: config")
    rest = {key: value for key, value in metadata.items() if key != "config"}
    return {**rest, "network": config_network(config), "deterministic": config["deterministic"]}


def check_weights(weights: Mapping[str, np.ndarray], where: str) -> dict[str, np.ndarray]:
    """The weights, subnormal values read as 0 (module docstring); ValueError naming the first tensor with a value
    that is not finite or lies beyond ±MAX_WEIGHT."""
    checked = {}
    for name, array in weights.items():
        if array.dtype.kind == "f" and array.size:
            magnitude = np.abs(array)
            if not np.isfinite(magnitude).all():
                raise ValueError(f"{where}: tensor {name!r} holds non-finite weights (NaN or infinity)")
            if magnitude.max() > MAX_WEIGHT:
                raise ValueError(
                    f"{where}: tensor {name!r} holds a weight of magnitude {magnitude.max():.3g}; a policy's weights "
                    f"lie within ±{MAX_WEIGHT:g}"
                )
            subnormal = (magnitude < np.finfo(array.dtype).tiny) & (magnitude > 0)
            if subnormal.any():
                array = np.where(subnormal, np.zeros((), array.dtype), array)
        checked[name] = array
    return checked


def load_network(path: str | os.PathLike) -> tuple[nn.Module, dict[str, Any]]:
    """(the network, its checked metadata) of a checkpoint file, on the CPU; one ValueError (FileNotFoundError) in
    one line otherwise."""
    metadata = read_checkpoint_metadata(path)
    where = shown(path)
    weights = read_tensors(path, network_tensors(metadata["network"], where), unread_prefix=EXTRA_PREFIX, what=WHAT)
    weights = check_weights(weights, where)
    network = build_network(metadata["network"], where)
    network.load_state_dict({name: torch.from_numpy(array) for name, array in weights.items()})
    return network, metadata


def load_checkpoint(
    path: str | os.PathLike, num_threads: int | None = None
) -> tuple[ObservationPolicy, dict[str, Any]]:
    """(a module from the env's observation, float32[B, 567], to the logits (B, 107), in eval mode: its `.network`
    the network, its `inputs` transform inside on `num_threads` kernel threads; the checked metadata) of a checkpoint
    file (`load_network`)."""
    network, metadata = load_network(path)
    return ObservationPolicy(network, num_threads).eval(), metadata


def load_checkpoint_agent(
    path: str | os.PathLike,
    seed: int | None = None,
    num_threads: int | None = None,
    name: str | None = None,
    torch_threads: int | None = None,
) -> PolicyAgent:
    """The agent of a checkpoint file (named `name`, default "checkpoint:PATH"), its network's `inputs` on
    `num_threads` kernel threads, torch on `torch_threads` (default: agents/torch_threads.py's), its `rules` those the
    file records."""
    network, metadata = load_network(path)
    name = f"checkpoint:{path}" if name is None else name
    return PolicyAgent(
        network,
        metadata["deterministic"],
        name=name,
        seed=seed,
        num_threads=num_threads,
        rules=recorded_rules(metadata, shown(path)),
        torch_threads=check_torch_threads(torch_threads),
    )
