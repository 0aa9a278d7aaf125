"""The training program's arguments and run directory, in process: whatever a user points it at, it refuses in one
line before touching anything, holds its directory against a second run, and removes only its own leftovers."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
import threading

import pytest

pytest.importorskip("torch")

from hollywood_gin_trainer import main as train  # noqa: E402
from hollywood_gin_trainer.rundir import LAST, LOCK_NAME, RUN_FILES, RunDirError, RunLock, clean_own_temps  # noqa: E402

SMOKE = "configs/smoke.toml"


class NoCtrlC:
    """Stands in for train.Interrupt: leaves the test process's Ctrl-C handler alone."""

    requested = False


@pytest.fixture
def train_main(monkeypatch):
    """train.main with the run itself disabled: a test's arguments must be refused before any run starts."""
    for name in ("create", "resume"):
        monkeypatch.setattr(
            train.TrainingRun, name, classmethod(lambda *a, **k: pytest.fail("a run started despite bad arguments"))
        )
    monkeypatch.setattr(train, "Interrupt", NoCtrlC)
    return lambda *argv: train.main([*argv])


def listing(folder) -> dict[str, int]:
    """Every file under folder (recursively) and its size."""
    return {os.path.join(d, n): os.lstat(os.path.join(d, n)).st_size for d, _, names in os.walk(folder) for n in names}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--stop-after", "-1"), "--stop-after -1: give a number of updates of at least 0 (0: stop after the warm"),
        (("--resume", "RUN", "--stop-after", "0"), "--stop-after 0: give a number of updates of at least 1 with"),
        (("--resume", "RUN", "--seed", "3"), "--resume continues a run with its saved config and directory; drop"),
        (("--resume", "RUN", "--rules", "eaai"), "--resume continues a run with its saved config and directory; drop"),
        (("--rules", "eaai", "bogus=1"), "unknown"),
        (("--run-dir", "FILE"), "is not a directory (a file stands at that path)"),
        (("--config", "DIR"), "is a directory, not a regular file"),
    ],
)
def test_arguments_no_run_can_use_are_refused_before_anything_starts(tmp_path, train_main, argv, message):
    (tmp_path / "notes.txt").write_text("mine")
    values = {"RUN": str(tmp_path / "run"), "FILE": str(tmp_path / "notes.txt"), "DIR": str(tmp_path)}
    argv = tuple(values.get(a, a) for a in argv)
    options = () if "--resume" in argv else ("--config", SMOKE, "--run-dir", str(tmp_path / "run"))
    if "--run-dir" in argv or "--config" in argv:
        options = ("--config", SMOKE) if "--run-dir" in argv else ("--run-dir", str(tmp_path / "run"))
    with pytest.raises(SystemExit, match=re.escape(message)):
        train_main(*options, *argv)
    assert not (tmp_path / "run").exists() and (tmp_path / "notes.txt").read_text() == "mine"


def test_a_resume_target_that_is_no_run_deletes_nothing_and_is_refused(tmp_path, train_main):
    """`--resume downloads/bot.pt` (a torch.save file), `--resume /dev/zero`, `--resume /`, a policy without a
    training state: refused before the directory is locked, and no file anywhere is removed, the leftovers of
    another run's writes included."""
    downloads = tmp_path / "downloads"
    (downloads / "other-run").mkdir(parents=True)
    (downloads / "bot.pt").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    (downloads / "policy.safetensors").write_bytes(b"\0" * 8)
    for leftover in (".last.safetensors.0123abcd.tmp", "other-run/.last.safetensors.deadbeef.tmp"):
        (downloads / leftover).write_bytes(b"x")
    before = listing(downloads)
    cases = {
        str(downloads / "bot.pt"): "a zip archive",
        "/dev/zero": "not a regular file",
        "/": f"no {LAST} in the run directory /",
        str(downloads): f"no {LAST} in the run directory",
        str(downloads / "policy.safetensors"): "safetensors",
    }
    for target, message in cases.items():
        with pytest.raises(SystemExit, match=message):
            train_main("--resume", target)
    assert listing(downloads) == before and not (downloads / LOCK_NAME).exists()
    assert not os.path.exists("/" + LOCK_NAME) and not os.path.exists("/dev/" + LOCK_NAME)


REFUSED_AS_BUILT = {  # a setting the run is refused for, and what the refusal names
    "a warmstart.init file not there": ("warmstart.init='checkpoint:typo.safetensors'", "warmstart.init="),
    "a warmstart.init of another network": ("warmstart.init='bot'", "warmstart.init=bot: its network differs"),
    "an opponent file not there": (
        "selfplay.opponents={self = 1.0, 'checkpoint:typo.safetensors' = 1.0}",
        "selfplay.opponents 'checkpoint:typo.safetensors'",
    ),
    "an evaluation opponent file not there": ("eval.opponents=['checkpoint:typo.safetensors']", "eval.opponents"),
}


