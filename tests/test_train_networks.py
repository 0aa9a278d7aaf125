"""The trainer trains any network of the protocol given by reference: a plain MLP of a module of the user's own
(tests/networks_for_tests.py) trains configs/smoke.toml, stops and resumes exactly (with `--import` naming its module:
a training state imports nothing it names), and its policy file plays as `checkpoint:` in a fresh process that
imports the module, and is refused in one line, importing nothing, in one that does not; a network whose tensors are
not those its name builds is refused before anything trains; the worked example of docs/TRAINING.md trains."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors.numpy import load_file

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.checkpoint import load_checkpoint  # noqa: E402
from hollywood_gin_env.evaluation.evaluate import play_pair  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402
from hollywood_gin_env.support.tensorfile import read_tensor_header, write_tensor_file  # noqa: E402
from hollywood_gin_trainer.config import load_config  # noqa: E402
from hollywood_gin_trainer.run import TrainingRun  # noqa: E402
from tests import networks_for_tests  # noqa: E402, F401 (as a user's own code imports its network, to load its files)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
MODULE = "tests.networks_for_tests"
MLP = {"name": f"{MODULE}:mlp_net", "kwargs": {"hidden_sizes": [32]}}
#: configs/smoke.toml training the MLP: its config names the module, so the program imports it (the user's act)
MLP_RUN = [
    "--config",
    "configs/smoke.toml",
    "--no-progress",
    "--set",
    f"model.network={MLP['name']}",
    "--set",
    "model.network_kwargs={hidden_sizes = [32]}",
]


def run_program(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """python ARGS from the repository root; with `check`, fails the test with its output if it fails."""
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def mlp_run(tmp_path_factory) -> Path:
    """The run directory of configs/smoke.toml trained, whole, with the plain MLP."""
    run_dir = tmp_path_factory.mktemp("runs") / "whole"
    run_program("train.py", *MLP_RUN, "--run-dir", str(run_dir))
    return run_dir


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path)[0].state_dict()


def test_a_plain_mlp_given_by_reference_trains_and_every_file_names_it(mlp_run):
    """The run trains the MLP of its config, snapshots of it in the pool among its opponents, and its policy, best and
    training-state files name that network (the module's factory and its arguments); config.toml names it too."""
    for name in ("policy.safetensors", "best.safetensors", "last.safetensors"):
        assert read_tensor_header(mlp_run / name).metadata["network"] == MLP
    assert read_tensor_header(mlp_run / "last.safetensors").metadata["train"]["pool"]["updates"] == [3, 4]
    policy, _ = load_checkpoint(mlp_run / "policy.safetensors")
    assert type(policy.network).__name__ == "PlainMLP" and set(policy.network.state_dict()) == {
        "torso.0.weight",
        "torso.0.bias",
        "logits.weight",
        "logits.bias",
    }
    assert f'network = "{MLP["name"]}"' in (mlp_run / "config.toml").read_text()


@pytest.mark.slow  # three train.py processes (10-40 s each): CI's second command runs it
def test_a_plain_mlp_run_stopped_and_resumed_with_import_equals_the_unbroken_run(mlp_run, tmp_path):
    """Stopped after one update, the run resumes only with --import naming the network's module (without it: one
    line naming --import, the training state untouched), and the resumed run's policy is the unbroken run's bit for
    bit."""
    split = tmp_path / "split"
    run_program("train.py", *MLP_RUN, "--run-dir", str(split), "--stop-after", "1")
    before = (split / "last.safetensors").read_bytes()
    refused = run_program("train.py", "--resume", str(split), "--no-progress", check=False)
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert f"module '{MODULE}', which is not imported" in lines[-1] and f"pass --import {MODULE}" in lines[-1]
    assert (split / "last.safetensors").read_bytes() == before
    run_program("train.py", "--resume", str(split), "--import", MODULE, "--no-progress", "--stop-after", "2")
    run_program("train.py", "--resume", str(split), "--import", MODULE, "--no-progress")
    whole, resumed = _weights(mlp_run / "policy.safetensors"), _weights(split / "policy.safetensors")
    assert whole.keys() == resumed.keys() and all(torch.equal(whole[k], resumed[k]) for k in whole)


def test_the_mlp_policy_plays_as_a_checkpoint_in_a_fresh_process_that_imports_its_module(mlp_run, tmp_path):
    """`evaluate --import MODULE --agents checkpoint:policy.safetensors random` plays it; without --import the same
    command is refused with one error line naming --import, and the module is never imported (`-X importtime` lists
    every module the process imports)."""
    spec = f"checkpoint:{mlp_run / 'policy.safetensors'}"
    report = tmp_path / "report.json"
    evaluate = ["-m", "hollywood_gin_env", "evaluate", "--agents", spec, "random", "--matches", "2", "--no-progress"]
    run_program(*evaluate, "--rules", "openspiel", "--import", MODULE, "--json", str(report))
    pair = json.loads(report.read_text())["pairs"][0]
    assert pair["matches"] == 2 and pair["illegal_actions"] == [0, 0] and pair["aborted_matches"] == 0
    refused = run_program("-X", "importtime", *evaluate, check=False)
    errors = [line for line in refused.stderr.splitlines() if "error:" in line]
    assert refused.returncode != 0 and len(errors) == 1 and "Traceback" not in refused.stderr, refused.stderr[-2000:]
    assert f"module '{MODULE}', which is not imported" in errors[0] and f"pass --import {MODULE}" in errors[0]
    imported = [line.rsplit("|", 1)[-1].strip() for line in refused.stderr.splitlines() if line.startswith("import")]
    assert "hollywood_gin_env.agents.networks" in imported and MODULE not in imported


def test_a_network_whose_tensors_are_not_those_its_name_builds_is_refused_before_anything_trains():
    """A network that differs from its own build on the meta device (what a checkpoint naming it holds) would write
    checkpoints no one can load: the run is refused when it is made, in one line naming the tensors."""
    config = load_config("configs/smoke.toml", [f"model.network={MODULE}:unsavable", "model.network_kwargs={}"])
    with pytest.raises(ValueError) as refused:
        TrainingRun.create(config)
    message = str(refused.value)
    assert message.startswith("[model]: the network cannot be saved as named: tensors unexpected 'extra.bias'")
    assert f"the network '{MODULE}:unsavable'" in message and "\n" not in message


def _training_doc_example() -> tuple[str, str]:
    """The module mynet.py and the config mynet.toml of docs/TRAINING.md's "Training your own network"."""
    text = (ROOT / "docs" / "TRAINING.md").read_text(encoding="utf-8")
    section = text.split("### Training your own network", 1)[1].split("\n## ", 1)[0]
    module = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    config = re.search(r"```toml\n(.*?)```", section, flags=re.S).group(1)
    return module, config


def test_the_worked_example_of_the_training_doc_trains_and_its_policy_plays(tmp_path, monkeypatch):
    """docs/TRAINING.md's own network file and config, as written (the recipe at the smoke test's sizes): the run
    imports the module its config names, trains an update, and its policy plays legal matches as `checkpoint:`."""
    module, config = _training_doc_example()
    (tmp_path / "mynet.py").write_text(module)
    (tmp_path / "mynet.toml").write_text(config)
    monkeypatch.syspath_prepend(str(tmp_path))
    sizes = ["train.updates=1", "env.num_envs=8", "ppo.rollout_steps=16", "warmstart.decisions=64", "eval.matches=2"]
    try:
        run = TrainingRun.create(load_config(str(tmp_path / "mynet.toml"), sizes))
        try:
            assert type(run.model.policy).__name__ == "MyMLP" and "mynet" in sys.modules
            run.start()
            run.update(1)
            run.save_policy(tmp_path / "policy.safetensors")
        finally:
            run.close()
        agent = load_agent(f"checkpoint:{tmp_path / 'policy.safetensors'}")
        record = play_pair(agent, load_agent("random", seed=0), 2, seed=3, rules=Rules.preset("openspiel"))
        assert record.illegal == [0, 0] and record.decisions[0] > 0
    finally:
        sys.modules.pop("mynet", None)


def test_a_training_state_whose_network_is_not_its_configs_is_refused(tmp_path):
    """The network a training state's metadata names (what `checkpoint:` would build) must be its config's: a file
    where the two differ is damaged, refused in one line before anything is built."""
    run = TrainingRun.create(load_config("configs/smoke.toml", ["warmstart.decisions=0"]))
    run.start()
    run.save(tmp_path / "last.safetensors")
    run.close()
    metadata = read_tensor_header(tmp_path / "last.safetensors").metadata
    tensors = load_file(str(tmp_path / "last.safetensors"))
    write_tensor_file(tmp_path / "other.safetensors", tensors, metadata | {"network": MLP})
    with pytest.raises(ValueError) as refused:
        TrainingRun.resume(tmp_path / "other.safetensors")
    message = str(refused.value)
    assert message.endswith(
        "the training state is damaged: its network is not its [model]'s: network='tests.networks_for_tests:mlp_net' "
        "(the run's 'cards')"
    )
