"""A run directory is locked while a run uses it, a finished run is not overwritten unless
asked, and the temporary files of interrupted checkpoint writes are cleaned on the next start.

Before, two train.py processes on one --run-dir both ran and mixed their files, `--run-dir FINISHED_RUN` overwrote
last.pt and config.toml at once, and the leftovers of killed writes stayed forever (nine after twelve kills).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from hollywood_gin_trainer.rundir import LOCK_NAME, RunDirError, RunLock, check_fresh, clean_stale_temps

HOLDER = textwrap.dedent(
    """
    import sys
    from hollywood_gin_trainer.rundir import RunLock
    with RunLock(sys.argv[1]):
        print("locked", flush=True)
        sys.stdin.read()  # hold the lock until the parent closes our stdin
    print("released", flush=True)
    """
)


def start_holder(run_dir) -> subprocess.Popen:
    """A child process that takes the lock of run_dir and holds it until its stdin is closed."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    )
    assert child.stdout.readline().strip() == "locked"
    return child


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_lock_holds_pid_and_host_and_is_released_on_exit(tmp_path):
    with RunLock(tmp_path) as lock:
        info = json.loads((tmp_path / LOCK_NAME).read_text())
        assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
        assert lock.path == tmp_path / LOCK_NAME
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_second_process_is_refused_while_the_first_holds_the_lock(tmp_path):
    child = start_holder(tmp_path)
    try:
        with pytest.raises(RunDirError) as caught:
            RunLock(tmp_path).acquire()
        message = str(caught.value)
        assert f"pid {child.pid}" in message and socket.gethostname() in message and str(tmp_path) in message
    finally:
        child.stdin.close()
        assert child.stdout.readline().strip() == "released"
        child.wait(timeout=60)
    with RunLock(tmp_path):  # released by the first: free again
        pass


def test_a_killed_holder_leaves_a_stale_lock_that_the_next_run_takes_over(tmp_path):
    child = start_holder(tmp_path)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert (tmp_path / LOCK_NAME).exists()  # SIGKILL runs no cleanup
    lock = RunLock(tmp_path).acquire()
    try:
        assert lock.took_over == child.pid
        assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    finally:
        lock.release()


def test_a_lock_of_a_dead_pid_on_this_host_is_stale(tmp_path):
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": dead_pid(), "host": socket.gethostname()}))
    with RunLock(tmp_path):
        pass


@pytest.mark.parametrize(
    "content",
    [json.dumps({"pid": 1, "host": "another-machine.example"}), json.dumps({"pid": os.getppid(), "host": None})],
)
def test_a_lock_that_cannot_be_proven_stale_is_respected(tmp_path, content):
    """A lock from another host (its pid cannot be checked here), or of a live process, stays; the error says how
    to clear it by hand."""
    (tmp_path / LOCK_NAME).write_text(content)
    with pytest.raises(RunDirError, match="remove"):
        RunLock(tmp_path).acquire()
    assert (tmp_path / LOCK_NAME).read_text() == content


def test_an_unreadable_lock_is_stale_only_once_it_is_old(tmp_path):
    path = tmp_path / LOCK_NAME
    path.write_text("{half a lock")
    with pytest.raises(RunDirError):
        RunLock(tmp_path).acquire()
    os.utime(path, (1, 1))  # as if written long ago by a process that died before finishing it
    with RunLock(tmp_path):
        pass


def test_release_leaves_a_lock_taken_over_by_another_process_alone(tmp_path):
    lock = RunLock(tmp_path).acquire()
    (tmp_path / LOCK_NAME).unlink()
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname()}))
    lock.release()
    assert (tmp_path / LOCK_NAME).exists()


def test_the_lock_creates_the_run_directory(tmp_path):
    with RunLock(tmp_path / "runs" / "new"):
        assert (tmp_path / "runs" / "new" / LOCK_NAME).exists()


@pytest.mark.parametrize("name", ["last.pt", "policy.pt", "config.toml", "best.pt"])
def test_a_directory_holding_a_run_is_refused_unless_overwrite(tmp_path, name):
    (tmp_path / name).write_text("x")
    with pytest.raises(RunDirError, match=f"{name}.*--resume.*--overwrite"):
        check_fresh(tmp_path, overwrite=False)
    assert check_fresh(tmp_path, overwrite=True) == [name]
    assert (tmp_path / name).exists()  # overwrite lets the run start; it deletes nothing itself


def test_an_empty_or_missing_directory_is_fresh(tmp_path):
    assert check_fresh(tmp_path, overwrite=False) == []
    assert check_fresh(tmp_path / "not-yet", overwrite=False) == []
    (tmp_path / "events.out.tfevents.1").write_text("")  # TensorBoard files alone are no run to protect
    assert check_fresh(tmp_path, overwrite=False) == []


def test_clean_stale_temps_removes_interrupted_writes_only(tmp_path):
    (tmp_path / "pool").mkdir()
    leftovers = [".last.pt.0123abcd.tmp", ".last.pt.k2j_x9q1.tmp", "pool/.update_4.pt.deadbeef.tmp"]
    kept = ["last.pt", "notes.tmp", ".hidden", "pool/update_4.pt", LOCK_NAME]
    for name in leftovers + kept:
        (tmp_path / name).write_bytes(b"x" * 1000)
    removed = clean_stale_temps(tmp_path)
    assert sorted(os.path.relpath(p, tmp_path) for p in removed) == sorted(leftovers)
    for name in kept:
        assert (tmp_path / name).exists(), name
    for name in leftovers:
        assert not (tmp_path / name).exists(), name
    assert clean_stale_temps(tmp_path / "missing") == []
