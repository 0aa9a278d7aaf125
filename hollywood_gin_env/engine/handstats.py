"""Hand statistics: which hands ended and how, and the one definition of each rate the trainer and evaluator report.

`ended_hands(state)` reads the engine's record of the hand each match's last step ended (before a finished match
is reset; `hands_closed` counts the hands a match has ended, for a front end whose step spans several engine
steps), `HandCounts` adds them up, and `HandCounts.rates()` defines every rate once: a rate is a share of all
hands ended; "knock" counts every knock that was scored, undercut or not; "gin" counts gins (the big gin too).
Counts from one side's view (`side=`) count the hands that side knocked or ginned (or, for undercuts, scored).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.state import EngineState
from hollywood_gin_env.rules.scoring import KIND_DEAD, KIND_GIN, KIND_KNOCK, KIND_UNDERCUT
from hollywood_gin_env.support.jit import njit_inline

#: The fields of an ended hand every front end reports (infos, counts) and the `last_hand` column each one reads.
HAND_FIELDS = {
    "hand_kind": col.R_KIND,
    "hand_knocker": col.R_KNOCKER,
    "hand_winner": col.R_WINNER,
    "hand_points": col.R_POINTS,
    "hand_turns": col.R_TURNS,
}


def ended_hands(state: EngineState) -> dict[str, np.ndarray]:
    """The hand each match's last step ended: hand_over and the HAND_FIELDS, hand_kind, hand_knocker, hand_winner,
    hand_points, hand_turns (-1 in every field but hand_over where no hand ended)."""
    over = state.last_step[:, col.S_HAND_OVER] == 1
    last = state.last_hand
    return {"hand_over": over, **{key: np.where(over, last[:, column], -1) for key, column in HAND_FIELDS.items()}}


@njit_inline
def hands_closed(match: np.ndarray, i: int) -> int:
    """How many hands match i (a row of state.match) has ended so far: every hand dealt but the one in play."""
    return match[i, col.M_HAND_NO] - (1 if match[i, col.M_PHASE] != col.PHASE_OVER else 0)


@dataclass
class HandCounts:
    """How many hands ended, and how (see the module docstring for what each count means)."""

    hands: int = 0
    gin: int = 0
    knock: int = 0
    undercut: int = 0
    dead: int = 0
    turns: int = 0

    def add(
        self,
        kind: np.ndarray,
        knocker: np.ndarray,
        winner: np.ndarray,
        turns: np.ndarray,
        side: np.ndarray | int | None = None,
    ) -> None:
        """Count the hands given by their kind, knocker, winner and turns (one entry per ended hand); with
        `side`, the gins, knocks and undercuts of that player only (an int, or one per hand)."""
        kind = np.asarray(kind)
        mine = np.ones(kind.shape, dtype=np.bool_) if side is None else np.asarray(knocker) == side
        scored = np.ones(kind.shape, dtype=np.bool_) if side is None else np.asarray(winner) == side
        self.hands += int(kind.size)
        self.gin += int(((kind == KIND_GIN) & mine).sum())
        self.knock += int((np.isin(kind, (KIND_KNOCK, KIND_UNDERCUT)) & mine).sum())
        self.undercut += int(((kind == KIND_UNDERCUT) & scored).sum())
        self.dead += int((kind == KIND_DEAD).sum())
        self.turns += int(np.asarray(turns).sum())

    def add_infos(self, infos: dict[str, np.ndarray]) -> None:
        """Count the hands a `SelfPlayVectorEnv` step reported ended (its infos)."""
        over = infos["hand_over"]
        if over.any():
            self.add(
                infos["hand_kind"][over],
                infos["hand_knocker"][over],
                infos["hand_winner"][over],
                infos["hand_turns"][over],
            )

    def merge(self, other: HandCounts) -> None:
        """Add another set of counts to this one."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def rates(self) -> dict[str, float]:
        """gin_rate, knock_rate, undercut_rate, dead_rate (shares of all hands) and turns_per_hand."""
        n = max(self.hands, 1)
        return {
            "gin_rate": self.gin / n,
            "knock_rate": self.knock / n,
            "undercut_rate": self.undercut / n,
            "dead_rate": self.dead / n,
            "turns_per_hand": self.turns / n,
        }
