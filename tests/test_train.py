"""train.py end to end, in subprocesses (CleanRL's smoke test): TensorBoard scalars, policies that play, resume,
Ctrl-C, the time cap, the closing summary."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.checkpoint import CHECKPOINT_VERSION, load_checkpoint  # noqa: E402
from hollywood_gin_env.engine.observation import OBS_SIZE  # noqa: E402
from hollywood_gin_env.evaluation.evaluate import play_pair  # noqa: E402
from hollywood_gin_env.support.tensorfile import read_tensor_header  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ["--config", "configs/smoke.toml", "--no-progress"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def run_train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """python train.py ARGS from the repository root; fails the test with its output if it fails."""
    done = subprocess.run(
        [sys.executable, "train.py", *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def scalars(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the run's TensorBoard event files, read back with TensorBoard's own reader."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("runs") / "smoke"
    run_train(*SMOKE, "--run-dir", str(run_dir))
    return run_dir


def test_smoke_run_logs_tensorboard_scalars(smoke_run):
    logged = scalars(smoke_run)
    for tag in (
        "charts/SPS",
        "charts/learning_rate",
        "losses/policy_loss",
        "losses/value_loss",
        "losses/entropy",
        "losses/approx_kl",
        "losses/clipfrac",
        "losses/explained_variance",
        "time/rollout_s",
        "time/update_s",
        "selfplay/pool_size",
        "hands/dead_rate",
        "hands/gin_rate",
        "hands/turns_per_hand",
        "eval/match_win_rate_vs_expert",
        "eval/match_win_low_vs_expert",
        "eval/match_win_rate_vs_greedy",
        "eval/points_per_hand_vs_expert",
        "warmstart/accuracy",
        "hparams/win_vs_expert",
    ):
        assert tag in logged, f"{tag} missing from {sorted(logged)}"
    assert len(logged["charts/SPS"]) == 4  # one per update of configs/smoke.toml
    steps = [step for step, _ in logged["charts/SPS"]]
    assert steps == sorted(steps) and len(set(steps)) == 4
    lr = [value for _, value in logged["charts/learning_rate"]]
    assert lr[0] > lr[-1] > 0  # annealed
    assert all(0.0 <= value <= 1.0 for _, value in logged["eval/match_win_rate_vs_expert"])


def test_smoke_run_writes_config_and_policies_that_play(smoke_run):
    assert "[ppo]" in (smoke_run / "config.toml").read_text()
    for name in ("last.safetensors", "best.safetensors", "policy.safetensors"):
        agent = load_agent(f"checkpoint:{smoke_run / name}")
        record = play_pair(agent, load_agent("greedy"), 4, seed=1)
        assert record.illegal[0] == 0 and record.decisions[0] > 0
    data = read_tensor_header(smoke_run / "policy.safetensors").metadata
    assert data["version"] == CHECKPOINT_VERSION and data["network"]["name"] == "cards"
    assert data["training"]["config"]["train"]["updates"] == 4 and data["training"]["decisions"] > 0


@pytest.mark.slow  # a train.py process or two (5-35 s): CI's second command runs it
def test_resumed_run_equals_uninterrupted(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    run_train(*SMOKE, "--run-dir", str(whole))
    stopped = run_train(*SMOKE, "--run-dir", str(split), "--stop-after", "1")
    assert "resume with: python train.py --resume" in stopped.stderr
    assert not (split / "policy.safetensors").exists()
    run_train("--resume", str(split), "--no-progress", "--stop-after", "2")
    run_train("--resume", str(split / "last.safetensors"), "--no-progress")
    a = load_checkpoint(whole / "policy.safetensors")[0].state_dict()
    b = load_checkpoint(split / "policy.safetensors")[0].state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # TensorBoard continues without duplicate steps: one SPS point per update, as in the whole run
    assert [s for s, _ in scalars(split)["charts/SPS"]] == [s for s, _ in scalars(whole)["charts/SPS"]]


def _started(path: Path) -> bool:
    """True once a run's training state is a started run's (saved after its warm start, its matches dealt)."""
    try:
        return "warmstart" not in read_tensor_header(path).metadata["train"]
    except (OSError, ValueError, KeyError):
        return False


@pytest.mark.slow  # a train.py process or two (5-35 s): CI's second command runs it
def test_sigint_saves_a_loadable_last_checkpoint(tmp_path):
    run_dir = tmp_path / "interrupted"
    process = subprocess.Popen(
        [sys.executable, "train.py", *SMOKE, "--run-dir", str(run_dir), "--set", "train.updates=100000"],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 240
    while not _started(run_dir / "last.safetensors") and time.time() < deadline and process.poll() is None:
        time.sleep(0.5)
    time.sleep(2.0)  # inside the PPO loop now
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, out + err
    assert "resume with: python train.py --resume" in err
    agent = load_agent(f"checkpoint:{run_dir / 'last.safetensors'}")
    actions = agent.act(np.zeros((1, OBS_SIZE), dtype=np.float32), np.eye(107, dtype=np.int8)[[0]])
    assert actions.tolist() == [0]
    assert read_tensor_header(run_dir / "last.safetensors").metadata["train"]["progress"]["update"] >= 1


@pytest.mark.slow  # a train.py process or two (5-35 s): CI's second command runs it
def test_max_minutes_ends_the_run_with_an_evaluated_policy(tmp_path):
    done = run_train(*SMOKE, "--run-dir", str(tmp_path / "capped"), "--set", "train.max_minutes=0.0001")
    assert "train.max_minutes = 0.0001 reached at update 1/4" in done.stderr
    assert [step for step, _ in scalars(tmp_path / "capped")["eval/match_win_rate_vs_expert"]]  # evaluated at the end
    data = read_tensor_header(tmp_path / "capped" / "policy.safetensors").metadata
    assert data["training"]["updates"] == 1


def test_bad_config_value_fails_with_the_named_error(tmp_path):
    command = [sys.executable, "train.py", *SMOKE, "--set", "ppo.epochs=0", "--run-dir", str(tmp_path / "bad")]
    done = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "ppo.epochs=0 is not allowed: input should be greater than or equal to 1" in done.stderr


def test_resume_from_a_policy_only_file_is_a_clear_error(smoke_run):
    done = subprocess.run(
        [sys.executable, "train.py", "--resume", str(smoke_run / "policy.safetensors")],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "no training state" in done.stderr


def test_plot_script_draws_the_learning_curve(smoke_run, tmp_path):
    out = tmp_path / "curve.png"
    done = subprocess.run(
        [sys.executable, "scripts/plot_run.py", str(smoke_run), "--out", str(out)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    missing = subprocess.run(
        [sys.executable, "scripts/plot_run.py", str(tmp_path / "nowhere")],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "is not a directory" in missing.stderr


@pytest.mark.slow  # a train.py process or two (5-35 s): CI's second command runs it
def test_resume_refuses_flags_it_would_ignore_and_the_summary_goes_to_stdout(smoke_run):
    assert smoke_run.joinpath("policy.safetensors").exists()
    for flags in (["--seed", "3"], ["--set", "train.lr=1e-4"], ["--config", "configs/quick.toml"]):
        done = subprocess.run(
            [sys.executable, "train.py", "--resume", str(smoke_run), *flags],
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0 and "--resume continues a run with its saved config" in done.stderr
        assert flags[0] in done.stderr


@pytest.mark.slow  # a train.py process or two (5-35 s): CI's second command runs it
def test_the_closing_summary_is_on_stdout(tmp_path):
    done = run_train(*SMOKE, "--run-dir", str(tmp_path / "s"))
    assert done.stdout.startswith("done: 4 updates") and "policy: " in done.stdout
    assert "run directory:" in done.stderr and "run directory:" not in done.stdout


@pytest.mark.slow  # a train.py process or two (5-35 s): CI's second command runs it
def test_a_finished_run_directory_is_not_overwritten_without_overwrite(smoke_run, tmp_path):
    before = (smoke_run / "policy.safetensors").read_bytes()
    done = subprocess.run(
        [sys.executable, "train.py", *SMOKE, "--run-dir", str(smoke_run)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "--overwrite" in done.stderr and "Traceback" not in done.stderr
    assert (smoke_run / "policy.safetensors").read_bytes() == before
    copy = tmp_path / "again"
    run_train(*SMOKE, "--run-dir", str(copy))
    redo = run_train(*SMOKE, "--run-dir", str(copy), "--overwrite")
    assert "--overwrite: removed the previous run's" in redo.stderr
    assert len(scalars(copy)["charts/SPS"]) == 4  # the old run's logs went with it: one point per update
