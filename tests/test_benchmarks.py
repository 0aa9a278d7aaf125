"""Every script in benchmarks/ runs in its smoke mode (seconds of measuring, after start-up) and prints its figures
as JSON, so a change that breaks a benchmark fails the tests. The figures are not asserted: speed is what the full
runs report. The smoke runs are marked slow: CI runs them, the README's test command leaves them out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))  # _*.py: helpers


def test_there_are_benchmarks():
    """benchmarks/ holds at least the engine, env and training benchmarks (each smoke-run below)."""
    assert {p.name for p in SCRIPTS} >= {"engine.py", "env.py", "train.py"}


@pytest.mark.slow  # 20-70 s a script (train.py builds MaskablePPO too): CI's second command runs them
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_benchmark_runs_in_smoke_mode(script):
    """The script exits 0 in its smoke mode and its last line is a JSON object of non-negative figures."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(script), "--smoke", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    numbers = [v for v in figures.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    assert numbers and all(v >= 0 for v in numbers), figures


@pytest.mark.slow  # three smoke runs of the training loop (one compiled), 30-70 s
def test_the_training_benchmark_reports_each_env_thread_count_and_the_compiled_loop():
    """`--env-threads 1 2 --compile` runs the loop once per count and carries, per count, the whole loop's and the
    rollout's decisions/s and the split of the time under NAME_threads_N, then the loop with train.compile under
    NAME_compiled with its gain over eager (smoke sizes; the figures are not asserted)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/train.py",
            "--smoke",
            "--json",
            "--no-reference",
            "--env-threads",
            "1",
            "2",
            "--compile",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for n in (1, 2):
        for name in ("ppo_steps_per_s", "rollout_steps_per_s", "rollout_share", "forward_share", "update_share"):
            assert figures[f"{name}_threads_{n}"] > 0, (name, n, figures)
    for name in ("ppo_steps_per_s_compiled", "rollout_steps_per_s_compiled", "compile_gain", "compile_rollout_gain"):
        assert figures[name] > 0, (name, figures)
    assert figures["compile"] is True
    assert "sb3_steps_per_s_8" not in figures


def test_the_training_benchmark_refuses_a_bad_env_thread_count_by_name():
    """--env-threads 0 stops with a usage error naming the flag and the allowed range, before any training."""
    done = subprocess.run(
        [sys.executable, "benchmarks/train.py", "--smoke", "--env-threads", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--env-threads=0 is not allowed: use an integer from 1 to 1024" in done.stderr


@pytest.mark.parametrize("damaged", ["marks.json", "scores.json"])
def test_the_learning_benchmark_names_a_damaged_record_instead_of_a_traceback(tmp_path, damaged):
    """`learn.py --score-only` over a folder whose marks.json or scores.json is not valid JSON exits 1 with one
    line naming that file, before any policy is loaded or played."""
    folder = tmp_path / "quick"
    folder.mkdir()
    (folder / "marks.json").write_text(json.dumps({"marks": [], "decisions_per_s": 1.0, "decisions": 1}))
    (folder / damaged).write_text('{"marks": [')
    done = subprocess.run(
        [sys.executable, "benchmarks/learn.py", "--score-only", "--out", str(tmp_path), "--trainers", "quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"cannot read {folder / damaged}" in done.stderr and "Traceback" not in done.stderr
