"""The registered env ids: one per rules preset beside HollywoodGin-v1, each the same env classes under its preset
(gymnasium.make, gymnasium.make_vec, check_env), the table in docs/ENVIRONMENTS.md, and `rules=` as a preset's
name, a dict or a Rules in every env."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import hollywood_gin_env
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv, SelfPlayVectorEnv
from hollywood_gin_env.rules.options import PRESETS, Rules

ENVIRONMENTS = Path(__file__).resolve().parents[1] / "docs" / "ENVIRONMENTS.md"


def test_every_preset_has_an_id():
    """Each rules preset is registered under one id (hollywood's is HollywoodGin-v1, which leaves rules= unset)."""
    presets = [preset or "hollywood" for preset in hollywood_gin_env.ENV_IDS.values()]
    assert sorted(presets) == sorted(PRESETS)
    assert hollywood_gin_env.ENV_IDS["HollywoodGin-v1"] is None
    assert all(env_id in gym.registry for env_id in hollywood_gin_env.ENV_IDS)


@pytest.mark.parametrize("env_id", list(hollywood_gin_env.ENV_IDS))
def test_make_and_make_vec_of_each_id_play_its_preset(env_id):
    """gym.make and gym.make_vec (vector_entry_point) of an id build the env classes under that preset's rules, and
    the env passes Gymnasium's check_env with warnings as errors."""
    rules = Rules.preset(hollywood_gin_env.ENV_IDS[env_id] or "hollywood")
    env = gym.make(env_id)
    assert isinstance(env.unwrapped, HollywoodGinEnv) and env.unwrapped.rules == rules
    vec = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(vec, HollywoodGinVectorEnv) and vec.rules == rules
    obs, _ = vec.reset(seed=0)
    assert obs["observation"].shape == (3, 567)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id).unwrapped)


def test_an_id_s_rules_give_way_to_rules_given_to_make():
    """make's rules= (a preset's name with keys, a dict, a Rules) replaces the id's preset, as any make keyword."""
    assert gym.make("GinRummyEAAI-v1", rules={"preset": "eaai", "knock_limit": 5}).unwrapped.rules.describe() == (
        "eaai, knock_limit=5"
    )
    assert gym.make("GinRummyClassic-v1", rules=Rules(gin_bonus=20)).unwrapped.rules == Rules(gin_bonus=20)


@pytest.mark.parametrize(
    "make",
    [
        lambda rules: HollywoodGinEnv(rules=rules),
        lambda rules: HollywoodGinVectorEnv(2, rules=rules),
        lambda rules: SelfPlayVectorEnv(2, rules=rules),
        lambda rules: pytest.importorskip("hollywood_gin_env.envs.pettingzoo").raw_env(rules=rules),
    ],
    ids=["single", "vector", "selfplay", "pettingzoo"],
)
def test_rules_argument_takes_a_preset_s_name_a_dict_or_rules(make):
    """Every env reads rules= through Rules.from_spec; an unknown preset is one line naming it and the presets."""
    eaai = Rules.preset("eaai")
    for spec in ("eaai", {"preset": "eaai"}, eaai, {"num_games": 1, "undercut_bonus": 25, "dealer_rule": "alternate"}):
        assert make(spec).rules == eaai
    with pytest.raises(ValueError, match="unknown rules preset 'eaii': allowed are hollywood, eaai"):
        make("eaii")
    with pytest.raises(ValueError, match="must be a table of options or a preset's name"):
        make(3)


def test_the_docs_table_lists_each_id_with_its_preset():
    """docs/ENVIRONMENTS.md's table of ids has one row per registered id, naming the preset it plays."""
    text = ENVIRONMENTS.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([A-Za-z]+-v\d+)` \| `(\w+)` \|", text, flags=re.MULTILINE))
    assert rows == {env_id: preset or "hollywood" for env_id, preset in hollywood_gin_env.ENV_IDS.items()}
