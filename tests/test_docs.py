"""The README's observation table is the encoder's table (`OBS_BLOCKS`), block for block."""

import re
from pathlib import Path

import pytest

from hollywood_gin_env.observation import OBS_BLOCKS, OBS_SIZE

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.nojit
def test_readme_observation_table_matches_layout():
    """Every block of OBS_BLOCKS appears in the README with its offset, size and meaning, and nothing else does."""
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \| (.*) \|$", README.read_text(), flags=re.M)
    assert {name: (int(off), int(size), meaning) for name, off, size, meaning in rows} == {
        b.name: (b.offset, b.size, b.meaning) for b in OBS_BLOCKS
    }
    assert f"float32[{OBS_SIZE}]" in README.read_text()


@pytest.mark.nojit
def test_every_scaled_block_says_its_scale():
    """A block divided by a number says so in its meaning ("/ 100"), so the README states every normaliser."""
    for block in OBS_BLOCKS:
        for scale in set(block.scale) - {1.0}:
            shown = scale if isinstance(scale, str) else f"{scale:g}"
            assert f"/ {shown}" in block.meaning, (block.name, scale)
