"""The warm start: behaviour cloning on a heuristic's decisions, before PPO.

A randomly initialised policy plays almost at random, and about 97% of random hands end dead, so PPO would see
almost no reward. The teacher (`expert` by default) plays both seats of every match in the arena; the policy learns
its decisions by cross-entropy on the masked logits, and the value head regresses on the discounted returns of those
matches (GAE with lambda = 1 on zero values), so PPO starts with a sensible critic too. Both steps draw only from
the run's own random streams, so the same seed gives the same warm start.

With `improve_weight > 0` the policy learns to improve on the teacher as well as to copy it. A share of the teacher's
decisions is labelled by rollouts from the match's true state: each candidate (the teacher's action, the best knock,
the teacher's best few discards; every legal action in the other phases) is played and the hand rolled out to its
end by the teacher in both seats, with the same stock for every candidate. A rollout from the true state is one draw
of the hidden cards from exactly their distribution given the player's observation, and the rollout policy reads
observations only, so the mean of such labels over the decisions that share an observation is the teacher's
action value there, without the bias of a sampled belief. The loss adds -improve_weight * sum_a pi(a) * A(a) on the
labelled decisions (A: the candidate's hand score minus the candidates' mean, in points), whose gradient moves the
policy towards the candidates that score better than the teacher's choice; cloning keeps it near the teacher where
they do not.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from agents.arena import Arena
from agents.config import Config
from agents.ppo import ActorCritic
from agents.rollout import RolloutStorage
from hollywood_gin_env.agents import AgentProtocol, ExpertAgent, load_agent
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
from hollywood_gin_env.agents.masked import masked_log_probs
from hollywood_gin_env.agents.search import candidate_table, put_first, rollout_layout, rollout_scores
from hollywood_gin_env.observation import OBS_SIZE
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import M_PLAYER, NUM_ACTIONS, EngineState

TEACHER_STEPS = 128  # steps per collection round; long rounds cut fewer return chains
TEACHER_SEED_OFFSET = 17  # the teacher's matches are dealt from seed * 1_000_003 + 17: apart from PPO's deals


def collect_teacher(
    config: Config, rules: Rules, rng: np.random.Generator, progress: Callable[[int], None] = lambda n: None
) -> dict[str, np.ndarray]:
    """The teacher's decisions: obs, table views, masks, actions and discounted returns, flattened (and with
    improve_weight > 0, each decision's rollout advantages "adv" and which actions have one, "has"); progress(n)
    after each round with the decisions collected in it."""
    w = config.warmstart
    env = config.env
    stock_cards = config.model.critic_stock_cards
    arena = Arena(
        env.num_envs,
        rules,
        env.reward,
        env.match_bonus,
        pool=None,
        episode=env.episode,
        stock_cards=stock_cards,
        playout=config.model.critic_playout,
    )
    arena.reset(seed=config.train.seed * 1_000_003 + TEACHER_SEED_OFFSET, rng=rng)
    teacher = ExpertAgent(np.array(w.teacher_weights)) if w.teacher_weights else load_agent(w.teacher)
    storage = RolloutStorage(TEACHER_STEPS, config.env.num_envs, OBS_SIZE, NUM_ACTIONS, stock_cards)
    keys = ["obs", "table", "masks", "actions", "returns"]
    labels = None
    if w.improve_weight > 0:
        keys += ["adv", "has"]
        labels = {
            "adv": np.zeros((TEACHER_STEPS, env.num_envs, NUM_ACTIONS), dtype=np.float32),
            "has": np.zeros((TEACHER_STEPS, env.num_envs, NUM_ACTIONS), dtype=np.bool_),
        }
        weights = getattr(teacher, "weights", DEFAULT_WEIGHTS)
        params = rules.to_params()

        def label(t: int, actions: np.ndarray) -> None:
            rows = np.flatnonzero(rng.random(env.num_envs) < w.improve_fraction)
            obs, masks = arena.obs["observation"][rows], arena.obs["action_mask"][rows].astype(np.bool_)
            labels["adv"][t, rows], labels["has"][t, rows] = rollout_advantages(
                arena.env.engine.state, rows, obs, masks, actions[rows], teacher, weights, w.improve_candidates, params
            )

    parts: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    collected = 0
    while collected < w.decisions:
        if labels is not None:
            labels["adv"][:], labels["has"][:] = 0.0, False
        arena.collect(storage, None, None, rng, actor=teacher, before_step=label if labels is not None else None)
        returns = storage.advantages(config.ppo.gamma, 1.0)  # values are 0: advantages are the returns
        valid = storage.valid
        arrays = {
            "obs": storage.obs,
            "table": storage.table,
            "masks": storage.masks,
            "actions": storage.actions,
            "returns": returns,
            **(labels or {}),
        }
        for key in keys:
            parts[key].append(arrays[key][valid])
        count = int(valid.sum())
        progress(min(count, w.decisions - collected))
        collected += count
    return {key: np.concatenate(value)[: w.decisions] for key, value in parts.items()}


def rollout_advantages(
    state: EngineState,
    rows: np.ndarray,
    observations: np.ndarray,
    masks: np.ndarray,
    first: np.ndarray,
    teacher: AgentProtocol,
    weights: np.ndarray,
    extra: int,
    params: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, has) per row: each candidate's hand score for the player to act, played from match rows[i] of
    `state` (left unchanged) and rolled out by `teacher`, minus the mean over the row's candidates, in points; `has`
    marks the candidates. `first` (the teacher's actions) is every row's first candidate; rows with one get none."""
    adv = np.zeros((rows.size, NUM_ACTIONS), dtype=np.float32)
    has = np.zeros((rows.size, NUM_ACTIONS), dtype=np.bool_)
    cands, counts, _ = candidate_table(observations, masks, extra, weights)
    put_first(cands, counts, np.asarray(first, dtype=np.int64))
    several = np.flatnonzero(counts > 1)
    if several.size == 0:
        return adv, has
    row_of, cand_of, _ = rollout_layout(several, counts, 1)
    copy = EngineState(*(array[rows[row_of]] for array in state))  # fancy indexing copies
    actions = cands[row_of, cand_of]
    scores = rollout_scores(copy.arrays(), actions, copy.match[:, M_PLAYER].copy(), teacher, params)
    means = np.bincount(row_of, scores, minlength=rows.size) / np.maximum(counts, 1)
    adv[row_of, actions] = scores - means[row_of]
    has[row_of, actions] = True
    return adv, has


