"""scripts/improvement_probe.py: each seat's agent plays its own rows, every position's own choice is labelled, the
held-out score of the policy's own choices is zero, and the fine-tune moves the policy towards better labels."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import ExpertAgent, GreedyAgent  # noqa: E402
from hollywood_gin_env.agents.policy import PolicyAgent, load_checkpoint  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.state import KNOCK_BASE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("improvement_probe", ROOT / "scripts" / "improvement_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


class _Constant:
    def __init__(self, action: int) -> None:
        self.action = action

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.full(observations.shape[0], self.action, dtype=np.int64)


def test_each_seat_is_played_by_its_own_agent():
    env = SelfPlayVectorEnv(6)
    env.reset(seed=2)
    seats = np.array([0, 1, 1, 0, 1, 0])
    obs = env.observe(seats)
    actions = probe.SeatAgents(_Constant(7), _Constant(9)).act(obs["observation"], obs["action_mask"])
    assert np.array_equal(actions, np.where(seats == 0, 7, 9))


@pytest.fixture(scope="module")
def knock_positions():
    """60 knock-legal decisions of `expert` (seat 0) against `greedy`, labelled."""
    agents = probe.SeatAgents(ExpertAgent(), GreedyAgent())
    obs, masks, states, anchor_obs, anchor_masks, hands = probe.collect(agents, "knock", 60, 1.0, seed=4)
    first = agents.act(obs, masks)
    adv, has = probe.label(states, obs, masks, first, agents, 3)
    return {"obs": obs, "masks": masks, "first": first, "adv": adv, "has": has, "anchor_obs": anchor_obs,
            "anchor_masks": anchor_masks, "hands": hands}  # fmt: skip


def test_positions_are_knock_legal_and_each_own_choice_is_labelled(knock_positions):
    data = knock_positions
    rows = np.arange(len(data["first"]))
    assert data["masks"][:, KNOCK_BASE:].any(axis=1).all()
    assert data["has"][rows, data["first"]].all()
    assert (data["has"].sum(1) >= 2).mean() > 0.9  # a knock-legal decision has a knock and a discard to compare
    assert np.allclose((data["adv"] * data["has"]).sum(1), 0.0, atol=1e-3)  # scores minus the candidates' mean
    assert np.abs(data["adv"][data["has"]]).max() > 0  # the candidates' play-outs differ


def test_held_out_gain_is_zero_for_the_own_choice_and_the_labels_best_for_the_best():
    masks = np.ones((3, 4), dtype=np.bool_)
    first = np.array([0, 1, 2])
    adv = np.array([[1.0, -1.0, 0, 0], [0.0, -2.0, 2.0, 0], [0.0, 0.0, 0.0, 0]])
    has = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=np.bool_)
    own = torch.nn.functional.one_hot(torch.from_numpy(first), 4).float()
    assert probe.held_out_gain(own, torch.from_numpy(masks), first, adv, has)["gain"] == 0.0
    other = torch.nn.functional.one_hot(torch.tensor([1, 2, 0]), 4).float()
    score = probe.held_out_gain(other, torch.from_numpy(masks), first, adv, has)
    assert score["gain"] == pytest.approx((-2.0 + 4.0 + 0.0) / 3)  # row 2's choice has no label: 0, counted outside
    assert score["changed"] == 1.0 and score["outside"] == pytest.approx(1 / 3)


def test_score_rates_another_agents_choices_against_the_policys_own(monkeypatch, capsys):
    """--score: the policy scored against itself gains exactly 0 and changes nothing; `expert` changes choices."""
    bot = f"checkpoint:{ROOT / 'checkpoints' / 'hollywood-ppo.pt'}"
    lines = []
    for agent in (bot, "expert"):
        monkeypatch.setattr("sys.argv", ["improvement_probe.py", "--positions", "40", "--seed", "5", "--checkpoint",
                                         str(ROOT / "checkpoints" / "hollywood-ppo.pt"), "--score", agent])  # fmt: skip
        probe.main()
        lines.append(capsys.readouterr().out.splitlines()[-1])
    assert lines[0].startswith(f"{bot}: gain over the policy +0.000 ± 0.000 points a decision, 0.0% of choices")
    assert lines[1].startswith("expert: gain over the policy") and ", 0.0% of choices changed" not in lines[1]


def test_the_fine_tune_moves_the_policy_towards_the_better_label(knock_positions):
    """Labels that put another candidate 40 points above the bot's own choice: the fine-tune learns to play it."""
    policy, _ = load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")
    data = dict(knock_positions)
    own = PolicyAgent(policy).act(data["obs"], data["masks"])
    has = data["has"] & (np.arange(data["has"].shape[1]) != own[:, None])
    keep = np.flatnonzero(data["has"][np.arange(own.size), own] & has.any(1))
    assert keep.size >= 40
    data = {key: value[keep] if key not in ("anchor_obs", "anchor_masks", "hands") else value
            for key, value in data.items()}  # fmt: skip
    rows, own, favoured = np.arange(keep.size), own[keep], has[keep].argmax(1)
    data["first"], data["adv"] = own, np.zeros_like(data["adv"])
    data["adv"][rows, own], data["adv"][rows, favoured] = -20.0, 20.0
    scores = probe.finetune(policy.train(), data, beta=0.0, lr=3e-3, epochs=15, seed=0, report=lambda line: None)
    assert scores[0]["gain"] == 0.0 and scores[0]["changed"] == 0.0  # before: the bot's own choices
    assert scores[-1]["gain"] > 20.0 and scores[-1]["changed"] > 0.5


def test_discard_and_draw_decisions_split_by_the_observed_phase():
    from hollywood_gin_env.agents._features import phase_of
    from hollywood_gin_env.state import PHASE_DISCARD

    env = SelfPlayVectorEnv(32)
    obs, _ = env.reset(seed=6)
    expert, seen = ExpertAgent(), 0
    for _ in range(40):
        o, m = obs["observation"], obs["action_mask"]
        discard = np.array([phase_of(row) == PHASE_DISCARD for row in o])
        assert np.array_equal(probe.is_probed("discard", o, m), discard)
        assert np.array_equal(probe.is_probed("draw", o, m), ~discard)
        seen += int(discard.sum())
        obs, *_ = env.step(expert.act(o, m))
    assert 0 < seen < 32 * 40
