"""The kernel threads (hollywood_gin_env/engine/threads.py): the knob's checks, the split, errors and Ctrl-C, and
that every thread count gives bit-identical envs, heuristics, lookahead inputs and evaluations."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)
from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.lookahead_planes import lookahead_planes
from hollywood_gin_env.engine import threads
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.evaluation.duplicate import Schedule
from hollywood_gin_env.evaluation.evaluate import round_robin, without_timing
from tests.subprocess_signals import default_sigint

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (1, 2, 3)  # 3 splits 10 matches unevenly: 4, 3, 3
MATCHES = 10
GRAINS = [
    ("hollywood_gin_env.engine.batched", "STEP_GRAIN"),
    ("hollywood_gin_env.engine.observation", "ENCODE_GRAIN"),
    ("hollywood_gin_env.envs.batch", "CREDIT_GRAIN"),
    ("hollywood_gin_env.envs.batch", "OPPONENT_GRAIN"),
    ("hollywood_gin_env.agents.random_agent", "RANDOM_GRAIN"),
    ("hollywood_gin_env.agents.greedy", "GREEDY_GRAIN"),
    ("hollywood_gin_env.agents.expert", "EXPERT_GRAIN"),
    ("hollywood_gin_env.agents.simple", "SIMPLE_GRAIN"),
    ("hollywood_gin_env.agents.lookahead_planes", "PLANES_GRAIN"),
]


@pytest.fixture
def one_row_slices(monkeypatch):
    """Every kernel splits down to one-row slices, so ten matches spread over every thread; counts the splits."""
    for module, name in GRAINS:
        monkeypatch.setattr(f"{module}.{name}", 1)
    splits = []
    real = threads.slice_bounds
    monkeypatch.setattr(threads, "slice_bounds", lambda n, parts: splits.append(parts) or real(n, parts))
    return splits


@pytest.mark.parametrize("bad", [0, -1, 1025, 2.0, "2", True])
def test_a_thread_count_outside_1_to_1024_or_not_an_int_is_refused_by_name(bad):
    """The knob takes integers 1..1024; anything else is a ValueError naming the knob, the value and the range."""
    with pytest.raises(ValueError, match=r"num_threads=.* is not allowed: use an integer from 1 to 1024"):
        threads.check_num_threads(bad)


def test_the_envs_the_agents_and_the_evaluator_refuse_a_bad_thread_count_by_name():
    """Each entry point names its own knob: num_threads for the envs and agents, env_threads for the evaluator."""
    with pytest.raises(ValueError, match="num_threads=0 is not allowed"):
        SelfPlayVectorEnv(4, num_threads=0)
    with pytest.raises(ValueError, match="num_threads=-2 is not allowed"):
        gym.make_vec("HollywoodGin-v1", num_envs=4, vectorization_mode="vector_entry_point", num_threads=-2)
    with pytest.raises(ValueError, match="num_threads=2000 is not allowed"):
        load_agent("expert", num_threads=2000)
    with pytest.raises(ValueError, match="env_threads=0 is not allowed"):
        Schedule(env_threads=0)


def test_the_default_thread_count_is_the_affinity_masks_cpus_but_one():
    """None means the affinity mask's CPUs, as os.sched_getaffinity counts them, less one, at least one (unless a
    program set another count)."""
    import os

    before = threads.default_threads()  # a rollout worker built in this process sets 1
    threads.set_default_threads(None)
    try:
        assert threads.check_num_threads(None) == max(1, len(os.sched_getaffinity(0)) - 1)
        assert SelfPlayVectorEnv(2).threads.num_threads == max(1, len(os.sched_getaffinity(0)) - 1)
    finally:
        threads.set_default_threads(before)


def test_slices_cover_every_row_once_and_differ_by_at_most_one():
    """10 rows on 3 threads: 4, 3, 3, contiguous."""
    assert threads.slice_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    for n, parts in [(1, 1), (7, 7), (1000, 16), (17, 4)]:
        bounds = threads.slice_bounds(n, parts)
        sizes = [hi - lo for lo, hi in bounds]
        assert bounds[0][0] == 0 and bounds[-1][1] == n and max(sizes) - min(sizes) <= 1
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))


def test_run_returns_each_slices_result_in_order_on_several_threads():
    """Slices run on distinct threads (the caller's first) and come back in slice order; small batches stay whole."""
    runner = threads.KernelThreads(3)
    seen = []

    def work(lo, hi):
        seen.append(threading.current_thread().name)
        time.sleep(0.05)  # keeps every slice busy at once, so each lands on its own thread
        return (lo, hi)

    try:
        assert runner.run(10, work) == [(0, 4), (4, 7), (7, 10)]
        assert len(set(seen)) == 3 and threading.current_thread().name in seen
        assert runner.run(10, work, grain=8) == [(0, 10)]  # fewer rows than two grains: one slice
        assert runner.run(0, work) == []
    finally:
        runner.close()


def test_a_run_inside_a_slice_runs_inline_instead_of_waiting_on_its_own_threads():
    """A kernel that calls a threaded kernel (a play-out calling an agent) must not deadlock the threads."""
    runner = threads.KernelThreads(2)
    try:
        inner = runner.run(4, lambda lo, hi: runner.run(hi - lo, lambda a, b: (a, b)))
        assert inner == [[(0, 2)], [(0, 2)]]
    finally:
        runner.close()


def test_an_exception_in_one_slice_reaches_the_caller_after_every_slice_is_done_and_the_threads_still_work():
    """A failing slice raises in the caller once the other slices have returned; the next run works as before."""
    runner = threads.KernelThreads(3)
    finished = []

    def work(lo, hi):
        if lo == 4:
            raise ZeroDivisionError("slice 4..7 failed")
        time.sleep(0.1)
        finished.append(lo)
        return lo

    try:
        with pytest.raises(ZeroDivisionError, match="slice 4..7"):
            runner.run(10, work)
        assert sorted(finished) == [0, 7]  # nothing was still running when the caller saw the error
        assert runner.run(10, lambda lo, hi: hi - lo) == [4, 3, 3]
    finally:
        runner.close()


def test_close_stops_the_threads_and_a_closed_kernel_threads_refuses_work():
    """No thread outlives close(); the shared ones close with threads.shutdown() and restart on demand."""
    runner = threads.KernelThreads(4)
    runner.run(8, lambda lo, hi: time.sleep(0.01))
    assert threads.kernel_threads_alive()
    runner.close()
    threads.shutdown()
    assert threads.kernel_threads_alive() == []
    with pytest.raises(RuntimeError, match="was closed"):
        runner.run(8, lambda lo, hi: None)
    assert threads.kernel_threads(2).run(4, lambda lo, hi: hi - lo) == [2, 2]
    threads.shutdown()


CTRL_C_CHILD = textwrap.dedent(
    """
    import sys, time
    from hollywood_gin_env.engine import threads

    runner = threads.KernelThreads(int(sys.argv[1]))
    main_slice_s, other_slice_s = float(sys.argv[2]), float(sys.argv[3])

    def work(lo, hi):
        if lo == 0:
            print("ready", flush=True)
        time.sleep(main_slice_s if lo == 0 else other_slice_s)

    try:
        runner.run(8, work)
    except KeyboardInterrupt:
        print("interrupted; threads left:", len(threads.kernel_threads_alive()), flush=True)
        raise
    """
)


@pytest.mark.parametrize(
    "main_slice_s, other_slice_s",
    [(60.0, 0.5), (0.0, 2.0)],
    ids=["while-the-caller-runs-its-slice", "while-the-caller-waits-for-the-others"],
)
def test_ctrl_c_while_slices_run_stops_the_process_without_a_hang(tmp_path, main_slice_s, other_slice_s):
    """SIGINT to a process inside `run` ends it with KeyboardInterrupt within seconds: the slices not started are
    dropped, the running ones finish, and the threads exit with the interpreter."""
    script = tmp_path / "child.py"
    script.write_text(CTRL_C_CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script), "4", str(main_slice_s), str(other_slice_s)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.3)  # the caller is now in its slice, or waiting on the others
    started = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert time.monotonic() - started < 15, "the process hung after Ctrl-C"
    assert child.returncode != 0 and "KeyboardInterrupt" in err, (out, err)
    assert "interrupted; threads left:" in out


