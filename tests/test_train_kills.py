"""A run stopped at any point (a crash or SIGKILL during an update, a save or an evaluation; Ctrl-C or a crash in
the warm start) resumes to the run an unbroken one writes: the same evaluation history, best policy, final policy and
final-evaluation line.

The training program saves its state just before each evaluation (marked due) and again after it; a run resumed
from the first save plays that evaluation before anything else, so no evaluation is skipped and none counts twice.
In the warm start it saves before the teacher's matches, after each cloning epoch and where Ctrl-C stops it; a run
resumed there collects the same teacher decisions again and clones on from the minibatch it reached.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from hollywood_gin_env.support.tensorfile import read_tensor_header, read_tensors  # noqa: E402
from hollywood_gin_trainer import main as train  # noqa: E402
from hollywood_gin_trainer.rundir import BEST, LAST, POLICY  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ["--config", "configs/smoke.toml", "--no-progress"]
#: The smoke run made long enough (16 updates, an evaluation every 2) that random kills land inside it, not after it.
LONG = [*SMOKE, "--set", "train.updates=16", "--set", "ppo.rollout_steps=128", "--set", "eval.matches=20"]


class NoCtrlC:
    """Stands in for train.Interrupt: leaves the test process's Ctrl-C handler alone."""

    requested = False


class StoppedError(Exception):
    """A run stopped where a test put it (as a kill would stop it, minus the lock, which the test process keeps)."""


class CtrlC:
    """Stands in for train.Interrupt: Ctrl-C pressed the `at`-th time the run asks whether to stop, or there a
    StoppedError, as a kill would stop it (`kill`)."""

    def __init__(self, at: int, kill: bool = False) -> None:
        self.at, self.kill, self.asked, self.when = at, kill, 0, None

    @property
    def requested(self) -> bool:
        self.asked += 1
        if self.kill and self.asked >= self.at:
            raise StoppedError("killed")
        return self.asked >= self.at


def outcome(run_dir: Path, closing: str) -> dict:
    """What a finished run wrote, less its wall times: the evaluation history, the best and final policies' weights,
    the final policy's record and the closing lines (run directory names made alike)."""
    history = read_tensor_header(run_dir / LAST).metadata["train"]["progress"]["history"]
    record = read_tensor_header(run_dir / POLICY).metadata["training"]
    weights = {name: _weights(run_dir / name) for name in (BEST, POLICY)}
    closing = re.sub(r"[\d.]+ min", "M min", closing.replace(str(run_dir), "RUN"))
    untimed = {**record, "wall_seconds": None, "evaluations": _untimed(record["evaluations"])}
    return {"history": _untimed(history), "weights": weights, "record": untimed, "closing": closing}


def _untimed(history: list[dict]) -> list[dict]:
    return [{key: value for key, value in entry.items() if key != "wall_s"} for entry in history]


def _weights(path: Path) -> dict[str, bytes]:
    arrays = read_tensors(path, {n: s for n, s in read_tensor_header(path).tensors.items() if "/" not in n})
    return {name: np.asarray(array).tobytes() for name, array in arrays.items()}


def run_main(argv: list[str], capsys) -> str:
    assert train.main(argv) == 0
    return capsys.readouterr().out


def train_unbroken(run_dir: Path, argv: list[str]) -> tuple[dict, float]:
    """What train.py with `argv` writes into `run_dir` without a stop, and its wall seconds."""
    start = time.monotonic()
    process = subprocess.run(
        [sys.executable, "train.py", *argv, "--run-dir", str(run_dir)], cwd=ROOT, capture_output=True, text=True
    )
    assert process.returncode == 0, process.stderr[-2000:]
    return outcome(run_dir, process.stdout.replace("python train.py", train.PROG)), time.monotonic() - start


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory) -> dict:
    """The smoke run trained without a stop (evaluations at updates 2 and 4)."""
    return train_unbroken(tmp_path_factory.mktemp("unbroken") / "run", SMOKE)[0]


