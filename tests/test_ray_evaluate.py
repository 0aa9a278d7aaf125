"""evaluate.py --workers K on Ray gives the results of one worker; faults stop it cleanly.

The local tests share one Ray with 2 CPUs; the two-node tests at the end share one simulated cluster
(tests/ray_fixtures.py). Chunks are small so that several run per pair. The two-node tests are marked slow (CI's
second command runs them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hollywood_gin_env.evaluation.duplicate import ChunkJob
from hollywood_gin_env.evaluation.evaluate import (
    EvaluationError,
    Schedule,
    evaluate_pairs,
    main,
    round_robin,
    summarize_pair,
    without_timing,
)
from hollywood_gin_env.rules.options import Rules
from tests.ray_fixtures import command_line, descendants, in_session
from tests.subprocess_signals import default_sigint

pytestmark = pytest.mark.slow  # Ray sessions and clusters start in 5-20 s each: CI's second command runs them

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "hollywood_gin_env" / "data" / "hollywood-ppo.safetensors"
SHORT = Rules(game_target=50)  # short matches keep the chunks quick
TASK_TITLE = "ray::_play_chunk_task"  # a Ray worker's command line while it plays a chunk


def running_chunk_worker(timeout: float = 120.0) -> int:
    """The pid of a worker of this process's Ray that is playing a chunk now (waits for one)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for pid in descendants(os.getpid()):
            if command_line(pid).startswith(TASK_TITLE):
                return pid
        time.sleep(0.01)
    raise AssertionError(f"no worker ran a chunk within {timeout} s")


# --- one Ray on this machine, 2 CPUs ------------------------------------------------------------------------------


def test_two_workers_give_the_report_of_one(ray_local):
    """Rates, intervals, points and ratings: equal, a random agent's included (it is reseeded per chunk)."""
    specs, schedule = ["expert", "greedy", "random"], {"chunk_matches": 4}
    here = round_robin(specs, 12, seed=3, rules=SHORT, schedule=Schedule(workers=1, **schedule))
    on_ray = round_robin(specs, 12, seed=3, rules=SHORT, schedule=Schedule(workers=2, **schedule))
    assert without_timing(on_ray) == without_timing(here)
    assert [p["matches"] for p in here["pairs"]] == [12, 12, 12] and here["ratings"][0]["agent"] == "expert"


def test_the_command_line_with_workers_prints_the_same_table(ray_local, capsys):
    argv = ["--agents", "greedy", "random", "--matches", "8", "--chunk-matches", "2", "--no-progress", "--seed", "4"]
    assert main(argv) == 0
    one = capsys.readouterr().out
    assert main(argv + ["--workers", "2"]) == 0
    two = capsys.readouterr().out
    # the last word of a line is a time where it differs: a pair's seconds, an agent's decisions/s
    strip_time = lambda table: [line.split()[:-1] for line in table.splitlines()]  # noqa: E731
    assert strip_time(two) == strip_time(one) and "greedy vs random" in one


def test_a_chunk_past_its_timeout_stops_the_evaluation_naming_it(ray_local):
    with pytest.raises(
        EvaluationError,
        match=r"chunk \d of 2 of expert vs greedy \(matches \d+-\d+\) gave no "
        r"result within 0\.001 s",
    ):
        evaluate_pairs([("expert", "greedy")], 400, schedule=Schedule(workers=2, chunk_matches=200, chunk_timeout=1e-3))


def test_a_chunk_that_fails_on_its_worker_stops_with_one_line(ray_local, tmp_path):
    """A checkpoint whose bytes the worker's reader refuses: the error names the chunk and the reader's reason."""
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint")
    spec = f"checkpoint:{bad}"
    job = ChunkJob((spec, "greedy"), ("bad", "greedy"), 4, 0, SHORT, pair=0, chunk=1, chunks=2, start=2, stop=4)
    from hollywood_gin_env.evaluation.ray_tasks import play_on_ray

    with pytest.raises(EvaluationError) as info:
        play_on_ray(iter([job]), Schedule(workers=2), lambda job, record: None)
    message = str(info.value)
    assert message.startswith("chunk 2 of 2 of bad vs greedy (matches 2-3) failed: ValueError: ")
    assert f"{bad} does not start as a safetensors file does" in message and "\n" not in message


