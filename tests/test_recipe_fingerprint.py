"""scripts/recipe_fingerprint.py: a scaled-down run of the shipped recipe gives the same hashes every time, and the
hashes tell apart values that differ in one element while ignoring a dict's order."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("recipe_fingerprint", ROOT / "scripts" / "recipe_fingerprint.py")
fingerprint = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fingerprint)


@pytest.mark.slow  # two scaled-down training runs (about 5 s): CI's second command runs it
def test_the_recipe_fingerprint_is_the_same_on_a_second_run():
    """Seeded, one torch thread: two tiny runs of the recipe (every mechanism on) hash alike, part by part."""
    first = fingerprint.fingerprint(tiny=True)
    assert set(first) == {*fingerprint.PARTS, "combined"}
    assert all(len(value) == 64 for value in first.values())
    assert fingerprint.fingerprint(tiny=True) == first


def test_the_fingerprint_config_keeps_every_mechanism_of_the_recipe_on():
    """Only sizes shrink: the warm start, lookahead, privileged critic with play-out, snapshots and evaluations stay."""
    config = fingerprint.fingerprint_config(tiny=True)
    assert config.warmstart.teacher == "expert" and config.warmstart.teacher_weights and config.warmstart.decisions
    assert config.model.network == "cards" and config.model.network_kwargs["lookahead_features"]
    assert config.model.critic == "privileged" and config.model.critic_playout
    mix = config.selfplay.opponents
    assert mix["snapshots"] > 0 and config.selfplay.snapshot_every <= config.train.updates
    assert mix["self"] > 0 and mix["expert"] > 0 and mix["greedy"] > 0
    assert config.eval.every <= config.train.updates and config.eval.matches > 0


def test_the_hash_sees_one_changed_element_and_ignores_key_order():
    """A tensor differing in one element hashes differently; a dict's key order does not matter."""
    weights = {"a": torch.zeros(3), "b": [1.0, 2]}
    assert fingerprint.sha256(weights) == fingerprint.sha256({"b": [1.0, 2], "a": torch.zeros(3)})
    changed = torch.zeros(3)
    changed[1] = 1e-7
    assert fingerprint.sha256({"a": changed, "b": [1.0, 2]}) != fingerprint.sha256(weights)
