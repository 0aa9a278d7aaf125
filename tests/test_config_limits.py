"""Config values that would crash or silently break a run later are refused up
front: NaN and infinities in any float field, an empty opponent list, sizes that allocate past documented bounds,
seeds numpy cannot take, networks the checkpoint reader would refuse. Unchecked, `eval.opponents = []` would fail
with an IndexError at the first evaluation (after all the updates), `eval.matches = 10**9` with a MemoryError,
`train.lr = nan` with a torch traceback, `ppo.clip_coef = nan` would train nothing and report success,
`train.max_minutes = nan` would mean no cap, `train.seed = 2**32` would give a numpy traceback.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import get_type_hints

import pytest

from hollywood_gin_trainer.config import LIMITS, SECTIONS, config_from_dict, load_config

FLOAT_FIELDS = [
    (section, f.name)
    for section, cls in SECTIONS.items()
    for f in dataclasses.fields(cls)
    if get_type_hints(cls)[f.name] is float
]


def test_every_float_field_is_covered():
    assert ("train", "lr") in FLOAT_FIELDS and ("train", "max_minutes") in FLOAT_FIELDS
    assert ("ppo", "clip_coef") in FLOAT_FIELDS and len(FLOAT_FIELDS) >= 17


@pytest.mark.parametrize("section, key", FLOAT_FIELDS)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_in_every_float_field(section, key, value):
    with pytest.raises(ValueError, match=rf"{section}\.{key}=.*finite"):
        config_from_dict({section: {key: value}})


def test_nan_among_the_teacher_weights_is_refused():
    weights = [1.0] * 8 + [math.nan]
    with pytest.raises(ValueError, match=r"warmstart\.teacher_weights\[8\]=nan.*finite"):
        config_from_dict({"warmstart": {"teacher_weights": weights}})


def test_an_empty_opponent_list_is_refused():
    with pytest.raises(ValueError, match=r"eval\.opponents=\[\].*non-empty"):
        config_from_dict({"eval": {"opponents": []}})


@pytest.mark.parametrize(
    "section, key, too_big",
    [
        ("env", "num_envs", 10**6),
        ("ppo", "rollout_steps", 10**6),
        ("ppo", "minibatch_size", 10**9),
        ("ppo", "epochs", 10**6),
        ("warmstart", "decisions", 10**9),
        ("warmstart", "minibatch_size", 10**9),
        ("warmstart", "epochs", 10**6),
        ("eval", "matches", 10**9),
        ("selfplay", "pool_size", 10**6),
        ("train", "updates", 10**9),
        ("train", "seed", 2**32),
        ("eval", "seed", 2**64),
    ],
)
def test_sizes_past_their_bound_are_refused_naming_it(section, key, too_big):
    bound = LIMITS[f"{section}.{key}"]
    assert too_big > bound
    with pytest.raises(ValueError, match=rf"{section}\.{key}={too_big}.*<= {bound}"):
        config_from_dict({section: {key: too_big}})
    within = {section: {key: bound - bound % 2 if key == "matches" else bound}}
    if key == "rollout_steps":
        within["env"] = {"num_envs": 16}  # within the bound on decisions per rollout too
    config_from_dict(within)


def test_a_rollout_past_the_decision_bound_is_refused():
    """num_envs and rollout_steps each within bounds, but their product (decisions per rollout) is not."""
    with pytest.raises(ValueError, match="decisions per rollout"):
        config_from_dict({"env": {"num_envs": LIMITS["env.num_envs"]}, "ppo": {"rollout_steps": 4096}})


def test_networks_past_the_checkpoint_bounds_are_refused_up_front():
    with pytest.raises(ValueError, match=r"model\.hidden_sizes has 9 entries: allowed at most 8"):
        config_from_dict({"model": {"hidden_sizes": [16] * 9}})
    with pytest.raises(ValueError, match="parameters"):
        config_from_dict({"model": {"hidden_sizes": [8192, 8192]}})


@pytest.mark.parametrize("path", sorted(Path("configs").glob("*.toml")), ids=lambda p: p.name)
def test_the_shipped_recipes_are_within_every_bound(path):
    load_config(str(path))
