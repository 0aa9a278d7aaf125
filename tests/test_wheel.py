"""The wheel is the whole product: built from the checkout, installed into a fresh venv, and run from a folder outside
the checkout, it gives the `hollywood-gin` command (play, evaluate, train, each with its help), `python -m
hollywood_gin_env`, the shipped bot by name, and the trainer (a 2-update run).

The venv reads numpy, numba, torch and the rest from the test environment's site-packages, so the test needs no
network; the wheel goes in with `--no-deps --no-index`. Those folders are listed in a `.pth` file of the venv, so they
come after the venv's own site-packages and their own `.pth` files do not run: the environment's editable install of
this project (its import hook) cannot shadow the wheel, and `--system-site-packages` is not used because it would
give a venv made from another venv the base interpreter's packages instead. The test also checks that every module
it runs is the venv's copy. Slow: a build, a venv and a cold numba cache for the installed copy (a few minutes).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
#: what a build must not copy: git's store, the outputs of runs, builds and caches (.gitignore's entries)
NOT_SOURCE = (
    ".git",
    "runs",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    ".venv",
    "*.nb?",
    ".gl",
    ".whl",
)


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a command; fail the test with its output if it exits non-zero."""
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    shown = " ".join(map(str, command))
    assert done.returncode == 0, f"{shown} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """(the venv's bin folder, a working folder outside the checkout, the environment to run in) with the wheel in."""
    pytest.importorskip("torch", reason="the wheel's train and bot runs take torch from the test environment")
    work = tmp_path_factory.mktemp("wheel")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    source = work / "source"  # a copy: the build's own folders (build/, *.egg-info) stay out of the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE), symlinks=True)
    wheels = work / "wheels"
    offline = ["-q", "--no-deps", "--no-index"]  # nothing from the network: the environment has what it takes
    run([sys.executable, "-m", "pip", "wheel", *offline, "--no-build-isolation", "-w", wheels, "."], source, env)
    (wheel,) = wheels.glob("hollywood_gin-*.whl")
    venv = work / "venv"
    run([sys.executable, "-m", "venv", venv], work, env)
    bin_dir = venv / "bin"
    purelib = run([bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, env)
    outer = [path for path in site.getsitepackages() if os.path.isdir(path)]
    (Path(purelib.stdout.strip()) / "test-environment.pth").write_text("\n".join(outer) + "\n", encoding="utf-8")
    # --ignore-installed: the environment's own install of the project (seen through the .pth) is not this one
    run([bin_dir / "python", "-m", "pip", "install", *offline, "--ignore-installed", wheel], work, env)
    outside = work / "elsewhere"
    outside.mkdir()
    return bin_dir, outside, env


def test_the_wheel_installs_the_library_the_trainer_and_the_bot_and_they_are_imported(venv):
    """The venv imports its own copies of both packages and holds the bot's file, and the wheel has no top-level
    `agents` package (it would shadow other distributions' `agents`)."""
    bin_dir, outside, env = venv
    code = (
        "import sysconfig, hollywood_gin_env, hollywood_gin_trainer; "
        "from hollywood_gin_env.agents import bot_path; "
        "print(hollywood_gin_env.__file__); print(hollywood_gin_trainer.__file__); print(bot_path()); "
        "print(sysconfig.get_paths()['purelib'])"
    )
    library, trainer, bot, purelib = run([bin_dir / "python", "-c", code], outside, env).stdout.splitlines()
    venv_root = bin_dir.parent.resolve()
    for path in (library, trainer, bot, purelib):
        assert Path(path).resolve().is_relative_to(venv_root), f"{path} is not the venv's copy"
    assert Path(bot).is_file() and Path(bot).stat().st_size > 100_000
    assert not (Path(purelib) / "agents").exists() and not (Path(purelib) / "checkpoints").exists()


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["hollywood-gin", "--help"], "usage: hollywood-gin {play,evaluate,train,exploit}"),
        (["hollywood-gin", "play", "--help"], "usage: hollywood-gin play "),
        (["hollywood-gin", "evaluate", "--help"], "usage: hollywood-gin evaluate "),
        (["hollywood-gin", "train", "--help"], "usage: hollywood-gin train "),
        (["hollywood-gin", "exploit", "--help"], "usage: hollywood-gin exploit "),
        (["python", "-m", "hollywood_gin_env", "evaluate", "--help"], "usage: python -m hollywood_gin_env evaluate "),
        (
            ["python", "-m", "hollywood_gin_env.evaluation.evaluate", "--help"],
            "usage: python -m hollywood_gin_env.evaluation.evaluate ",
        ),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_each_command_prints_its_help_from_outside_the_checkout(venv, command, usage):
    """Each command's --help exits 0 and prints its usage, run from a folder that holds none of the repository."""
    bin_dir, outside, env = venv
    done = run([bin_dir / command[0], *command[1:]], outside, env)
    assert done.stdout.startswith(usage), done.stdout


def test_the_installed_command_evaluates_the_bot(venv):
    """`hollywood-gin evaluate --agents bot greedy --matches 10` plays the shipped bot and prints the pair's row."""
    bin_dir, outside, env = venv
    command = [bin_dir / "hollywood-gin", "evaluate", "--agents", "bot", "greedy", "--matches", "10", "--no-progress"]
    out = run(command, outside, env).stdout
    assert out.startswith("10 matches per pair (duplicate deals), seed 0"), out
    assert any(line.startswith("bot vs greedy ") for line in out.splitlines()), out


def test_the_installed_command_trains_two_updates(venv):
    """`hollywood-gin train` on a tiny config writes a finished run (a policy that plays) outside the checkout."""
    bin_dir, outside, env = venv
    tiny = (ROOT / "configs" / "smoke.toml").read_text(encoding="utf-8").replace("updates = 4", "updates = 2")
    assert "updates = 2" in tiny
    (outside / "tiny.toml").write_text(tiny, encoding="utf-8")
    command = [bin_dir / "hollywood-gin", "train", "--config", "tiny.toml", "--run-dir", "run", "--no-progress"]
    out = run(command, outside, env).stdout
    assert out.startswith("done: 2 updates"), out
    files = {"config.toml", "last.safetensors", "best.safetensors", "policy.safetensors"}
    assert files <= {p.name for p in (outside / "run").iterdir()}
    policy = "checkpoint:run/policy.safetensors"
    check = f"from hollywood_gin_env.agents import load_agent; print(load_agent({policy!r}).name)"
    assert run([bin_dir / "python", "-c", check], outside, env).stdout.strip() == policy
