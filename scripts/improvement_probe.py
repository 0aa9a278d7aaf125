"""Is a trained policy at a fixed point of one-step improvement? Label its own decisions by play-outs from the true
state, fine-tune a copy on the labels, and score the copy's changed choices on held-out positions.

Run: `python scripts/improvement_probe.py [--checkpoint checkpoints/hollywood-ppo.pt] [--opponent expert]
[--decisions knock|discard|draw] [--positions 30000] [--seed 31] [--save PATH | --score AGENT | --reveal P |
--wider WxD]`; prints the held-out gain a decision after each epoch, and at the end the gain on the positions trained
on (docs/TRAINING.md, "What was tried", round fifteen). With `--score AGENT` it
fine-tunes nothing and scores that agent's choices (a search agent's, say) on every labelled position instead.

The policy plays seat 0 of `SelfPlayVectorEnv` matches against the opponent. At the chosen kind of decision (every
knock-legal one, or a share of the discards or of the take, pass and draw decisions) each candidate (the policy's
action, `expert`'s, the best knock and `expert`'s best discards; every legal action outside the discard phase) is
played in a copy of the match and the hand is played out by the policy for itself and the opponent for itself
(`warmstart.rollout_advantages`). The true state is one draw of the hidden cards from their distribution given the
observation, so these labels carry no belief's bias. A copy of the policy is fine-tuned on 80% of the positions with
the warm start's improvement term plus `beta` times the KL from the policy (on these positions and on a sample of
all its decisions); on the other 20%, its argmax is scored by the labels: its candidate's score minus that of the
policy's own choice, in points. A choice outside the candidates scores 0 and is counted.

Two checks of the probe itself (TRAINING.md "What was tried", rounds twenty and twenty-one): `--reveal P`, its power,
gives the copy each of the opponent's cards with chance P, through a per-card layer that starts at zero; `--wider
WxD`, its capacity, adds to the copy an MLP of D hidden layers of W units over the policy's inputs, whose logits are
added to the policy's and whose output layer starts at zero. Either way the copy plays as the policy before the
fine-tune, and it is never saved or scored (a copy that reads the opponent's cards cannot play a real match).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's `agents` package, run from anywhere

from agents.ppo import ORACLE_LR_SCALE, CardOracle  # noqa: E402
from agents.warmstart import expected_advantage, rollout_advantages  # noqa: E402
from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS  # noqa: E402
from hollywood_gin_env.agents.masked import mask_logits, masked_log_probs  # noqa: E402
from hollywood_gin_env.agents.policy import load_checkpoint, save_checkpoint  # noqa: E402
from hollywood_gin_env.agents.search import knock_legal  # noqa: E402
from hollywood_gin_env.cards import NUM_CARDS  # noqa: E402
from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.observation import O_PHASE, O_SEAT, OBS_SIZE  # noqa: E402
from hollywood_gin_env.rules import Rules  # noqa: E402
from hollywood_gin_env.state import NUM_ACTIONS, PHASE_DISCARD, EngineState  # noqa: E402

DECISIONS = ("knock", "discard", "draw")
MATCHES = 256
ANCHOR_SHARE = 0.04  # the share of all the policy's decisions kept for the KL anchor
LABEL_CHUNK = 2000  # positions labelled per batch of play-outs
ADVANTAGE_SCALE = 20.0  # points: the labels' spread, so that beta weighs the KL against a unit-sized term
MAX_WIDTH, MAX_DEPTH = 4096, 4  # --wider: a 4096x4 MLP is some 60M weights, about as much as a 2-core machine trains


class SeatAgents:
    """Two agents behind one: rows observed from seat 0 go to the first, from seat 1 to the second."""

    def __init__(self, seat0, seat1) -> None:
        self.agents = (seat0, seat1)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Each row's action by the agent of its seat."""
        actions = np.zeros(observations.shape[0], dtype=np.int64)
        seats = observations[:, O_SEAT].round().astype(np.int64)
        for seat, agent in enumerate(self.agents):
            rows = np.flatnonzero(seats == seat)
            if rows.size:
                actions[rows] = agent.act(observations[rows], action_masks[rows])
        return actions


class WithHand(torch.nn.Module):
    """A policy whose card head also reads some of the opponent's cards (`--reveal`), through a CardOracle that
    starts at zero, so that before training it plays exactly as the policy."""

    def __init__(self, policy: torch.nn.Module) -> None:
        super().__init__()
        if not hasattr(policy, "runs"):
            raise ValueError('--reveal needs a card-head policy (arch = "cards")')
        self.policy = policy
        self.oracle = CardOracle(policy.runs.out_features)

    def forward(self, observations: torch.Tensor, revealed: torch.Tensor) -> torch.Tensor:
        """Logits (B, 107) given the revealed card bits (B, 52)."""
        return self.policy.head(observations, self.policy.features(observations), self.oracle(revealed))


