"""Throwaway (round seventeen): fine-tune the shipped bot with oracle guiding (Suphx-style) and without.

The actor's torso features get alpha * Linear(opponent hand bits + deadwood) added before the policy head (rollout
sampling and PPO update alike); evaluations and the saved policy use the oracle-free network. alpha: 0 while the
critic warms up (policy frozen), 1 until FADE0, linear to 0 at FADE1, 0 after. --no-oracle: the control.
"""

import argparse
import json
import time
import types

import torch
from torch import nn

from agents.config import load_config
from agents.run import TrainingRun
from hollywood_gin_env.agents.policy import load_checkpoint

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--updates", type=int, default=700)
p.add_argument("--warm", type=int, default=40)
p.add_argument("--fade0", type=int, default=300)
p.add_argument("--fade1", type=int, default=500)
p.add_argument("--lr", type=float, default=1e-4)
p.add_argument("--oracle-lr-scale", type=float, default=10.0)
p.add_argument("--per-card", action="store_true")
p.add_argument("--no-oracle", action="store_true")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--measure-at", type=int, default=0)
p.add_argument("--measure-collects", type=int, default=30)
a = p.parse_args()

config = load_config("configs/default.toml", [
    "warmstart.teacher=none", "warmstart.teacher_weights=[]", f"train.updates={a.updates}", f"train.lr={a.lr}", "ppo.ent_coef=0.001",
    "ppo.ent_coef_final=0.0005", "train.max_minutes=0", f"train.seed={a.seed}"])
run = TrainingRun.create(config)
shipped, _ = load_checkpoint("checkpoints/hollywood-ppo.pt")
run.model.policy.load_state_dict(shipped.state_dict())
model = run.model
ORACLE = 53  # the table view's opponent hand (52) and deadwood (1)
from hollywood_gin_env.agents import policy as P

C = model.policy.rank_bias.shape[1]
if a.per_card:
    model.oracle = nn.ModuleDict({"runs": nn.Linear(P.SUIT_KERNEL, C), "sets": nn.Linear(1, C, bias=False)})
else:
    model.oracle = nn.Linear(ORACLE, model.policy.feature_size)
for q in model.oracle.parameters():
    nn.init.zeros_(q)
model.alpha = 0.0


