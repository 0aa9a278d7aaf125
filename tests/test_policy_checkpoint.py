"""The policy network and the checkpoint reader: a policy round-trips and plays legally, and every malformed file
(another format or version included) is refused with an error naming the path and the field, before any network is
built."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.lookahead_planes import LOOKAHEAD_SIZE, lookahead_planes  # noqa: E402
from hollywood_gin_env.agents.policy import (  # noqa: E402
    CardPolicy,
    build_policy,
    check_policy_config,
    load_checkpoint,
    save_checkpoint,
)
from hollywood_gin_env.engine.observation import OBS_SIZE  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.rules.actions import NUM_ACTIONS  # noqa: E402

SMALL = {"arch": "cards", "hidden_sizes": [16], "card_channels": 4}


def _write(path, data):
    torch.save(data, path)
    return path


def _valid():
    config = check_policy_config(SMALL)
    return config, build_policy(config)


def test_a_policy_round_trips_and_plays_legally(tmp_path):
    """A saved policy loads with the same config and logits, and its agent plays only legal actions."""
    config, policy = _valid()
    path = tmp_path / "p.pt"
    save_checkpoint(path, policy, config, note="kept")
    loaded, loaded_config = load_checkpoint(path)
    assert loaded_config == config and type(loaded) is type(policy)
    obs = torch.rand(64, OBS_SIZE)
    assert torch.equal(loaded(obs), policy(obs))
    agent = load_agent(f"checkpoint:{path}")
    masks = (np.random.default_rng(0).random((64, NUM_ACTIONS)) < 0.1).astype(np.int8)
    masks[:, 0] = 1
    actions = agent.act(obs.numpy(), masks)
    assert masks[np.arange(64), actions].all()


def test_a_policy_agents_probabilities_are_its_masked_softmax_and_its_argmax_is_its_action(tmp_path):
    """PolicyAgent.probabilities: each row sums to 1 over the legal actions, is exactly 0 on the others, and its
    most likely action is the one the deterministic agent plays; a batch of the wrong shape is refused."""
    config, policy = _valid()
    path = tmp_path / "p.pt"
    save_checkpoint(path, policy, config)
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


def test_a_lookahead_policy_reads_the_lookahead_inputs_and_round_trips(tmp_path):
    config = check_policy_config({**SMALL, "take_features": True, "lookahead_features": True})
    torch.manual_seed(0)
    policy = build_policy(config)
    path = tmp_path / "p.pt"
    save_checkpoint(path, policy, config)
    assert torch.load(path, weights_only=True)["version"] == 4
    loaded, loaded_config = load_checkpoint(path)
    assert loaded_config["lookahead_features"] is True and loaded.input_size == OBS_SIZE + LOOKAHEAD_SIZE
    env = SelfPlayVectorEnv(32)
    obs, _ = env.reset(seed=3)
    agent = load_agent(f"checkpoint:{path}")
    for _ in range(40):  # real positions of every phase, played by the loaded agent
        inputs = loaded.prepare(obs["observation"])
        assert inputs.shape == (32, OBS_SIZE + LOOKAHEAD_SIZE)
        assert np.array_equal(inputs[:, OBS_SIZE:], lookahead_planes(obs["observation"]))
        assert torch.equal(loaded(torch.from_numpy(inputs)), policy(torch.from_numpy(inputs)))
        actions = agent.act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][np.arange(32), actions].all()
        obs, *_ = env.step(actions)
    # the per-card scores read the lookahead planes: changing them alone changes the discard logits
    changed = inputs.copy()
    changed[:, OBS_SIZE : OBS_SIZE + 52] += 1.0
    before, after = policy(torch.from_numpy(inputs)), policy(torch.from_numpy(changed))
    assert not torch.allclose(before[:, 3:55], after[:, 3:55])


def test_lookahead_features_must_be_a_bool():
    with pytest.raises(ValueError, match="lookahead_features=1 must be true or false"):
        check_policy_config({**SMALL, "lookahead_features": 1})


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


def _bad(tmp_path, **changes):
    config, policy = _valid()
    data = {"format": "hollywood-gin-policy", "version": 4, "config": config, "state_dict": policy.state_dict()}
    for key, value in changes.items():
        if key in data:
            data[key] = value
        else:
            data["config"] = {**data["config"], key: value}
    return _write(tmp_path / "bad.pt", data)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hidden_sizes": [400000]}, "hidden_sizes=[400000] must be a non-empty list of ints in 1..8192"),
        ({"hidden_sizes": [4096]}, "does not fit the config"),
        ({"hidden_sizes": "16"}, "hidden_sizes='16'"),
        ({"deterministic": "false"}, "deterministic='false' must be true or false"),
        ({"activation": "gelu"}, "activation='gelu'"),
        ({"arch": "transformer"}, "arch='transformer'"),
        ({"obs_size": 500}, "obs_size=500"),
        ({"colour": "red"}, "unknown policy config keys ['colour']"),
        ({"format": "something-else"}, "format='something-else'"),
        ({"version": 99}, "version=99"),
        ({"version": 3}, "version=3"),
        ({"state_dict": {"torso.0.weight": "not a tensor"}}, "state_dict must map parameter names to tensors"),
    ],
)
def test_malformed_checkpoints_name_the_path_and_field(tmp_path, changes, message):
    path = _bad(tmp_path, **changes)
    with pytest.raises(ValueError) as error:
        load_checkpoint(path)
    assert message in str(error.value) and str(path) in str(error.value)


def test_non_finite_weights_are_refused(tmp_path):
    config, policy = _valid()
    state = policy.state_dict()
    state["torso.0.weight"][0, 0] = float("nan")
    path = _write(
        tmp_path / "nan.pt", {"format": "hollywood-gin-policy", "version": 4, "config": config, "state_dict": state}
    )
    with pytest.raises(ValueError, match="non-finite"):
        load_checkpoint(path)


def test_a_directory_or_a_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        load_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError, match="nope.pt"):
        load_checkpoint(tmp_path / "nope.pt")
