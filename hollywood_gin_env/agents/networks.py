"""Networks by reference: the protocol a policy network follows, the names that find one, and their bounds.

The protocol. A network is a `torch.nn.Module` with

    inputs(observations, threads=None) -> np.ndarray   the observation transform, numpy on the CPU: the env's
                                                      float32[B, 567] observations to input rows [B, input_size]
                                                      (identity for a plain network; the card network's adds the
                                                      lookahead planes, numba on `threads`, an engine/threads.py
                                                      KernelThreads or None for the process's default)
    input_size: int
    features(inputs) -> Tensor[B, feature_size]      what a value head reads
    feature_size: int
    head(inputs, features) -> Tensor[B, 107]         the logits
    forward(inputs) = head(inputs, features(inputs))

so the forward pass is torch from input rows to logits (any device) and a trainer puts its value head on `features`.

Names. A network is named by a spec, {"name": NAME, "kwargs": {...}} (JSON values): the factory NAME names is
called with the kwargs and returns the network. NAME is a shipped name (NETWORKS: "cards", the card network of
agents/policy.py; "mlp", a plain MLP, a baseline), a name an installed package registers in the entry-point group
NETWORK_GROUP (a shipped name wins), or MODULE:FACTORY of a module already imported: a name, read from a file or
typed, never imports code (`--import MODULE` does). And MODULE:FACTORY must name a network factory: a torch.nn.Module
class with the protocol's methods, or a function marked `@network_factory`. Every module of the standard library is
imported, so without that mark a file could name `os:system` with kwargs {"command": ...}; with it, a file calls only
what its author declared a network. Agents follow the same rule (support/imports.py resolves both).

Bounds. `network_tensors(spec)` first calls the factory on torch's meta device (no memory): the network must follow
the protocol and hold at most MAX_PARAMETERS values in its parameters and buffers, and its state_dict gives every
tensor's dtype and shape, which a checkpoint is read against (agents/checkpoint.py), so a file that names a network
costs no more memory than that network. A factory must build on the meta device (it reads no tensor's values).

`ObservationPolicy(network)` puts the transform inside: a module from the env's observation to the logits (what
`load_checkpoint` gives).
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.policy import cards, check_layers, mlp_layers
from hollywood_gin_env.engine.observation import OBS_SIZE
from hollywood_gin_env.engine.threads import KernelThreads, kernel_threads
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.support.imports import (
    declare,
    find_reference,
    is_declared,
    is_reference,
    registered,
    registered_names,
)
from hollywood_gin_env.support.messages import shown_value as _shown
from hollywood_gin_env.support.tensorfile import Spec

NETWORK_GROUP = "hollywood_gin.networks"
ROLE = "network"  # what @network_factory declares a function (support/imports.py)
MAX_PARAMETERS = 50_000_000  # values a network may hold (200 MB of float32; the shipped bot's has 0.3M)
MAX_SPEC_BYTES = 64 << 10  # a spec's JSON text: a name and a few arguments
MAX_NAME = 200
METHODS = ("inputs", "features", "head", "forward")
SIZES = ("input_size", "feature_size")
#: What a MODULE:FACTORY network name must name (is_network_factory), as messages say it.
DECLARATION = (
    "a function marked @network_factory or a torch.nn.Module class with the protocol's methods "
    "(hollywood_gin_env/agents/networks.py)"
)


def network_factory(factory: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
    """Mark a function as a network factory, so a spec (a checkpoint's, a config's) may name it MODULE:FUNCTION; a
    torch.nn.Module class that follows the protocol needs no mark."""
    return declare(factory, ROLE)


def is_network_factory(value: object) -> bool:
    """True for what is marked `@network_factory` and for a torch.nn.Module class with the protocol's methods."""
    if is_declared(value, ROLE):
        return True
    protocol = isinstance(value, type) and issubclass(value, nn.Module)
    return protocol and all(callable(inspect.getattr_static(value, m, None)) for m in METHODS)


