"""The shipped bot, hollywood_gin_env/data/hollywood-ppo.safetensors (`load_agent("bot")`): its format, its training
record, and legal play."""

from __future__ import annotations

from pathlib import Path

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
from hollywood_gin_env.support.tensorfile import read_tensor_header  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[1] / "hollywood_gin_env" / "data" / "hollywood-ppo.safetensors"


def test_shipped_checkpoint_format_and_training_record():
    data = read_checkpoint_metadata(SHIPPED)
    assert data["format"] == CHECKPOINT_FORMAT and data["version"] == CHECKPOINT_VERSION
    # policy only (no optimizer, no pool), reading the lookahead inputs as the recipe trains it
    assert set(data) == {"format", "version", "config", "training"}
    assert not any(name.startswith("train/") for name in read_tensor_header(SHIPPED).tensors)
    assert data["config"]["lookahead_features"] is True
    assert SHIPPED.stat().st_size < 5_000_000
    record = data["training"]
    assert record["decisions"] > 1_000_000 and 0 < record["wall_seconds"] <= 2 * 3600
    assert len(record["commit"]) >= 40 and record["config"]["model"]["arch"] == data["config"]["arch"]
    assert record["config"]["model"]["lookahead_features"] is True
    assert record["evaluations"] and "win_vs_expert" in record["evaluations"][0]
    policy, config = load_checkpoint(SHIPPED)
    assert config["deterministic"] is True


def test_shipped_bot_plays_legal_matches_and_beats_random():
    bot = load_agent(f"checkpoint:{SHIPPED}")
    record = play_pair(bot, load_agent("random", seed=0), 4, seed=11)
    summary = summarize_pair(record)
    assert record.illegal == [0, 0] and record.decisions[0] > 0
    assert summary["match_win_rate"] == 1.0
