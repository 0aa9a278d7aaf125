"""Atomic writes: files get the usual permissions, temporary files are recognisable for cleanup, a full disk leaves
the previous file intact with an error that says so, and only a regular file or a new path is written (a symlink,
a device, a FIFO or a directory there is refused and left as it was: the rename would replace it). A written file
has mode 0666 less the umask, not `mkstemp`'s 0600, and a disk-full write through torch.save is one line naming the
disk, not a bare RuntimeError.
"""

from __future__ import annotations

import errno
import io
import os
import stat

import pytest

from hollywood_gin_env.support import atomic
from hollywood_gin_env.support.atomic import AtomicWriteError, atomic_write, atomic_write_text, is_temp_name


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
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_the_temporary_file_is_recognisable_and_gone_afterwards(tmp_path):
    seen = []

    def write(f):
        seen.extend(os.listdir(tmp_path))
        f.write(b"data")

    atomic_write(tmp_path / "last.pt", write)
    assert len(seen) == 1 and is_temp_name(seen[0]) and seen[0].startswith(".last.pt."), seen
    assert os.listdir(tmp_path) == ["last.pt"]


@pytest.mark.parametrize(
    "name, temporary",
    [
        ("last.pt", False),
        (".last.pt.atomic-0123abcd.tmp", True),
        (".last.pt.k2j_x9q1.tmp", True),  # the tempfile.mkstemp form
        (".config.toml.atomic-ffffffff.tmp", True),
        (".tmp", False),
        ("notes.tmp", False),
        (".last.pt.tmp", False),
        (".last.pt.ABCDEFGH.tmp", False),
    ],
)
def test_is_temp_name(name, temporary):
    assert is_temp_name(name) is temporary


def disk_full_after(limit: int):
    """A write callback that writes past `limit` bytes into a disk that is full there."""

    def write(f):
        f.write(b"x" * limit)
        raise OSError(errno.ENOSPC, "No space left on device")

    return write


def test_a_full_disk_keeps_the_previous_file_and_says_so(tmp_path):
    path = tmp_path / "last.pt"
    path.write_bytes(b"previous checkpoint")
    with pytest.raises(AtomicWriteError) as caught:
        atomic_write(path, disk_full_after(100))
    message = str(caught.value)
    assert str(path) in message and "No space left on device" in message and "previous" in message
    assert "intact" in message and "\n" not in message
    assert caught.value.errno == errno.ENOSPC and isinstance(caught.value, OSError)
    assert path.read_bytes() == b"previous checkpoint"
    assert os.listdir(tmp_path) == ["last.pt"]


def test_a_full_disk_on_a_first_write_says_nothing_was_written(tmp_path):
    with pytest.raises(AtomicWriteError, match="nothing was written"):
        atomic_write(tmp_path / "new.pt", disk_full_after(10))
    assert os.listdir(tmp_path) == []


class FullDisk(io.FileIO):
    """A temporary file on a disk with `room` bytes free."""

    room = 2000

    def write(self, data):
        if self.tell() + len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


def test_a_full_disk_under_torch_save_is_named_too(tmp_path, monkeypatch):
    """torch.save turns the OSError of its file into a RuntimeError; the error still says what happened."""
    torch = pytest.importorskip("torch")
    from hollywood_gin_env.agents.policy import build_policy, check_policy_config, save_checkpoint

    config = check_policy_config({"hidden_sizes": [64]})
    path = tmp_path / "policy.pt"
    save_checkpoint(path, build_policy(config), config)
    before = path.read_bytes()
    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: FullDisk(fd, "wb"))
    with pytest.raises(AtomicWriteError, match="No space left on device.*previous policy.pt is intact"):
        save_checkpoint(path, build_policy(config), config)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert torch.load(path, weights_only=True)["config"] == config
    assert sorted(os.listdir(tmp_path)) == ["policy.pt"]


def test_an_interrupted_write_removes_its_temporary_file(tmp_path):
    path = tmp_path / "state.json"
    atomic_write_text(path, "old")

    def interrupted(f):
        f.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, interrupted)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["state.json"]


def test_other_errors_pass_through_unchanged(tmp_path):
    def broken(f):
        raise TypeError("not serialisable")

    with pytest.raises(TypeError, match="not serialisable"):
        atomic_write(tmp_path / "x", broken)
    assert os.listdir(tmp_path) == []


# --- the target must be a regular file or a new path ----------------------------------------------------------------


def private_null(folder) -> str:
    """A private character device with /dev/null's numbers (1, 3): what a hostile --save or --json path names."""
    path = os.path.join(folder, "null")
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    return path


def test_a_device_node_is_refused_and_left_a_device(tmp_path):
    """Writing to a device would rename a regular file over it (as root, /dev/null itself): refused, nothing written."""
    node = private_null(tmp_path)
    with pytest.raises(atomic.WriteTargetError) as error:
        atomic_write_text(node, "report")
    message = str(error.value)
    assert node in message and "character device" in message and "regular file or a new path" in message
    assert "\n" not in message
    assert stat.S_ISCHR(os.lstat(node).st_mode) and os.listdir(tmp_path) == ["null"]
    assert isinstance(error.value, OSError) and isinstance(error.value, ValueError)  # what either handler catches


def test_a_symlink_is_refused_and_left_pointing_where_it_did(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text("keep me")
    link = tmp_path / "save.json"
    link.symlink_to(target)
    with pytest.raises(atomic.WriteTargetError, match="symbolic link"):
        atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_text() == "keep me"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "missing.json")
    with pytest.raises(atomic.WriteTargetError, match="symbolic link"):
        atomic_write_text(dangling, "new")
    assert dangling.is_symlink() and not (tmp_path / "missing.json").exists()


def test_a_fifo_or_a_directory_is_refused_too(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(atomic.WriteTargetError, match="FIFO"):
        atomic_write_text(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    (tmp_path / "folder").mkdir()
    with pytest.raises(atomic.WriteTargetError, match="directory"):
        atomic_write_text(tmp_path / "folder", "x")


def test_a_regular_file_and_a_new_path_are_written(tmp_path):
    atomic.check_write_target(tmp_path / "new.json")
    atomic_write_text(tmp_path / "new.json", "one")
    atomic_write_text(tmp_path / "new.json", "two")
    assert (tmp_path / "new.json").read_text() == "two"


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
    from hollywood_gin_env.play import terminal as play

    node = private_null(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    for path in (node, str(link)):
        assert play.main(["--save", path, "--opponent", "random", "--seed", "1", "--no-color"]) == 2
        assert "regular file or a new path" in capsys.readouterr().out
    assert stat.S_ISCHR(os.lstat(node).st_mode) and link.is_symlink() and not (tmp_path / "target.json").exists()
