"""The policy network (observation -> 107 logits), defined once, its config check, and its agent.

`CardPolicy` ("cards") is a torso (fully connected layers over the observation: features) and a head (logits), so a
trainer can put a value head on the same torso. The head gives per-card logits for the 52 discard and 52 knock
actions (and a per-card score added to "take" for the face-up card) built from each card's own planes and those of
its neighbours in its suit (two ranks either side), the other cards of its rank (sets) and the torso's summary of
the match. One set of weights scores every card, so what is learnt about the 7 of hearts holds for the 7 of spades.
With `take_features`, the draw/take/pass logits also see what taking the face-up card would do to the hand (the
observation's "take_effect" block: the exact meld solver, run by the encoder). With `lookahead_features`, the
network's input is the observation followed by what `expert` computes before it acts (agents/lookahead_planes.py:
each card's expected deadwood, knock and gin chances after the next draw, its danger; the stock draw's): every card's
score and the torso read them. The network's `inputs` (`lookahead_planes.network_inputs`) makes those input rows on
the CPU (numba), called by whoever feeds the network (`PolicyAgent` on its own kernel threads); the forward pass is
torch from input to logits, so it runs on any device.

`cards(...)` is the factory registered as the network "cards" (agents/networks.py: the protocol every network
follows, `inputs` included). `check_policy_config` and `build_policy` read the same network as a policy config (a
checkpoint of format version 5, a policy saved with torch.save): `config_network` names it as a checkpoint does. This
module imports torch; the rest of the package imports it only for "checkpoint:PATH" agents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.base import Agent, as_batch
from hollywood_gin_env.agents.lookahead_planes import (
    LOOKAHEAD_NUMBERS,
    LOOKAHEAD_PLANES,
    LOOKAHEAD_SIZE,
    network_inputs,
)
from hollywood_gin_env.agents.masked import masked_probs, sample_masked
from hollywood_gin_env.agents.torch_threads import check_torch_threads, torch_threads_for
from hollywood_gin_env.engine.observation import OBS_LAYOUT, OBS_SIZE, TAKE_EFFECT_SIZE
from hollywood_gin_env.engine.threads import KernelThreads, kernel_threads
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE, NUM_ACTIONS
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.messages import shown_value as _shown

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}
ARCHES = ("cards",)
MAX_WIDTH = 8192  # no shipped or sensible policy is wider; bounds what a config may ask for
MAX_LAYERS = 8  # hidden layers a config may ask for (the shipped policies have 2)
#: What a key left out of a policy config (a version-5 checkpoint's) means. This is not a training recipe (the
#: trainer's is hollywood_gin_trainer/config.py's RECIPE_NETWORK_KWARGS).
MISSING_KEY_MEANS: dict[str, Any] = {
    "arch": "cards",
    "obs_size": OBS_SIZE,
    "num_actions": NUM_ACTIONS,
    "hidden_sizes": [256, 256],
    "activation": "relu",
    "card_channels": 64,
    "take_features": False,
    "lookahead_features": False,
    "deterministic": True,
}
NUM_RANKS, NUM_SUITS = 13, 4
#: The observation's leading blocks are 52-card planes (hand, face_up, ..., knock_discards).
CARD_PLANES = OBS_LAYOUT["phase"][0] // NUM_CARDS
FACE_UP, HAND, DW_AFTER, TAKE_EFFECT = (
    OBS_LAYOUT[name][0] for name in ("face_up", "hand", "deadwood_after_discard", "take_effect")
)
CARD_INPUTS = CARD_PLANES + 2  # the planes plus the two of `_discard_planes`
SUIT_KERNEL = 5  # a run reaches two ranks either side of a card
#: The keyword arguments of `cards`, the keys of a policy config that shape the network.
CARDS_KWARGS = ("hidden_sizes", "activation", "card_channels", "take_features", "lookahead_features")


def mlp_layers(width: int, hidden_sizes: Sequence[int], activation: str) -> tuple[nn.Sequential, int]:
    """Fully connected layers, each followed by the activation, and their output width."""
    layers: list[nn.Module] = []
    for size in hidden_sizes:
        layers += [nn.Linear(width, int(size)), ACTIVATIONS[activation]()]
        width = int(size)
    return nn.Sequential(*layers), width


def check_layers(hidden_sizes: object, activation: object) -> None:
    """ValueError naming the argument unless hidden_sizes is 1..MAX_LAYERS widths in 1..MAX_WIDTH and activation
    one of ACTIVATIONS."""
    hidden = hidden_sizes
    if not isinstance(hidden, list | tuple) or not 1 <= len(hidden) <= MAX_LAYERS or not all(map(_is_width, hidden)):
        raise ValueError(f"hidden_sizes={_shown(hidden)} must be a list of 1 to {MAX_LAYERS} ints in 1..{MAX_WIDTH}")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation={_shown(activation)} is not one of {tuple(ACTIVATIONS)}")


class CardPolicy(nn.Module):
    """Torso over the observation; draw/take/pass logits from it, discard/knock logits per card (module docstring)."""

    def __init__(
        self,
        obs_size: int,
        num_actions: int,
        hidden_sizes: list[int],
        activation: str,
        card_channels: int,
        take_features: bool = False,
        lookahead_features: bool = False,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is not one of {', '.join(ACTIVATIONS)}")
        if num_actions != NUM_ACTIONS or obs_size != OBS_SIZE:
            raise ValueError(f"CardPolicy needs obs_size={OBS_SIZE} and num_actions={NUM_ACTIONS}")
        self.lookahead_features = lookahead_features
        self.input_size = obs_size + (LOOKAHEAD_SIZE if lookahead_features else 0)
        self.torso, width = mlp_layers(self.input_size, hidden_sizes, activation)
        self.feature_size = width
        self.act = ACTIVATIONS[activation]()
        self.take_features = take_features
        general_inputs = width + (TAKE_EFFECT_SIZE if take_features else 0)
        self.general = nn.Linear(general_inputs + (LOOKAHEAD_NUMBERS if lookahead_features else 0), DISCARD_BASE)
        self.card_inputs = CARD_INPUTS + (LOOKAHEAD_PLANES if lookahead_features else 0)
        self.runs = nn.Linear(self.card_inputs * SUIT_KERNEL, card_channels)  # a card and its suit neighbours
        self.rank_mix = nn.Linear(self.card_inputs, card_channels, bias=False)
        self.context = nn.Linear(width, card_channels)
        self.rank_bias = nn.Parameter(torch.zeros(NUM_RANKS, card_channels))
        self.card_out = nn.Linear(card_channels, 3)  # discard, knock, take (if it is the face-up card)

    def inputs(self, observations: np.ndarray, threads: KernelThreads | None = None) -> np.ndarray:
        """The network's input rows (B, input_size) for observation rows (B, 567): `network_inputs`, on `threads`."""
        return network_inputs(observations, self.lookahead_features, threads)

    def features(self, observations: torch.Tensor) -> torch.Tensor:
        """The torso's output (B, feature_size) for input rows (`inputs`')."""
        return self.torso(observations)

    def head(self, observations: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        """Logits (B, 107): draw/take/pass from the torso (take plus the face-up card's own score), then 52 discard
        and 52 knock logits scored card by card."""
        batch = observations.shape[0]
        planes = observations[:, : CARD_PLANES * NUM_CARDS].reshape(batch, CARD_PLANES, NUM_SUITS, NUM_RANKS)
        cards = [planes, _discard_planes(observations)]
        if self.lookahead_features:
            extra = observations[:, OBS_SIZE : OBS_SIZE + LOOKAHEAD_PLANES * NUM_CARDS]
            cards.append(extra.reshape(batch, LOOKAHEAD_PLANES, NUM_SUITS, NUM_RANKS))
        cards = torch.cat(cards, dim=1)  # (B, k, suit, rank)
        runs, sets = card_neighbourhood(cards, self.runs, self.rank_mix)
        # what every suit shares (the rank's set count, the match's context, the rank's bias), summed first: one
        # broadcast over the suits, so the backward pass reduces one (B, suit, C, rank) gradient, not three
        shared = sets + self.context(features)[:, :, None] + self.rank_bias.t()  # (B, C, rank)
        pre = runs + shared[:, None]  # (B, suit, C, rank)
        hidden = self.act(pre)
        per_card = torch.einsum("bscr,oc->bosr", hidden, self.card_out.weight) + self.card_out.bias[:, None, None]
        per_card = per_card.reshape(batch, 3, NUM_CARDS)  # discard, knock, take; card = suit * 13 + rank
        if self.take_features:
            features = torch.cat([features, observations[:, TAKE_EFFECT : TAKE_EFFECT + TAKE_EFFECT_SIZE]], dim=1)
        if self.lookahead_features:
            numbers = OBS_SIZE + LOOKAHEAD_PLANES * NUM_CARDS
            features = torch.cat([features, observations[:, numbers : numbers + LOOKAHEAD_NUMBERS]], dim=1)
        general = self.general(features)
        # taking the face-up card is worth what that card is worth to this hand: its own per-card score
        face_up = observations[:, FACE_UP : FACE_UP + NUM_CARDS]
        take = general[:, ACTION_TAKE] + (face_up * per_card[:, 2]).sum(1)
        return torch.cat(
            [general[:, :ACTION_TAKE], take[:, None], general[:, ACTION_TAKE + 1 :], per_card[:, 0], per_card[:, 1]],
            dim=1,
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Logits of shape (B, 107) for input rows (`inputs`')."""
        return self.head(observations, self.features(observations))


assert KNOCK_BASE == DISCARD_BASE + NUM_CARDS and NUM_ACTIONS == KNOCK_BASE + NUM_CARDS  # the head's layout


def card_neighbourhood(cards: torch.Tensor, runs: nn.Linear, rank_mix: nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-card layers over card planes `cards` (B, k, suit, rank): `runs` over each card and its suit neighbours
    (B, suit, C, rank) and `rank_mix` over the four suits of each rank (B, C, rank)."""
    batch, inputs, channels = cards.shape[0], cards.shape[1], runs.weight.shape[0]
    # channels first, ranks last: the suit neighbours are a 1-d convolution along the ranks (the `runs` layer's
    # weights, read as a kernel of SUIT_KERNEL ranks), and every per-card layer a matmul over the channels
    by_suit = cards.transpose(1, 2).reshape(batch * NUM_SUITS, inputs, NUM_RANKS)
    kernel = runs.weight.view(channels, SUIT_KERNEL, inputs).transpose(1, 2)
    neighbours = nn.functional.conv1d(by_suit, kernel, runs.bias, padding=SUIT_KERNEL // 2)
    sets = torch.einsum("bkr,ck->bcr", cards.sum(2), rank_mix.weight)  # the rank across the four suits
    return neighbours.view(batch, NUM_SUITS, channels, NUM_RANKS), sets


def _discard_planes(observations: torch.Tensor) -> torch.Tensor:
    """(B, 2, 4, 13): each held card's deadwood after discarding it, above the best discard (in tens of points),
    and 1 for the best discards. The observation has the deadwood / 100; differences of a point are 0.01 there,
    too small for a freshly initialised network to notice."""
    batch = observations.shape[0]
    after = observations[:, DW_AFTER : DW_AFTER + NUM_CARDS]
    held = observations[:, HAND : HAND + NUM_CARDS] > 0
    best = after.masked_fill(~held, 2.0).min(dim=1, keepdim=True).values
    above = ((after - best) * 10.0).masked_fill(~held, 0.0)
    is_best = ((after == best) & held).float()
    return torch.stack([above, is_best], dim=1).reshape(batch, 2, NUM_SUITS, NUM_RANKS)


def cards(
    hidden_sizes: Sequence[int] = (256, 256),
    activation: str = "relu",
    card_channels: int = 64,
    take_features: bool = False,
    lookahead_features: bool = False,
) -> CardPolicy:
    """The network registered as "cards" (module docstring); ValueError naming an argument out of its bounds."""
    _check_cards_args(hidden_sizes, activation, card_channels, take_features, lookahead_features)
    shape = (list(hidden_sizes), activation, card_channels, take_features, lookahead_features)
    return CardPolicy(OBS_SIZE, NUM_ACTIONS, *shape)


def _check_cards_args(
    hidden_sizes: object, activation: object, card_channels: object, take_features: object, lookahead_features: object
) -> None:
    check_layers(hidden_sizes, activation)
    if not _is_width(card_channels):
        raise ValueError(f"card_channels={_shown(card_channels)} must be an int in 1..{MAX_WIDTH}")
    for key, value in (("take_features", take_features), ("lookahead_features", lookahead_features)):
        if not isinstance(value, bool):
            raise ValueError(f"{key}={_shown(value)} must be true or false (a bool)")


def build_policy(config: dict[str, Any]) -> CardPolicy:
    """The network a (checked) policy config describes."""
    return cards(**config_network(config)["kwargs"])


def config_network(config: dict[str, Any]) -> dict[str, Any]:
    """The network a (checked) policy config describes, as a checkpoint names it: {"name": "cards", "kwargs"}."""
    return {"name": "cards", "kwargs": {key: config[key] for key in CARDS_KWARGS}}


def check_policy_config(config: object, where: str = "config") -> dict[str, Any]:
    """The config with defaults filled in; ValueError naming the field, its value and what is allowed otherwise.
    (The bound on its parameters is every network's: agents/networks.py.)"""
    if not isinstance(config, dict):
        raise ValueError(f"{where}: the policy config must be a mapping of keys, got {_shown(config)}")
    unknown = sorted(map(str, set(config) - set(MISSING_KEY_MEANS)))
    if unknown:
        raise ValueError(f"{where}: unknown policy config keys {_shown(unknown)}; allowed: {sorted(MISSING_KEY_MEANS)}")
    full = {**MISSING_KEY_MEANS, **config}
    _check_choice(full, "arch", ARCHES, where)
    if not isinstance(full["deterministic"], bool):
        raise ValueError(f"{where}: deterministic={_shown(full['deterministic'])} must be true or false (a bool)")
    for key, expected in (("obs_size", OBS_SIZE), ("num_actions", NUM_ACTIONS)):
        if type(full[key]) is not int or full[key] != expected:
            raise ValueError(f"{where}: {key}={_shown(full[key])}, but this engine has {key}={expected} (an int)")
    try:
        _check_cards_args(*(full[key] for key in CARDS_KWARGS))
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    full["hidden_sizes"] = list(full["hidden_sizes"])
    return full


def _check_choice(config: dict[str, Any], key: str, allowed: tuple[str, ...], where: str) -> None:
    if not isinstance(config[key], str) or config[key] not in allowed:
        raise ValueError(f"{where}: {key}={_shown(config[key])} is not one of {allowed}")


def _is_width(value: object) -> bool:
    return type(value) is int and 1 <= value <= MAX_WIDTH


class PolicyAgent(Agent):
    """A neural policy behind the batched protocol: masked argmax, or masked sampling (agents/masked.py), on the
    device the policy's weights are on (observations cross once per call). `policy` follows the network protocol
    (agents/networks.py): its `inputs` make its input rows on the CPU, on the agent's kernel threads. `rules`: the
    rules it was trained under (None: not recorded). It acts on `torch_threads` torch threads (None: as the process
    has them)."""

    def __init__(
        self,
        policy: nn.Module,
        deterministic: bool = True,
        name: str = "policy",
        seed: int | None = None,
        num_threads: int | None = None,
        rules: Rules | None = None,
        torch_threads: int | None = None,
    ):
        self.policy = policy.eval()
        self.threads = kernel_threads(num_threads)  # the network's `inputs` (the card network's lookahead planes)
        self.rules = rules
        self.torch_threads = None if torch_threads is None else check_torch_threads(torch_threads)
        self.deterministic = deterministic
        self.name = name
        self.device = next(policy.parameters()).device
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (None: a fresh seed from the operating system)."""
        self._generator = torch.Generator(device=self.device)
        if seed is None:
            self._generator.seed()
        else:
            self._generator.manual_seed(int(seed))

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        with torch.no_grad(), torch_threads_for(self.torch_threads):
            masks = torch.from_numpy(action_masks).to(self.device)
            actions, _ = sample_masked(self._logits(observations), masks, self._generator, self.deterministic)
        return actions.cpu().numpy().astype(np.int64)

    def probabilities(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """float32[B, 107]: the policy's masked softmax (what it samples from; 0 on illegal actions)."""
        obs_rows, mask_rows = as_batch(observations, action_masks)
        with torch.no_grad(), torch_threads_for(self.torch_threads):
            logits = self._logits(obs_rows)
            return masked_probs(logits, torch.from_numpy(mask_rows).to(self.device)).cpu().numpy()

    def _logits(self, observations: np.ndarray) -> torch.Tensor:
        """The network's logits of observation rows; ValueError if one is not finite (no move can be drawn from it:
        weights within a checkpoint's bounds may still overflow a deep enough network)."""
        inputs = np.ascontiguousarray(self.policy.inputs(observations, self.threads), dtype=np.float32)
        logits = self.policy(torch.from_numpy(inputs).to(self.device))
        if not torch.isfinite(logits).all():
            raise ValueError(f"agent {self.name!r}: its network's logits overflow (NaN or infinity); it cannot play")
        return logits


def parameter_count(policy: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(math.prod(p.shape) for p in policy.parameters())
