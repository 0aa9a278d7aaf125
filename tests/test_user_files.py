"""Files and arguments a hostile user gives: refused in one line naming the path or option, never a hang, a
traceback or memory without limit.

Every reader of a user's file (configs, saved matches, checkpoints) takes regular files only, bounded in size and
read at most to the bound: a device such as /dev/zero (whose size reads 0 and which never ends) or a FIFO (which
would wait for a writer) is refused before reading (the trainer's config and arguments: tests/test_config.py and
tests/test_train_program.py). evaluate.py bounds --chunk-matches.
"""

from __future__ import annotations

import os
import stat
import threading

import pytest

from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.session import load_match
from hollywood_gin_env.support.userfiles import UserFileError, open_user_file, read_user_file


def device(folder, name="zero", minor=5) -> str:
    """A private character device with /dev/zero's numbers (1, 5), or /dev/null's with minor=3."""
    path = os.path.join(folder, name)
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    return path


def finishes(call, seconds=20.0):
    """call()'s exception (None if it returned), failing the test if it is still blocked after `seconds`."""
    outcome: list = []

    def target():
        try:
            call()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    return thread, outcome


# --- the one bounded reader -----------------------------------------------------------------------------------------


def test_a_device_is_refused_before_reading(tmp_path):
    zero = device(tmp_path)
    with pytest.raises(UserFileError, match="character device, not a regular file") as error:
        read_user_file(zero, 1 << 20, "config file")
    assert zero in str(error.value) and "\n" not in str(error.value)


def test_a_regular_file_is_read_whole_and_a_larger_one_refused_unread(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(b"x" * 100)
    assert read_user_file(path, 100, "saved match") == b"x" * 100
    with pytest.raises(UserFileError, match="at most 99 bytes"):
        read_user_file(path, 99, "saved match")
    with pytest.raises(FileNotFoundError, match="saved match not found"):
        read_user_file(tmp_path / "missing.json", 100, "saved match")


def test_the_opened_file_is_checked_too(tmp_path, monkeypatch):
    """A path swapped for a device between the check and the open is caught on the opened file (fstat)."""
    path = tmp_path / "config.toml"
    path.write_text("[train]\n")
    zero = device(tmp_path)
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, flags, *a: real_open(zero if str(p) == str(path) else p, flags, *a))
    with pytest.raises(UserFileError, match="character device"):
        open_user_file(path, 1 << 20, "config file")


@pytest.mark.parametrize("reader", ["saved match", "checkpoint"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, reader):
    from hollywood_gin_env.agents import load_agent

    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    read = {
        "saved match": lambda: load_match(fifo),
        "checkpoint": lambda: load_agent(f"checkpoint:{fifo}"),
    }[reader]
    thread, outcome = finishes(read)
    if thread.is_alive():  # unblock the reader before failing: a writer that closes at once
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"reading a FIFO as a {reader} waited for a writer")
    assert isinstance(outcome[0], ValueError) and "FIFO" in str(outcome[0]) and fifo in str(outcome[0])


# --- play.py --resume / --replay ------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--resume", "--replay"])
def test_play_refuses_a_device_as_a_saved_match(tmp_path, capsys, flag):
    zero = device(tmp_path)
    assert play.main([flag, zero, "--no-color"]) == 2
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert f"saved match {zero} is a character device, not a regular file" in out


# --- evaluate.py arguments -----------------------------------------------------------------------------------------


def test_evaluate_bounds_chunk_matches_by_name(monkeypatch, capsys):
    import hollywood_gin_env.evaluation.evaluate as evaluate

    monkeypatch.setattr(evaluate, "round_robin", lambda *a, **k: pytest.fail("played despite the bad option"))
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "greedy", "random", "--matches", "2", "--chunk-matches", str(10**9)])
    assert f"--chunk-matches={10**9} is over the limit of {evaluate.MAX_CHUNK_MATCHES:,}" in capsys.readouterr().err
