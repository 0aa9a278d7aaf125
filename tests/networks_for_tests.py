"""Networks the tests name by reference (`tests.networks_for_tests:FACTORY`), as a researcher names their own: a plain
MLP in a file of its own that follows the network protocol (hollywood_gin_env/agents/networks.py), and a network
that cannot be saved as it is named."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.networks import network_factory
from hollywood_gin_env.engine.observation import OBS_SIZE
from hollywood_gin_env.rules.actions import NUM_ACTIONS


class PlainMLP(nn.Module):
    """The observation through ReLU layers (its features), then one linear layer to the 107 logits (its head)."""

    def __init__(self, hidden_sizes: list[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = OBS_SIZE
        for size in hidden_sizes:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.torso = nn.Sequential(*layers)
        self.logits = nn.Linear(width, NUM_ACTIONS)
        self.input_size, self.feature_size = OBS_SIZE, width

    def inputs(self, observations: np.ndarray, threads=None) -> np.ndarray:
        """The observation itself."""
        return observations

    def features(self, inputs: torch.Tensor) -> torch.Tensor:
        """The torso's output."""
        return self.torso(inputs)

    def head(self, inputs: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        """Logits of the features."""
        return self.logits(features)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits of input rows."""
        return self.head(inputs, self.features(inputs))


@network_factory
def mlp_net(hidden_sizes: list[int] = (64,)) -> PlainMLP:
    """A plain MLP of these hidden widths."""
    return PlainMLP(list(hidden_sizes))


@network_factory
def unsavable(hidden_sizes: list[int] = (8,)) -> PlainMLP:
    """A plain MLP that grows one more layer when it is built for real: the build on the meta device, which is what
    a checkpoint naming it holds, lacks that layer's tensors."""
    network = PlainMLP(list(hidden_sizes))
    if torch.empty(0).device.type != "meta":
        network.extra = nn.Linear(2, 2)
    return network
