"""Policy checkpoints (safetensors): a network round-trips and plays legally; `load_checkpoint` is a module from the
observation to the logits; a file of version 5 still loads; a file from anyone is refused in one line naming the
file and the problem, before more memory than its network needs is allocated: a malformed network spec (each
argument), tensors that do not fit the network it names, non-finite or huge weights, a damaged, oversized or hostile
file (a header declaring huge tensors, a header length of 2**63, metadata nested 10,000 deep, a zip bomb renamed, an
old torch.save file, an empty file), a device, a FIFO or a directory. Subnormal weights load as 0."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.checkpoint import (  # noqa: E402
    CHECKPOINT_VERSION,
    MAX_WEIGHT,
    load_checkpoint,
    load_network,
    save_checkpoint,
)
from hollywood_gin_env.agents.lookahead_planes import LOOKAHEAD_SIZE, lookahead_planes  # noqa: E402
from hollywood_gin_env.agents.networks import MAX_PARAMETERS, build_network, network_tensors  # noqa: E402
from hollywood_gin_env.agents.policy import MAX_LAYERS, CardPolicy, check_policy_config  # noqa: E402
from hollywood_gin_env.engine.observation import OBS_SIZE  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.rules.actions import NUM_ACTIONS  # noqa: E402
from hollywood_gin_env.rules.options import Rules  # noqa: E402
from hollywood_gin_env.support.tensorfile import MAX_FILE_BYTES, METADATA_KEY, write_tensor_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"name": "cards", "kwargs": {"hidden_sizes": [16], "card_channels": 4}}
#: a process that only fails to load hostile files stays under this peak RSS (torch imported: about 290 MB)
PEAK_RSS_MB = 600


def _valid(spec=SMALL):
    torch.manual_seed(0)
    return spec, build_network(spec)


def _weights(policy) -> dict[str, np.ndarray]:
    return {name: t.numpy() for name, t in policy.state_dict().items()}


def _header(spec=SMALL, **changes):
    return {"format": "hollywood-gin-policy", "version": CHECKPOINT_VERSION, "network": spec, "deterministic": True} | (
        changes
    )


def test_a_policy_round_trips_and_plays_legally(tmp_path):
    """A saved network loads with the same spec, logits, rules and record, and its agent plays legally."""
    spec, policy = _valid()
    path = tmp_path / "policy.safetensors"
    save_checkpoint(path, policy, spec, rules=Rules.preset("eaai"), training={"commit": "abc", "updates": 3})
    loaded, metadata = load_network(path)
    assert metadata["network"] == spec and metadata["deterministic"] is True and type(loaded) is type(policy)
    assert metadata["training"] == {"commit": "abc", "updates": 3}
    assert Rules.from_dict(metadata["rules"]) == Rules.preset("eaai")
    obs = torch.rand(64, OBS_SIZE)
    assert torch.equal(loaded(obs), policy(obs))
    agent = load_agent(f"checkpoint:{path}")
    masks = (np.random.default_rng(0).random((64, NUM_ACTIONS)) < 0.1).astype(np.int8)
    masks[:, 0] = 1
    actions = agent.act(obs.numpy(), masks)
    assert masks[np.arange(64), actions].all()
    sampler = load_agent(f"checkpoint:{path}", seed=1)
    sampler.deterministic = False
    assert masks[np.arange(64), sampler.act(obs.numpy(), masks)].all()


def test_a_training_state_rides_along_unread_by_the_policy_loader(tmp_path):
    """Tensors under EXTRA_PREFIX (a run's state) leave the file a playable policy; any other extra tensor does not
    fit the network and is refused by name."""
    spec, policy = _valid()
    path = tmp_path / "last.safetensors"
    save_checkpoint(path, policy, spec, {"optimizer.exp_avg": np.ones((3, 4), np.float32)})
    assert load_network(path)[1]["network"] == spec
    write_tensor_file(path, {**_weights(policy), "stray": np.ones(2, np.float32)}, _header())
    with pytest.raises(ValueError, match="tensors unexpected 'stray'"):
        load_checkpoint(path)
    with pytest.raises(ValueError, match=r"metadata keys \['format'\] are the checkpoint's own"):
        save_checkpoint(path, policy, spec, format="mine")


def test_the_writer_refuses_tensors_the_named_network_would_not_load(tmp_path):
    """save_checkpoint names the first tensor that does not fit the network the spec names (an MLP's weights saved
    as "cards", a width that differs from the kwargs) and writes nothing; nor does it write weights the loader
    refuses."""
    _, mlp = _valid({"name": "mlp", "kwargs": {"hidden_sizes": [8]}})
    path = tmp_path / "policy.safetensors"
    with pytest.raises(ValueError, match=r"tensors missing 'card_out.bias'.*; nothing written") as error:
        save_checkpoint(path, mlp, SMALL)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ValueError, match=r"tensor 'torso.0.weight' is float32 \(8, 567\); expected float32 \(9, 567\)"):
        save_checkpoint(path, mlp, {"name": "mlp", "kwargs": {"hidden_sizes": [9]}})
    with torch.no_grad():
        mlp.logits.bias[3] = float("nan")
    with pytest.raises(ValueError, match="tensor 'logits.bias' holds non-finite weights"):
        save_checkpoint(path, mlp, {"name": "mlp", "kwargs": {"hidden_sizes": [8]}})
    assert not path.exists()


def test_load_checkpoint_is_a_module_from_the_observation_to_the_logits(tmp_path):
    """The module load_checkpoint gives takes the env's observations (a float32[B, 567] tensor) and returns the
    network's logits of its own input rows (the lookahead planes made inside); `.network` is the network itself."""
    spec = {"name": "cards", "kwargs": {**SMALL["kwargs"], "take_features": True, "lookahead_features": True}}
    _, network = _valid(spec)
    path = tmp_path / "policy.safetensors"
    save_checkpoint(path, network, spec)
    policy, metadata = load_checkpoint(path)
    assert metadata["network"] == spec and policy.network.input_size == OBS_SIZE + LOOKAHEAD_SIZE
    env = SelfPlayVectorEnv(32)
    obs, _ = env.reset(seed=3)
    agent = load_agent(f"checkpoint:{path}")
    for _ in range(40):  # real positions of every phase, played by the loaded agent
        rows = obs["observation"]
        inputs = network.inputs(rows)
        assert np.array_equal(inputs, np.concatenate([rows, lookahead_planes(rows)], axis=1))
        assert torch.equal(policy(torch.from_numpy(rows)), network(torch.from_numpy(inputs)))
        actions = agent.act(rows, obs["action_mask"])
        assert obs["action_mask"][np.arange(32), actions].all()
        obs, *_ = env.step(actions)
    # the per-card scores read the lookahead planes: changing them alone changes the discard logits
    changed = inputs.copy()
    changed[:, OBS_SIZE : OBS_SIZE + 52] += 1.0
    before, after = network(torch.from_numpy(inputs)), network(torch.from_numpy(changed))
    assert not torch.allclose(before[:, 3:55], after[:, 3:55])
    with pytest.raises(ValueError, match=r"observations must have shape \(B, 567\), got \(2, 779\)"):
        policy(torch.from_numpy(inputs[:2]))


def test_a_version_5_file_loads_as_the_cards_network_of_its_config(tmp_path):
    """A file of the previous version (its network given by a policy config) loads as the network "cards" with the
    config's arguments, the config's keys left out meaning what they meant; its weights are the file's."""
    spec, policy = _valid()
    path = tmp_path / "v5.safetensors"
    config = {"arch": "cards", "hidden_sizes": [16], "card_channels": 4, "deterministic": False}
    write_tensor_file(path, _weights(policy), {"format": "hollywood-gin-policy", "version": 5, "config": config})
    loaded, metadata = load_network(path)
    assert metadata["network"] == {"name": "cards", "kwargs": {**spec["kwargs"], **_CARDS_DEFAULTS}}
    assert metadata["deterministic"] is False and metadata["version"] == 5
    assert all(torch.equal(loaded.state_dict()[k], t) for k, t in policy.state_dict().items())
    assert load_agent(f"checkpoint:{path}").deterministic is False


_CARDS_DEFAULTS = {"activation": "relu", "take_features": False, "lookahead_features": False}


def test_a_policy_agents_probabilities_are_its_masked_softmax_and_its_argmax_is_its_action(tmp_path):
    """PolicyAgent.probabilities: each row sums to 1 over the legal actions, is exactly 0 on the others, and its
    most likely action is the one the deterministic agent plays; a batch of the wrong shape is refused."""
    spec, policy = _valid()
    path = tmp_path / "policy.safetensors"
    save_checkpoint(path, policy, spec)
    agent = load_agent(f"checkpoint:{path}")
    obs = np.random.default_rng(1).random((32, OBS_SIZE)).astype(np.float32)
    masks = (np.random.default_rng(2).random((32, NUM_ACTIONS)) < 0.2).astype(np.int8)
    masks[:, 3] = 1
    probs = agent.probabilities(obs, masks)
    assert probs.shape == (32, NUM_ACTIONS)
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-5) and (probs[masks == 0] == 0).all()
    assert np.array_equal(probs.argmax(axis=1), agent.act(obs, masks))
    with pytest.raises(ValueError, match="action_masks must have shape"):
        agent.probabilities(obs, masks[:5])


