"""The warm start's rollout labels (agents/warmstart.py, `improve_weight`): each candidate's advantage is the hand
score the public env gives when that candidate is played and the teacher plays the hand out, from the same state."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.config import load_config  # noqa: E402
from agents.ppo import ActorCritic  # noqa: E402
from agents.warmstart import clone, collect_teacher, rollout_advantages  # noqa: E402
from hollywood_gin_env.agents import ExpertAgent  # noqa: E402
from hollywood_gin_env.agents.masked import masked_log_probs  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.rules import Rules  # noqa: E402

MATCHES = 12


def _positions(steps: int) -> tuple[SelfPlayVectorEnv, dict, ExpertAgent]:
    """MATCHES matches `expert` has played `steps` steps into, and their saved state."""
    env = SelfPlayVectorEnv(MATCHES, episode="hand")
    teacher = ExpertAgent()
    obs, _ = env.reset(seed=5)
    for _ in range(steps):
        obs, *_ = env.step(teacher.act(obs["observation"], obs["action_mask"]))
    return env, env.state_dict(), teacher


def _played_out(saved: dict, first: np.ndarray, teacher: ExpertAgent) -> np.ndarray:
    """Each match's hand score for the player to act in `saved`: `first`, then the teacher to the hand's end, in a
    fresh public env."""
    env = SelfPlayVectorEnv(MATCHES, episode="hand")
    env.load_state_dict(saved)
    seats = env.current_player.copy()
    scores = np.full(MATCHES, np.nan)
    actions = first
    for _ in range(400):
        obs, _, _, _, infos = env.step(actions)
        ended = infos["hand_over"] & np.isnan(scores)
        sign = np.where(infos["hand_winner"] == seats, 1.0, np.where(infos["hand_winner"] < 0, 0.0, -1.0))
        scores[ended] = (sign * infos["hand_points"])[ended]
        if not np.isnan(scores).any():
            return scores
        actions = teacher.act(obs["observation"], obs["action_mask"])
    raise AssertionError("a hand did not end within 400 steps")


@pytest.mark.parametrize("steps", [0, 7, 18])
def test_labels_are_the_public_envs_hand_scores_and_leave_the_state_alone(steps):
    env, saved, teacher = _positions(steps)
    obs = env.observe(env.current_player)
    masks = obs["action_mask"].astype(np.bool_)
    first = teacher.act(obs["observation"], masks)
    rows = np.arange(MATCHES)
    adv, has = rollout_advantages(
        env.engine.state, rows, obs["observation"], masks, first, teacher, teacher.weights, 3, Rules().to_params()
    )
    after = env.state_dict()
    for name, array in saved["engine"].items():
        assert np.array_equal(array, after["engine"][name]), f"engine.{name} changed"
    labelled = has.any(1)
    assert labelled.sum() >= MATCHES // 2  # most positions offer a choice
    assert has[labelled, first[labelled]].all()  # the teacher's action is always compared
    assert not has[~masks].any()  # only legal actions
    np.testing.assert_allclose(adv.sum(1), 0.0, atol=1e-3)  # centred on the candidates' mean
    most = int(has.sum(1).max())
    scores = np.full((MATCHES, most), np.nan)
    for j in range(most):
        actions = first.copy()
        for r in np.flatnonzero(has.sum(1) > j):
            actions[r] = np.flatnonzero(has[r])[j]
        played = _played_out(saved, actions, teacher)
        for r in np.flatnonzero(has.sum(1) > j):
            scores[r, j] = played[r]
    for r in np.flatnonzero(labelled):
        cands = np.flatnonzero(has[r])
        got = scores[r, : cands.size]
        np.testing.assert_allclose(adv[r, cands], got - got.mean(), atol=1e-3)
    assert np.abs(adv[labelled]).max() > 0  # some choice changes the hand


def test_improving_warm_start_collects_labels_and_moves_towards_better_candidates():
    overrides = [
        "env.num_envs=16",
        "warmstart.decisions=2048",
        "warmstart.epochs=2",
        "warmstart.improve_weight=5.0",
        "warmstart.improve_fraction=0.5",
    ]
    config = load_config("configs/quick.toml", overrides)
    rules = config.make_rules()
    data = collect_teacher(config, rules, np.random.default_rng(3))
    labelled = data["has"].any(1)
    assert 0.3 < labelled.mean() < 0.7  # about improve_fraction of the decisions (fewer: some have one candidate)
    assert data["has"][labelled, data["actions"][labelled]].all()
    again = collect_teacher(config, rules, np.random.default_rng(3))
    assert all(np.array_equal(data[k], again[k]) for k in data)  # the same seed, the same labels

    stats = {}
    for weight in (0.0, 5.0):
        config.warmstart.improve_weight = weight
        torch.manual_seed(0)
        model = ActorCritic(config.policy_config())
        clone(model, data, config, torch.Generator().manual_seed(0), lambda e, s: None, torch.device("cpu"))
        with torch.no_grad():
            inputs = torch.from_numpy(model.policy.prepare(data["obs"][labelled]))
            table = torch.from_numpy(data["table"][labelled])
            logits, _, _ = model.outputs(inputs, table)
            probs = masked_log_probs(logits, torch.from_numpy(data["masks"][labelled])).exp().numpy()
        stats[weight] = float((probs * data["adv"][labelled]).sum(1).mean())
    assert stats[5.0] > stats[0.0]  # the advantage term raises the policy's expected advantage on its labels
