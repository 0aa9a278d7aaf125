"""Files and arguments a hostile user gives the trainer: refused in one line naming the path or option, never a hang,
a traceback or memory without limit.

A config is a regular file (not a device such as /dev/zero, whose size reads 0 and which never ends, nor a FIFO,
which would wait for a writer; tests/test_files.py checks the reader itself), bounded in size and in nesting before
it is parsed, and the self-play weights must sum to a finite number. train.py refuses --stop-after below 1, a file
as --run-dir and an unreachable --ray-address before any work; evaluate.py bounds --chunk-matches.
"""

from __future__ import annotations

import os
import socket
import stat
import threading

import pytest

from hollywood_gin_trainer import main as train
from hollywood_gin_trainer.config import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, load_config

SMOKE = "configs/smoke.toml"


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


# --- configs --------------------------------------------------------------------------------------------------------


def test_a_fifo_as_a_config_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    thread, outcome = finishes(lambda: load_config(fifo))
    if thread.is_alive():  # unblock the reader before failing: a writer that closes at once
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO as a config waited for a writer")
    assert isinstance(outcome[0], ValueError) and "FIFO" in str(outcome[0]) and fifo in str(outcome[0])


@pytest.mark.parametrize("kind", ["device", "directory"])
def test_a_config_that_is_not_a_regular_file_is_named(tmp_path, kind):
    path = device(tmp_path, "null", minor=3) if kind == "device" else str(tmp_path)
    with pytest.raises(ValueError, match="not a regular file") as error:
        load_config(path)
    assert path in str(error.value)


def test_a_deeply_nested_config_is_refused_before_parsing(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("[train]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(
        ValueError, match=f"nests arrays or tables 100000 deep; a config nests at most {MAX_CONFIG_DEPTH}"
    ):
        load_config(str(path))


def test_nesting_inside_strings_and_comments_does_not_count(tmp_path):
    path = tmp_path / "strings.toml"
    deep = "[" * (MAX_CONFIG_DEPTH + 5)
    path.write_text(f'# {deep}\n[train]\nseed = 3\n[eval]\nopponents = ["expert", "{deep}"]\n')
    with pytest.raises(ValueError, match="eval.opponents"):  # parsed: the made-up opponent is what is refused
        load_config(str(path))


def test_an_oversized_config_is_refused_unread(tmp_path):
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ValueError, match="a config file is at most 1.0 MiB"):
        load_config(str(path))


def test_self_play_weights_whose_sum_overflows_are_refused():
    """Two weights of 1e308 are each finite, but their sum is not: refused when the config is read, not after
    the warm start."""
    with pytest.raises(ValueError, match="sum to inf; the sum must be finite and above 0"):
        load_config(SMOKE, ["selfplay.self_weight=1e308", "selfplay.snapshot_weight=1e308"])
    load_config(SMOKE, ["selfplay.self_weight=1e300", "selfplay.snapshot_weight=1e300"])


# --- train.py and evaluate.py arguments -----------------------------------------------------------------------------


class NoCtrlC:
    """Stands in for train.Interrupt: leaves the test process's Ctrl-C handler alone (and works off the main
    thread)."""

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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--stop-after", "-1"), "--stop-after -1: give a number of updates of at least 0 (0: stop after the warm"),
        (("--resume", "RUN", "--stop-after", "0"), "--stop-after 0: give a number of updates of at least 1 with"),
    ],
)
def test_train_refuses_stop_after_that_would_stop_before_starting(tmp_path, train_main, argv, message):
    run = tmp_path / "run"
    argv = tuple(str(run) if a == "RUN" else a for a in argv)
    options = () if "--resume" in argv else ("--config", SMOKE, "--run-dir", str(run))
    with pytest.raises(SystemExit, match=message.replace("(", r"\(")):
        train_main(*options, *argv)
    assert not run.exists()


def test_train_stop_after_zero_stops_after_the_warm_start_unfinished(tmp_path, monkeypatch, capsys):
    """--stop-after 0 saves the warm start's last.pt to resume from; no policy.pt and no "done": the run is not
    finished."""
    monkeypatch.setattr(train, "Interrupt", NoCtrlC)
    run = tmp_path / "run"
    assert train.main(["--config", SMOKE, "--run-dir", str(run), "--stop-after", "0", "--no-progress"]) == 0
    assert (run / "last.pt").is_file() and not (run / "policy.pt").exists()
    captured = capsys.readouterr()
    assert "done" not in captured.out and "stopped after the warm start" in captured.err


def test_train_refuses_a_file_as_run_dir(tmp_path, train_main):
    path = tmp_path / "notes.txt"
    path.write_text("mine")
    with pytest.raises(SystemExit, match="is not a directory") as error:
        train_main("--config", SMOKE, "--run-dir", str(path))
    assert str(path) in str(error.value) and path.read_text() == "mine"


def test_train_refuses_a_config_directory(tmp_path, train_main):
    with pytest.raises(SystemExit, match="is a directory, not a regular file"):
        train_main("--config", str(tmp_path), "--run-dir", str(tmp_path / "run"))


def test_train_checks_the_ray_address_is_reachable_first(tmp_path, train_main):
    """Nothing listens at the address: one line at once, instead of Ray's minutes of retries."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    argv = ("--config", SMOKE, "--set", "train.workers=2", "--run-dir", str(tmp_path / "run"), "--ray-address", address)
    thread, outcome = finishes(lambda: train_main(*argv), seconds=30)
    assert not thread.is_alive(), "train.py kept trying to reach the Ray address"
    assert isinstance(outcome[0], SystemExit) and f"cannot reach the Ray cluster at {address}" in str(outcome[0])


def test_evaluate_bounds_chunk_matches_by_name(monkeypatch, capsys):
    import hollywood_gin_env.evaluation.evaluate as evaluate

    monkeypatch.setattr(evaluate, "round_robin", lambda *a, **k: pytest.fail("played despite the bad option"))
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "greedy", "random", "--matches", "2", "--chunk-matches", str(10**9)])
    assert f"--chunk-matches={10**9} is over the limit of {evaluate.MAX_CHUNK_MATCHES:,}" in capsys.readouterr().err


def test_a_fifo_as_a_run_lock_is_refused_without_waiting(tmp_path):
    from hollywood_gin_trainer.rundir import LOCK_NAME, RunDirError, RunLock

    os.mkfifo(tmp_path / LOCK_NAME)
    thread, outcome = finishes(lambda: RunLock(tmp_path).acquire())
    if thread.is_alive():
        os.close(os.open(tmp_path / LOCK_NAME, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO as the run's lock waited for a writer")
    assert isinstance(outcome[0], RunDirError) and "FIFO" in str(outcome[0]) and LOCK_NAME in str(outcome[0])


def test_train_refuses_a_run_dir_whose_run_files_are_symlinks_before_training(tmp_path, train_main):
    """last.pt a symlink would be refused at the first save, hours in: it is refused before the run starts."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").symlink_to(tmp_path / "elsewhere.pt")
    with pytest.raises(SystemExit, match="last.pt: it is a symbolic link"):
        train_main("--config", SMOKE, "--run-dir", str(run), "--overwrite")
    assert (run / "last.pt").is_symlink()