def test_card_policy_scores_every_card_with_the_same_weights():
    torch.manual_seed(0)
    policy = CardPolicy(OBS_SIZE, NUM_ACTIONS, [16], "relu", 8)
    obs = torch.zeros(1, OBS_SIZE)
    # the same card situation in two suits (7H alone, 7S alone in hand) gives the same discard logit
    seven_hearts, seven_spades = 2 * 13 + 6, 3 * 13 + 6
    a, b = obs.clone(), obs.clone()
    a[0, seven_hearts] = 1.0
    b[0, seven_spades] = 1.0
    # suits only differ in the torso's view; with equal torso features the per-card scores must match
    features = policy.features(a)
    logits_a, logits_b = policy.head(a, features), policy.head(b, features)
    assert torch.allclose(logits_a[0, 3 + seven_hearts], logits_b[0, 3 + seven_spades])


def _tampered(path, kwargs_changes=(), metadata_changes=(), tensor_changes=()):
    """A checkpoint of the small policy with network kwargs, metadata keys or tensors changed (None: removed)."""
    spec, policy = _valid()
    metadata = _header({"name": "cards", "kwargs": {**spec["kwargs"], **dict(kwargs_changes)}})
    metadata.update(dict(metadata_changes))
    tensors = {**_weights(policy), **dict(tensor_changes)}
    write_tensor_file(path, {k: v for k, v in tensors.items() if v is not None}, metadata)
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"kwargs_changes": {"hidden_sizes": [400000]}}, "hidden_sizes=[400000] must be a list of 1 to 8 ints in"),
        ({"kwargs_changes": {"hidden_sizes": [8192] * 40}}, f"a list of 1 to {MAX_LAYERS} ints"),
        ({"kwargs_changes": {"hidden_sizes": [8192] * 3}}, f"a network holds at most {MAX_PARAMETERS:,}"),
        ({"kwargs_changes": {"hidden_sizes": "16"}}, "hidden_sizes='16'"),
        ({"metadata_changes": {"deterministic": "false"}}, "deterministic='false' must be a bool"),
        ({"kwargs_changes": {"lookahead_features": 1}}, "lookahead_features=1 must be true or false"),
        ({"kwargs_changes": {"activation": "gelu"}}, "activation='gelu' is not one of ('relu', 'tanh')"),
        ({"kwargs_changes": {"colour": "red"}}, "network 'cards': cards() got an unexpected keyword argument 'colour'"),
        (
            {"metadata_changes": {"network": {"name": [[[[["cards"] * 10] * 10] * 10] * 10] * 10, "kwargs": {}}}},
            "network name=[[[[...], [...], [...], [...], [...], [...], ...], [[...], [...], [...], [...], ... must be",
        ),
        ({"metadata_changes": {"network": {"name": "nosuch", "kwargs": {}}}}, "unknown network 'nosuch': use cards"),
        ({"metadata_changes": {"network": [1, 2]}}, 'network [1, 2] is not a spec {"name": NAME, "kwargs": {...}}'),
        ({"metadata_changes": {"rules": {"knock_limit": 99}}}, "rules: "),
        ({"kwargs_changes": {"hidden_sizes": [32]}}, "tensor 'torso.0.weight' is float32 (16, 567); expected float32"),
        ({"metadata_changes": {"format": "something-else"}}, "no format 'hollywood-gin-policy'"),
        ({"metadata_changes": {"version": 4}}, "version 4 is not one this library reads (5 and 6)"),
        ({"metadata_changes": {"version": 5, "config": {"obs_size": 567.0}}}, "obs_size=567.0, but this engine has"),
        ({"tensor_changes": {"torso.0.bias": None}}, "tensors missing 'torso.0.bias'"),
        ({"tensor_changes": {"torso.0.bias": np.zeros(16, np.int32)}}, "'torso.0.bias' is int32 (16,); expected"),
        ({"tensor_changes": {"torso.0.bias": np.full(16, np.nan, np.float32)}}, "'torso.0.bias' holds non-finite"),
        (
            {"tensor_changes": {"card_out.weight": np.full((3, 4), 1e30, np.float32)}},
            f"'card_out.weight' holds a weight of magnitude 1e+30; a policy's weights lie within ±{MAX_WEIGHT:g}",
        ),
    ],
)
def test_a_malformed_checkpoint_names_the_file_the_field_and_what_is_allowed(tmp_path, changes, message):
    path = _tampered(tmp_path / "bad.safetensors", **changes)
    with pytest.raises(ValueError) as error:
        load_agent(f"checkpoint:{path}")
    assert message in str(error.value) and str(path) in str(error.value) and "\n" not in str(error.value)
    assert len(str(error.value)) < 500


