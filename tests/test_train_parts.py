"""The trainer's parts: masked sampling, reward crediting and GAE per player against plain loops, where returns stop,
the teacher, the privileged critic's view (the config: tests/test_config.py)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.masked import entropy_of, masked_log_probs, sample_masked  # noqa: E402
from hollywood_gin_env.engine.observation import OBS_LAYOUT, OBS_SIZE  # noqa: E402
from hollywood_gin_env.engine.threads import kernel_threads  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_trainer.config import load_config  # noqa: E402
from hollywood_gin_trainer.ppo import Rollout, actor_critic, advantages, credit  # noqa: E402

# --- the masked distribution -------------------------------------------------------------------------------


def test_masked_sampling_never_picks_an_illegal_action():
    rng = np.random.default_rng(0)
    masks = rng.random((2000, 107)) < 0.05
    masks[np.arange(2000), rng.integers(0, 107, 2000)] = True
    logits = torch.from_numpy(rng.normal(size=(2000, 107)).astype(np.float32))
    logits[torch.from_numpy(~masks)] += 50.0  # illegal actions would win by far if the mask were ignored
    generator = torch.Generator().manual_seed(0)
    for _ in range(5):
        actions, log_probs = sample_masked(logits, torch.from_numpy(masks), generator)
        assert masks[np.arange(2000), actions.numpy()].all()
        assert torch.allclose(
            log_probs, masked_log_probs(logits, torch.from_numpy(masks)).gather(1, actions[:, None])[:, 0]
        )
    greedy, _ = sample_masked(logits, torch.from_numpy(masks), deterministic=True)
    best_legal = np.where(masks, logits.numpy(), -np.inf).argmax(1)
    assert (greedy.numpy() == best_legal).all()


def test_masked_log_probs_and_entropy_ignore_illegal_actions():
    logits = torch.tensor([[0.0, 0.0, 100.0, 0.0]])
    masks = torch.tensor([[True, True, False, False]])
    log_probs = masked_log_probs(logits, masks)
    assert torch.allclose(log_probs[0, :2].exp(), torch.tensor([0.5, 0.5]))
    assert log_probs[0, 2:].exp().sum() == 0
    assert torch.allclose(entropy_of(log_probs), torch.tensor([np.log(2.0)], dtype=torch.float32))


# --- rewards and GAE per player ------------------------------------------------------------------------------


def _random_rollout(steps=80, num_envs=6, seed=0, learner_seat=None):
    """Play a real SelfPlayVectorEnv with greedy; keep the raw per-step rewards and infos for the reference."""
    env = SelfPlayVectorEnv(num_envs, reward="hand", episode="hand")
    obs, infos = env.reset(seed=seed)
    storage = Rollout(steps, num_envs, obs["observation"].shape[1], 1, 1)
    rng = np.random.default_rng(seed)
    greedy = load_agent("greedy")
    raw = []
    for t in range(steps):
        actions = greedy.act(obs["observation"], obs["action_mask"])  # greedy hands end within the rollout
        players = infos["current_player"]
        storage.valid[t] = True if learner_seat is None else players == learner_seat
        storage.players[t] = players
        storage.values[t] = rng.normal(size=num_envs)
        obs, rewards, terms, _, infos = env.step(actions)
        credit(storage, infos["decision_step"], rewards, terms, env.threads)
        raw.append((players.copy(), rewards.copy(), terms.copy(), infos["decision_step"].copy()))
    storage.bootstrap[:] = rng.normal(size=(num_envs, 2))
    return storage, raw


def _reference_credit(storage, raw):
    """Rewards and terminal flags per row, from the documented bookkeeping, one match and player at a time."""
    steps, n = storage.rewards.shape
    rewards, dones = np.zeros((steps, n)), np.zeros((steps, n), dtype=bool)
    for _, step_rewards, terms, decision_step in raw:
        for i in range(n):
            for p in (0, 1):
                row = decision_step[i, p]
                if 0 <= row < steps and storage.valid[row, i] and storage.players[row, i] == p:
                    rewards[row, i] += step_rewards[i, p]
                    dones[row, i] |= terms[i]
    return rewards, dones


def _reference_gae(storage, gamma, lam):
    """Plain GAE: list each (match, player) chain of rows, then walk it backward."""
    steps, n = storage.rewards.shape
    out = np.zeros((steps, n))
    for i in range(n):
        for p in (0, 1):
            chain = [t for t in range(steps) if storage.valid[t, i] and storage.players[t, i] == p]
            advantage_next = 0.0
            for k in reversed(range(len(chain))):
                t = chain[k]
                if storage.dones[t, i]:
                    next_value, follow = 0.0, 0.0
                elif k + 1 < len(chain):
                    next_value, follow = storage.values[chain[k + 1], i], 1.0
                else:
                    next_value, follow, advantage_next = storage.bootstrap[i, p], 1.0, 0.0
                delta = storage.rewards[t, i] + gamma * next_value * follow - storage.values[t, i]
                advantage_next = delta + gamma * lam * follow * advantage_next
                out[t, i] = advantage_next
    return out


@pytest.mark.parametrize("learner_seat", [None, 0, 1])
def test_rewards_land_on_each_players_own_decision(learner_seat):
    storage, raw = _random_rollout(learner_seat=learner_seat)
    rewards, dones = _reference_credit(storage, raw)
    assert np.allclose(storage.rewards, rewards) and (storage.dones == dones).all()
    assert dones.any() and (storage.rewards != 0).any()  # hands ended: the scenario exercises terminal rows
    # a hand is often ended by the opponent's knock: the reward lands on a row before the last one of the step
    late = [
        (t, i)
        for t, (players, r, terms, ds) in enumerate(raw)
        for i in range(len(players))
        if terms[i] and storage.valid[ds[i, 1 - players[i]], i] and ds[i, 1 - players[i]] < t
    ]
    assert late


@pytest.mark.parametrize("learner_seat", [None, 1])
def test_gae_per_player_matches_a_plain_loop(learner_seat):
    storage, _ = _random_rollout(seed=3, learner_seat=learner_seat)
    for gamma, lam in ((0.99, 0.95), (1.0, 1.0), (0.9, 0.0)):
        expected = _reference_gae(storage, gamma, lam)
        assert np.allclose(advantages(storage, gamma, lam, kernel_threads(1)), expected, atol=1e-5)


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_arena_episode_decides_where_returns_stop(episode):
    """env.episode = "hand" ends each return chain at its hand's score; "match" runs it on through later hands."""

    from hollywood_gin_trainer.arena import Arena
    from hollywood_gin_trainer.ppo import play_rollout

    config = load_config("configs/smoke.toml", ["env.num_envs=4", f"env.episode='{episode}'"])
    arena = Arena(config, actor_critic(config).policy, None, np.random.default_rng(0), steps=400)
    arena.reset(seed=5)
    storage = play_rollout(arena, None, teacher=load_agent("greedy"))
    scored = storage.rewards != 0  # with reward "hand", points arrive only when a hand is scored
    assert scored.sum() > 8
    if episode == "hand":
        assert storage.dones[scored].all()
    else:
        assert not storage.dones[scored].all() and storage.dones.sum() < scored.sum()


