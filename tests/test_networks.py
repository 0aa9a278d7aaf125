"""Networks by reference (hollywood_gin_env/agents/networks.py): the shipped "mlp" and "cards" follow the protocol
and round-trip through a checkpoint; a user's MODULE:FACTORY resolves only in a module already imported (a file
never imports one) and only if it is declared a network; an installed package's entry point is found by name, a
shipped name winning; a factory is first built on the meta device, bounded before anything is allocated; huge
weights are refused by every front end in one line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env import cli  # noqa: E402
from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from hollywood_gin_env.agents.networks import (  # noqa: E402
    MAX_PARAMETERS,
    NETWORK_GROUP,
    build_network,
    find_network,
    network_tensors,
)
from hollywood_gin_env.engine.observation import OBS_SIZE  # noqa: E402
from hollywood_gin_env.evaluation.evaluate import play_pair  # noqa: E402
from hollywood_gin_env.rules.actions import NUM_ACTIONS  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402
from hollywood_gin_env.support.tensorfile import write_tensor_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MLP = {"name": "mlp", "kwargs": {"hidden_sizes": [32, 16], "activation": "tanh"}}
#: a user's network module: a marked factory, a protocol class, an unmarked function; importing it leaves a mark
USER_MODULE = textwrap.dedent(
    """
    import pathlib
    import torch
    from torch import nn
    from hollywood_gin_env.agents.networks import MLPNetwork, network_factory

    pathlib.Path(__file__).with_suffix(".imported").touch()
    DEVICES = []


    @network_factory
    def small(width=8):
        DEVICES.append(torch.empty(0).device.type)
        return MLPNetwork([width], "relu")


    class Wide(MLPNetwork):
        def __init__(self, width):
            super().__init__([width], "relu")


    @network_factory
    def not_a_network():
        return nn.Linear(3, 4)


    @network_factory
    def meta_only(width=4):
        if torch.empty(0).device.type != "meta":
            raise RuntimeError("built for real")
        return MLPNetwork([width], "relu")


    def unmarked(width=8):
        return MLPNetwork([width], "relu")
    """
)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """The name of a fresh user module on sys.path (not imported), removed from sys.modules afterwards."""
    name = f"user_networks_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def _checkpoint(path, spec, network=None):
    torch.manual_seed(0)
    save_checkpoint(path, build_network(spec) if network is None else network, spec)
    return path


def test_a_plain_mlp_round_trips_and_plays_as_a_checkpoint(tmp_path):
    """The shipped "mlp": features are its torso's, its head a linear layer to 107 logits, its inputs the
    observation; saved by name, it loads and plays legal matches as `checkpoint:PATH`."""
    torch.manual_seed(0)
    network = build_network(MLP)
    assert network.input_size == OBS_SIZE and network.feature_size == 16
    obs = np.random.default_rng(0).random((5, OBS_SIZE)).astype(np.float32)
    assert network.inputs(obs) is obs
    rows = torch.from_numpy(obs)
    assert network.features(rows).shape == (5, 16) and network(rows).shape == (5, NUM_ACTIONS)
    path = _checkpoint(tmp_path / "mlp.safetensors", MLP, network)
    policy, metadata = load_checkpoint(path)
    assert metadata["network"] == MLP and torch.equal(policy(rows), network(rows))
    one_hand = Rules.preset("openspiel")  # an untrained network's matches are long; one scored hand shows legal play
    record = play_pair(load_agent(f"checkpoint:{path}"), load_agent("random", seed=0), 2, seed=3, rules=one_hand)
    assert record.illegal == [0, 0] and record.decisions[0] > 0


def test_a_user_network_loads_only_once_its_module_is_imported(tmp_path, user_module):
    """A checkpoint naming MODULE:FACTORY is refused, naming --import, while the module is not imported, and the
    module is not imported by the attempt; imported by the user, the same file loads and plays."""
    spec = {"name": f"{user_module}:small", "kwargs": {"width": 8}}
    path = tmp_path / "mine.safetensors"
    torch.manual_seed(0)
    network = build_network(MLP | {"kwargs": {"hidden_sizes": [8]}})
    write_tensor_file(path, {k: t.numpy() for k, t in network.state_dict().items()}, _header(spec))
    with pytest.raises(ValueError, match=rf"'{user_module}', which is not imported.*pass --import {user_module}"):
        load_agent(f"checkpoint:{path}")
    assert user_module not in sys.modules and not (tmp_path / f"{user_module}.imported").exists()
    module = __import__(user_module)
    policy, _ = load_checkpoint(path)
    obs = torch.rand(3, OBS_SIZE)
    assert torch.equal(policy(obs), network(obs))
    assert module.DEVICES[0] == "meta"  # bounded on the meta device before it is built for real
    assert load_agent(f"checkpoint:{path}").act(obs.numpy(), np.ones((3, NUM_ACTIONS), np.int8)).shape == (3,)


def test_a_checkpoint_naming_a_module_never_imports_it_in_a_fresh_process(tmp_path, user_module):
    """In a process that never imported the module, loading a checkpoint that names it fails in one line and the
    module's code never ran."""
    path = tmp_path / "mine.safetensors"
    write_tensor_file(path, {}, _header({"name": f"{user_module}:small", "kwargs": {}}))
    code = "import sys; from hollywood_gin_env.agents import load_agent; load_agent('checkpoint:' + sys.argv[1])"
    env_path = f"{ROOT}:{tmp_path}"
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1 and f"pass --import {user_module}" in done.stderr
    assert not (tmp_path / f"{user_module}.imported").exists()