#: A warm start long enough to stop inside: 4 rounds of the teacher's matches (2,048 decisions each), then 3 cloning
#: epochs of 64 minibatches; the run asks whether to stop after each round but the last, then before each minibatch.
WARM = [*SMOKE, "--set", "warmstart.decisions=8192", "--set", "warmstart.epochs=3"]
WARM_POINTS = {  # where the warm start stops: (the question the stop answers, a kill rather than Ctrl-C)
    "Ctrl-C while the teacher's matches are collected": (2, False),
    "Ctrl-C in the middle of the second cloning epoch": (3 + 64 + 11, False),
    "killed in the middle of the second cloning epoch": (3 + 64 + 11, True),
}


@pytest.fixture(scope="module")
def unbroken_warm(tmp_path_factory) -> dict:
    """The smoke run with WARM's warm start, trained without a stop."""
    return train_unbroken(tmp_path_factory.mktemp("unbroken-warm") / "run", WARM)[0]


@pytest.mark.parametrize(
    "point", [pytest.param(p, marks=[] if i == 1 else pytest.mark.slow) for i, p in enumerate(WARM_POINTS)]
)
def test_a_warm_start_stopped_at_any_point_resumes_to_the_unbroken_run(
    unbroken_warm, tmp_path, monkeypatch, capsys, point
):
    """Ctrl-C in the warm start stops it at its next step and saves where it stands (the cloning's epoch and
    minibatch); a kill loses what came after the last cloning epoch's save. Resumed, the run writes what the unbroken
    one writes."""
    at, kill = WARM_POINTS[point]
    run_dir = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(train, "Interrupt", lambda: CtrlC(at, kill))
        if kill:
            with pytest.raises(StoppedError):
                train.main([*WARM, "--run-dir", str(run_dir)])
        else:
            assert train.main([*WARM, "--run-dir", str(run_dir)]) == 0
            assert "stopped in the warm start; saved" in capsys.readouterr().err
    saved = read_tensor_header(run_dir / LAST).metadata["train"]
    expected = {"epoch": 1, "batch": 0 if kill else 10} if at > 3 else {"epoch": 0, "batch": 0}
    assert saved["warmstart"] == expected and saved["progress"]["update"] == 0
    monkeypatch.setattr(train, "Interrupt", NoCtrlC)
    closing = run_main(["--resume", str(run_dir), "--no-progress"], capsys)
    assert outcome(run_dir, closing) == unbroken_warm


def stop_once(monkeypatch, name: str, when, after: bool = False) -> None:
    """Make TrainingRun.<name> raise StoppedError the first time when(run, *args) holds (after doing its work, if
    `after`)."""
    original, fired = getattr(train.TrainingRun, name), []

    def stopping(run, *args):
        if fired or not when(run, *args):
            return original(run, *args)
        fired.append(True)
        if after:
            original(run, *args)
        raise StoppedError(name)

    monkeypatch.setattr(train.TrainingRun, name, stopping)


POINTS = {  # where a run stops: (TrainingRun method, when, after the method's work)
    "during the evaluation of update 2": ("evaluate", lambda run: run.progress.update == 2, False),
    "after best.safetensors, before the save after the evaluation": (
        "save_policy",
        lambda run, path: Path(path).name == BEST and run.progress.update == 2,
        True,
    ),
    "during the final evaluation": ("evaluate", lambda run: run.progress.update == 4, False),
    "after the final save, before policy.safetensors": (
        "save_policy",
        lambda run, path: Path(path).name == POLICY,
        False,
    ),
    "during update 3": ("update", lambda run, number: number == 3, False),
}


@pytest.mark.parametrize(
    "point", [pytest.param(p, marks=[] if i == 0 else pytest.mark.slow) for i, p in enumerate(POINTS)]
)
def test_a_run_stopped_at_any_point_resumes_to_the_unbroken_run(unbroken, tmp_path, monkeypatch, capsys, point):
    """Stopped at `point`, then resumed: everything the run writes equals the unbroken run's, whose history holds
    each evaluation once."""
    monkeypatch.setattr(train, "Interrupt", NoCtrlC)
    run_dir = tmp_path / "run"
    name, when, after = POINTS[point]
    with monkeypatch.context() as patch:
        stop_once(patch, name, when, after)
        with pytest.raises(StoppedError):
            train.main([*SMOKE, "--run-dir", str(run_dir)])
    closing = run_main(["--resume", str(run_dir), "--no-progress"], capsys)
    assert outcome(run_dir, closing) == unbroken
    assert [entry["update"] for entry in unbroken["history"]] == [2, 4]