def test_teacher_weights_make_a_tuned_expert_teacher():
    from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
    from hollywood_gin_trainer.warmstart import collect_teacher

    tuned = [1.5, 60.0, 1.0, 0.1, 0.5, 0.0, 2.0, 0.05, 8.0]

    def teach(weights):
        overrides = ["env.num_envs=8", "warmstart.decisions=400", f"warmstart.teacher_weights={weights}"]
        config = load_config("configs/smoke.toml", overrides)
        return collect_teacher(config, actor_critic(config).policy, np.random.default_rng(0))

    plain, same, other = teach([]), teach(DEFAULT_WEIGHTS.tolist()), teach(tuned)
    assert (plain["actions"] == same["actions"]).all()  # the default weights are expert itself
    assert (plain["actions"] != other["actions"]).any()  # the tuned weights are taught


def test_the_cloning_reports_its_progress_after_every_minibatch():
    """clone() calls progress(rows) once per minibatch of every epoch (the warm start's bar moves within an epoch),
    the rows summing to epochs × decisions."""
    import torch

    from hollywood_gin_trainer.warmstart import clone, collect_teacher

    overrides = ["env.num_envs=8", "warmstart.decisions=400", "warmstart.minibatch_size=64", "warmstart.epochs=2"]
    config = load_config("configs/smoke.toml", overrides)
    model = actor_critic(config)
    data = collect_teacher(config, model.policy, np.random.default_rng(0))
    size = len(data["actions"])
    steps, epochs = [], []
    done = clone(
        model,
        data,
        config,
        torch.Generator().manual_seed(0),
        lambda epoch, stats: epochs.append((epoch, len(steps))),
        torch.device("cpu"),
        progress=steps.append,
    )
    batches = -(-size // 64)
    assert done and size >= 400
    assert len(steps) == 2 * batches and sum(steps) == 2 * size and max(steps) == 64
    assert epochs == [(0, batches), (1, 2 * batches)]  # each epoch logged after its own minibatches


# --- the privileged critic ------------------------------------------------------------------------------


def test_the_privileged_view_is_the_opponents_hand_its_deadwood_its_kind_and_the_next_stock_cards():
    """Each row holds the opponent's cards and deadwood, one "who" column per entry of selfplay.opponents with the
    opponent's set (none for a self-play match whose "self" has no entry, code -1), the deal's play-out score from
    the player's side and the next stock cards in order."""
    from hollywood_gin_env.engine import columns as col
    from hollywood_gin_env.rules.cards import from_mask
    from hollywood_gin_env.rules.melds import min_deadwood_mask
    from hollywood_gin_trainer.opponents import SELF_UNLISTED
    from hollywood_gin_trainer.privileged import (
        OPPONENT_DEADWOOD,
        OPPONENT_HAND,
        OPPONENT_KIND,
        deal_playout_column,
        privileged_view,
        privileged_view_size,
        stock_column,
    )

    env = SelfPlayVectorEnv(6, episode="hand")
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):  # into the hands, past draws and discards
        masks = env.action_masks()
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    s = env.engine.state
    players = env.current_player
    kinds = np.array([0, 2, 4, 1, SELF_UNLISTED, 0])
    deal = rng.normal(0, 20, size=6)
    for stock_cards, opponents in ((1, 5), (5, 6), (31, 5)):
        view = privileged_view(env.engine, players, kinds, deal, stock_cards, opponents)
        assert view.shape == (6, privileged_view_size(stock_cards, opponents))
        playout, stock = deal_playout_column(opponents), stock_column(opponents)
        assert playout == OPPONENT_KIND + opponents and view.shape[1] == stock + 52 * stock_cards
        for i, p in enumerate(players):
            opponent = int(s.hands[i, 1 - p])
            assert sorted(np.flatnonzero(view[i, OPPONENT_HAND:OPPONENT_DEADWOOD])) == from_mask(opponent)
            assert view[i, OPPONENT_DEADWOOD] == pytest.approx(min_deadwood_mask(opponent) / 100.0)
            who = [kinds[i]] if kinds[i] >= 0 else []
            assert np.flatnonzero(view[i, OPPONENT_KIND:playout]).tolist() == who
            assert view[i, playout] == pytest.approx((deal[i] if p == 0 else -deal[i]) / 100.0, rel=1e-6)
            position = s.match[i, col.M_STOCK_POS]
            shown = view[i, stock:].reshape(stock_cards, 52)
            for k in range(stock_cards):  # slot k: the stock's k-th card from the top, none past its end
                expected = [s.deck[i, position + k]] if position + k < 52 else []
                assert np.flatnonzero(shown[k]).tolist() == expected
            hand_offset = OBS_LAYOUT["hand"][0]
            own = env.observe(players)["observation"][i, hand_offset : hand_offset + 52]
            assert not view[i, OPPONENT_HAND:OPPONENT_DEADWOOD] @ own  # the opponent's cards, not the player's
    with pytest.raises(ValueError, match="stock_cards=32"):
        privileged_view_size(32, 4)
    with pytest.raises(ValueError, match="opponents=17"):
        privileged_view_size(1, 17)