def test_policy_config_bounds_name_the_limits():
    """The trainer's policy config (version 5's) takes up to MAX_LAYERS layers; a wide config's network stays within
    the parameter bound."""
    check_policy_config({"hidden_sizes": [4] * MAX_LAYERS})
    spec = {"name": "cards", "kwargs": {"hidden_sizes": [2048, 2048], "card_channels": 256}}
    assert sum(torch.Size(shape).numel() for _, shape in network_tensors(spec).values()) <= MAX_PARAMETERS


def test_subnormal_weights_load_as_zero(tmp_path):
    """Weights below float32's smallest normal magnitude load as 0, every other weight as it is, so no forward pass
    multiplies by a subnormal number (some CPUs do that many times slower)."""
    spec, policy = _valid()
    weights = _weights(policy)
    tiny = np.finfo(np.float32).tiny
    weights["torso.0.weight"] = weights["torso.0.weight"] * np.float32(1e-39)  # every one subnormal
    path = tmp_path / "subnormal.safetensors"
    write_tensor_file(path, weights, _header())
    loaded, _ = load_network(path)
    torso = loaded.state_dict()["torso.0.weight"].numpy()
    assert np.abs(weights["torso.0.weight"]).max() < tiny and np.count_nonzero(weights["torso.0.weight"]) > 0
    assert not torso.any()
    assert all(np.array_equal(loaded.state_dict()[k].numpy(), w) for k, w in weights.items() if k != "torso.0.weight")


