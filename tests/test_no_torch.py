"""An install without torch (`pip install -e .`): play.py falls back to `expert` with one line saying why, and a
`checkpoint:PATH` agent is one clear error naming the extra to install, never a traceback. torch is hidden from a
subprocess by `sys.modules["torch"] = None`, which makes `import torch` fail as it does where torch is absent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HIDE_TORCH = (
    "import sys; sys.modules['torch'] = None; import runpy; sys.argv = {argv!r}; "
    "runpy.run_path({script!r}, run_name='__main__')"
)


def run_without_torch(script: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    code = HIDE_TORCH.format(argv=[script, *args], script=script)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=180, env=env
    )


def test_play_falls_back_to_expert_with_one_line_why(tmp_path):
    done = run_without_torch("play.py", "--seed", "0", "--save", str(tmp_path / "match.json"), stdin="quit\n")
    assert "Traceback" not in done.stderr, done.stderr
    notes = [line for line in done.stderr.splitlines() if "torch is not installed" in line]
    assert len(notes) == 1 and "expert" in notes[0] and '"hollywood-gin[torch]"' in notes[0], done.stderr
    assert "expert" in done.stdout


def test_a_checkpoint_agent_without_torch_names_the_extra():
    done = run_without_torch("evaluate.py", "--agents", "bot", "greedy", "--matches", "2")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "needs torch, which is not installed" in done.stderr and '"hollywood-gin[torch]"' in done.stderr