def test_the_deal_playout_is_expert_against_itself_playing_the_hand_out():
    """The play-out score for seat 0 is the score of the hand when `expert` plays both seats from the deal in the
    public env, the matches are left as they were, and the arena keeps that score of each match's deal."""
    from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
    from hollywood_gin_env.engine import threads
    from hollywood_gin_trainer.arena import Arena
    from hollywood_gin_trainer.privileged import expert_deal_scores

    env = SelfPlayVectorEnv(40, episode="hand")
    obs, infos = env.reset(seed=21)
    expert = load_agent("expert")
    before = env.state_dict()
    scores = expert_deal_scores(env.engine, np.arange(40), DEFAULT_WEIGHTS, threads.kernel_threads(1))
    after = env.state_dict()
    assert all(np.array_equal(before["engine"][name], array) for name, array in after["engine"].items())
    played = np.full(40, np.nan)
    while np.isnan(played).any():
        obs, _, _, _, infos = env.step(expert.act(obs["observation"], obs["action_mask"].astype(bool)))
        ended = infos["hand_over"] & np.isnan(played)
        winner, points = infos["hand_winner"][ended], infos["hand_points"][ended]
        played[ended] = np.where(winner == 0, points, np.where(winner < 0, 0, -points))
    assert np.array_equal(scores, played) and np.abs(played).max() > 0

    config = load_config(None, ["env.num_envs=8", "warmstart.decisions=0"])  # the recipe: a play-out per deal
    arena = Arena(config, actor_critic(config).policy, None, np.random.default_rng(0))
    arena.reset(seed=21)
    assert np.array_equal(arena.deal, scores[:8])  # the same deals: match i is seeded with seed + i
    smoke = load_config("configs/smoke.toml", ["env.num_envs=8"])
    plain = Arena(smoke, actor_critic(smoke).policy, None, np.random.default_rng(0))
    plain.reset(seed=21)
    assert not plain.deal.any()


def test_only_a_privileged_critic_reads_the_privileged_view_and_the_policy_never_does():
    from hollywood_gin_trainer.ppo import ActorCritic
    from hollywood_gin_trainer.privileged import privileged_view_size

    config = {"name": "cards", "kwargs": {"hidden_sizes": [32], "card_channels": 8, "take_features": True}}
    torch.manual_seed(0)
    obs = torch.rand(8, OBS_SIZE)
    size = privileged_view_size(4, 3)
    views = torch.zeros(8, size), torch.rand(8, size)
    privileged_model = ActorCritic(config, "privileged", stock_cards=4, opponents=3)
    player_model = ActorCritic(config, "player")
    (logits_a, values_a), (logits_b, values_b) = (privileged_model(obs, v) for v in views)
    assert torch.equal(logits_a, logits_b) and not torch.allclose(values_a, values_b)
    assert torch.equal(player_model(obs, views[0])[1], player_model(obs, views[1])[1])
    with pytest.raises(ValueError, match="privileged view"):
        privileged_model(obs)
    with pytest.raises(ValueError, match="critic='oracle'"):
        ActorCritic(config, "oracle")
    assert set(privileged_model.policy.state_dict()) == set(player_model.policy.state_dict())  # what a checkpoint holds
