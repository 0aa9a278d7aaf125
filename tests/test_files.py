"""Files the library writes and reads: atomic writes (the usual permissions, recognisable temporary files, the previous
file intact after a full disk or a SIGKILL mid-save, only a regular file or a new path as a target), user files (a
regular file within a size limit; a device, a FIFO or a directory refused at once, by kind) and tensor files (what is
written reads back; what a caller does not expect is refused by name)."""

from __future__ import annotations

import errno
import io
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.session import load_match
from hollywood_gin_env.support import atomic
from hollywood_gin_env.support.atomic import AtomicWriteError, WriteTargetError, atomic_write_text, is_temp_name
from hollywood_gin_env.support.tensorfile import (
    MAX_JSON_DEPTH,
    TensorFileError,
    read_tensor_header,
    read_tensors,
    write_tensor_file,
)
from hollywood_gin_env.support.userfiles import UserFileError, read_user_file


def private_null(folder) -> str:
    """A private character device with /dev/null's numbers (1, 3): what a hostile --save or --json path names."""
    path = os.path.join(folder, "null")
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    return path


# --- atomic writes --------------------------------------------------------------------------------------------------


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_files_get_the_mode_the_umask_gives(tmp_path, umask, mask, mode):
    umask(mask)
    path = tmp_path / "config.toml"
    atomic_write_text(path, "a = 1\n")
    assert stat.S_IMODE(os.stat(path).st_mode) == mode
    atomic_write_text(path, "a = 2\n")  # replacing keeps to the umask too
    assert stat.S_IMODE(os.stat(path).st_mode) == mode and path.read_text() == "a = 2\n"


@pytest.mark.parametrize(
    "name, temporary",
    [
        ("last.safetensors", False),
        (".last.safetensors.0123abcd.tmp", True),
        (".last.pt.k2j_x9q1.tmp", True),  # the tempfile.mkstemp form
        (".tmp", False),
        ("notes.tmp", False),
        (".last.pt.tmp", False),
        (".last.pt.ABCDEFGH.tmp", False),
    ],
)
def test_is_temp_name(name, temporary):
    assert is_temp_name(name) is temporary


class FullDisk(io.FileIO):
    """A temporary file on a disk with `room` bytes free."""

    room = 2000

    def write(self, data):
        if self.tell() + len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


def test_a_full_disk_keeps_the_previous_file_and_says_so(tmp_path, monkeypatch):
    path = tmp_path / "policy.safetensors"
    write_tensor_file(path, {"w": np.zeros(10, np.float32)}, {"run": 1})
    before = path.read_bytes()
    monkeypatch.setattr(atomic, "open", lambda name, mode: FullDisk(name, "xb"), raising=False)
    with pytest.raises(AtomicWriteError) as caught:
        write_tensor_file(path, {"w": np.zeros(1000, np.float32)}, {"run": 2})
    with pytest.raises(AtomicWriteError, match="nothing was written"):
        atomic.atomic_write(tmp_path / "new.json", b"x" * 5000)
    monkeypatch.undo()
    message = str(caught.value)
    assert str(path) in message and "No space left on device" in message and "\n" not in message
    assert "the previous policy.safetensors is intact" in message
    assert caught.value.errno == errno.ENOSPC and isinstance(caught.value, OSError)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["policy.safetensors"]


def test_an_interrupted_write_removes_its_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    atomic_write_text(path, "old")

    def interrupted(descriptor):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "new")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["state.json"]


SAVER = textwrap.dedent(
    """
    import sys, numpy as np
    from hollywood_gin_env.support.tensorfile import write_tensor_file
    print("ready", flush=True)
    k = 0
    while True:
        k += 1
        write_tensor_file(sys.argv[1], {"w": np.full(4 << 20, k, np.float32)}, {"k": k})
    """
)


def test_a_kill_during_a_save_leaves_the_previous_file_intact(tmp_path):
    """SIGKILL a process that saves a 16 MB tensor file over and over, at several moments: the file always reads
    whole (every value the one its metadata names); only recognisable temporary files are left."""
    path = tmp_path / "last.safetensors"
    for delay in (0.3, 0.55, 0.8, 1.05):
        saver = subprocess.Popen([sys.executable, "-c", SAVER, str(path)], stdout=subprocess.PIPE, text=True)
        assert saver.stdout.readline() == "ready\n"
        time.sleep(delay)
        saver.send_signal(signal.SIGKILL)
        saver.wait(30)
        saver.stdout.close()
        if path.exists():
            k = read_tensor_header(path).metadata["k"]
            assert (read_tensors(path, {"w": ("float32", (4 << 20,))})["w"] == k).all()
    assert path.exists(), "no save finished in 1 s"
    assert all(is_temp_name(name) for name in os.listdir(tmp_path) if name != path.name)


