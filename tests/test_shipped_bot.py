"""The shipped bot, hollywood_gin_env/data/hollywood-ppo.safetensors (`load_agent("bot")`): its format, its training
record, the weights it was trained to, and legal play."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.checkpoint import (  # noqa: E402
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    load_checkpoint,
    read_checkpoint_metadata,
)
from hollywood_gin_env.evaluation.evaluate import play_pair, summarize_pair  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402
from hollywood_gin_env.support.tensorfile import read_tensor_header  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[1] / "hollywood_gin_env" / "data" / "hollywood-ppo.safetensors"
#: SHA-256 of the bot's weights as trained (each tensor's name, dtype, shape and bytes, by name): the README's
#: tables were measured with exactly these
TRAINED_WEIGHTS_SHA256 = "bce48ec6fdab948e5e08feacbbc5ffe0adeb2cffd7a2832ecdb9d6a8a930daa5"


def test_shipped_checkpoint_format_and_training_record():
    """The current format naming the network "cards" and the hollywood rules it was trained under, policy only (no
    optimizer, no pool), reading the lookahead inputs as the recipe trains it, with its training record."""
    data = read_checkpoint_metadata(SHIPPED)
    assert data["format"] == CHECKPOINT_FORMAT and data["version"] == CHECKPOINT_VERSION
    assert set(data) == {"format", "version", "network", "deterministic", "rules", "training"}
    assert not any(name.startswith("train/") for name in read_tensor_header(SHIPPED).tensors)
    assert data["network"]["name"] == "cards" and data["network"]["kwargs"]["lookahead_features"] is True
    assert data["rules"] == Rules.preset("hollywood").to_dict() and data["deterministic"] is True
    assert SHIPPED.stat().st_size < 5_000_000
    record = data["training"]
    assert record["decisions"] > 1_000_000 and 0 < record["wall_seconds"] <= 2 * 3600
    assert len(record["commit"]) >= 40 and record["config"]["model"]["arch"] == data["network"]["name"]
    model = record["config"]["model"]
    assert {key: model[key] for key in data["network"]["kwargs"]} == data["network"]["kwargs"]
    assert record["evaluations"] and "win_vs_expert" in record["evaluations"][0]


def test_shipped_weights_are_the_trained_ones():
    """The bot loads (through the network "cards") with bit for bit the weights it was trained to."""
    policy, _ = load_checkpoint(SHIPPED)
    digest = hashlib.sha256()
    for name, tensor in sorted(policy.network.state_dict().items()):
        array = np.ascontiguousarray(tensor.numpy())
        digest.update(f"{name} {array.dtype} {array.shape}\n".encode())
        digest.update(array.tobytes())
    assert digest.hexdigest() == TRAINED_WEIGHTS_SHA256


def test_shipped_bot_plays_legal_matches_and_beats_random():
    bot = load_agent(f"checkpoint:{SHIPPED}")
    record = play_pair(bot, load_agent("random", seed=0), 4, seed=11)
    summary = summarize_pair(record)
    assert record.illegal == [0, 0] and record.decisions[0] > 0
    assert summary["match_win_rate"] == 1.0
