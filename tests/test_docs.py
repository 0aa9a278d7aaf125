"""The README's observation table is the encoder's layout, block for block."""

import re
from pathlib import Path

import pytest

from hollywood_gin_env.observation import OBS_LAYOUT, OBS_SIZE

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.nojit
def test_readme_observation_table_matches_layout():
    """Every block of OBS_LAYOUT appears in the README with its offset and size, and nothing else does."""
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \|", README.read_text(), flags=re.M)
    assert {name: (int(off), int(size)) for name, off, size in rows} == {
        name: (offset, size) for name, (offset, size, _) in OBS_LAYOUT.items()
    }
    assert f"float32[{OBS_SIZE}]" in README.read_text()
