"""Every script in benchmarks/ runs in its smoke mode (seconds of measuring, after start-up) and prints its figures
as JSON, so a change that breaks a benchmark fails the tests. The figures are not asserted: speed is what the full
runs report. The smoke runs are marked slow: CI runs them, the README's test command leaves them out."""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))  # _*.py: helpers


def test_there_are_benchmarks():
    """benchmarks/ holds at least the engine, env and training benchmarks (each smoke-run below)."""
    assert {p.name for p in SCRIPTS} >= {"engine.py", "env.py", "train.py"}


@pytest.mark.slow  # 20-70 s a script (train.py builds MaskablePPO too): CI's second command runs them
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_benchmark_runs_in_smoke_mode(script, tmp_path):
    """The script exits 0 in its smoke mode and its last line is a JSON object of non-negative figures; what it
    writes goes under its working directory (here a temporary one, so the checkout is left as it was)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), "--smoke", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    numbers = [v for v in figures.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    assert numbers and all(v >= 0 for v in numbers), figures
    if script.name == "learn.py":  # the one benchmark that writes a results folder
        assert (tmp_path / "runs" / "learn-smoke" / "learn.json").is_file()


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


@functools.cache
def learn_script():
    """benchmarks/learn.py as a module (its helpers import from benchmarks/, the script's folder)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("learn_benchmark", ROOT / "benchmarks" / "learn.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pickled_sb3_model(path: Path, marker: Path) -> None:
    """A zip that MaskablePPO.load would unpickle, creating `marker` as it does (as a crafted model runs code)."""

    class Touch:
        def __reduce__(self):
            return (Path.touch, (marker,))

    payload = base64.b64encode(pickle.dumps(Touch())).decode()
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps({"policy_class": {":type:": "x", ":serialized:": payload}}))


def mark_file(folder: Path, policy: str, **record) -> Path:
    """A trainer's folder whose marks.json names `policy` (the record's other fields as given, else well formed)."""
    folder.mkdir(parents=True, exist_ok=True)
    marks = {"marks": [{"mark": 1.0, "policy": policy, "minutes": 1.0}], "decisions": 1, "decisions_per_s": 1.0}
    (folder / "marks.json").write_text(json.dumps({**marks, **record}))
    return folder / "marks.json"


def folder_from_elsewhere(case: str, out: Path, marker: Path) -> tuple[str, Path]:
    """(trainer, the file the refusal must name) of a results folder holding one problem."""
    trainer = "maskable" if case == "pickled model" else "quick"
    folder = out / trainer
    if case == "pickled model":
        mark_file(folder, "policy-1min.zip")
        pickled_sb3_model(folder / "policy-1min.zip", marker)
        return trainer, folder / "policy-1min.zip"
    if case == "absolute path":
        return trainer, mark_file(folder, "/dev/zero")
    if case in ("symlink out", "FIFO"):
        mark_file(folder, "policy-1min.safetensors")
        policy = folder / "policy-1min.safetensors"
        os.symlink("/dev/zero", policy) if case == "symlink out" else os.mkfifo(policy)
        return trainer, policy
    if case == "missing key":
        return trainer, mark_file(folder, "policy-1min.safetensors", decisions_per_s=None)
    if case == "wrong type":
        return trainer, mark_file(folder, "policy-1min.safetensors", marks=5)
    if case == "deep nesting":
        marks = mark_file(folder, "policy-1min.safetensors")
        marks.write_text("[" * 100_000 + "]" * 100_000)
        return trainer, marks
    mark_file(folder, "policy-1min.safetensors")  # damaged scores: a kept entry without its figures
    (folder / "policy-1min.safetensors").write_bytes(b"not read: only hashed")
    (folder / "scores.json").write_text(json.dumps({"abc 8 7000003": {"greedy": {"match_win_rate": "high"}}}))
    return trainer, folder / "scores.json"


@pytest.mark.parametrize(
    "case",
    ["pickled model", "absolute path", "symlink out", "FIFO", "missing key", "wrong type", "deep nesting", "scores"],
)
def test_a_results_folder_is_read_as_data_and_refused_in_one_line_naming_the_file(tmp_path, case):
    """learn.py reads a results folder from elsewhere as data, before anything is scored: a MaskablePPO zip it did not
    train in this run is never unpickled (the crafted model's code does not run), a policy is a file inside the
    folder (not an absolute path, a symlink out of it, a device or a FIFO: refused at once, no hang), and a record
    of the wrong shape or nested too deeply is refused; each in one line naming the file."""
    learn = learn_script()
    out, marker = tmp_path / "out", tmp_path / "code-ran"
    trainer, named = folder_from_elsewhere(case, out, marker)
    with pytest.raises(learn.ResultsError) as refused:
        learn.plan(out, {trainer: learn.read_marks(out, trainer)}, 8, trained=set())
    message = str(refused.value)
    assert str(named) in message and "\n" not in message, message
    assert not marker.exists()


def test_the_learning_report_is_never_written_through_a_symlink(tmp_path):
    """A learn.json that is a symlink (to a file elsewhere) is refused in one line before any scoring, and the file it
    points at is left as it was; learn.py writes its records atomically (a temporary renamed over the target)."""
    out = tmp_path / "out"
    mark_file(out / "quick", "policy-1min.safetensors", marks=[])
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("someone else's file")
    (out / "learn.json").symlink_to(elsewhere)
    done = subprocess.run(
        [sys.executable, "benchmarks/learn.py", "--score-only", "--out", str(out), "--trainers", "quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert f"refusing to write {out / 'learn.json'}: it is a symbolic link" in done.stderr
    assert elsewhere.read_text() == "someone else's file" and not (out / "learn.png").exists()


def test_a_trainers_marks_json_is_never_written_through_a_symlink(tmp_path, monkeypatch):
    """The child that trains writes its marks.json atomically: a marks.json that is a symlink to a file elsewhere is
    refused (WriteTargetError naming it) and the file it points at is left as it was."""
    import argparse

    from hollywood_gin_env.support.atomic import WriteTargetError

    learn = learn_script()
    monkeypatch.setattr(learn, "train_ours", lambda *args: {"marks": []})
    out = tmp_path / "out"
    (out / "quick").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("someone else's file")
    (out / "quick" / "marks.json").symlink_to(elsewhere)
    args = argparse.Namespace(out=out, train="quick", minutes=1.0, marks=[], threads=1, seed=0, smoke=False)
    with pytest.raises(WriteTargetError, match="marks.json"):
        learn.train_one(args)
    assert elsewhere.read_text() == "someone else's file"
    (out / "quick" / "marks.json").unlink()
    learn.train_one(args)
    assert json.loads((out / "quick" / "marks.json").read_text())["trainer"] == "quick"
