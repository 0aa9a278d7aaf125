"""The policy network (observation -> 107 logits), defined once, and the one checkpoint reader.

`CardPolicy` ("cards") is a torso (fully connected layers over the observation: features) and a head (logits), so a
trainer can put a value head on the same torso. The head gives per-card logits for the 52 discard and 52 knock
actions (and a per-card score added to "take" for the face-up card) built from each card's own planes and those of
its neighbours in its suit (two ranks either side), the other cards of its rank (sets) and the torso's summary of
the match. One set of weights scores every card, so what is learnt about the 7 of hearts holds for the 7 of spades.
With `take_features`, the draw/take/pass logits also see what taking the face-up card would do to the hand
  (the observation's "take_effect" block: the exact meld solver, run by the encoder). With `lookahead_features`,
  the network's input is the observation followed by what `expert` computes before it acts (agents/lookahead_planes.py:
  each card's expected deadwood, knock and gin chances after the next draw, its danger; the stock draw's): every
  card's score and the torso read them. `lookahead_planes.network_inputs` makes those input rows on the CPU (numba),
  called by whoever feeds the network (`PolicyAgent` on its own kernel threads); the forward pass is torch from
  input to logits, so it runs on any device.

A checkpoint is a plain dict saved with `torch.save` and read with `torch.load(path, map_location="cpu",
weights_only=True)`, so loading never runs pickled code:

    {"format": "hollywood-gin-policy", "version": 4,
     "config": {"arch": "cards", "obs_size": 567, "num_actions": 107, "hidden_sizes": [256, 256],
                "activation": "relu" | "tanh", "card_channels": 64, "take_features": False,
                "lookahead_features": False, "deterministic": True},
     "state_dict": {...}}

A file of another format or version is refused by name. Extra top-level keys (training metadata) are allowed and
kept. The config is checked against the state_dict's tensor shapes before any network is built,
so a small file cannot ask for a huge allocation. This module imports torch; the rest of the package imports it
only for "checkpoint:PATH" agents.
"""

from __future__ import annotations

import io
import itertools
import math
import os
import zipfile
from typing import Any, BinaryIO

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
from hollywood_gin_env.engine.observation import OBS_LAYOUT, OBS_SIZE, TAKE_EFFECT_SIZE
from hollywood_gin_env.engine.threads import kernel_threads
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE, NUM_ACTIONS
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.support.atomic import atomic_write
from hollywood_gin_env.support.userfiles import format_bytes, open_user_file

CHECKPOINT_FORMAT = "hollywood-gin-policy"
CHECKPOINT_VERSION = 4
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}
ARCHES = ("cards",)
MAX_WIDTH = 8192  # no shipped or sensible policy is wider; bounds what a config may ask for
MAX_LAYERS = 8  # hidden layers a config may ask for (the shipped policies have 2)
MAX_PARAMETERS = 50_000_000  # parameters a config may declare (200 MB of float32; the shipped policy has 0.2M)
MAX_CHECKPOINT_BYTES = 1 << 30  # larger files are refused before torch.load reads them
#: zip records a checkpoint may hold (a training state's pool of snapshots has a few hundred)
MAX_CHECKPOINT_RECORDS = 100_000
#: What a key left out of a policy config means. This is not a training recipe: a trainer writes every key
#: (`policy_config` of hollywood_gin_trainer/config.py, the shipped recipe's network).
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


def _mlp(width: int, hidden_sizes: list[int], activation: str) -> tuple[nn.Sequential, int]:
    """Fully connected layers and their output width."""
    layers: list[nn.Module] = []
    for size in hidden_sizes:
        layers += [nn.Linear(width, int(size)), ACTIVATIONS[activation]()]
        width = int(size)
    return nn.Sequential(*layers), width


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
        self.torso, width = _mlp(self.input_size, hidden_sizes, activation)
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

    def features(self, observations: torch.Tensor) -> torch.Tensor:
        """The torso's output (B, feature_size) for input rows (lookahead_planes.network_inputs')."""
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
        """Logits of shape (B, 107) for input rows (lookahead_planes.network_inputs')."""
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


def build_policy(config: dict[str, Any]) -> nn.Module:
    """The network a (checked) policy config describes."""
    return CardPolicy(
        config["obs_size"],
        config["num_actions"],
        [int(h) for h in config["hidden_sizes"]],
        config["activation"],
        int(config["card_channels"]),
        config["take_features"],
        config["lookahead_features"],
    )


