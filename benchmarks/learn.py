"""Strength per minute of training: our trainer's recipes against sb3-contrib's MaskablePPO, same machine and threads.

    python benchmarks/learn.py                         # four trainers (not shipped-900), 40 minutes each, then scoring
    python benchmarks/learn.py --trainers shipped --minutes 95 --marks 20 40 60 80 95 --out runs/learn-shipped
    python benchmarks/learn.py --score-only --out runs/learn   # the report again from the saved policies
    python benchmarks/learn.py --smoke                 # seconds: checks the benchmark runs (CI), figures not meant

Each trainer learns for `--minutes` of wall-clock time, alone in a child process, with `--threads` torch threads:

- `quick`: `hollywood-gin train --config configs/quick.toml` (a warm start, then 20 PPO updates: done in a few
  minutes; its final policy stands for the later marks);
- `shipped`: the shipped bot's recipe (configs/default.toml), cut at the budget;
- `shipped-900` (run only when named): the same recipe with `train.updates=900`, about the updates it completes in
  40 minutes on 2 cores, so that its learning rate and entropy coefficient anneal inside the budget;
- `maskable`: `MaskablePPO("MultiInputPolicy", make_vec_env("HollywoodGin-v1", n_envs=8, env_kwargs={"opponent":
  "greedy", "episode": "hand"}))` with sb3-contrib's default hyperparameters, as its users run it;
- `maskable-zoo`: the same with the hyperparameters RL Baselines3 Zoo gives PPO for long runs on discrete actions
  (its Atari entry without the image wrappers: n_steps 128 per env, batch 256, 4 epochs, learning rate 2.5e-4,
  clip 0.1, entropy 0.01) and the 256x256 networks it uses for its larger tasks (the default is 64x64). The Zoo's
  learning rate and clip decay linearly over a run's planned steps; under a wall-clock budget they stay constant.

The policy each trainer has when the clock passes a mark (`--marks`, minutes) is saved: ours at the first update
boundary after the mark (a few seconds later), MaskablePPO at the step. A mark passed during our warm start gets
the network as initialised (that is what the user has then). Our trainer's own evaluations are off: every policy is
scored afterwards, the same way, by duplicate-deal matches (`--matches` per opponent, seeded on deals no trainer
saw) against `greedy` and `expert`, with Wilson 95% intervals. Secondary: each trainer's learner decisions per
second (ours in the PPO phase; MaskablePPO's env steps), and their ratio.

Output under `--out`: each trainer's folder (its policies and marks.json), learn.json (every figure), learn.png
(match win rate against minutes, one line per trainer, intervals shaded, one panel per opponent) and the table on
stdout. A trainer whose marks.json exists is not trained again (delete its folder to redo it), except under --smoke;
a policy already scored (scores.json in its folder) is not played again.

A results folder is read as data (benchmarks/_results.py), all of it before any scoring: only files inside it
(a symlink out of it, a device or a FIFO is refused), bounded, each record checked; a damaged one stops the run in
one line naming it. Our policies are safetensors files. A MaskablePPO `.zip` is a pickle (loading it runs its
code), so one is loaded only if this run trained it; one from elsewhere is reported from its scores.json or
refused. learn.json, learn.png and each marks.json and scores.json are written atomically, never through a symlink.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _results import MARKS, SCORES, ResultsError, check_marks, inside, is_pickle, policy_digest, read_record  # noqa: E402

from hollywood_gin_env.support.atomic import (  # noqa: E402
    AtomicWriteError,
    atomic_write,
    atomic_write_text,
    check_write_target,
)
from hollywood_gin_env.support.userfiles import shown  # noqa: E402

TRAINERS = ("quick", "shipped", "maskable", "maskable-zoo", "shipped-900")
#: The trainers run when --trainers is not given (shipped-900 is the shipped recipe's 40-minute variant).
DEFAULT_TRAINERS = ("quick", "shipped", "maskable", "maskable-zoo")
RECIPES = {
    "quick": ("configs/quick.toml", []),
    "shipped": ("configs/default.toml", []),
    # about 900 updates are what the shipped recipe completes in 40 minutes on 2 cores: its learning rate and
    # entropy coefficient anneal inside that budget instead of stopping 45% of the way through the 2,000 updates
    "shipped-900": ("configs/default.toml", ["train.updates=900"]),
    "smoke": ("configs/smoke.toml", []),
}
OPPONENTS = ("greedy", "expert")
#: The scoring matches' seed: deals of their own, never those of a training run.
SCORE_SEED = 7_000_003
MASKABLE_KWARGS = {"opponent": "greedy", "episode": "hand"}
#: RL Baselines3 Zoo's PPO settings for discrete actions (hyperparams/ppo.yml, "atari"), 256x256 networks.
ZOO_HYPERPARAMETERS = {
    "n_steps": 128,
    "batch_size": 256,
    "n_epochs": 4,
    "learning_rate": 2.5e-4,
    "clip_range": 0.1,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "policy_kwargs": {"net_arch": {"pi": [256, 256], "vf": [256, 256]}},
}


class Clock:
    """Minutes since the trainer started, and which marks have passed."""

    def __init__(self, marks: list[float]) -> None:
        self.start, self.pending = time.perf_counter(), sorted(marks)

    def minutes(self) -> float:
        """Wall-clock minutes since the start."""
        return (time.perf_counter() - self.start) / 60

    def passed(self) -> list[float]:
        """The marks passed since the last call (each once)."""
        now = self.minutes()
        done = [m for m in self.pending if m <= now]
        self.pending = [m for m in self.pending if m > now]
        return done


def train_ours(name: str, minutes: float, marks: list[float], folder: Path, threads: int, seed: int) -> dict:
    """Our recipe `name` for `minutes`; the policy at each mark saved in folder."""
    import torch

    from hollywood_gin_trainer.config import load_config
    from hollywood_gin_trainer.run import TrainingRun, resolve_device

    recipe, recipe_overrides = RECIPES[name]
    overrides = [f"train.seed={seed}", f"train.torch_threads={threads}", "train.max_minutes=0", "eval.every=0"]
    config = load_config(str(ROOT / recipe), recipe_overrides + overrides)
    torch.set_num_threads(threads)  # this child process is the trainer's: it sets what the recipe asks
    clock, saved = Clock(marks), []
    run = TrainingRun.create(config, resolve_device("cpu"))

    def save(label: str, marks_now: list[float]) -> None:
        path = folder / f"policy-{label}.safetensors"
        run.save_policy(path)
        saved.extend({"mark": m, "policy": path.name, "minutes": clock.minutes()} for m in marks_now)

    save("init", [])  # the network as initialised: what a mark during the warm start has
    run.start()
    init_marks = clock.passed()
    saved.extend({"mark": m, "policy": "policy-init.safetensors", "minutes": m} for m in init_marks)
    decisions, ppo_start, update = 0, time.perf_counter(), 0
    while update < config.train.updates and clock.minutes() < minutes:
        update += 1
        decisions += int(run.update(update)["charts/decisions"])  # no in-training evaluation
        run.snapshot(update)
        marks_now = clock.passed()
        if marks_now:
            save(f"{marks_now[-1]:g}min", marks_now)
    ppo_seconds = time.perf_counter() - ppo_start
    if clock.pending:  # the recipe finished before the budget: its final policy stands for the later marks
        save("final", clock.pending)
    run.close()
    return {"marks": saved, "decisions": decisions, "decisions_per_s": decisions / max(ppo_seconds, 1e-9)}


def train_maskable(
    minutes: float, marks: list[float], folder: Path, threads: int, seed: int, smoke: bool, zoo: bool = False
) -> dict:
    """MaskablePPO (its defaults, or the Zoo's settings) for `minutes`; the model at each mark saved in folder."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)

    torch.set_num_threads(threads)
    envs = make_vec_env("HollywoodGin-v1", n_envs=8, seed=seed, env_kwargs=MASKABLE_KWARGS)
    kwargs = dict(ZOO_HYPERPARAMETERS) if zoo else {}
    if smoke:
        kwargs.update(n_steps=16, batch_size=16)
    model = MaskablePPO("MultiInputPolicy", envs, seed=seed, verbose=0, device="cpu", **kwargs)
    clock, saved = Clock(marks), []

    class AtMarks(BaseCallback):
        def _on_step(self) -> bool:
            marks_now = clock.passed()
            if marks_now:
                path = folder / f"policy-{marks_now[-1]:g}min.zip"
                self.model.save(path)
                saved.extend({"mark": m, "policy": path.name, "minutes": clock.minutes()} for m in marks_now)
            return clock.minutes() < minutes

    started = time.perf_counter()
    model.learn(total_timesteps=10**12, callback=AtMarks())
    elapsed = time.perf_counter() - started
    return {"marks": saved, "decisions": model.num_timesteps, "decisions_per_s": model.num_timesteps / elapsed}


class MaskableAgent:
    """A saved MaskablePPO model as an agent of this package: its deterministic action for each row. Loading one
    unpickles it (runs its code): only for a zip this benchmark trained in this run (`plan`)."""

    def __init__(self, path: Path, name: str) -> None:
        from sb3_contrib import MaskablePPO

        self.model, self.name = MaskablePPO.load(path, device="cpu"), name

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """int64[B] actions for a batch of observations and masks."""
        obs = {"observation": observations, "action_mask": action_masks}
        actions, _ = self.model.predict(obs, action_masks=action_masks.astype(bool), deterministic=True)
        return np.asarray(actions, dtype=np.int64)


def agent_of(path: Path, label: str):
    """The agent a saved policy file is (a checkpoint of ours, or a MaskablePPO zip `plan` allowed)."""
    from hollywood_gin_env.agents.checkpoint import load_checkpoint_agent

    return MaskableAgent(path, label) if is_pickle(path.name) else load_checkpoint_agent(path, name=label)


def read_marks(out: Path, trainer: str) -> dict:
    """A trainer's marks.json under out, checked (module _results); ResultsError naming the file."""
    path = out / trainer / "marks.json"
    record = read_record(out, path, MARKS)
    check_marks(path, record)
    return record


@dataclasses.dataclass(frozen=True)
class Policy:
    """One mark's policy to report: its trainer, its mark (marks.json's entry), its file and its scores key."""

    trainer: str
    mark: dict
    path: Path
    key: str


def plan(out: Path, marks: dict[str, dict], matches: int, trained: set[str]) -> tuple[list[Policy], dict[str, dict]]:
    """Every mark's policy and each trainer's kept scores (scores.json), all checked before anything is played: each
    file inside out, bounded and well formed (module _results), and no MaskablePPO zip to load but those of the
    trainers in `trained` (those this run trained): a zip is a pickle, and a folder from elsewhere runs no code."""
    policies, kept, digests = [], {}, {}
    for trainer, record in marks.items():
        kept_path = out / trainer / "scores.json"
        kept[trainer] = read_record(out, kept_path, SCORES) if os.path.lexists(kept_path) else {}
        for mark in record["marks"]:
            path = out / trainer / mark["policy"]
            digests[path] = digests.get(path) or policy_digest(out, path)
            key = f"{digests[path]} {matches} {SCORE_SEED}"
            if key in kept[trainer] and not set(OPPONENTS) <= set(kept[trainer][key]):
                raise ResultsError(f"{shown(kept_path)}: the scores of {mark['policy']} lack one of {OPPONENTS}")
            if key not in kept[trainer] and is_pickle(mark["policy"]) and trainer not in trained:
                raise ResultsError(
                    f"{shown(path)} is a MaskablePPO model not trained in this run and not scored in its "
                    f"scores.json: loading one unpickles it (runs its code), so only this run's are loaded; delete "
                    f"{shown(out / trainer)} to train {trainer} again"
                )
            policies.append(Policy(trainer, mark, inside(out, path), key))
        if any(p.key not in kept[trainer] for p in policies if p.trainer == trainer):
            check_write_target(kept_path)
    return policies, kept


def score(out: Path, policies: list[Policy], kept: dict[str, dict], matches: int) -> list[dict]:
    """Every policy of `plan` against each opponent: one row per trainer and mark. A policy's figures are kept in
    its folder's scores.json, keyed by the file's SHA-256, the match count and the seed, so a report again (or with
    another trainer added) plays only the policies it has not scored."""
    from hollywood_gin_env.evaluation.evaluate import Schedule, evaluate_pairs, summarize_pair

    rows = []
    for policy in policies:
        figures = kept[policy.trainer]
        if policy.key not in figures:
            label = f"{policy.trainer}-{Path(policy.mark['policy']).stem.removeprefix('policy-')}"
            pairs = [(agent_of(policy.path, label), opponent) for opponent in OPPONENTS]
            records = evaluate_pairs(pairs, matches, seed=SCORE_SEED, schedule=Schedule(workers=1))
            figures[policy.key] = {o: summarize_pair(r) for o, r in zip(OPPONENTS, records, strict=True)}
            # a scoring cut short keeps what it finished
            atomic_write_text(out / policy.trainer / "scores.json", json.dumps(figures, indent=1))
        mark = policy.mark
        row = {"trainer": policy.trainer, "mark": mark["mark"], "policy": mark["policy"], "minutes": mark["minutes"]}
        for o in OPPONENTS:
            row[f"win_vs_{o}"] = figures[policy.key][o]["match_win_rate"]
            row[f"ci_vs_{o}"] = list(figures[policy.key][o]["match_win_ci95"])
            row[f"points_vs_{o}"] = figures[policy.key][o]["points_per_hand"]
        rows.append(row)
    return rows


def catch_up(rows: list[dict]) -> dict:
    """For each of our trainers: the first mark at which it wins at least the stronger MaskablePPO's last-mark rate
    against `greedy`, and whether it is ahead of that MaskablePPO at every mark by more than the intervals (its
    lower bound above the reference's upper bound)."""
    finals = {}
    for r in sorted(rows, key=lambda r: r["mark"]):
        if r["trainer"].startswith("maskable"):
            finals[r["trainer"]] = r["win_vs_greedy"]
    if not finals:
        return {}
    reference = max(finals, key=finals.get)
    ref = sorted((r for r in rows if r["trainer"] == reference), key=lambda r: r["mark"])
    target, ref_at = ref[-1]["win_vs_greedy"], {r["mark"]: r for r in ref}
    found = {}
    for trainer in sorted({r["trainer"] for r in rows} - set(finals)):
        mine = sorted((r for r in rows if r["trainer"] == trainer), key=lambda r: r["mark"])
        reached = next((r["mark"] for r in mine if r["win_vs_greedy"] >= target), None)
        ahead = all(r["ci_vs_greedy"][0] > ref_at[r["mark"]]["ci_vs_greedy"][1] for r in mine if r["mark"] in ref_at)
        found[trainer] = {"reference": reference, "minutes_to_reference_final": reached, "ahead_at_every_mark": ahead}
    return found


def plot(rows: list[dict], path: Path) -> None:
    """Match win rate against minutes, one line per trainer, its 95% interval shaded; a panel per opponent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(OPPONENTS), figsize=(11, 4.2), sharey=True)
    for ax, opponent in zip(axes, OPPONENTS, strict=True):
        for trainer in dict.fromkeys(r["trainer"] for r in rows):
            mine = sorted((r for r in rows if r["trainer"] == trainer), key=lambda r: r["mark"])
            x = [r["mark"] for r in mine]
            ax.plot(x, [100 * r[f"win_vs_{opponent}"] for r in mine], marker="o", label=trainer)
            low, high = ([100 * r[f"ci_vs_{opponent}"][k] for r in mine] for k in (0, 1))
            ax.fill_between(x, low, high, alpha=0.2)
        ax.set_xscale("log")
        marks = sorted({r["mark"] for r in rows})
        ax.set_xticks(marks, [f"{m:g}" for m in marks])  # the marks themselves, not log-scale powers of ten
        ax.minorticks_off()
        ax.set_xlabel("minutes of training (wall clock)")
        ax.set_title(f"against {opponent}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("matches won, % (duplicate deals, 95% interval)")
    axes[0].legend()
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=110)
    atomic_write(path, image.getvalue())


def report(rows: list[dict], speeds: dict, caught: dict) -> str:
    """The table printed on stdout."""
    lines = [f"{'trainer':<13}{'mark':>6}{'saved at':>10}  {'vs greedy [95%]':<24}{'vs expert [95%]':<24}"]
    for r in rows:
        cells = [
            f"{100 * r[f'win_vs_{o}']:5.1f}% [{100 * r[f'ci_vs_{o}'][0]:4.1f}, {100 * r[f'ci_vs_{o}'][1]:4.1f}]"
            for o in OPPONENTS
        ]
        lines.append(f"{r['trainer']:<13}{r['mark']:>5g}m{r['minutes']:>9.1f}m  {cells[0]:<24}{cells[1]:<24}")
    for trainer, figures in speeds.items():
        lines.append(f"{trainer}: {figures['decisions_per_s']:,.0f} learner decisions/s")
    for trainer, figures in caught.items():
        lines.append(
            f"{trainer}: reaches {figures['reference']}'s final rate against greedy at "
            f"{figures['minutes_to_reference_final']} "
            f"minutes; ahead at every mark beyond the intervals: {figures['ahead_at_every_mark']}"
        )
    return "\n".join(lines)


def train_in_child(trainer: str, args: argparse.Namespace) -> None:
    """Train one trainer in a child process of its own (threads, memory and imports of its own)."""
    command = [sys.executable, __file__, "--train", trainer, "--out", str(args.out), "--minutes", str(args.minutes)]
    command += ["--threads", str(args.threads), "--seed", str(args.seed), "--marks", *map(str, args.marks)]
    subprocess.run(command + (["--smoke"] if args.smoke else []), check=True)


def train_one(args: argparse.Namespace) -> None:
    """The child's work: train `args.train` and write its marks.json."""
    folder = args.out / args.train
    folder.mkdir(parents=True, exist_ok=True)
    if args.train.startswith("maskable"):
        zoo = args.train == "maskable-zoo"
        result = train_maskable(args.minutes, args.marks, folder, args.threads, args.seed, args.smoke, zoo)
    else:
        recipe = "smoke" if args.smoke else args.train
        result = train_ours(recipe, args.minutes, args.marks, folder, args.threads, args.seed)
    result.update(trainer=args.train, budget_minutes=args.minutes, threads=args.threads, seed=args.seed)
    atomic_write_text(folder / "marks.json", json.dumps(result, indent=1))


def main(argv: list[str] | None = None) -> int:
    """Train each trainer (unless done), score every saved policy, print and write the report."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainers", nargs="+", choices=TRAINERS, default=list(DEFAULT_TRAINERS))
    parser.add_argument("--minutes", type=float, default=40.0, help="wall-clock budget of each trainer")
    parser.add_argument("--marks", type=float, nargs="+", default=[2, 5, 10, 20, 40], help="minutes to save at")
    parser.add_argument("--matches", type=int, default=2000, help="scoring matches per opponent (even)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of every trainer and the scoring")
    parser.add_argument("--seed", type=int, default=0, help="every trainer's seed")
    parser.add_argument("--out", type=Path, help="results folder (default runs/learn; --smoke: runs/learn-smoke)")
    parser.add_argument(
        "--score-only",
        action="store_true",
        help="report the policies saved under --out, read as data: only files inside it, bounded; a MaskablePPO .zip "
        "is a pickle (loading it runs its code), so one is loaded only if this run trained it, else reported from "
        "its scores.json or refused",
    )
    parser.add_argument("--json", action="store_true", help="print learn.json's object last")
    parser.add_argument("--smoke", action="store_true", help="seconds of tiny training (CI): figures not meant")
    parser.add_argument("--train", choices=TRAINERS, help=argparse.SUPPRESS)  # the child process's work
    args = parser.parse_args(argv)
    if args.smoke:
        args.minutes, args.marks, args.matches = 0.05, [0.02, 0.05], 8
    args.out = args.out or Path("runs/learn-smoke" if args.smoke else "runs/learn")
    if args.train:
        train_one(args)
        return 0
    trained = set()
    for trainer in args.trainers:
        # --smoke checks the whole pipeline, so it trains again whatever an earlier run left in --out
        if not args.score_only and (args.smoke or not (args.out / trainer / "marks.json").exists()):
            train_in_child(trainer, args)
            trained.add(trainer)
    import torch

    torch.set_num_threads(args.threads)
    try:
        marks = {t: read_marks(args.out, t) for t in args.trainers}
        policies, kept = plan(args.out, marks, args.matches, trained)
        for name in ("learn.json", "learn.png"):
            check_write_target(args.out / name)
        rows = score(args.out, policies, kept, args.matches)
    except (ValueError, AtomicWriteError) as error:  # a file of the folder refused, or a write failed: say which
        print(f"learn.py: {error}", file=sys.stderr)
        return 1
    speeds = {t: {"decisions_per_s": r["decisions_per_s"], "decisions": r["decisions"]} for t, r in marks.items()}
    caught = catch_up(rows)
    result = {"rows": rows, "speeds": speeds, "catch_up": caught, "matches": args.matches, "seed": SCORE_SEED}
    if "maskable" in speeds:
        result["decisions_per_s_ratio"] = {
            t: s["decisions_per_s"] / speeds["maskable"]["decisions_per_s"] for t, s in speeds.items()
        }
    try:
        atomic_write_text(args.out / "learn.json", json.dumps(result, indent=1))
        plot(rows, args.out / "learn.png")
    except AtomicWriteError as error:  # a full disk, or a target replaced since it was checked
        print(f"learn.py: {error}", file=sys.stderr)
        return 1
    print(report(rows, speeds, caught))
    print(f"wrote {args.out / 'learn.json'} and {args.out / 'learn.png'}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    raise SystemExit(main())
