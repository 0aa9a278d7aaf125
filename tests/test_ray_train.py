"""Training on Ray: train.workers = K > 1 collects on Ray actors, exactly repeatably.

The local tests share one Ray with 2 CPUs and the two-node test at the end one simulated cluster
(tests/ray_fixtures.py). Every run is configs/smoke.toml with 2 workers and short matches (game_target = 1), so
that matches end and new opponents, snapshots among them, are drawn within 4 updates.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from hollywood_gin_env.evaluation.evaluate import without_timing
from hollywood_gin_env.support.tensorfile import read_tensor_header
from hollywood_gin_trainer.config import load_config
from hollywood_gin_trainer.ppo import Matches
from hollywood_gin_trainer.run import TrainingRun
from hollywood_gin_trainer.workers import RolloutWorker, WorkerError, shares, worker_streams
from tests import networks_for_tests  # noqa: F401 (this process's own code imports the network a file names)
from tests.ray_fixtures import command_line, in_session
from tests.subprocess_signals import default_sigint

pytestmark = pytest.mark.slow  # Ray sessions and clusters start in 5-20 s each: CI's second command runs them

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "smoke.toml")
SNAPSHOTS_MOST = "selfplay.opponents={self=0.4, snapshots=2.0, expert=0.2, greedy=0.1}"  # snapshots code 1
TWO_WORKERS = ["train.workers=2", "rules.game_target=1", "ppo.rollout_steps=48", SNAPSHOTS_MOST]
UPDATES = 4
NETWORK_MODULE = "tests.networks_for_tests"


def two_worker_run() -> TrainingRun:
    """A fresh K = 2 smoke run (warm start done, matches dealt)."""
    run = TrainingRun.create(load_config(SMOKE, TWO_WORKERS))
    run.start()
    return run


def train(run: TrainingRun, until: int) -> None:
    """train.py's loop (less evaluation and logging) up to update `until`."""
    for update in range(run.progress.update + 1, until + 1):
        run.update(update)
        run.snapshot(update)


def weights(run: TrainingRun) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().cpu().clone() for name, tensor in run.model.state_dict().items()}


def assert_equal_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    assert all(torch.equal(a[name], b[name]) for name in a), "weights differ"


@pytest.fixture(scope="module")
def reference(ray_sessions):
    """An uninterrupted K = 2 run on local Ray: its weights after 2 and after UPDATES updates, and its pool."""
    ray_sessions.local()
    run = two_worker_run()
    train(run, 2)
    after_two = weights(run)
    train(run, UPDATES)
    arrays, _ = run.arena.state()
    opponents = np.concatenate([arrays[f"{k}.kind"] for k in range(2)])
    result = {
        2: after_two,
        UPDATES: weights(run),
        "played": run.pool.played.copy(),
        "pool": len(run.pool.snapshots),
        "opponents": opponents,
    }
    run.close()
    return result


# --- no Ray ---------------------------------------------------------------------------------------------------------