def check_policy_config(config: dict[str, Any], where: str = "config") -> dict[str, Any]:
    """The config with defaults filled in; ValueError naming the field for anything malformed."""
    if not isinstance(config, dict):
        raise ValueError(f"{where}: the policy config must be a dict, got {type(config).__name__}")
    unknown = sorted(set(config) - set(MISSING_KEY_MEANS))
    if unknown:
        raise ValueError(f"{where}: unknown policy config keys {unknown}; allowed: {sorted(MISSING_KEY_MEANS)}")
    full = {**MISSING_KEY_MEANS, **config}
    if full["arch"] not in ARCHES:
        raise ValueError(f"{where}: arch={full['arch']!r} is not one of {ARCHES}")
    if full["activation"] not in ACTIVATIONS:
        raise ValueError(f"{where}: activation={full['activation']!r} is not one of {tuple(ACTIVATIONS)}")
    for key in ("deterministic", "take_features", "lookahead_features"):
        if not isinstance(full[key], bool):
            raise ValueError(f"{where}: {key}={full[key]!r} must be true or false (a bool)")
    hidden = full["hidden_sizes"]
    if not isinstance(hidden, (list, tuple)) or not hidden or not all(_is_width(h) for h in hidden):
        raise ValueError(f"{where}: hidden_sizes={hidden!r} must be a non-empty list of ints in 1..{MAX_WIDTH}")
    if len(hidden) > MAX_LAYERS:
        raise ValueError(
            f"{where}: hidden_sizes has {len(hidden)} layers; a policy has at most {MAX_LAYERS} hidden layers"
        )
    if not _is_width(full["card_channels"]):
        raise ValueError(f"{where}: card_channels={full['card_channels']!r} must be an int in 1..{MAX_WIDTH}")
    for key, expected in (("obs_size", OBS_SIZE), ("num_actions", NUM_ACTIONS)):
        if full[key] != expected or isinstance(full[key], bool):
            raise ValueError(f"{where}: {key}={full[key]!r}, but this engine has {key}={expected}")
    full["hidden_sizes"] = [int(h) for h in hidden]
    count = sum(math.prod(shape) for shape in expected_shapes(full).values())
    if count > MAX_PARAMETERS:
        raise ValueError(f"{where}: the network has {count:,} parameters; a policy has at most {MAX_PARAMETERS:,}")
    return full


def _is_width(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_WIDTH


def expected_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Parameter name -> shape of the network a checked config describes (built on the meta device: no memory)."""
    with torch.device("meta"):
        net = build_policy(config)
    return {name: tuple(t.shape) for name, t in net.state_dict().items()}


class PolicyAgent(Agent):
    """A neural policy behind the batched protocol: masked argmax, or masked sampling (agents/masked.py), on the
    device the policy's weights are on (observations cross once per call)."""

    def __init__(
        self,
        policy: nn.Module,
        deterministic: bool = True,
        name: str = "policy",
        seed: int | None = None,
        num_threads: int | None = None,
    ):
        self.policy = policy.eval()
        self.threads = kernel_threads(num_threads)  # the lookahead inputs' (`network_inputs`)
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
        with torch.no_grad():
            obs = torch.from_numpy(self._inputs(observations)).to(self.device)
            masks = torch.from_numpy(action_masks).to(self.device)
            actions, _ = sample_masked(self.policy(obs), masks, self._generator, self.deterministic)
        return actions.cpu().numpy().astype(np.int64)

    def probabilities(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """float32[B, 107]: the policy's masked softmax (what it samples from; 0 on illegal actions)."""
        obs_rows, mask_rows = as_batch(observations, action_masks)
        with torch.no_grad():
            logits = self.policy(torch.from_numpy(self._inputs(obs_rows)).to(self.device))
            return masked_probs(logits, torch.from_numpy(mask_rows).to(self.device)).cpu().numpy()

    def _inputs(self, observations: np.ndarray) -> np.ndarray:
        return network_inputs(observations, self.policy.lookahead_features, self.threads)


def save_checkpoint(path: str | os.PathLike, policy: nn.Module, config: dict[str, Any], **extra: Any) -> None:
    """Save a policy and its config in the checkpoint format above, atomically (extra keys: plain data only)."""
    full = check_policy_config(dict(config), where=str(path))
    data = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "config": full,
        "state_dict": policy.state_dict(),
        **extra,
    }
    buffer = io.BytesIO()
    torch.save(data, buffer)
    atomic_write(path, buffer.getvalue())


def read_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """The raw checkpoint dict (weights_only); one-line errors for a missing path, anything but a regular file of at
    most MAX_CHECKPOINT_BYTES, a zip whose records would inflate past the file's size, or an unreadable file."""
    with open_user_file(path, MAX_CHECKPOINT_BYTES, "checkpoint file") as f:
        check_zip_records(f, os.fstat(f.fileno()).st_size, str(path))
        f.seek(0)
        try:
            data = torch.load(f, map_location="cpu", weights_only=True)
        except Exception as error:  # torch raises many types for corrupt or unsafe files
            detail = " ".join(str(error).split())  # torch's messages span lines
            raise ValueError(f"{path} is not a readable checkpoint (torch.load failed: {detail})") from error
    if not isinstance(data, dict) or "config" not in data or "state_dict" not in data:
        found = sorted(map(str, data)) if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"{path} is not a {CHECKPOINT_FORMAT} checkpoint: expected a dict with keys "
            f"'config' and 'state_dict', found {found}"
        )
    return data