def card_head(pol, observations, features, opp, alpha):
    """CardPolicy.head with alpha * (the opponent's cards, through a per-card layer) in each card's hidden units."""
    batch, channels = observations.shape[0], pol.rank_bias.shape[1]
    planes = observations[:, : P.CARD_PLANES * P.NUM_CARDS].reshape(batch, P.CARD_PLANES, P.NUM_SUITS, P.NUM_RANKS)
    cards = [planes, P._discard_planes(observations)]
    if pol.lookahead_features:
        extra = observations[:, P.OBS_SIZE : P.OBS_SIZE + P.LOOKAHEAD_PLANES * P.NUM_CARDS]
        cards.append(extra.reshape(batch, P.LOOKAHEAD_PLANES, P.NUM_SUITS, P.NUM_RANKS))
    cards = torch.cat(cards, dim=1)
    by_suit = cards.transpose(1, 2).reshape(batch * P.NUM_SUITS, pol.card_inputs, P.NUM_RANKS)
    kernel = pol.runs.weight.view(channels, P.SUIT_KERNEL, pol.card_inputs).transpose(1, 2)
    runs = nn.functional.conv1d(by_suit, kernel, pol.runs.bias, padding=P.SUIT_KERNEL // 2)
    sets = torch.einsum("bkr,ck->bcr", cards.sum(2), pol.rank_mix.weight)
    shared = sets + pol.context(features)[:, :, None] + pol.rank_bias.t()
    pre = runs.view(batch, P.NUM_SUITS, channels, P.NUM_RANKS) + shared[:, None]
    o = opp.reshape(batch, 1, P.NUM_SUITS, P.NUM_RANKS)
    o_by_suit = o.transpose(1, 2).reshape(batch * P.NUM_SUITS, 1, P.NUM_RANKS)
    o_kernel = model.oracle["runs"].weight.view(channels, P.SUIT_KERNEL, 1).transpose(1, 2)
    o_runs = nn.functional.conv1d(o_by_suit, o_kernel, model.oracle["runs"].bias, padding=P.SUIT_KERNEL // 2)
    o_sets = torch.einsum("bkr,ck->bcr", o.sum(2), model.oracle["sets"].weight)
    pre = pre + alpha * (o_runs.view(batch, P.NUM_SUITS, channels, P.NUM_RANKS) + o_sets[:, None])
    hidden = pol.act(pre)
    per_card = torch.einsum("bscr,oc->bosr", hidden, pol.card_out.weight) + pol.card_out.bias[:, None, None]
    per_card = per_card.reshape(batch, 3, P.NUM_CARDS)
    if pol.take_features:
        features = torch.cat([features, observations[:, P.TAKE_EFFECT : P.TAKE_EFFECT + P.TAKE_EFFECT_SIZE]], dim=1)
    if pol.lookahead_features:
        numbers = P.OBS_SIZE + P.LOOKAHEAD_PLANES * P.NUM_CARDS
        features = torch.cat([features, observations[:, numbers : numbers + P.LOOKAHEAD_NUMBERS]], dim=1)
    general = pol.general(features)
    face_up = observations[:, P.FACE_UP : P.FACE_UP + P.NUM_CARDS]
    take = general[:, P.ACTION_TAKE] + (face_up * per_card[:, 2]).sum(1)
    return torch.cat([general[:, : P.ACTION_TAKE], take[:, None], general[:, P.ACTION_TAKE + 1 :],
                      per_card[:, 0], per_card[:, 1]], dim=1)


def guided(self, obs, table):
    features = self.policy.features(obs)
    if a.per_card:
        if self.alpha > 0:
            return card_head(self.policy, obs, features, table[:, :52], self.alpha), self._value(features, table)
        return self.policy.head(obs, features), self._value(features, table)
    acting = features + self.alpha * self.oracle(table[:, :ORACLE]) if self.alpha > 0 else features
    return self.policy.head(obs, acting), self._value(features, table)


def forward(self, obs, table=None):
    return guided(self, obs, table)


def outputs(self, obs, table):
    logits, values = guided(self, obs, table)
    return logits, values, torch.zeros((), device=obs.device)


model.forward = types.MethodType(forward, model)
model.outputs = types.MethodType(outputs, model)
oracle_ids = {id(q) for q in model.oracle.parameters()}
run.optimizer = torch.optim.Adam([{"params": [q for q in model.parameters() if id(q) not in oracle_ids]},
                                  {"params": list(model.oracle.parameters())}], lr=a.lr, eps=1e-5)
run.start()


def alpha_of(update):
    if a.no_oracle or update <= a.warm:
        return 0.0
    if update <= a.fade0:
        return 1.0
    if update >= a.fade1:
        return 0.0
    return 1.0 - (update - a.fade0) / (a.fade1 - a.fade0)


log = open(f"{a.out}.log", "a")
t_start = time.perf_counter()
for update in range(1, a.updates + 1):
    model.alpha = alpha_of(update)
    frozen = update <= a.warm
    for param in list(model.policy.parameters()) + list(model.oracle.parameters()):
        param.requires_grad_(not frozen)
    lr, ent = run.schedule(update)
    run.optimizer.param_groups[1]["lr"] = a.oracle_lr_scale * lr
    t0 = time.perf_counter()
    batch = run.collect()
    losses = run.learn(batch, ent)
    run.snapshot(update)
    row = {"update": update, "alpha": model.alpha, "s": round(time.perf_counter() - t0, 2),
           "wall_min": round((time.perf_counter() - t_start) / 60, 1),
           "oracle_norm": float(sum(q.detach().norm() ** 2 for q in model.oracle.parameters()) ** 0.5),
           **{k: round(float(v), 4) for k, v in losses.items()}, **run.arena.hand_summary()}
    if update % 100 == 0 or update == a.updates:
        results = run.evaluate()
        row.update({f"vs_{k}": (round(v["match_win_rate"], 3), round(v["points_per_hand"], 2))
                    for k, v in results.items()})
        run.save_policy(f"{a.out}-u{update}.pt")
    print(json.dumps(row, default=str), file=log, flush=True)
    if update == a.measure_at:
        import dataclasses

        import numpy as np
        run.pool.config = dataclasses.replace(run.pool.config, self_weight=0.0, snapshot_weight=0.0,
                                              expert_weight=1.0, greedy_weight=0.0)
        for alpha in (1.0, 0.0):
            model.alpha = alpha
            run.arena.reset(seed=12345, rng=np.random.default_rng(12345))
            run.generator.manual_seed(12345)
            total, hands = 0.0, 0
            per = []
            with torch.no_grad():
                for _ in range(a.measure_collects):
                    run.arena.clear_stats()
                    run.arena.collect(run.storage, model, run.generator, np.random.default_rng(1))
                    st = run.storage
                    r = float(st.rewards[st.valid].sum()) * 100
                    h = int(st.dones[st.valid].sum())
                    total += r
                    hands += h
                    per.append(r / max(h, 1))
            print(json.dumps({"measure_update": update, "alpha": alpha, "points_per_hand": total / hands,
                              "hands": hands, "se_between_collects": float(np.std(per) / np.sqrt(len(per)))}),
                  file=log, flush=True)
        break
run.save_policy(f"{a.out}.pt")
print("done", file=log, flush=True)
