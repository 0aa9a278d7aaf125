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
from hollywood_gin_env.state import DISCARD_BASE, KNOCK_BASE  # noqa: E402

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
    return {
        "obs": obs,
        "masks": masks,
        "first": first,
        "adv": adv,
        "has": has,
        "anchor_obs": anchor_obs,
        "anchor_masks": anchor_masks,
        "hands": hands,
    }


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
        monkeypatch.setattr(
            "sys.argv",
            [
                "improvement_probe.py",
                "--positions",
                "40",
                "--seed",
                "5",
                "--checkpoint",
                str(ROOT / "checkpoints" / "hollywood-ppo.pt"),
                "--score",
                agent,
            ],
        )
        probe.main()
        lines.append(capsys.readouterr().out.splitlines()[-1])
    assert lines[0].startswith(f"{bot}: gain over the policy +0.000 ± 0.000 points a decision, 0.0% of choices")
    assert lines[1].startswith("expert: gain over the policy") and ", 0.0% of choices changed" not in lines[1]


def _another_candidate_favoured(positions: dict, policy) -> dict:
    """The positions where the policy's own choice and another candidate are labelled, relabelled so that the other
    candidate scores 40 points above the policy's choice."""
    own = PolicyAgent(policy).act(positions["obs"], positions["masks"])
    has = positions["has"] & (np.arange(positions["has"].shape[1]) != own[:, None])
    keep = np.flatnonzero(positions["has"][np.arange(own.size), own] & has.any(1))
    data = {
        key: value[keep] if key not in ("anchor_obs", "anchor_masks", "hands") else value
        for key, value in positions.items()
    }
    rows, own, favoured = np.arange(keep.size), own[keep], has[keep].argmax(1)
    data["first"], data["adv"] = own, np.zeros_like(data["adv"])
    data["adv"][rows, own], data["adv"][rows, favoured] = -20.0, 20.0
    return data


def test_the_fine_tune_moves_the_policy_towards_the_better_label(knock_positions):
    """Labels that put another candidate 40 points above the bot's own choice: the fine-tune learns to play it."""
    policy, _ = load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")
    data = _another_candidate_favoured(knock_positions, policy)
    assert len(data["first"]) >= 40
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


def test_revealed_cards_are_the_opponents_hand_or_a_seeded_share_of_it():
    env = SelfPlayVectorEnv(40)
    env.reset(seed=3)
    states = env.engine.state
    weights = 1 << np.arange(52, dtype=np.int64)
    whole = probe.revealed_cards(states, 1, 1.0, seed=0)
    assert np.array_equal((whole.astype(np.int64) * weights).sum(1), states.hands[:, 1])
    assert not probe.revealed_cards(states, 1, 0.0, seed=0).any()
    half = probe.revealed_cards(states, 1, 0.5, seed=1)
    assert np.array_equal(half, probe.revealed_cards(states, 1, 0.5, seed=1))  # drawn from the seed alone
    assert not np.array_equal(half, probe.revealed_cards(states, 1, 0.5, seed=2))
    assert (half <= whole).all() and 0.3 < half.sum() / whole.sum() < 0.7
    with pytest.raises(ValueError, match="share=1.5"):
        probe.revealed_cards(states, 1, 1.5, seed=0)


