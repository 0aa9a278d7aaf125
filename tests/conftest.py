"""Fixtures shared by several test files."""

from tests.ray_fixtures import ray_local, ray_sessions, ray_two_nodes  # noqa: F401 (pytest finds them here)