class Wider(torch.nn.Module):
    """A policy plus a wide MLP over the same input rows (`--wider`), its logits added to the policy's; the MLP's
    output layer starts at zero, so that before training the copy plays exactly as the policy."""

    def __init__(self, policy: torch.nn.Module, width: int, depth: int) -> None:
        super().__init__()
        self.policy = policy
        layers, size = [], policy.prepare(np.zeros((1, OBS_SIZE), dtype=np.float32)).shape[1]
        for _ in range(depth):
            layers += [torch.nn.Linear(size, width), torch.nn.ReLU()]
            size = width
        out = torch.nn.Linear(size, NUM_ACTIONS)
        torch.nn.init.zeros_(out.weight)
        torch.nn.init.zeros_(out.bias)
        self.extra = torch.nn.Sequential(*layers, out)

    def prepare(self, observations: np.ndarray) -> np.ndarray:
        """The policy's input rows."""
        return self.policy.prepare(observations)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Logits (B, 107): the policy's plus the MLP's."""
        return self.policy(observations) + self.extra(observations)


def parse_wider(text: str) -> tuple[int, int]:
    """(width, depth) of a `--wider` value such as "1024x2"."""
    width, sep, depth = text.lower().partition("x")
    if not (sep and width.isdecimal() and depth.isdecimal()):
        raise ValueError(f"--wider {text!r}: use WIDTHxDEPTH, e.g. 1024x2")
    if not 1 <= int(width) <= MAX_WIDTH or not 1 <= int(depth) <= MAX_DEPTH:
        raise ValueError(f"--wider {text!r}: the width must lie in 1..{MAX_WIDTH}, the depth in 1..{MAX_DEPTH}")
    return int(width), int(depth)


def revealed_cards(states: EngineState, seat: int, share: float, seed: int) -> np.ndarray:
    """float32[N, 52]: the hand of `seat` in each match of `states`, each card kept with chance `share`."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share={share!r}: must lie in [0, 1]")
    bits = (states.hands[:, seat, None] >> np.arange(NUM_CARDS)) & 1
    shown = np.random.default_rng(seed).random(bits.shape) < share
    return (bits * shown).astype(np.float32)