def check_zip_records(file: BinaryIO, file_size: int, where: str) -> None:
    """ValueError unless the zip's records declare at most `file_size` bytes uncompressed in all.

    torch.save stores every record uncompressed, so its records never hold more than the file; torch.load inflates
    a compressed record whole before any check, so a crafted 1 MB file could otherwise cost gigabytes. Only the
    zip's central directory is read. A file that is not a zip (torch's legacy format) is left to torch.load, which
    names the problem; a zip whose directory cannot be read here is refused, as its records could not be checked.
    """
    try:
        records = zipfile.ZipFile(file).infolist()
    except Exception as error:  # zipfile raises many types for a damaged directory
        file.seek(0)
        if file.read(2) == b"PK":
            raise ValueError(f"{where} is not a readable checkpoint (its zip directory: {error})") from None
        return
    if len(records) > MAX_CHECKPOINT_RECORDS:
        raise ValueError(
            f"{where} holds {len(records):,} records; a checkpoint holds at most {MAX_CHECKPOINT_RECORDS:,}"
        )
    declared = sum(record.file_size for record in records)
    if declared > file_size:
        largest = max(records, key=lambda record: record.file_size)
        raise ValueError(
            f"{where}: its records declare {format_bytes(declared)} uncompressed (record {largest.filename!r}: "
            f"{format_bytes(largest.file_size)}) in a file of {format_bytes(file_size)}; a checkpoint's records are "
            "stored uncompressed, so at most the file's size (refused before inflating)"
        )


def load_checkpoint(path: str | os.PathLike) -> tuple[nn.Module, dict[str, Any]]:
    """(policy, config) from a checkpoint file; a clear error if it is missing, unreadable or malformed."""
    data = read_checkpoint(path)
    if data.get("format", CHECKPOINT_FORMAT) != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: format={data['format']!r}, expected {CHECKPOINT_FORMAT!r}")
    version = data.get("version")
    if version != CHECKPOINT_VERSION or isinstance(version, bool):
        raise ValueError(f"{path}: version={version!r} is not the one this library reads ({CHECKPOINT_VERSION})")
    raw = data["config"]
    config = check_policy_config(dict(raw) if isinstance(raw, dict) else raw, where=f"{path}: config")
    state = data["state_dict"]
    check_weights(state, expected_shapes(config), f"{path}: the state_dict", f"the config {config}")
    policy = build_policy(config)
    policy.load_state_dict(state)
    return policy, config


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


def load_checkpoint_agent(
    path: str | os.PathLike, seed: int | None = None, num_threads: int | None = None, name: str | None = None
) -> PolicyAgent:
    """The agent of a checkpoint file (named `name`, default "checkpoint:PATH"), its CPU kernels on `num_threads`
    threads."""
    policy, config = load_checkpoint(path)
    name = f"checkpoint:{path}" if name is None else name
    return PolicyAgent(policy, config["deterministic"], name=name, seed=seed, num_threads=num_threads)


def parameter_count(policy: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(math.prod(p.shape) for p in policy.parameters())