def test_an_agent_object_is_refused_on_ray_by_name(ray_local):
    from hollywood_gin_env.agents import GreedyAgent

    with pytest.raises(ValueError, match="agent GreedyAgent.*is an object; Ray workers build agents from spec"):
        evaluate_pairs([(GreedyAgent(), "random")], 4, schedule=Schedule(workers=2))


def test_an_address_where_nothing_listens_is_refused_at_once():
    """Ray's own connect would retry for minutes, printing as it goes."""
    import socket

    from hollywood_gin_env.evaluation.ray_tasks import check_reachable

    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(EvaluationError, match=rf"cannot reach the Ray cluster at 127\.0\.0\.1:{port}: "):
        check_reachable(f"127.0.0.1:{port}")
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("retries", [2, 0])
def test_a_killed_worker_is_retried_or_stops_the_evaluation(ray_local, retries):
    """SIGKILL of the worker playing a chunk: Ray reruns the chunk (same totals), or, without retries, one error."""
    pairs, schedule = [("expert", "greedy")], Schedule(workers=2, chunk_matches=200, max_retries=retries)
    killed = []

    def kill_one():
        pid = running_chunk_worker()
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    if retries:
        on_ray = summarize_pair(evaluate_pairs(pairs, 400, schedule=schedule)[0])
        killer.join(5)
        here = summarize_pair(evaluate_pairs(pairs, 400, schedule=Schedule(chunk_matches=200))[0])
        assert killed and without_timing(on_ray) == without_timing(here)
    else:
        with pytest.raises(EvaluationError, match=r"chunk \d of 2 of expert vs greedy .*its worker died .* after 0"):
            evaluate_pairs(pairs, 400, schedule=schedule)
        killer.join(5)
        assert killed


def test_ctrl_c_stops_the_workers_and_leaves_no_process(tmp_path):
    """A terminal's Ctrl-C (SIGINT to the whole process group) while chunks run: exit 130, one line, no Ray left."""
    child = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--agents",
            "expert",
            "greedy",
            "--matches",
            "20000",
            "--chunk-matches",
            "200",
            "--workers",
            "2",
            "--no-progress",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        end = time.monotonic() + 120
        while not any(command_line(pid).startswith(TASK_TITLE) for pid in descendants(child.pid)):
            assert time.monotonic() < end and child.poll() is None, "no chunk started"
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert child.returncode == 130, err
    assert "Traceback" not in err and "interrupted: 0 of 1 pairs finished" in err
    end = time.monotonic() + 30
    while in_session(child.pid) and time.monotonic() < end:
        time.sleep(0.2)
    assert in_session(child.pid) == [], [command_line(pid) for pid in in_session(child.pid)]


# --- two nodes of one CPU each (ray.cluster_utils.Cluster): keep these last --------------------------------------


@pytest.mark.slow  # the two-node cluster takes 15-20 s to start
def test_two_nodes_give_the_report_of_one_process_with_a_checkpoint_shipped(ray_two_nodes):
    """The checkpoint's bytes travel through the object store to both nodes' workers; the report is unchanged."""
    import ray

    assert len([node for node in ray.nodes() if node["Alive"]]) == 2
    specs = [f"checkpoint:{SHIPPED}", "greedy", "random"]
    here = round_robin(specs, 8, seed=1, rules=SHORT, schedule=Schedule(chunk_matches=2))
    on_ray = round_robin(specs, 8, seed=1, rules=SHORT, schedule=Schedule(workers=2, chunk_matches=2))
    assert without_timing(on_ray) == without_timing(here)


@pytest.mark.slow  # the same two-node cluster
def test_the_command_line_joins_a_cluster_by_address(ray_two_nodes, tmp_path):
    """evaluate.py --ray-address joins a running cluster and writes the report one process writes."""
    argv = [
        "--agents",
        "expert",
        "random",
        "--matches",
        "8",
        "--chunk-matches",
        "2",
        "--no-progress",
        "--rules",
        "game_target=50",
    ]
    assert main(argv + ["--json", str(tmp_path / "here.json")]) == 0
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            *argv,
            "--workers",
            "2",
            "--ray-address",
            ray_two_nodes.address,
            "--json",
            str(tmp_path / "cluster.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    here, cluster = (json.loads((tmp_path / name).read_text()) for name in ("here.json", "cluster.json"))
    assert without_timing(cluster) == without_timing(here)