def test_one_worker_trains_in_process_without_importing_ray(tmp_path):
    code = (
        "import sys, train\n"
        f"train.main(['--config', {SMOKE!r}, '--run-dir', {str(tmp_path)!r}, '--no-progress', '--set', "
        "'train.updates=1', '--set', 'warmstart.decisions=64'])\n"
        "loaded = sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "policy.safetensors").is_file() and "done: 1 updates" in done.stdout


def test_the_workers_share_the_matches_and_own_seeded_streams():
    assert shares(16, 2) == [(0, 8), (8, 8)] and shares(7, 3) == [(0, 3), (3, 2), (5, 2)]
    first, again, other = worker_streams(5, 0), worker_streams(5, 0), worker_streams(5, 1)
    assert first[0].integers(1 << 62) == again[0].integers(1 << 62) != other[0].integers(1 << 62)
    assert torch.equal(first[1].get_state(), again[1].get_state())
    assert not torch.equal(first[1].get_state(), other[1].get_state())


@pytest.mark.parametrize("seed", [0, 7])
def test_a_worker_deals_its_share_of_the_one_worker_runs_matches(seed):
    """Worker 1's matches are the run's matches 8..15: the same cards as a one-worker run deals them from the seed
    `reset` is given."""
    config = load_config(SMOKE)
    alone = TrainingRun.create(config)
    alone.arena.reset(seed=seed)
    worker = RolloutWorker(config.to_dict(), 1, 8, 8)
    worker.reset(seed)
    whole, share = alone.arena.env.state_dict()["engine"], worker.arena.env.state_dict()["engine"]
    per_match = [name for name, array in share.items() if array.ndim and array.shape[0] == 8]
    assert {"deck", "rng", "match"} <= set(per_match), per_match
    for name in per_match:
        assert (share[name] == whole[name][8:16]).all(), name


def test_a_worker_refuses_a_saved_state_that_does_not_fit_it():
    config = load_config(SMOKE).to_dict()
    first, second = RolloutWorker(config, 0, 0, 8), RolloutWorker(config, 1, 8, 7)
    first.reset(0)
    second.reset(0)
    arrays, data = second.state()
    with pytest.raises(ValueError, match=r"rollout worker 1's saved random streams do not fit: .*PCG64"):
        second.load_state(arrays, {**data, "numpy": {"bit_generator": "MT19937"}}, second.pool.contents())
    other, _ = first.state()
    with pytest.raises(ValueError, match=r"engine state field"):
        second.load_state(other, data, second.pool.contents())  # 8 matches' arrays for a worker of 7
    after, after_data = second.state()
    assert after_data["numpy"] == data["numpy"] and (after["generator"] == arrays["generator"]).all()


def test_more_workers_than_matches_or_an_address_without_workers_are_refused():
    with pytest.raises(ValueError, match=r"train.workers=17 is more than env.num_envs=16"):
        load_config(SMOKE, ["train.workers=17"])
    with pytest.raises(ValueError, match=r"train.workers=0 is not allowed: input should be greater than or equal to 1"):
        load_config(SMOKE, ["train.workers=0"])
    with pytest.raises(ValueError, match=r"--ray-address 10.0.0.1:6379: train.workers is 1"):
        TrainingRun.create(load_config(SMOKE), ray_address="10.0.0.1:6379")


# --- one Ray on this machine, 2 CPUs --------------------------------------------------------------------------------


def test_the_same_seed_and_two_workers_give_the_same_weights_and_resume_exactly(ray_local, reference, tmp_path):
    """A second run equals the reference bit for bit; saved after 2 updates and resumed, it still does. Its arena,
    the Ray one, is what ppo.py's update plays (`Matches`)."""
    assert reference["pool"] == 2 and (reference["opponents"] == 1).any(), "a snapshot was drawn"
    run = two_worker_run()
    assert isinstance(run.arena, Matches)
    train(run, 2)
    assert_equal_weights(weights(run), reference[2])
    run.save(tmp_path / "last.safetensors")
    run.close()
    resumed = TrainingRun.resume(tmp_path / "last.safetensors")
    assert len(resumed.arena.where()) == 2
    train(resumed, UPDATES)
    assert_equal_weights(weights(resumed), reference[UPDATES])
    assert (resumed.pool.played == reference["played"]).all()
    resumed.close()


def test_a_network_by_reference_trains_on_the_workers_and_a_resume_imports_what_import_names(ray_local, tmp_path):
    """Ray workers are processes of their own: a new run's workers import the module of the network its config
    names (the user's act); a resumed run's config is a file's, so its workers import only the program's --import
    modules: without them the resume stops naming --import, with them it continues as the unbroken run."""
    network = [f"model.network={NETWORK_MODULE}:mlp_net", "model.network_kwargs={hidden_sizes = [32]}"]
    run = TrainingRun.create(load_config(SMOKE, [*TWO_WORKERS, *network]))
    run.start()
    train(run, 1)
    run.save(tmp_path / "last.safetensors")
    train(run, 2)
    unbroken = weights(run)
    run.close()
    refusal = rf"module '{NETWORK_MODULE}', which is not imported.*--import {NETWORK_MODULE}"
    with pytest.raises(WorkerError, match=refusal):
        TrainingRun.resume(tmp_path / "last.safetensors")  # this process has it; the workers do not
    resumed = TrainingRun.resume(tmp_path / "last.safetensors", imports=(NETWORK_MODULE,))
    train(resumed, 2)
    assert_equal_weights(weights(resumed), unbroken)
    resumed.close()


def test_an_advantage_estimator_by_reference_runs_on_the_workers_and_a_resume_imports_what_import_names(
    ray_local, tmp_path
):
    """The estimator `ppo.advantages` names is called where the rollout is: a new run's workers import its module
    (the user's config names it), a resumed run's workers only the program's --import modules: without them the
    resume stops naming --import, with them it continues as the unbroken run."""
    module = "tests.estimators_for_tests"
    run = TrainingRun.create(load_config(SMOKE, [*TWO_WORKERS, f"ppo.advantages={module}:n_step"]))
    run.start()
    train(run, 1)
    run.save(tmp_path / "last.safetensors")
    train(run, 2)
    unbroken = weights(run)
    run.close()
    with pytest.raises(WorkerError, match=rf"module '{module}', which is not imported.*--import {module}"):
        TrainingRun.resume(tmp_path / "last.safetensors")  # this process has it; the workers do not
    resumed = TrainingRun.resume(tmp_path / "last.safetensors", imports=(module,))
    train(resumed, 2)
    assert_equal_weights(weights(resumed), unbroken)
    resumed.close()


def test_evaluation_on_the_workers_equals_evaluation_in_one_process(ray_local):
    """With K = 2 the eval chunks are played on the rollout workers; the figures equal a one-process evaluation of
    the same weights (every chunk's deals and seeds depend only on the eval seed and the chunk)."""
    overrides = [*TWO_WORKERS, "eval.matches=40", "eval.opponents=['expert', 'greedy', 'random']"]
    run = TrainingRun.create(load_config(SMOKE, overrides))
    run.start()
    train(run, 1)
    remote = run.evaluate()
    here = TrainingRun.create(load_config(SMOKE, [*overrides, "train.workers=1"]))
    here.model.load_state_dict(run.model.state_dict())
    local = here.evaluate()
    run.close()
    for name in ("expert", "greedy", "random"):
        assert remote[name]["seconds"] >= 0 and local[name]["seconds"] >= 0
        assert without_timing(remote[name]) == without_timing(local[name]) and remote[name]["matches"] == 40


def test_a_wrong_state_a_late_or_a_killed_worker_stops_the_run_naming_it_and_its_state_loads(ray_local, tmp_path):
    import ray

    run = two_worker_run()
    train(run, 1)
    run.save(tmp_path / "last.safetensors")
    with pytest.raises(ValueError, match=r"arena.workers: the state of 2 rollout workers"):
        run.arena.load_state({}, {"workers": [{}]})
    run.arena.timeout = 1e-3
    with pytest.raises(WorkerError, match=r"rollout worker 0 of 2: no answer to rollout within 0.001 s \(a stuck"):
        run.update(2)
    run.arena.timeout = 60.0
    ray.kill(run.arena.workers[1])
    with pytest.raises(WorkerError, match=r"^rollout worker 1 of 2 died during rollout \(\w+\); the run stops$"):
        run.update(2)
    run.close()
    state = read_tensor_header(tmp_path / "last.safetensors").metadata["train"]
    assert state["config"]["train"]["workers"] == 2 and state["progress"]["update"] == 1
    assert len(state["arena"]["workers"]) == 2


def test_a_damaged_worker_state_is_refused_before_any_worker_starts(ray_local, tmp_path, monkeypatch):
    """A K = 2 state whose second worker's matches are damaged is refused in one line naming the field, checked in
    the learner's process before any worker starts; the undamaged file resumes onto its workers."""
    from hollywood_gin_env.support.tensorfile import read_tensors, write_tensor_file
    from hollywood_gin_trainer.workers import RemoteArena

    run = two_worker_run()
    train(run, 1)
    good = tmp_path / "last.safetensors"
    run.save(good)
    run.close()
    header = read_tensor_header(good)
    tensors = {name: np.array(array) for name, array in read_tensors(good, header.tensors).items()}
    tensors["train/arena.1.engine.pile"].fill(10**6)
    bad = tmp_path / "damaged.safetensors"
    write_tensor_file(bad, tensors, header.metadata)
    with monkeypatch.context() as patch:
        patch.setattr(RemoteArena, "start", lambda self: pytest.fail("a worker started for a refused file"))
        with pytest.raises(ValueError, match=r"the training state is damaged: .*engine state field 'pile'"):
            TrainingRun.resume(bad)
    resumed = TrainingRun.resume(good)
    try:
        assert resumed.progress.update == 1 and len(resumed.arena.workers) == 2
    finally:
        resumed.close()


def started(path: Path) -> bool:
    """True once a run's training state is a started run's (saved after its warm start, its matches dealt)."""
    try:
        return "warmstart" not in read_tensor_header(path).metadata["train"]
    except (OSError, ValueError, KeyError):
        return False


def test_ctrl_c_with_workers_running_saves_the_run_and_leaves_no_process(tmp_path):
    """A terminal's Ctrl-C (SIGINT to the whole process group) mid-run: train.py saves and stops as with one worker."""
    run_dir = tmp_path / "run"
    argv = [
        "--config",
        SMOKE,
        "--run-dir",
        str(run_dir),
        "--no-progress",
        *(f"--set={s}" for s in TWO_WORKERS),
        "--set",
        "train.updates=100000",
        "--set",
        "eval.every=0",
        "--set",
        "warmstart.decisions=64",
    ]
    child = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        end = time.monotonic() + 120
        while not started(run_dir / "last.safetensors"):  # the warm start done, the workers' matches dealt
            assert time.monotonic() < end and child.poll() is None, child.stderr.read() if child.poll() else "slow"
            time.sleep(0.05)
        time.sleep(1.0)  # some updates on the workers
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert child.returncode == 0, err
    assert "Traceback" not in err and "stopped at update" in err and "error" not in err, err
    state = read_tensor_header(run_dir / "last.safetensors").metadata["train"]
    assert state["progress"]["update"] >= 1 and len(state["arena"]["workers"]) == 2
    end = time.monotonic() + 30
    while in_session(child.pid) and time.monotonic() < end:
        time.sleep(0.2)
    assert in_session(child.pid) == [], [command_line(pid) for pid in in_session(child.pid)]


# --- a simulated cluster of two nodes, one CPU each (keep these last) -----------------------------------------------


def test_two_nodes_train_like_one_machine(reference, ray_two_nodes):
    """One worker per node (each node has one CPU); the weights equal the local run's bit for bit."""
    run = two_worker_run()
    nodes = {node for node, _ in run.arena.where()}
    assert len(nodes) == 2
    train(run, 2)
    assert_equal_weights(weights(run), reference[2])
    run.close()