def is_probed(decisions: str, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """bool per row: a decision of the kind probed (before the random share is drawn)."""
    if decisions == "knock":
        return knock_legal(masks)
    discard = observations[:, O_PHASE + PHASE_DISCARD] > 0.5  # the one-hot phase block
    return discard if decisions == "discard" else ~discard


def collect(
    agents: SeatAgents, decisions: str, positions: int, share: float, seed: int
) -> tuple[np.ndarray, np.ndarray, EngineState, np.ndarray, np.ndarray, int]:
    """(observations, masks, true states) of `positions` seat-0 decisions of the kind probed, a sample of all its
    decisions (observations, masks) for the KL anchor, and the hands played."""
    env = SelfPlayVectorEnv(MATCHES, episode="match")
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states = EngineState.allocate(positions)
    observations = np.zeros((positions, OBS_SIZE), dtype=np.float32)
    masks = np.zeros((positions, NUM_ACTIONS), dtype=np.int8)
    anchor_obs, anchor_masks = [], []
    taken = hands = 0
    while taken < positions:
        o, m = obs["observation"], obs["action_mask"]
        mine = info["current_player"] == 0
        keep = mine & is_probed(decisions, o, m)
        if decisions != "knock":
            keep &= rng.random(MATCHES) < share
        for i in np.flatnonzero(keep)[: positions - taken]:
            env.engine.state.copy_match(int(i), states, taken)
            observations[taken], masks[taken] = o[i], m[i]
            taken += 1
        anchor = np.flatnonzero(mine & (rng.random(MATCHES) < ANCHOR_SHARE))
        anchor_obs.append(o[anchor])
        anchor_masks.append(m[anchor])
        obs, _, _, _, info = env.step(agents.act(o, m))
        hands += int(info["hand_over"].sum())
    return observations, masks, states, np.concatenate(anchor_obs), np.concatenate(anchor_masks), hands


def label(
    states: EngineState,
    observations: np.ndarray,
    masks: np.ndarray,
    first: np.ndarray,
    agents: SeatAgents,
    candidates: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, has) of every position: `warmstart.rollout_advantages` in chunks, both seats played out by
    `agents`."""
    params = Rules().to_params()
    adv = np.zeros((first.size, NUM_ACTIONS), dtype=np.float32)
    has = np.zeros((first.size, NUM_ACTIONS), dtype=np.bool_)
    for start in range(0, first.size, LABEL_CHUNK):
        rows = np.arange(start, min(first.size, start + LABEL_CHUNK))
        adv[rows], has[rows] = rollout_advantages(
            states,
            rows,
            observations[rows],
            masks[rows].astype(np.bool_),
            first[rows],
            agents,
            DEFAULT_WEIGHTS,
            candidates,
            params,
        )
    return adv, has


def held_out_gain(
    logits: torch.Tensor, masks: torch.Tensor, first: np.ndarray, adv: np.ndarray, has: np.ndarray
) -> dict[str, float]:
    """`choice_gain` of the logits' masked argmax."""
    return choice_gain(mask_logits(logits, masks).argmax(1).numpy(), first, adv, has)


def choice_gain(choice: np.ndarray, first: np.ndarray, adv: np.ndarray, has: np.ndarray) -> dict[str, float]:
    """The label of each row's choice minus the label of `first` (points a decision, its standard error), the share
    of changed choices and the share outside the candidates (scored 0)."""
    rows = np.arange(choice.size)
    labelled = has[rows, choice]
    gain = np.where(labelled, adv[rows, choice] - adv[rows, first], 0.0)
    return {
        "gain": float(gain.mean()),
        "se": float(gain.std(ddof=1) / np.sqrt(gain.size)) if gain.size > 1 else 0.0,
        "changed": float((choice != first).mean()),
        "outside": float((~labelled).mean()),
    }


def describe(score: dict[str, float], what: str = "held-out gain") -> str:
    """One line of held_out_gain's (or choice_gain's) figures."""
    return (
        f"{what} {score['gain']:+.3f} ± {score['se']:.3f} points a decision, {score['changed']:.1%} of "
        f"choices changed, {score['outside']:.1%} outside the candidates"
    )


def kl_from(old: torch.Tensor, logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Mean KL(old || new) over rows, old given as masked log-probabilities."""
    new = masked_log_probs(logits, masks)
    return (old.exp() * (old - new)).masked_fill(~masks, 0.0).sum(-1).mean()


def finetune(
    policy: torch.nn.Module, data: dict[str, np.ndarray], beta: float, lr: float, epochs: int, seed: int, report=print
) -> list[dict[str, float]]:
    """Fine-tune `policy` in place on the labelled positions (module docstring); the held-out scores before the first
    epoch and after each. With data["revealed"] (`revealed_cards`), `policy` is a WithHand that reads it."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(data["first"]), generator=generator).numpy()
    held, train = order[: len(order) // 5], order[len(order) // 5 :]
    revealed = None if data.get("revealed") is None else torch.from_numpy(data["revealed"])
    base = policy if revealed is None else policy.policy  # the anchor rows' policy: they have no hand to read

    def logits_of(observations: torch.Tensor, rows=slice(None)) -> torch.Tensor:
        return policy(observations) if revealed is None else policy(observations, revealed[rows])

    x = torch.from_numpy(base.prepare(data["obs"]))
    m = torch.from_numpy(data["masks"].astype(np.bool_))
    adv = torch.from_numpy(data["adv"] / ADVANTAGE_SCALE)
    has = torch.from_numpy(data["has"])
    xa = torch.from_numpy(base.prepare(data["anchor_obs"]))
    ma = torch.from_numpy(data["anchor_masks"].astype(np.bool_))
    with torch.no_grad():
        old, old_anchor = masked_log_probs(logits_of(x), m), masked_log_probs(base(xa), ma)

    def score(rows: np.ndarray = held) -> dict[str, float]:
        with torch.no_grad():
            logits = logits_of(x[rows], rows)
        return held_out_gain(logits, m[rows], data["first"][rows], data["adv"][rows], data["has"][rows])

    scores = [score()]
    report(f"before: {describe(scores[0])}")
    groups = [{"params": list(base.parameters()), "lr": lr}]
    if revealed is not None:  # as in oracle guiding: the zero-initialised layer has few steps to matter
        groups.append({"params": list(policy.oracle.parameters()), "lr": lr * ORACLE_LR_SCALE})
    optimizer = torch.optim.Adam(groups)
    batch = 1024
    for epoch in range(epochs):
        shuffled = train[torch.randperm(train.size, generator=generator).numpy()]
        for start in range(0, shuffled.size, batch):
            idx = torch.from_numpy(shuffled[start : start + batch])
            anchor = torch.randint(len(ma), (len(idx),), generator=generator)
            logits = logits_of(x[idx], idx)
            log_probs = masked_log_probs(logits, m[idx])
            loss = -expected_advantage(log_probs, adv[idx], has[idx]) + beta * (
                kl_from(old[idx], logits, m[idx]) + kl_from(old_anchor[anchor], base(xa[anchor]), ma[anchor])
            )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
        scores.append(score())
        report(f"epoch {epoch + 1}: {describe(scores[-1])}")
    # the same score where the copy was trained: a large gain here and none held out is fitting the labels' noise
    report(f"on the positions trained on: {describe(score(train), 'gain')}")
    return scores


def main() -> None:
    """Collect, label, fine-tune, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/hollywood-ppo.pt")
    parser.add_argument("--opponent", default="expert", help="an agent spec: expert, greedy, checkpoint:PATH, ...")
    parser.add_argument("--decisions", choices=DECISIONS, default="knock")
    parser.add_argument("--positions", type=int, default=30000)
    parser.add_argument("--share", type=float, default=0.25, help="share of discard or draw decisions taken")
    parser.add_argument("--candidates", type=int, default=3, help="expert's best discards among the candidates")
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument(
        "--reveal",
        type=float,
        metavar="P",
        help="the power check: the fine-tuned copy also reads "
        "each of the opponent's cards with chance P (module docstring)",
    )
    parser.add_argument(
        "--wider",
        metavar="WxD",
        help="the capacity check: the fine-tuned copy adds an MLP of D "
        "hidden layers of W units over the policy's inputs, zero at the start (module docstring)",
    )
    parser.add_argument("--save", help="write the fine-tuned policy to this checkpoint path (to evaluate it)")
    parser.add_argument(
        "--score",
        metavar="AGENT",
        help="instead of fine-tuning, score this agent's choices (any "
        "spec, e.g. a search agent) on every labelled position against the policy's own",
    )
    args = parser.parse_args()
    if args.positions < 10 or not 0.0 < args.share <= 1.0 or not 1 <= args.candidates <= 11:
        parser.error("--positions must be at least 10, --share in (0, 1], --candidates in 1..11")
    if args.reveal is not None and (not 0.0 <= args.reveal <= 1.0 or args.save or args.score):
        parser.error(
            f"--reveal {args.reveal}: must lie in [0, 1], and a copy that reads the opponent's cards cannot "
            "be saved or scored (--save, --score)"
        )
    if args.wider is not None:
        if args.reveal is not None or args.save or args.score:
            parser.error(
                f"--wider {args.wider}: a copy with an extra MLP cannot also read the opponent's cards, be "
                "saved or be scored (--reveal, --save, --score)"
            )
        try:
            wider = parse_wider(args.wider)
        except ValueError as error:
            parser.error(str(error))
    torch.set_num_threads(args.threads)
    policy, config = load_checkpoint(args.checkpoint)
    agents = SeatAgents(load_agent(f"checkpoint:{args.checkpoint}"), load_agent(args.opponent))
    start = time.time()
    obs, masks, states, anchor_obs, anchor_masks, hands = collect(
        agents, args.decisions, args.positions, args.share, args.seed
    )
    first = agents.act(obs, masks)
    adv, has = label(states, obs, masks, first, agents, args.candidates)
    print(
        f"{args.positions} {args.decisions} positions from {hands} hands, {has.sum(1).mean():.1f} candidates "
        f"each, labelled in {time.time() - start:.0f} s"
    )
    if args.score:
        started = time.time()
        scored = load_agent(args.score, seed=args.seed)
        # in chunks: a search agent holds an engine state per candidate and rollout of every row it is given
        choice = np.concatenate(
            [scored.act(obs[i : i + LABEL_CHUNK], masks[i : i + LABEL_CHUNK]) for i in range(0, len(obs), LABEL_CHUNK)]
        )
        score = describe(choice_gain(choice, first, adv, has), "gain over the policy")
        print(f"{args.score}: {score} ({time.time() - started:.0f} s)")
        return
    data = {
        "obs": obs,
        "masks": masks,
        "first": first,
        "adv": adv,
        "has": has,
        "anchor_obs": anchor_obs,
        "anchor_masks": anchor_masks,
    }
    if args.reveal is not None:
        data["revealed"] = revealed_cards(states, 1, args.reveal, args.seed)  # seat 1 is the opponent
        policy = WithHand(policy)
    if args.wider is not None:
        torch.manual_seed(args.seed)  # the MLP's hidden layers start from torch's default initialisation
        policy = Wider(policy, *wider)
    finetune(policy.train(), data, args.beta, args.lr, args.epochs, args.seed)
    if args.save:
        save_checkpoint(args.save, policy.eval(), config)
        print(f"saved {args.save}")


if __name__ == "__main__":
    main()
