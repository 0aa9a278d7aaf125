"""The docs' tables are the code's: the observation table is `OBS_BLOCKS`, the config reference is the trainer's
config (hollywood_gin_trainer/config.py)."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from hollywood_gin_env.engine.observation import OBS_BLOCKS, OBS_SIZE

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENTS = ROOT / "docs" / "ENVIRONMENTS.md"
TRAINING = ROOT / "docs" / "TRAINING.md"


@pytest.mark.nojit
def test_observation_table_matches_layout():
    """Every block of OBS_BLOCKS appears in docs/ENVIRONMENTS.md with its offset, size and meaning, and nothing else."""
    text = ENVIRONMENTS.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \| (.*) \|$", text, flags=re.M)
    assert {name: (int(off), int(size), meaning) for name, off, size, meaning in rows} == {
        b.name: (b.offset, b.size, b.meaning) for b in OBS_BLOCKS
    }
    assert f"float32[{OBS_SIZE}]" in text


@pytest.mark.nojit
def test_every_scaled_block_says_its_scale():
    """A block divided by a number says so in its meaning ("/ 100"), so the table states every normaliser."""
    for block in OBS_BLOCKS:
        for scale in set(block.scale) - {1.0}:
            shown = scale if isinstance(scale, str) else f"{scale:g}"
            assert f"/ {shown}" in block.meaning, (block.name, scale)


def _config_tables(text: str) -> dict[str, dict[str, str]]:
    """section -> key -> default cell from the "### `[section]`" tables of docs/TRAINING.md."""
    tables: dict[str, dict[str, str]] = {}
    for section, body in re.findall(r"^### `\[(\w+)\]`\n(.*?)(?=^#)", text, flags=re.M | re.S):
        rows = re.findall(r"^\| `(\w+)` \| ([^|]+?) \| ", body, flags=re.M)
        tables[section] = dict(rows)
    return tables


@pytest.mark.nojit
def test_training_doc_lists_every_config_key_with_its_defaults():
    """docs/TRAINING.md has one row per config field, with its default (the recipe: configs/default.toml)."""
    from hollywood_gin_trainer.config import SECTIONS, Config, load_config

    def shown(value: object) -> str:  # TOML's form of the value (JSON's, for these types), None as Python's
        return "`None`" if value is None else f"`{json.dumps(value)}`"

    tables = _config_tables(TRAINING.read_text(encoding="utf-8"))
    assert set(tables) == set(SECTIONS) | {"rules"}, "one table per [section] of hollywood_gin_trainer/config.py"
    defaults, recipe = Config(), load_config(str(ROOT / "configs" / "default.toml"))
    for section, cls in SECTIONS.items():
        rows = tables[section]
        assert set(rows) == {f.name for f in dataclasses.fields(cls)}, f"[{section}]: keys differ from {cls.__name__}"
        for key, default_cell in rows.items():
            default = getattr(getattr(defaults, section), key)
            assert default_cell == shown(default), f"{section}.{key}: docs say {default_cell}, default {default!r}"
    assert recipe.rules == {}, "docs/TRAINING.md says default.toml's [rules] is empty"