class MLPNetwork(nn.Module):
    """A plain network: the observation through fully connected layers (its features), then one linear layer to the
    107 logits (its head)."""

    def __init__(self, hidden_sizes: Sequence[int], activation: str) -> None:
        super().__init__()
        self.input_size = OBS_SIZE
        self.torso, self.feature_size = mlp_layers(OBS_SIZE, hidden_sizes, activation)
        self.logits = nn.Linear(self.feature_size, NUM_ACTIONS)

    def inputs(self, observations: np.ndarray, threads: KernelThreads | None = None) -> np.ndarray:
        """The observation itself."""
        return observations

    def features(self, inputs: torch.Tensor) -> torch.Tensor:
        """The torso's output (B, feature_size)."""
        return self.torso(inputs)

    def head(self, inputs: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        """Logits (B, 107) of the features."""
        return self.logits(features)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits (B, 107) of input rows."""
        return self.head(inputs, self.features(inputs))


def mlp(hidden_sizes: Sequence[int] = (256, 256), activation: str = "relu") -> MLPNetwork:
    """The network registered as "mlp"; ValueError naming an argument out of its bounds."""
    check_layers(hidden_sizes, activation)
    return MLPNetwork(list(hidden_sizes), activation)


#: The shipped networks: name -> factory.
NETWORKS: dict[str, Callable[..., nn.Module]] = {"cards": cards, "mlp": mlp}


def check_network_spec(value: object, where: str = "network spec") -> dict[str, Any]:
    """A spec {"name": str, "kwargs": {str: JSON value}} as plain JSON data (a copy), at most MAX_SPEC_BYTES of
    JSON; ValueError naming `where` and the problem otherwise. The name is not resolved here."""
    if not isinstance(value, Mapping) or set(value) != {"name", "kwargs"}:
        raise ValueError(f'{where}: network {_shown(value)} is not a spec {{"name": NAME, "kwargs": {{...}}}}')
    name, kwargs = value["name"], value["kwargs"]
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
        raise ValueError(f"{where}: network name={_shown(name)} must be a string of 1 to {MAX_NAME} characters")
    if not isinstance(kwargs, Mapping) or not all(isinstance(key, str) for key in kwargs):
        raise ValueError(f"{where}: network kwargs={_shown(kwargs)} must map argument names to JSON values")
    try:
        text = json.dumps({"name": name, "kwargs": dict(kwargs)}, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: network kwargs={_shown(kwargs)} are not JSON values ({error})") from None
    if len(text) > MAX_SPEC_BYTES:
        raise ValueError(
            f"{where}: the network spec is {len(text):,} bytes of JSON; a spec is at most {MAX_SPEC_BYTES:,}"
        )
    return json.loads(text)


def find_network(name: str, where: str = "network spec") -> Callable[..., nn.Module]:
    """The factory a network name names (module docstring); ValueError in one line naming it otherwise."""
    if name in NETWORKS:
        return NETWORKS[name]
    try:
        if not is_reference(name):
            factory = registered(NETWORK_GROUP, name)
        else:
            factory = find_reference(name, f"network {name!r}", False, is_network_factory, DECLARATION)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if factory is None:
        known = ", ".join([*NETWORKS, *(n for n in registered_names(NETWORK_GROUP) if n not in NETWORKS)])
        raise ValueError(
            f"{where}: unknown network {_shown(name)}: use {known} (or a name in the entry-point group "
            f"{NETWORK_GROUP}), or MODULE:FACTORY of a module imported with --import MODULE"
        )
    if not callable(factory):
        raise ValueError(f"{where}: network {name!r} names {_shown(factory)}, not a factory")
    return factory


def network_tensors(spec: Mapping[str, Any], where: str = "network spec") -> dict[str, Spec]:
    """The tensors a checkpoint of the network `spec` names holds, name -> (numpy dtype name, shape), from the
    network built on the meta device; ValueError in one line unless it follows the protocol within the bounds."""
    spec = check_network_spec(spec, where)
    with torch.device("meta"):
        network = _built(spec, where)
    count = sum(math.prod(t.shape) for t in (*network.parameters(), *network.buffers()))
    if count > MAX_PARAMETERS:
        raise ValueError(
            f"{where}: network {spec['name']!r} holds {count:,} values; a network holds at most {MAX_PARAMETERS:,}"
        )
    specs = tensor_specs(network.state_dict())
    for name, (dtype, _) in specs.items():
        if dtype.startswith("torch."):
            raise ValueError(
                f"{where}: tensor {name!r} is {dtype}, which a checkpoint does not hold (numpy has no such)"
            )
    return specs


def build_network(spec: Mapping[str, Any], where: str = "network spec") -> nn.Module:
    """The network a spec names, on the CPU, checked first on the meta device (`network_tensors`); the process's
    random streams are left as they were (the initial weights draw from a fork of torch's)."""
    network_tensors(spec, where)
    with torch.random.fork_rng(devices=[]):
        return _built(check_network_spec(spec, where), where)


def _built(spec: dict[str, Any], where: str) -> nn.Module:
    """The factory's network of a checked spec, checked against the protocol."""
    name = spec["name"]
    factory = find_network(name, where)
    try:
        network = factory(**spec["kwargs"])
    except Exception as error:  # noqa: BLE001 (the arguments come from a file: any factory's refusal is one line)
        raise ValueError(f"{where}: network {name!r}: {' '.join(str(error).split())[:300]}") from None
    check_protocol(network, f"{where}: network {name!r}")
    return network


def check_protocol(network: object, where: str = "network") -> None:
    """ValueError naming what is missing unless `network` follows the protocol (module docstring)."""
    if not isinstance(network, nn.Module):
        raise ValueError(f"{where} is {type(network).__name__}, not a torch.nn.Module")
    missing = [m for m in METHODS if not callable(getattr(network, m, None))]
    missing += [s for s in SIZES if not (type(getattr(network, s, None)) is int and getattr(network, s) > 0)]
    if missing:
        raise ValueError(
            f"{where} does not follow the network protocol: it lacks {', '.join(missing)} "
            "(hollywood_gin_env/agents/networks.py)"
        )


def tensor_specs(state: Mapping[str, torch.Tensor]) -> dict[str, Spec]:
    """name -> (dtype name, shape) of a state_dict: numpy's dtype name ("float32"), or torch's where numpy has no
    such dtype ("torch.bfloat16"). Reads no tensor's values (meta tensors too)."""
    return {name: (_dtype_name(t.dtype), tuple(t.shape)) for name, t in state.items()}


def _dtype_name(dtype: torch.dtype) -> str:
    try:
        return torch.empty(0, dtype=dtype, device="cpu").numpy().dtype.name  # a meta default device has no numpy
    except TypeError:
        return str(dtype)


class ObservationPolicy(nn.Module):
    """A network behind the env's observation: float32[B, 567] observations (a tensor on any device) in, logits
    (B, 107) out, the network's `inputs` transform inside (on the CPU, on `num_threads` kernel threads; default the
    process's). `.network` is the network itself (what a trainer trains). Its own `inputs` is the identity, so a
    `PolicyAgent` plays it as it plays the network."""

    input_size = OBS_SIZE

    def __init__(self, network: nn.Module, num_threads: int | None = None) -> None:
        super().__init__()
        check_protocol(network)
        self.network, self.num_threads = network, num_threads

    def inputs(self, observations: np.ndarray, threads: KernelThreads | None = None) -> np.ndarray:
        """The observation itself: the transform is inside `forward`."""
        return observations

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Logits (B, 107) of observation rows (B, 567)."""
        if observations.ndim != 2 or observations.shape[1] != OBS_SIZE:
            raise ValueError(f"observations must have shape (B, {OBS_SIZE}), got {tuple(observations.shape)}")
        rows = observations.detach().to("cpu", torch.float32).numpy()
        inputs = np.ascontiguousarray(self.network.inputs(rows, kernel_threads(self.num_threads)), dtype=np.float32)
        return self.network(torch.from_numpy(inputs).to(observations.device))