def test_a_match_that_takes_its_save_file_removes_what_killed_saves_of_it_left(tmp_path):
    """A save killed between writing its temporary and the rename leaves `.match.json.XXXXXXXX.tmp`: the next session
    saving to match.json (play --resume, play --save, the web's matches) removes it, and leaves every other file,
    another file's temporaries included."""
    from hollywood_gin_env.engine.game import Game
    from hollywood_gin_env.play.session import Session, load_match, save_match

    path = tmp_path / "match.json"
    save_match(str(path), Game(seed=3), 0, "random")
    leftovers = [tmp_path / ".match.json.0a1b2c3d.tmp", tmp_path / ".match.json.z8_k2m1x.tmp"]
    others = [tmp_path / ".other.json.0a1b2c3d.tmp", tmp_path / "match.json.bak", tmp_path / ".match.json.tmp"]
    for file in leftovers + others:
        file.write_text("{")
    game, human, opponent = load_match(str(path))
    Session(game, human, opponent, str(path))
    assert sorted(os.listdir(tmp_path)) == sorted(p.name for p in [path, *others])


@pytest.mark.parametrize("kind", ["device", "symlink", "dangling symlink", "fifo", "directory"])
def test_a_target_that_is_not_a_regular_file_is_refused_and_left_as_it_was(tmp_path, kind):
    """The rename would replace whatever the path names (as root, /dev/null itself): refused, nothing written."""
    target = tmp_path / "elsewhere.json"
    path = tmp_path / "save.json"
    if kind == "device":
        path = tmp_path / private_null(tmp_path)
    elif kind == "symlink":
        target.write_text("keep me")
        path.symlink_to(target)
    elif kind == "dangling symlink":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    before = os.lstat(path)
    with pytest.raises(WriteTargetError) as error:
        atomic_write_text(path, "new")
    message = str(error.value)
    assert str(path) in message and "regular file or a new path" in message and "\n" not in message
    assert isinstance(error.value, OSError) and isinstance(error.value, ValueError)  # what either handler catches
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert sorted(os.listdir(tmp_path)) == sorted({path.name} | ({target.name} if target.exists() else set()))
    assert kind != "symlink" or target.read_text() == "keep me"


def test_evaluate_json_refuses_a_device_before_any_match(tmp_path, monkeypatch, capsys):
    """evaluate.py --json names the path and what is allowed before playing, and leaves the device as it was."""
    import hollywood_gin_env.evaluation.evaluate as evaluate

    node = private_null(tmp_path)
    played = []
    monkeypatch.setattr(evaluate, "round_robin", lambda *a, **k: played.append(1))
    with pytest.raises(SystemExit) as info:
        evaluate.main(["--agents", "greedy", "random", "--matches", "2", "--no-progress", "--json", node])
    assert info.value.code == 2 and played == []
    assert node in capsys.readouterr().err and stat.S_ISCHR(os.lstat(node).st_mode)


def test_play_save_refuses_a_device_and_a_symlink(tmp_path, capsys):
    """play.py --save X saves at once: X a device or a symlink stops it (status 2) with X left as it was."""
    node = private_null(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    for path in (node, str(link)):
        assert play.main(["--save", path, "--opponent", "random", "--seed", "1", "--no-color"]) == 2
        assert "regular file or a new path" in capsys.readouterr().out
    assert stat.S_ISCHR(os.lstat(node).st_mode) and link.is_symlink() and not (tmp_path / "target.json").exists()


def test_play_refuses_a_save_target_before_the_match_starts(tmp_path, capsys, monkeypatch):
    """play --save /dev/null (or into a path whose folder is a file) is refused in one line before the opponent is
    loaded or a deal is made, not once per move."""
    from hollywood_gin_env.play import session as play_session

    def no_match(*args, **kwargs):
        raise AssertionError("the match started")

    for module in (play, play_session):  # the program loads the opponent, or the session does
        monkeypatch.setattr(module, "load_agent", no_match)
    for path, why in [("/dev/null", "it is a character device"), (f"{__file__}/x.json", "Not a directory")]:
        assert play.main(["--save", path, "--opponent", "bot", "--seed", "1", "--no-color"]) == 2
        out = capsys.readouterr().out
        assert len(out.strip().splitlines()) == 1 and "play: error:" in out and why in out, out


# --- user files -----------------------------------------------------------------------------------------------------


def test_a_regular_file_is_read_whole_and_a_larger_one_refused_unread(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(b"x" * 100)
    assert read_user_file(path, 100, "saved match") == b"x" * 100
    with pytest.raises(UserFileError, match="is 100 bytes; a saved match is at most 99 bytes"):
        read_user_file(path, 99, "saved match")
    with pytest.raises(FileNotFoundError, match="saved match not found"):
        read_user_file(tmp_path / "missing.json", 100, "saved match")


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
@pytest.mark.parametrize("reader", ["saved match", "tensor file", "checkpoint", "play --resume"])
def test_a_user_file_that_is_not_a_regular_file_is_refused_at_once_by_kind(tmp_path, capsys, kind, reader):
    """/dev/zero never ends and its size reads 0; a FIFO waits for a writer: each is refused without waiting."""
    path = {"device": "/dev/zero", "directory": str(tmp_path)}.get(kind, str(tmp_path / "pipe"))
    if reader == "checkpoint":
        pytest.importorskip("torch")
    if kind == "fifo":
        os.mkfifo(path)
    read = {
        "saved match": lambda: load_match(path),
        "tensor file": lambda: read_tensors(path, {}),
        "checkpoint": lambda: load_agent(f"checkpoint:{path}"),
        "play --resume": lambda: play.main(["--resume", path, "--no-color"]),
    }[reader]
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_outcome(read)), daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():  # unblock the reader before failing: a writer that closes at once
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"reading a {kind} as a {reader} waited")
    described = {"device": "a character device", "fifo": "a FIFO (named pipe)", "directory": "a directory"}[kind]
    message = " ".join(capsys.readouterr().out.split()) if reader == "play --resume" else str(outcome[0])
    assert f"{path} is {described}, not a regular file" in message, message