CTRL_C_QUEUED_CHILD = textwrap.dedent(
    """
    import threading, time
    from hollywood_gin_env.engine import threads

    runner = threads.KernelThreads(2)  # the caller's thread and one worker
    helper = threading.Thread(target=runner.run, args=(4, lambda lo, hi: time.sleep(2.0 if lo else 0.0)))
    helper.start()  # another caller (an evaluation beside the trainer): its slice holds the one worker for 2 s
    time.sleep(0.3)
    ran = []

    def work(lo, hi):
        if lo == 0:
            print("ready", flush=True)
            time.sleep(60)
        else:
            ran.append(lo)  # queued behind the helper's slice

    try:
        runner.run(4, work)
    except KeyboardInterrupt:
        print("interrupted; queued slices that ran:", ran, flush=True)
        raise
    """
)


def test_ctrl_c_while_a_slice_is_queued_drops_it_and_stops_the_process(tmp_path):
    """A slice still queued behind other work when Ctrl-C comes never runs, and the process ends once the slice
    that was running returns (no hang)."""
    script = tmp_path / "child.py"
    script.write_text(CTRL_C_QUEUED_CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    started = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert time.monotonic() - started < 15, "the process hung after Ctrl-C"
    assert child.returncode != 0 and "KeyboardInterrupt" in err, (out, err)
    assert "interrupted; queued slices that ran: []" in out, out


def _selfplay_trace(num_threads: int, steps: int = 120) -> list[tuple[np.ndarray, ...]]:
    """Observations, masks, rewards, terminations and the expert's actions of a seeded self-play run."""
    env = SelfPlayVectorEnv(MATCHES, reward="chance", num_threads=num_threads)
    expert = load_agent("expert", num_threads=num_threads)
    obs, _ = env.reset(seed=11)
    trace = []
    for _ in range(steps):
        actions = expert.act(obs["observation"], obs["action_mask"])
        obs, rewards, ended, _, infos = env.step(actions)
        trace.append((actions, obs["observation"], obs["action_mask"], rewards, ended, infos["decision_step"]))
    return trace


def test_selfplay_env_steps_are_bit_identical_for_1_2_and_3_threads(one_row_slices):
    """Each match keeps its random streams, so the split changes nothing: 120 steps of expert self-play agree."""
    traces = {k: _selfplay_trace(k) for k in COUNTS}
    assert max(one_row_slices) == 3  # the kernels did run on three slices
    for k in COUNTS[1:]:
        for step, (one, many) in enumerate(zip(traces[1], traces[k], strict=True)):
            for a, b in zip(one, many, strict=True):
                assert np.array_equal(a, b), f"{k} threads differ from 1 at step {step}"


@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_vector_env_steps_are_bit_identical_for_1_2_and_3_threads(one_row_slices, opponent):
    """The VectorEnv (gym.make_vec, num_threads=N) with the built-in random or a named opponent, and a seeded
    RandomAgent as the learner: observations, rewards, ends and actions agree over 150 steps."""
    traces = {}
    for k in COUNTS:
        env = gym.make_vec(
            "HollywoodGin-v1",
            num_envs=MATCHES,
            vectorization_mode="vector_entry_point",
            opponent=opponent,
            num_threads=k,
        )
        learner = load_agent("random", seed=5, num_threads=k)
        obs, _ = env.reset(seed=2)
        trace = []
        for _ in range(150):
            actions = learner.act(obs["observation"], obs["action_mask"])
            obs, rewards, ended, _, _ = env.step(actions)
            trace.append((actions, obs["observation"], obs["action_mask"], rewards, ended))
        traces[k] = trace
    assert max(one_row_slices) == 3
    for k in COUNTS[1:]:
        for step, (one, many) in enumerate(zip(traces[1], traces[k], strict=True)):
            assert all(np.array_equal(a, b) for a, b in zip(one, many, strict=True)), f"{k} threads, step {step}"


def test_heuristic_actions_and_lookahead_inputs_are_identical_for_every_thread_count(one_row_slices):
    """random and simple (seeded), greedy and expert choose the same actions, and the lookahead planes are the same
    numbers, on 1, 2 and 3 threads, over 200 positions of every phase."""
    obs, masks = [], []
    for _, observation, mask, *_ in _selfplay_trace(1, steps=20):
        obs.append(observation)
        masks.append(mask)
    obs, masks = np.concatenate(obs), np.concatenate(masks)
    expected = {
        name: load_agent(name, seed=3, num_threads=1).act(obs, masks)
        for name in ("random", "greedy", "expert", "simple")
    }
    planes = lookahead_planes(obs, threads.kernel_threads(1))
    for k in COUNTS[1:]:
        for name, actions in expected.items():
            assert np.array_equal(load_agent(name, seed=3, num_threads=k).act(obs, masks), actions), (name, k)
        assert np.array_equal(lookahead_planes(obs, threads.kernel_threads(k)), planes), k
    assert max(one_row_slices) == 3


def test_an_evaluation_report_is_identical_for_every_thread_count(one_row_slices):
    """evaluate.py's round robin (duplicate deals, expert against greedy and random) gives the same report on 1, 2
    and 3 engine threads (`--env-threads`)."""
    agents = ["expert", "greedy", "random"]
    reports = [without_timing(round_robin(agents, 12, seed=4, schedule=Schedule(env_threads=k))) for k in COUNTS]
    assert max(one_row_slices) == 3
    assert reports[0] == reports[1] == reports[2]


def test_set_default_threads_changes_what_none_means_until_reset():
    """A program sets the process's default once (the benchmark per measured count); None restores the rule's
    count (every CPU but one, at least one)."""
    import os

    before = threads.default_threads()
    try:
        threads.set_default_threads(3)
        assert SelfPlayVectorEnv(2).threads.num_threads == 3
        assert load_agent("expert").threads.num_threads == 3
        with pytest.raises(ValueError, match="num_threads=0 is not allowed"):
            threads.set_default_threads(0)
        assert threads.default_threads() == 3  # a refused value changes nothing
        threads.set_default_threads(None)
        assert threads.default_threads() == max(1, len(os.sched_getaffinity(0)) - 1)
    finally:
        threads.set_default_threads(before)


@pytest.mark.parametrize(("cpus", "expected"), [(1, 1), (2, 1), (4, 3), (16, 15)])
def test_the_default_kernel_thread_count_is_every_cpu_but_one(monkeypatch, cpus, expected):
    """Without a count set, the kernels take every CPU the process may use but one (a learner's torch threads use
    it), and never fewer than one."""
    monkeypatch.setattr(threads, "available_cpus", lambda: cpus)
    before = threads.default_threads()
    try:
        threads.set_default_threads(None)
        assert threads.default_threads() == expected
    finally:
        threads.set_default_threads(before)


@pytest.mark.parametrize(("cpus", "torch_threads", "env_threads", "expected"), [
    (2, 2, None, 1), (2, 1, None, 1), (16, 2, None, 14), (1, 4, None, 1), (2, 2, 3, 3),
])  # fmt: skip
def test_the_trainer_gives_its_kernels_the_cpus_torch_does_not_take(
    monkeypatch, cpus, torch_threads, env_threads, expected
):
    """`train.env_threads` absent: the CPUs less `train.torch_threads`, at least one; set: exactly that count."""
    from hollywood_gin_trainer.config import TrainConfig
    from hollywood_gin_trainer.run import env_threads_of

    monkeypatch.setattr(threads, "available_cpus", lambda: cpus)
    assert env_threads_of(TrainConfig(torch_threads=torch_threads, env_threads=env_threads)) == expected


def test_rollout_credit_and_gae_are_identical_for_every_thread_count(monkeypatch, one_row_slices):
    """The trainer's reward credit and per-player GAE (hollywood_gin_trainer/ppo.py) over slices of the matches
    (columns of the buffers) give the same rewards, ends and advantages as one thread, for random decision chains."""
    pytest.importorskip("torch")
    from hollywood_gin_trainer.ppo import Rollout, advantages, credit

    monkeypatch.setattr("hollywood_gin_trainer.ppo.ROLLOUT_GRAIN", 1)
    steps, n = 30, 7
    results = []
    for k in COUNTS:
        rng = np.random.default_rng(0)
        kernels = threads.kernel_threads(k)
        storage = Rollout(steps, n, 4, 1, 1)
        storage.first_step = 100
        storage.valid[:] = rng.random((steps, n)) < 0.8
        storage.players[:] = rng.integers(0, 2, (steps, n))
        storage.values[:] = rng.normal(size=(steps, n))
        storage.bootstrap[:] = rng.normal(size=(n, 2))
        for t in range(steps):
            decision = 100 + t - rng.integers(0, 3, (n, 2))
            credit(storage, decision, rng.normal(size=(n, 2)), rng.random(n) < 0.1, kernels)
        results.append((storage.rewards.copy(), storage.dones.copy(), advantages(storage, 0.99, 0.95, kernels)))
    assert np.count_nonzero(results[0][0]) > steps and results[0][1].any()  # rewards and ends were credited
    assert max(one_row_slices) == 3
    for other in results[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(results[0], other, strict=True))


def test_every_kernel_the_threads_run_releases_the_gil():
    """Slices run at once only if their kernels drop the GIL: each kernel run on slices is compiled `nogil`."""
    pytest.importorskip("torch")
    import numba

    from hollywood_gin_env.agents.expert import expert_kernel
    from hollywood_gin_env.agents.greedy import greedy_kernel
    from hollywood_gin_env.agents.lookahead_planes import lookahead_kernel
    from hollywood_gin_env.agents.simple import simple_kernel
    from hollywood_gin_env.engine.kernels import new_match_kernel, step_kernel
    from hollywood_gin_env.engine.observation import encode_kernel
    from hollywood_gin_env.envs.batch import credit, random_opponent_turns
    from hollywood_gin_trainer.ppo import credit_rows, per_player_gae
    from hollywood_gin_trainer.privileged import expert_playout_kernel, privileged_view_kernel

    if numba.config.DISABLE_JIT:
        pytest.skip("plain Python under NUMBA_DISABLE_JIT=1: nothing is compiled")
    kernels = [step_kernel, new_match_kernel, encode_kernel, credit, random_opponent_turns, greedy_kernel]
    kernels += [expert_kernel, lookahead_kernel, expert_playout_kernel, credit_rows, per_player_gae]
    kernels += [privileged_view_kernel, simple_kernel]
    assert [k.__name__ for k in kernels if not k.targetoptions.get("nogil")] == []


def _fingerprint_module():
    spec = importlib.util.spec_from_file_location("recipe_fingerprint", ROOT / "scripts" / "recipe_fingerprint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def training_slices(monkeypatch, one_row_slices):
    """one_row_slices for the trainer's kernels too (the privileged view, credit and GAE)."""
    pytest.importorskip("torch")
    monkeypatch.setattr("hollywood_gin_trainer.ppo.ROLLOUT_GRAIN", 1)
    monkeypatch.setattr("hollywood_gin_trainer.privileged.VIEW_GRAIN", 1)
    return one_row_slices


def test_a_training_run_trains_bit_identical_weights_on_1_and_2_env_threads(training_slices):
    """train.env_threads = 1 and = 2 (every kernel of the rollout, the privileged view, credit and GAE split down to
    one-row slices) give the same weights, optimizer state, losses and evaluations: the tiny recipe fingerprint."""
    fingerprint = _fingerprint_module()
    one = fingerprint.fingerprint(tiny=True, env_threads=1)
    assert not training_slices  # one thread: no kernel was split
    two = fingerprint.fingerprint(tiny=True, env_threads=2)
    assert max(training_slices) == 2  # two threads: the kernels ran on two slices
    assert two == one


@pytest.mark.parametrize(("env_threads", "expected"), [(None, 1), (3, 3)])
def test_a_rollout_worker_runs_one_kernel_thread_unless_env_threads_is_set(env_threads, expected):
    """A Ray rollout worker's arena, opponents and snapshots take 1 kernel thread (K workers on every core each would
    oversubscribe them) unless train.env_threads is set; then they take that many."""
    torch = pytest.importorskip("torch")
    from hollywood_gin_trainer.config import load_config
    from hollywood_gin_trainer.workers import RolloutWorker

    overrides = ["env.num_envs=4"] + ([] if env_threads is None else [f"train.env_threads={env_threads}"])
    torch_threads = torch.get_num_threads()
    try:
        worker = RolloutWorker(load_config("configs/smoke.toml", overrides).to_dict(), 0, 0, 4)
        assert worker.arena.threads.num_threads == expected
        assert worker.pool.threads.num_threads == expected
    finally:
        threads.set_default_threads(None)  # the worker set the process's defaults, as in its own Ray process
        torch.set_num_threads(torch_threads)