@pytest.mark.parametrize("case", list(REFUSED_AS_BUILT))
def test_a_refused_run_removes_no_previous_run_and_makes_no_directory(tmp_path, monkeypatch, case):
    """Whatever refuses a run (an agent, warmstart.init's file or its network) refuses it before its directory is
    touched: with --overwrite the previous run's files and logs stay, and a new --run-dir is never made; the line
    names the config key."""
    monkeypatch.setattr(train, "Interrupt", NoCtrlC)
    setting, named = REFUSED_AS_BUILT[case]
    previous = tmp_path / "previous"
    previous.mkdir()
    for name in (*RUN_FILES, "events.out.tfevents.1.host.1.0", LOCK_NAME):  # a run's directory, as it leaves it
        (previous / name).write_bytes(b"the previous run's " + name.encode())
    before = listing(previous)
    for run_dir, extra in ((previous, ("--overwrite",)), (tmp_path / "new", ())):
        with pytest.raises(SystemExit) as refused:
            train.main(["--config", SMOKE, "--set", setting, "--run-dir", str(run_dir), "--no-progress", *extra])
        assert named in str(refused.value.code) and "\n" not in str(refused.value.code), refused.value.code
    assert listing(previous) == before
    assert not (tmp_path / "new").exists()


def test_only_the_runs_own_leftovers_in_its_own_folder_are_removed(tmp_path):
    """What killed writes of last/best/policy/config left in the run directory goes; anything else stays: another
    program's temporary files, a subfolder's, the lock."""
    (tmp_path / "sub").mkdir()
    own = [f".{name}.0123abcd.tmp" for name in RUN_FILES]
    kept = ["last.safetensors", ".notes.txt.0123abcd.tmp", "sub/.last.safetensors.deadbeef.tmp", LOCK_NAME, "a.tmp"]
    for name in own + kept:
        (tmp_path / name).write_bytes(b"x")
    assert sorted(p.name for p in clean_own_temps(tmp_path)) == sorted(own)
    assert all((tmp_path / name).exists() for name in kept)


HOLDER = textwrap.dedent(
    """
    import sys
    from hollywood_gin_trainer.rundir import RunLock
    with RunLock(sys.argv[1]):
        print("locked", flush=True)
        sys.stdin.read()  # hold the lock until the parent closes our stdin
    """
)


@pytest.mark.parametrize("ending", ["released", "killed"])
def test_two_trainers_never_share_a_run_directory(tmp_path, ending):
    """A second run on a directory another process holds is refused in one line; once the holder ends, released or
    killed with SIGKILL (the system drops an flock), the directory is free again with nothing to clean."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirError, match="is in use by another run") as refused:
            RunLock(tmp_path).acquire()
        assert "\n" not in str(refused.value)
    finally:
        holder.kill() if ending == "killed" else holder.stdin.close()
        holder.wait(timeout=60)
    with RunLock(tmp_path):
        pass


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink"])
def test_a_lock_file_that_is_no_file_never_hangs(tmp_path, kind):
    """A FIFO at .run.lock is opened without waiting for a writer; a directory or a symlink there is refused."""
    path = tmp_path / LOCK_NAME
    {"fifo": lambda: os.mkfifo(path), "directory": path.mkdir, "symlink": lambda: path.symlink_to("/etc/hostname")}[
        kind
    ]()
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(_try(lambda: RunLock(tmp_path).acquire().release())))
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), f"locking a {kind} waited"
    assert outcome[0] is None if kind == "fifo" else isinstance(outcome[0], RunDirError)


def _try(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - handed back to the test
        return error
    return None


def test_a_run_file_that_is_a_symlink_is_refused_before_training(tmp_path, train_main):
    """last.safetensors a symlink would be refused at the first save, hours in: it is refused before the run starts."""
    run = tmp_path / "run"
    run.mkdir()
    (run / LAST).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(SystemExit, match=f"{LAST}: it is a symbolic link"):
        train_main("--config", SMOKE, "--run-dir", str(run), "--overwrite")
    assert (run / LAST).is_symlink()


def test_the_ray_address_is_checked_reachable_first(tmp_path, train_main):
    """Nothing listens at the address: one line at once, instead of Ray's minutes of retries."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    argv = ("--config", SMOKE, "--set", "train.workers=2", "--run-dir", str(tmp_path / "run"), "--ray-address", address)
    with pytest.raises(SystemExit, match=f"cannot reach the Ray cluster at {address}"):
        train_main(*argv)


def test_a_path_printed_in_an_error_has_its_control_characters_escaped(tmp_path, train_main, capsys):
    """A config path that retitles and clears a terminal is shown escaped, never acted on."""
    hostile = str(tmp_path / "\x1b]0;PWNED\x07\x1b[2J.toml")
    with pytest.raises(SystemExit) as error:
        train_main("--config", hostile, "--run-dir", str(tmp_path / "run"))
    assert "\x1b" not in str(error.value) and "\\x1b]0;PWNED\\x07" in str(error.value)


def test_stop_after_zero_stops_after_the_warm_start_unfinished(tmp_path, monkeypatch, capsys):
    """--stop-after 0 saves the warm start's training state to resume from; no policy and no "done"."""
    monkeypatch.setattr(train, "Interrupt", NoCtrlC)
    run = tmp_path / "run"
    assert train.main(["--config", SMOKE, "--run-dir", str(run), "--stop-after", "0", "--no-progress"]) == 0
    assert (run / LAST).is_file() and not (run / "policy.safetensors").exists()
    captured = capsys.readouterr()
    assert "done" not in captured.out and "stopped after the warm start" in captured.err
