"""A module that registers an agent when it is imported (as `--import MODULE` imports a user's module)."""

from __future__ import annotations

from tests.agents_for_tests import REGISTRY, KnockFirst

REGISTRY["knocker"] = KnockFirst
