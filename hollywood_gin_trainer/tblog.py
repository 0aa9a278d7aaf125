"""TensorBoard logging of a run, in CleanRL's namespaces (charts/, losses/, eval/) plus selfplay/, hands/, time/."""

from __future__ import annotations

import math
from typing import Any

from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams

from hollywood_gin_trainer.config import Config
from hollywood_gin_trainer.pool import OpponentPool
from hollywood_gin_trainer.trainstate import Progress

LOSS_KEYS = (
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clipfrac",
    "explained_variance",
    "early_stop",
)


def log_scalars(
    writer: SummaryWriter,
    step: int,
    update: int,
    lr: float,
    ent_coef: float,
    sps: float,
    times: dict[str, float],
    losses: dict[str, float],
    hands: dict[str, float],
    pool: OpponentPool,
) -> None:
    """One update's figures; times: rollout_s, forward_s (inside the rollout), update_s, wall_s."""
    scalars = {
        "charts/SPS": sps,
        "charts/learning_rate": lr,
        "charts/ent_coef": ent_coef,
        "charts/update": update,
        **{f"time/{key}": value for key, value in times.items()},
        "selfplay/pool_size": len(pool.snapshots),
    }
    scalars.update({f"losses/{key}": losses[key] for key in LOSS_KEYS if key in losses})
    scalars.update({f"hands/{key}": value for key, value in hands.items()})
    win_rate = pool.win_rate()
    if not math.isnan(win_rate):
        scalars["selfplay/win_rate_vs_pool"] = win_rate
    for tag, value in scalars.items():
        if not (isinstance(value, float) and math.isnan(value)):
            writer.add_scalar(tag, value, step)


def log_evaluation(writer: SummaryWriter, progress: Progress, results: dict[str, dict[str, Any]], best_by: str) -> bool:
    """Log an evaluation, record it in progress.history; True if it is the best so far (lower bound vs best_by)."""
    step = progress.global_step
    headline: dict[str, float] = {"update": progress.update, "decisions": step, "wall_s": round(progress.wall_seconds)}
    for name, summary in results.items():
        low, high = summary["match_win_ci95"]
        figures = {
            "match_win_rate": summary["match_win_rate"],
            "match_win_low": low,
            "match_win_high": high,
            "points_per_hand": summary["points_per_hand"],
            "hand_win_rate": summary["hand_win_rate"],
        }
        for key, value in figures.items():
            writer.add_scalar(f"eval/{key}_vs_{name}", value, step)
        headline[f"win_vs_{name}"] = round(summary["match_win_rate"], 4)
        headline[f"low_vs_{name}"] = round(low, 4)
    progress.history.append(headline)
    low = results[best_by]["match_win_ci95"][0]
    if low > progress.best_lower:
        progress.best_lower = low
        return True
    return False


def flat_hparams(config: Config) -> dict[str, Any]:
    """section.key -> value, lists as text (the HParams plugin takes numbers, text and bools)."""
    out = {}
    for section, values in config.to_dict().items():
        for key, value in values.items():
            out[f"{section}.{key}"] = str(value) if isinstance(value, (list, dict)) else value
    return out


def log_hparams(writer: SummaryWriter, config: Config, progress: Progress) -> None:
    """The run's hyperparameters with its final evaluation, in this run's own event file."""
    final = progress.history[-1] if progress.history else {}
    metrics = {f"hparams/{k}": float(v) for k, v in final.items() if k.startswith(("win_", "low_"))}
    experiment, start, end = hparams(flat_hparams(config), metrics)
    for summary in (experiment, start, end):
        writer.file_writer.add_summary(summary)
    for key, value in metrics.items():
        writer.add_scalar(key, value, progress.global_step)
