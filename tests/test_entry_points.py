"""The entry points: the shipped bot by name (`load_agent("bot")`, package data), the `hollywood-gin` command's
subcommands (also `python -m hollywood_gin_env`), `python -m hollywood_gin_env.evaluation.evaluate`, the trainer's
package and the thin programs at the repository root. The wheel built and installed outside the checkout:
tests/test_wheel.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hollywood_gin_env import cli
from hollywood_gin_env.agents import bot_path, load_agent

ROOT = Path(__file__).resolve().parents[1]
#: the checkout's packages first (not another install of them), and a working folder outside the checkout
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def run_module(tmp_path: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess:
    """`python -m ARGS` (or `python -c CODE`) from tmp_path, a folder without the repository's files."""
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", *args]
    return subprocess.run(command, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)


def test_the_bot_is_package_data_and_loads_by_name_as_its_file_does():
    """load_agent("bot") is the checkpoint hollywood_gin_env/data/hollywood-ppo.safetensors: same weights, same
    moves."""
    pytest.importorskip("torch")
    from hollywood_gin_env.engine.game import Game

    assert bot_path() == ROOT / "hollywood_gin_env" / "data" / "hollywood-ppo.safetensors" and bot_path().is_file()
    by_name, by_file = load_agent("bot", seed=0), load_agent(f"checkpoint:{bot_path()}", seed=0)
    assert by_name.name == "bot" and by_file.name == f"checkpoint:{bot_path()}"
    named, filed = by_name.policy.state_dict(), by_file.policy.state_dict()
    assert named.keys() == filed.keys() and all(named[k].equal(filed[k]) for k in named)
    game = Game(seed=5)
    obs = game.observation(game.current_player)
    observations, masks = obs["observation"][None], obs["action_mask"][None]
    assert np.array_equal(by_name.act(observations, masks), by_file.act(observations, masks))
    assert load_agent(" BOT ").name == "bot"  # specs are trimmed and case-blind, as the heuristics' names are


def test_the_env_takes_the_bot_as_its_opponent():
    """gym.make(..., opponent="bot") plays the shipped bot inside step."""
    pytest.importorskip("torch")
    import gymnasium as gym

    env = gym.make("HollywoodGin-v1", opponent="bot")
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert obs["action_mask"].any()


def test_an_unknown_agent_spec_lists_the_bot():
    """The error for a misspelt spec names "bot" among the specs allowed."""
    with pytest.raises(ValueError, match=r"unknown agent spec 'bott'.*\bbot\b"):
        load_agent("bott")


def test_evaluate_module_prints_its_help(tmp_path):
    """`python -m hollywood_gin_env.evaluation.evaluate --help` prints the usage and exits 0."""
    done = run_module(tmp_path, "hollywood_gin_env.evaluation.evaluate", "--help")
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.startswith("usage: python -m hollywood_gin_env.evaluation.evaluate") and "--agents" in done.stdout
    )


