"""Agents the tests name by reference (`tests.agents_for_tests:ATTR`), as a researcher names their own: a class, a
factory (marked `@agent_factory`), one registered by another module on import, and attributes that fail in each way
an agent spec can."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents import agent_factory
from hollywood_gin_env.rules.actions import KNOCK_BASE
from hollywood_gin_env.rules.options import Rules

#: Agents other modules register on import (tests/agents_registering.py): `registered` builds one.
REGISTRY: dict[str, type] = {}


class KnockFirst:
    """Knocks (with the lowest card it may) whenever the rules let it, else takes the lowest-numbered legal action;
    keeps the keyword arguments it was built with."""

    name = "knock-first"

    def __init__(self, seed: int | None = None, num_threads: int | None = None) -> None:
        self.built_with = {"seed": seed, "num_threads": num_threads}
        self.resets: list[int | None] = []

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A knock where one is legal, else the first legal action, per row."""
        masks = np.asarray(action_masks)
        knocks = masks[:, KNOCK_BASE:]
        return np.where(knocks.any(axis=1), KNOCK_BASE + knocks.argmax(axis=1), masks.argmax(axis=1)).astype(np.int64)

    def reset(self, seed: int | None = None) -> None:
        """Records the seed (nothing here draws)."""
        self.resets.append(seed)


class EaaiKnockFirst(KnockFirst):
    """KnockFirst that says it was trained under the eaai rules."""

    name = "eaai-knock-first"
    rules = Rules.preset("eaai")


@agent_factory
def make_knocker(rules: Rules | None = None, **options: object) -> KnockFirst:
    """A factory taking any keywords: a KnockFirst that records the rules it was given as its own."""
    agent = KnockFirst()
    agent.built_with = {"rules": rules, **options}
    agent.rules = rules
    return agent


@agent_factory
def registered() -> KnockFirst:
    """The agent another module registered under "knocker" when it was imported."""
    return REGISTRY["knocker"]()


class Holder:
    """Dotted attributes: `tests.agents_for_tests:Holder.make`, `tests.agents_for_tests:Holder.build`."""

    @staticmethod
    @agent_factory
    def make() -> KnockFirst:
        """A KnockFirst."""
        return KnockFirst()

    @classmethod
    @agent_factory
    def build(cls, seed: int | None = None) -> KnockFirst:
        """A KnockFirst built with the seed (a classmethod: bound to its class)."""
        return KnockFirst(seed=seed)


@agent_factory
def broken() -> KnockFirst:
    """A factory that fails."""
    raise RuntimeError("no weights here\nsecond line")


@agent_factory
def not_an_agent() -> int:
    """A factory that returns no agent."""
    return 42


NOT_CALLABLE = 3


def undeclared() -> KnockFirst:
    """A factory not marked @agent_factory: no spec may name it."""
    return KnockFirst()


class TorchFirstLegal:
    """Runs a small torch layer on every batch (as a user's network would), then takes the first legal action."""

    name = "torch-first-legal"

    def __init__(self) -> None:
        import torch  # only the tests that name this agent need torch

        self.torch = torch
        self.layer = torch.nn.Linear(107, 1)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The first legal action per row, after a forward pass of the layer over the masks."""
        masks = np.asarray(action_masks)
        with self.torch.no_grad():
            self.layer(self.torch.from_numpy(masks.astype(np.float32)))
        return masks.argmax(axis=1).astype(np.int64)
