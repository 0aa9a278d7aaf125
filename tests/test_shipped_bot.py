"""The shipped bots, hollywood_gin_env/data/hollywood-ppo.safetensors (`load_agent("bot")`, trained under the
hollywood rules) and eaai-ppo.safetensors (`load_agent("bot-eaai")`, under the eaai rules): their format, their
training records, the weights they were trained to, and legal play."""

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

DATA = Path(__file__).resolve().parents[1] / "hollywood_gin_env" / "data"
SHIPPED = DATA / "hollywood-ppo.safetensors"
#: Each shipped bot's file, the rules it was trained under, and the SHA-256 of its weights as trained (each tensor's
#: name, dtype, shape and bytes, by name): the README's and docs/EVALUATION.md's tables were measured with these
BOTS = {
    "bot": (SHIPPED, "hollywood", "bce48ec6fdab948e5e08feacbbc5ffe0adeb2cffd7a2832ecdb9d6a8a930daa5"),
    "bot-eaai": (
        DATA / "eaai-ppo.safetensors",
        "eaai",
        "f5107e67ed6a3f36f2b1cbae5a66d4f06ebea41f32a1351d9cd0bc9d30123ae6",
    ),
}


@pytest.mark.parametrize("name", BOTS)
def test_shipped_checkpoint_format_and_training_record(name):
    """The current format naming the network "cards" and the rules it was trained under, policy only (no optimizer,
    no pool), reading the lookahead inputs as the recipe trains it, with its training record."""
    path, preset, _ = BOTS[name]
    data = read_checkpoint_metadata(path)
    assert data["format"] == CHECKPOINT_FORMAT and data["version"] == CHECKPOINT_VERSION
    assert set(data) == {"format", "version", "network", "deterministic", "rules", "training"}
    assert not any(tensor.startswith("train/") for tensor in read_tensor_header(path).tensors)
    assert data["network"]["name"] == "cards" and data["network"]["kwargs"]["lookahead_features"] is True
    assert data["rules"] == Rules.preset(preset).to_dict() and data["deterministic"] is True
    assert path.stat().st_size < 5_000_000
    record = data["training"]
    assert record["decisions"] > 1_000_000 and record["wall_seconds"] > 0
    assert record["updates"] == record["config"]["train"]["updates"] == 2000  # the recipe's, run to its end
    assert len(record["commit"]) >= 40 and Rules.from_dict(record["config"]["rules"]) == Rules.preset(preset)
    model = record["config"]["model"]
    assert {key: model[key] for key in data["network"]["kwargs"] if key in model} == {
        key: value for key, value in data["network"]["kwargs"].items() if key in model
    }
    assert record["evaluations"] and "win_vs_expert" in record["evaluations"][0]
    assert load_agent(name).rules == Rules.preset(preset)


@pytest.mark.parametrize("name", BOTS)
def test_shipped_weights_are_the_trained_ones(name):
    """The bot loads (through the network "cards") with bit for bit the weights it was trained to."""
    path, _, trained = BOTS[name]
    policy, _ = load_checkpoint(path)
    digest = hashlib.sha256()
    for name, tensor in sorted(policy.network.state_dict().items()):
        array = np.ascontiguousarray(tensor.numpy())
        digest.update(f"{name} {array.dtype} {array.shape}\n".encode())
        digest.update(array.tobytes())
    assert digest.hexdigest() == trained


@pytest.mark.parametrize("name", BOTS)
def test_shipped_bot_plays_legal_matches_and_beats_random(name):
    """Under the rules it was trained under, every decision legal and every match won against random."""
    path, preset, _ = BOTS[name]
    bot = load_agent(f"checkpoint:{path}")
    record = play_pair(bot, load_agent("random", seed=0), 4, seed=11, rules=Rules.preset(preset))
    summary = summarize_pair(record)
    assert record.illegal == [0, 0] and record.decisions[0] > 0
    assert summary["match_win_rate"] == 1.0