def test_package_main_lists_the_four_commands(tmp_path):
    """`python -m hollywood_gin_env --help` names play, evaluate, train and exploit, one line each, and exits 0."""
    done = run_module(tmp_path, "hollywood_gin_env", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m hollywood_gin_env {play,evaluate,train,exploit}")
    for name in ("play", "evaluate", "train", "exploit"):
        assert any(line.split()[:1] == [name] for line in done.stdout.splitlines()), done.stdout


def test_package_main_runs_a_subcommand(tmp_path):
    """`python -m hollywood_gin_env play --help` is play's own help, under the name it was typed with."""
    done = run_module(tmp_path, "hollywood_gin_env", "play", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m hollywood_gin_env play") and "--opponent" in done.stdout


def test_an_unknown_or_missing_command_is_refused_by_name(capsys):
    """`hollywood-gin plya` exits 2 naming 'plya' and the commands there are; no command at all also exits 2."""
    assert cli.main(["plya", "--help"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'plya'" in err and "play, evaluate, train, exploit" in err
    assert cli.main([]) == 2
    assert "name a command: play, evaluate, train, exploit" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["play", "evaluate"])
def test_each_command_help_is_its_programs(command, capsys):
    """`hollywood-gin play --help` and `... evaluate --help` print that program's usage under the command's name."""
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: hollywood-gin {command} ")


def test_train_help_and_errors_name_the_command(tmp_path, capsys):
    """`hollywood-gin train --help` is the trainer's usage; its errors start with the command as typed."""
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as done:
        cli.main(["train", "--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("usage: hollywood-gin train ")
    with pytest.raises(SystemExit, match=r"^hollywood-gin train: error: --stop-after -1"):
        cli.main(["train", "--stop-after", "-1", "--run-dir", str(tmp_path / "run")])


#: A child that runs `python SCRIPT ARGS` (runpy, as `python` runs it) and prints whether torch was imported.
IMPORTS_TORCH = """
import runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as done:
    print("exit", done.code, "torch" in sys.modules)
"""


@pytest.mark.parametrize(
    "argv",
    [
        [str(ROOT / "train.py"), "--help"],
        [str(ROOT / "exploit.py"), "--help"],
        [str(ROOT / "train.py"), "--stop-after", "soon"],
        [str(ROOT / "hollywood_gin_env" / "__main__.py"), "train", "--help"],
        [str(ROOT / "hollywood_gin_env" / "__main__.py"), "exploit", "--bogus"],
    ],
    ids=["train.py --help", "exploit.py --help", "a bad option", "train --help", "exploit's bad option"],
)
def test_train_and_exploit_answer_help_and_bad_options_without_importing_torch(tmp_path, argv):
    """With torch installed, `--help` and an option argparse refuses answer from the command line alone (a fraction
    of a second; importing torch takes seconds): the program, and torch with it, is imported only to run."""
    pytest.importorskip("torch")
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_TORCH, *argv], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300
    )
    code = "0" if "--help" in argv else "2"
    assert done.stdout.splitlines()[-1] == f"exit {code} False", done.stdout + done.stderr


def test_train_without_torch_names_the_extra_and_torchs_cpu_build_in_one_line(tmp_path):
    """Without torch, `hollywood-gin train` exits 2 with one line naming the [train] extra and where torch's CPU
    build is (PyPI's Linux torch is the CUDA build: several GB a CPU machine does not need), no traceback."""
    code = "import sys; sys.modules['torch'] = None; from hollywood_gin_env.cli import main; sys.exit(main(['train']))"
    done = run_module(tmp_path, code=code)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("hollywood-gin train: error: training needs torch")
    assert 'python -m pip install "hollywood-gin[train]"' in done.stderr and "checkout" not in done.stderr
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in done.stderr  # the CPU build, not CUDA's


def test_train_help_without_torch_shows_the_options_then_what_to_install(tmp_path):
    """Without torch, `hollywood-gin train --help` prints the trainer's usage and options, then one line on what to
    install to run it, and exits 0."""
    code = (
        "import sys; sys.modules['torch'] = None; from hollywood_gin_env.cli import main; "
        "sys.exit(main(['train', '--help']))"
    )
    done = run_module(tmp_path, code=code)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith("usage: hollywood-gin train ") and "--resume" in done.stdout, done.stdout
    assert done.stderr.startswith("hollywood-gin train: to run it: training needs torch") and done.stderr.rstrip(
        "\n"
    ).endswith(
        'not installed: python -m pip install "hollywood-gin[train]" --extra-index-url https://download.pytorch.org/whl/cpu'
    ), done.stderr


def test_the_help_points_at_documentation_that_is_installed(capsys):
    """`hollywood-gin --help` names no file of the repository (README.md, docs/) but modules pydoc can show, each
    once (train and exploit share one), and each of them imports without the trainer's extra."""
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "README" not in out and "docs/" not in out
    modules = re.findall(r"python -m pydoc (\S+)", out)
    expected = {cli.DOC_MODULES.get(name, module) for name, (module, _) in cli.COMMANDS.items()}
    assert sorted(modules) == sorted(expected), out
    code = "import sys; sys.modules['torch'] = None; import importlib; " + "; ".join(
        f"importlib.import_module({m!r})" for m in modules
    )
    assert subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, timeout=300).returncode == 0


def test_the_agents_folder_is_an_alias_of_the_trainer():
    """`agents.config` is the very module `hollywood_gin_trainer.config`; a name the trainer lacks says where it is."""
    pytest.importorskip("torch")
    import agents
    import hollywood_gin_trainer.config

    assert agents.config is hollywood_gin_trainer.config
    with pytest.raises(AttributeError, match="hollywood_gin_trainer"):
        agents.nothing_here  # noqa: B018


@pytest.mark.parametrize(
    ("script", "entry"),
    [
        ("train.py", "hollywood_gin_trainer.options import run_command"),
        ("exploit.py", "hollywood_gin_trainer.options import run_command"),
        ("play.py", "hollywood_gin_env.play.terminal import main"),
        ("evaluate.py", "hollywood_gin_env.evaluation.evaluate import main"),
    ],
)
def test_the_root_programs_are_thin(script, entry):
    """train.py, exploit.py, play.py and evaluate.py at the root only call the installed package's entry (the logic
    ships)."""
    text = (ROOT / script).read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 20, f"{script} holds program logic: it belongs in the package"
    assert f"from {entry}" in text
    assert 'if __name__ == "__main__":' in text


def test_the_package_top_registers_the_env_and_loads_each_public_name_on_first_use():
    """`import hollywood_gin_env` registers HollywoodGin-v1 without loading the engine, the agents, the envs or the
    evaluator; each public name then comes from its layer's module, and an unknown name is an AttributeError."""
    code = (
        "import sys, gymnasium, hollywood_gin_env as h\n"
        "loaded = [m for m in sys.modules if m.startswith('hollywood_gin_env.') and not m.startswith("
        "'hollywood_gin_env.envs')]\n"
        "print('HollywoodGin-v1' in gymnasium.registry, sorted(loaded), 'numba' in sys.modules)\n"
        "print(sorted(name for name in h.PUBLIC if getattr(h, name).__module__ != h.PUBLIC[name]))\n"
        "print(sorted(h.PUBLIC) == sorted(h.__all__) and set(h.PUBLIC) <= set(dir(h)))\n"
        "try:\n    h.nothing_here\nexcept AttributeError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "True [] False"  # registered; no layer imported, numba not loaded
    assert lines[1:3] == ["[]", "True"]
    assert lines[3] == "module 'hollywood_gin_env' has no attribute 'nothing_here'"


def test_the_pettingzoo_module_without_its_extra_says_what_to_install(tmp_path):
    """Importing hollywood_gin_env.pettingzoo without PettingZoo fails with one message naming the extra and the
    command that installs it, not PettingZoo's own import error chained under it."""
    code = "import sys; sys.modules['pettingzoo'] = None; import hollywood_gin_env.envs.pettingzoo"
    done = run_module(tmp_path, code=code)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "During handling" not in done.stderr, done.stderr
    assert last.startswith("ModuleNotFoundError: hollywood_gin_env.envs.pettingzoo needs the [pettingzoo] extra"), last
    assert last.endswith('python -m pip install "hollywood-gin[pettingzoo]"'), last


@pytest.mark.parametrize("command", ["play", "evaluate", "train", "exploit"])
def test_the_help_and_the_shipped_configs_name_checkpoints_as_safetensors_files(command, capsys):
    """Checkpoints are safetensors files: no program's help and no shipped config names a `.pt` file as one."""
    pytest.importorskip("torch")
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    texts = [capsys.readouterr().out, *(path.read_text() for path in sorted((ROOT / "configs").glob("*.toml")))]
    assert not [text for text in texts if re.search(r"\.pt\b", text)]