def test_a_file_may_name_only_what_was_declared_a_network(tmp_path, user_module):
    """An imported function not marked @network_factory (the standard library's `os:system` with a command among
    the kwargs, a user's unmarked function) is refused before it is called; a protocol class needs no mark; a
    marked factory whose network lacks the protocol is refused by what it lacks."""
    marker = tmp_path / "ran"
    path = tmp_path / "hostile.safetensors"
    write_tensor_file(path, {}, _header({"name": "os:system", "kwargs": {"command": f"touch {marker}"}}))
    with pytest.raises(ValueError, match=r"names the function \w+\.system, which is not a function marked"):
        load_agent(f"checkpoint:{path}")
    assert not marker.exists()
    __import__(user_module)
    with pytest.raises(ValueError, match="which is not a function marked @network_factory"):
        find_network(f"{user_module}:unmarked")
    assert network_tensors({"name": f"{user_module}:Wide", "kwargs": {"width": 4}})["logits.weight"] == (
        "float32",
        (NUM_ACTIONS, 4),
    )
    with pytest.raises(ValueError, match="does not follow the network protocol: it lacks inputs, features, head"):
        network_tensors({"name": f"{user_module}:not_a_network", "kwargs": {}})
    with pytest.raises(ValueError, match=r"network '.*:meta_only': built for real"):
        build_network({"name": f"{user_module}:meta_only", "kwargs": {}})


def test_a_network_beyond_the_bound_is_refused_before_any_allocation(user_module):
    """A spec whose network would hold more than MAX_PARAMETERS values is refused from its meta-device build (a
    40-billion-parameter MLP costs no memory to refuse)."""
    __import__(user_module)
    width = 70_000_000
    values = (OBS_SIZE + 1) * width + (width + 1) * NUM_ACTIONS  # two linear layers' weights and biases
    with pytest.raises(ValueError, match=rf"holds {values:,} values; a network holds at most {MAX_PARAMETERS:,}"):
        network_tensors({"name": f"{user_module}:Wide", "kwargs": {"width": width}})


def test_entry_points_name_networks_and_a_shipped_name_wins(tmp_path, user_module, monkeypatch):
    """A name an installed package registers in the group hollywood_gin.networks is found (its module imported:
    installing it was the user's act); one that reuses a shipped name does not replace the shipped network."""
    info = tmp_path / "user_networks-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: user-networks\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{NETWORK_GROUP}]\ntiny = {user_module}:small\ncards = {user_module}:small\n"
    )
    assert find_network("tiny").__name__ == "small" and user_module in sys.modules
    assert find_network("cards").__module__ == "hollywood_gin_env.agents.policy"
    with pytest.raises(ValueError, match=r"unknown network 'tinny': use cards, mlp, tiny \("):
        find_network("tinny")


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--agents", "checkpoint:{path}", "greedy", "--matches", "2", "--no-progress"],
        ["play", "--opponent", "checkpoint:{path}", "--seed", "1"],
        ["exploit", "checkpoint:{path}", "--run-dir", "{run_dir}"],
    ],
    ids=["evaluate", "play", "exploit"],
)
def test_huge_weights_are_refused_by_every_front_end_in_one_line(tmp_path, capsys, argv):
    """A policy whose weights reach 1e30 (its logits would overflow to inf, which no agent can sample) is refused
    when evaluate, play or exploit loads it: one line naming the tensor, no traceback, no run directory."""
    spec = {"name": "cards", "kwargs": {"hidden_sizes": [16], "card_channels": 4}}
    torch.manual_seed(0)
    weights = {k: t.numpy().copy() for k, t in build_network(spec).state_dict().items()}
    weights["torso.0.weight"][:] = 1e30
    path = tmp_path / "huge.safetensors"
    write_tensor_file(path, weights, _header(spec))
    args = [arg.format(path=path, run_dir=tmp_path / "br") for arg in argv]
    try:
        status = cli.main(args)
    except SystemExit as stopped:
        status = stopped.code
    printed = capsys.readouterr()
    said = [line for line in (printed.out + printed.err + str(status)).splitlines() if "torso.0.weight" in line]
    assert status not in (0, None) and said and "Traceback" not in printed.out + printed.err
    assert "tensor 'torso.0.weight' holds a weight of magnitude 1e+30; a policy's weights lie within" in said[0]
    assert not (tmp_path / "br").exists()


def _header(spec):
    return {"format": "hollywood-gin-policy", "version": 6, "network": spec, "deterministic": True}