def expected_advantage(log_probs: torch.Tensor, adv: torch.Tensor, has: torch.Tensor) -> torch.Tensor:
    """sum_a pi(a) A(a) over the labelled rows (`has`: which actions have a rollout label), per labelled row, in
    the labels' points: the improvement term whose gradient moves pi towards the better candidates."""
    labelled = has.any(1).sum().clamp(min=1)
    return (log_probs.exp() * adv).sum() / labelled


def clone(
    model: ActorCritic,
    data: dict[str, np.ndarray],
    config: Config,
    generator: torch.Generator,
    log: Callable[[int, dict[str, float]], None],
    device: torch.device,
) -> dict[str, float]:
    """Epochs of cross-entropy on the teacher's actions plus the value regression, on `device`; log(epoch, stats)
    after each epoch."""
    w = config.warmstart
    obs = torch.from_numpy(model.policy.prepare(data["obs"])).to(device)  # the teacher's rows, as network inputs
    table, masks = (torch.from_numpy(data[key]).to(device) for key in ("table", "masks"))
    actions = torch.from_numpy(data["actions"]).to(device)
    returns = torch.from_numpy(data["returns"].astype(np.float32)).to(device)
    improving = w.improve_weight > 0 and "adv" in data
    if improving:
        adv, has = (torch.from_numpy(data[key]).to(device) for key in ("adv", "has"))
    optimizer = torch.optim.Adam(model.parameters(), lr=w.lr)
    size = len(actions)
    steps = w.epochs * -(-size // w.minibatch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / steps)
    stats: dict[str, float] = {}
    for epoch in range(w.epochs):
        order = torch.randperm(size, generator=generator, device=device)
        totals = torch.zeros(4, dtype=torch.float64, device=device)
        for start in range(0, size, w.minibatch_size):
            idx = order[start : start + w.minibatch_size]
            logits, values, belief_loss = model.outputs(obs[idx], table[idx])
            log_probs = masked_log_probs(logits, masks[idx])
            policy_loss = -log_probs.gather(1, actions[idx, None]).mean()
            value_loss = 0.5 * ((values - returns[idx]) ** 2).mean()
            loss = policy_loss + w.value_coef * value_loss + config.ppo.belief_coef * belief_loss
            gain = torch.zeros((), device=device)
            if improving:
                gain = expected_advantage(log_probs, adv[idx], has[idx])
                loss = loss - w.improve_weight * gain
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.ppo.max_grad_norm)
            optimizer.step()
            schedule.step()
            accuracy = (log_probs.argmax(1) == actions[idx]).float().mean()
            batch_stats = [policy_loss.detach(), value_loss.detach(), accuracy, gain.detach()]
            totals += torch.stack(batch_stats).double() * len(idx)
        names = ("policy_loss", "value_loss", "accuracy", "rollout_gain")
        stats = dict(zip(names[: 3 + improving], (totals / size).tolist()[: 3 + improving], strict=True))
        log(epoch, stats)
    return stats