def _safetensors(header: dict, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def _zip_bomb() -> bytes:
    """A 2 MB zip whose one record inflates to 2 GiB (what torch.load would inflate before any check)."""
    data = io.BytesIO()
    with (
        zipfile.ZipFile(data, "w", compression=zipfile.ZIP_DEFLATED) as bomb,
        bomb.open("archive/data/0", "w", force_zip64=True) as out,
    ):
        chunk = bytes(1 << 20)
        for _ in range(2048):
            out.write(chunk)
    return data.getvalue()


def _old_policy(path) -> Path:
    """A policy saved with torch.save, as version 4 wrote it."""
    _, policy = _valid()
    config = check_policy_config({"hidden_sizes": [16], "card_channels": 4})
    torch.save(
        {"format": "hollywood-gin-policy", "version": 4, "config": config, "state_dict": policy.state_dict()}, path
    )
    return path


#: name -> (the file's bytes, or a callable writing it to a path; what its one-line error says)
HOSTILE = {
    "header declaring 4 TiB of tensors": (
        _safetensors({"w": {"dtype": "F32", "shape": [1 << 20, 1 << 20], "data_offsets": [0, 4 << 40]}}),
        "is damaged or not a safetensors file (incomplete metadata, file not fully covered)",
    ),
    "header length 2**63": (
        struct.pack("<Q", 1 << 63) + b"{}",
        "declares a header of 9,223,372,036,854,775,808 bytes in a file of 10; a header is at most 8.0 MiB",
    ),
    "metadata nested 10,000 deep": (
        _safetensors({"__metadata__": {METADATA_KEY: "[" * 10_000 + "]" * 10_000}}),
        "the metadata nests 10000 deep; at most 32 is read",
    ),
    "metadata of 8 MiB": (
        _safetensors({"__metadata__": {METADATA_KEY: '{"a": [' + ",".join(["[]"] * 2_700_000) + "]}"}}),
        "the metadata is 8,100,008 bytes; at most 1.0 MiB is read",
    ),
    "metadata of 1 MiB": (
        _safetensors({"__metadata__": {METADATA_KEY: '{"a": [' + ",".join(["[]"] * 349_000) + "]}"}}),
        "is not a policy checkpoint: its metadata has no format 'hollywood-gin-policy'",
    ),
    "a header of 8 MiB of tensors": (
        _safetensors(
            {f"{k:x}": {"dtype": "U8", "shape": [], "data_offsets": [k, k + 1]} for k in range(115_000)},
            bytes(115_000),
        ),
        "is not a policy checkpoint",
    ),
    "2 MB zip bomb renamed": (_zip_bomb(), "is a zip archive (torch.save's format?), not a safetensors file"),
    "old torch.save policy": (_old_policy, "not a safetensors file; convert a policy saved with torch.save: python"),
    "empty file": (b"", "holds 0 bytes, too few for a safetensors file (a length, a header)"),
    "truncated checkpoint": (
        lambda path: path.write_bytes(_tampered(path).read_bytes()[:-100]),
        "is damaged or not a safetensors file (incomplete metadata, file not fully covered)",
    ),
}

CHILD = textwrap.dedent(
    """
    import json, re, sys
    from hollywood_gin_env.agents import load_agent

    def peak_mb():  # this process's own peak (ru_maxrss would carry over the parent's from before the exec)
        with open("/proc/self/status") as status:
            return int(re.search(r"VmHWM:\\s*(\\d+)", status.read()).group(1)) / 1024

    for path in sys.argv[1:]:
        try:
            load_agent("checkpoint:" + path)
            error = None
        except ValueError as e:
            error = str(e)
        print(json.dumps({"path": path, "error": error, "peak_mb": peak_mb()}))
    """
)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak RSS from /proc")
def test_hostile_files_are_one_line_errors_in_bounded_memory(tmp_path):
    """Every hostile file above, loaded in one child: each refused in one line naming the file, the child's peak
    RSS under PEAK_RSS_MB throughout."""
    paths = []
    for k, (content, _) in enumerate(HOSTILE.values()):
        path = tmp_path / f"hostile-{k}.safetensors"
        if callable(content):
            content(path)
        else:
            path.write_bytes(content)
        paths.append(str(path))
    assert os.path.getsize(paths[list(HOSTILE).index("2 MB zip bomb renamed")]) < 3 << 20
    child = subprocess.run([sys.executable, "-c", CHILD, *paths], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    results = [json.loads(line) for line in child.stdout.splitlines()]
    for (name, (_, message)), result in zip(HOSTILE.items(), results, strict=True):
        error = result["error"]
        assert error is not None and message in error and result["path"] in error, (name, error)
        assert "\n" not in error and len(error) < 400, (name, error)
        assert result["peak_mb"] < PEAK_RSS_MB, (name, result)


def test_files_over_the_size_bound_are_refused_unread(tmp_path):
    path = tmp_path / "huge.safetensors"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(
        ValueError, match=r"is 1,073,741,825 bytes; a checkpoint file is at most 1.0 GiB \(refused unread\)"
    ):
        load_agent(f"checkpoint:{path}")


def test_an_agent_whose_logits_overflow_refuses_to_act_in_one_line(tmp_path):
    """Weights within ±MAX_WEIGHT may still overflow a deep network's logits to infinity: its agent then refuses to
    act or give probabilities, in one line naming it, rather than sample from NaN or play an arbitrary action."""
    spec = {"name": "cards", "kwargs": {"hidden_sizes": [64] * MAX_LAYERS, "card_channels": 4}}
    _, network = _valid(spec)
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.fill_(MAX_WEIGHT)
    path = tmp_path / "deep.safetensors"
    save_checkpoint(path, network, spec, deterministic=False)
    env = SelfPlayVectorEnv(2)
    obs, _ = env.reset(seed=0)
    for deterministic in (True, False):
        agent = load_agent(f"checkpoint:{path}", seed=0)
        agent.deterministic = deterministic
        with pytest.raises(ValueError, match=r"its network's logits overflow \(NaN or infinity\); it cannot play"):
            agent.act(obs["observation"], obs["action_mask"])
    with pytest.raises(ValueError, match=rf"agent 'checkpoint:{path}': its network's logits overflow"):
        agent.probabilities(obs["observation"], obs["action_mask"])