def _refusal_of_proc_self_mem(reader: str) -> str:
    """The message a reader gives for /proc/self/mem."""
    if reader == "train --config":
        pytest.importorskip("pydantic")
        from hollywood_gin_trainer.main import main as train_main

        with pytest.raises(SystemExit) as stopped:  # its message is the one line the program prints
            train_main(["--config", "/proc/self/mem"])
        return str(stopped.value.code)
    with pytest.raises(ValueError) as info:
        if reader == "config file":
            read_user_file("/proc/self/mem", 1 << 20, "config file")
        else:
            read_tensors("/proc/self/mem", {})
    return str(info.value)


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc/self/mem")
@pytest.mark.parametrize("reader", ["config file", "tensor file", "train --config"])
def test_a_regular_file_whose_reads_fail_is_refused_in_one_line(reader):
    """/proc/self/mem is a regular file of size 0 whose reads fail (EIO): refused in one line naming it and saying it
    cannot be read, never an OSError traceback."""
    message = _refusal_of_proc_self_mem(reader)
    assert "cannot read" in message and "/proc/self/mem: Input/output error" in message, message


def _outcome(call):
    try:
        return call()
    except (ValueError, OSError) as error:
        return error


# --- tensor files ---------------------------------------------------------------------------------------------------


def test_tensors_and_metadata_round_trip(tmp_path):
    """Any numpy layout goes in (a transposed view, a 0-d array, an empty one, bools); the header alone names them."""
    tensors = {
        "w": np.arange(12, dtype=np.float32).reshape(3, 4).T,
        "count": np.array(7, dtype=np.int64),
        "none": np.zeros((0, 3), np.float64),
        "mask": np.array([True, False]),
    }
    path = tmp_path / "state.safetensors"
    write_tensor_file(path, tensors, {"config": {"layers": [1, 2]}, "note": None})
    header = read_tensor_header(path)
    assert header.metadata == {"config": {"layers": [1, 2]}, "note": None}
    assert header.tensors == {name: (a.dtype.name, a.shape) for name, a in tensors.items()}
    loaded = read_tensors(path, header.tensors)
    assert all(np.array_equal(loaded[name], a) and loaded[name].dtype == a.dtype for name, a in tensors.items())


def test_read_tensors_refuses_what_the_caller_does_not_expect_by_name(tmp_path):
    path = tmp_path / "state.safetensors"
    write_tensor_file(path, {"a": np.zeros(3, np.float32), "b": np.zeros(2, np.int64)}, {})
    a, b = ("float32", (3,)), ("int64", (2,))
    assert set(read_tensors(path, {"a": a, "b": b, "c": a}, optional=["c"])) == {"a", "b"}
    assert set(read_tensors(path, {"a": a}, unread_prefix="b")) == {"a"}
    for expected, message in (
        ({"a": a}, "tensors unexpected 'b'; expected 'a'"),
        ({"a": a, "b": b, "c": a}, "tensors missing 'c'; expected 'a', 'b', 'c'"),
        ({"a": ("float32", (4,)), "b": b}, "tensor 'a' is float32 (3,); expected float32 (4,)"),
        ({"a": a, "b": ("int32", (2,))}, "tensor 'b' is int64 (2,); expected int32 (2,)"),
    ):
        with pytest.raises(TensorFileError, match=None) as error:
            read_tensors(path, expected)
        assert str(error.value) == f"{path}: {message}"


def test_metadata_the_reader_would_refuse_is_never_written(tmp_path):
    deep: list = []
    for _ in range(MAX_JSON_DEPTH - 1):
        deep = [deep]
    with pytest.raises(TensorFileError, match=f"the metadata nests {MAX_JSON_DEPTH + 1} deep; at most"):
        write_tensor_file(tmp_path / "deep.safetensors", {}, {"x": deep})  # the object, then 32 lists
    assert os.listdir(tmp_path) == []