def test_a_copy_that_sees_the_hand_plays_as_the_policy_until_trained_then_learns_what_only_the_hand_tells(
    knock_positions,
):
    """Each position twice: with the opponent's card shown another candidate (that card's discard or knock) is 40
    points better, with nothing shown the bot's own choice is. A copy that reads the revealed cards learns both; a
    blind copy trained on the same rows cannot tell the twins apart."""
    own = PolicyAgent(load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")[0]).act(
        knock_positions["obs"], knock_positions["masks"]
    )
    has = knock_positions["has"] & (np.arange(knock_positions["has"].shape[1]) != own[:, None])
    keep = np.flatnonzero(knock_positions["has"][np.arange(own.size), own] & has.any(1))
    rows, favoured = np.arange(keep.size), has[keep].argmax(1)
    assert (favoured >= DISCARD_BASE).all()  # at a knock-legal decision every candidate is a card's discard or knock
    adv = np.zeros((2 * keep.size, knock_positions["adv"].shape[1]), dtype=np.float32)
    adv[rows, own[keep]], adv[rows, favoured] = -20.0, 20.0  # the card shown
    adv[keep.size + rows, own[keep]], adv[keep.size + rows, favoured] = 20.0, -20.0  # nothing shown
    shown = np.zeros((keep.size, 52), dtype=np.float32)
    shown[rows, (favoured - DISCARD_BASE) % 52] = 1.0
    data = {
        "obs": np.concatenate([knock_positions["obs"][keep]] * 2),
        "masks": np.concatenate([knock_positions["masks"][keep]] * 2),
        "first": np.concatenate([own[keep]] * 2),
        "adv": adv,
        "has": np.concatenate([knock_positions["has"][keep]] * 2),
        "anchor_obs": knock_positions["anchor_obs"],
        "anchor_masks": knock_positions["anchor_masks"],
    }
    policy, _ = load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")
    seeing = probe.WithHand(policy)
    x, revealed = torch.from_numpy(policy.prepare(data["obs"])), np.concatenate([shown, np.zeros_like(shown)])
    with torch.no_grad():
        assert torch.equal(seeing(x, torch.from_numpy(revealed)), policy(x))  # the layer starts at zero
    quiet = {"beta": 0.0, "lr": 3e-3, "epochs": 80, "seed": 0, "report": lambda line: None}
    sees = probe.finetune(seeing.train(), {**data, "revealed": revealed}, **quiet)
    blind = probe.finetune(load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")[0].train(), data, **quiet)
    assert sees[0]["gain"] == 0.0 and sees[0]["changed"] == 0.0
    assert sees[-1]["gain"] > 5.0 and sees[-1]["gain"] > blind[-1]["gain"] + 15.0


@pytest.mark.parametrize(
    "extra", [["--reveal", "1.5"], ["--reveal", "1", "--save", "x.pt"], ["--reveal", "1", "--score", "expert"]]
)
def test_reveal_is_refused_outside_0_1_or_with_save_or_score(monkeypatch, capsys, extra):
    monkeypatch.setattr("sys.argv", ["improvement_probe.py", *extra])
    with pytest.raises(SystemExit):
        probe.main()
    assert "--reveal" in capsys.readouterr().err


def test_a_wider_copy_plays_as_the_policy_until_trained_then_learns_the_better_label(knock_positions):
    """The capacity check's copy: the policy plus an MLP whose output starts at zero, so the same logits; trained on
    labels that put another candidate 40 points above the bot's own choice, it plays that candidate, its MLP has
    moved, and the last line scores the positions it was trained on."""
    policy, _ = load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")
    wider = probe.Wider(load_checkpoint(ROOT / "checkpoints" / "hollywood-ppo.pt")[0], 64, 2)
    data = _another_candidate_favoured(knock_positions, policy)
    x = torch.from_numpy(wider.prepare(data["obs"]))
    with torch.no_grad():
        assert torch.equal(wider(x), policy(x))
    lines = []
    scores = probe.finetune(wider.train(), data, beta=0.0, lr=3e-3, epochs=15, seed=0, report=lines.append)
    assert scores[0]["gain"] == 0.0 and scores[-1]["gain"] > 20.0
    assert wider.extra[-1].weight.abs().sum() > 0
    assert lines[-1].startswith("on the positions trained on: gain +") and float(lines[-1].split()[6]) > 20.0


@pytest.mark.parametrize("text, expected", [("1024x2", (1024, 2)), ("64X1", (64, 1)), ("4096x4", (4096, 4))])
def test_wider_values_are_width_by_depth(text, expected):
    assert probe.parse_wider(text) == expected


@pytest.mark.parametrize("text", ["1024", "x2", "0x2", "4097x1", "64x5", "64x0", "-1x2", "1e3x2", "64x2x1", ""])
def test_wider_values_outside_the_limits_are_named(text):
    with pytest.raises(ValueError, match=f"--wider {text!r}"):
        probe.parse_wider(text)


@pytest.mark.parametrize(
    "extra",
    [
        ["--wider", "64x9"],
        ["--wider", "64x2", "--reveal", "1"],
        ["--wider", "64x2", "--save", "x.pt"],
        ["--wider", "64x2", "--score", "expert"],
    ],
)
def test_wider_is_refused_outside_its_limits_or_with_reveal_save_or_score(monkeypatch, capsys, extra):
    monkeypatch.setattr("sys.argv", ["improvement_probe.py", *extra])
    with pytest.raises(SystemExit):
        probe.main()
    assert "--wider" in capsys.readouterr().err