@pytest.mark.slow  # a dozen train.py processes killed at random moments (about a minute)
def test_sigkill_at_random_moments_and_during_evaluations_resumes_to_the_unbroken_run(tmp_path):
    """SIGKILL at random moments of a 16-update run (between a tenth and a third of its unbroken time after each
    start), and just after each save that marks an evaluation due, until the run finishes: its directory then holds
    what the unbroken run's does, and each kill's leftovers are gone."""
    unbroken, seconds = train_unbroken(tmp_path / "unbroken", LONG)
    rng = np.random.default_rng(0)
    run_dir, kills, during_evaluation = tmp_path / "run", 0, 0
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    while True:
        fresh = not (run_dir / LAST).exists()
        argv = (
            [*LONG, "--run-dir", str(run_dir), "--overwrite"] if fresh else ["--resume", str(run_dir), "--no-progress"]
        )
        process = subprocess.Popen(
            [sys.executable, "train.py", *argv],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if kills < 12:
            targeted = kills % 2 == 1
            deadline = time.monotonic() + (30 if targeted else rng.uniform(0.1, 0.35) * seconds)
            while time.monotonic() < deadline and process.poll() is None:
                if targeted and _evaluation_due(run_dir):
                    break
                time.sleep(0.02)
            if process.poll() is None:
                during_evaluation += _evaluation_due(run_dir)
                process.send_signal(signal.SIGKILL)
                process.communicate()
                kills += 1
                continue
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
        break
    assert kills >= 6 and during_evaluation >= 2, (kills, during_evaluation)
    assert outcome(run_dir, out.replace("python train.py", train.PROG)) == unbroken
    assert not [name for name in os.listdir(run_dir) if name.endswith(".tmp")]


def _evaluation_due(run_dir: Path) -> bool:
    """True if the run's last save marks an evaluation due (the run is between the two saves around it)."""
    try:
        return bool(read_tensor_header(run_dir / LAST).metadata["train"]["progress"]["evaluation_due"])
    except (OSError, ValueError, KeyError):
        return False


@pytest.mark.slow  # one train.py process stopped in its warm start (about 20 s)
def test_a_real_ctrl_c_in_the_warm_start_names_the_step_it_stops_after_and_saves_a_resumable_run(tmp_path):
    """SIGINT to a train.py collecting its teacher's decisions: one line says it saves after this step of the warm
    start (a round of the teacher's matches or a cloning minibatch), the run stops there, says how to resume, and its
    last.safetensors holds the warm start's state (resuming it: the tests above)."""
    from tests.subprocess_signals import default_sigint

    run_dir = tmp_path / "run"
    argv = [*SMOKE, "--run-dir", str(run_dir), "--set", "warmstart.decisions=2000000", "--set", "env.num_envs=64"]
    child = subprocess.Popen(
        [sys.executable, "train.py", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        end = time.monotonic() + 120
        while not (run_dir / LAST).exists():  # saved before the warm start begins
            assert time.monotonic() < end and child.poll() is None, child.stderr.read() if child.poll() else "slow"
            time.sleep(0.05)
        time.sleep(1.0)  # into the teacher's matches
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0 and "Traceback" not in err, err[-2000:]
    saving = f"Ctrl-C: saving {LAST} after this step of the warm start, a round of the teacher's matches or a cloning"
    assert saving in err, err[-2000:]
    assert f"stopped in the warm start; saved {run_dir / LAST}" in err and f"--resume {run_dir}" in err, err[-2000:]
    assert "warmstart" in read_tensor_header(run_dir / LAST).metadata["train"]
