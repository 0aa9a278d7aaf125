"""Ray for the tests: one local Ray (2 CPUs) or one simulated two-node cluster per test process, never both.

Starting Ray costs seconds, so a started instance is shared by every test that asks for the same kind; a test
asking for the other kind shuts the first down and starts its own. Keep each kind's tests together (one file,
or the two-node tests at the end) so a session starts each at most once. Everything is shut down at the end
of the session, and `descendants`, `command_line` and `in_session` let a test find a running
chunk's worker or check that nothing is left behind.

Fixtures: `ray_local` (ray.init(num_cpus=2)), `ray_two_nodes` (ray.cluster_utils.Cluster, one CPU per node;
yields the Cluster, whose `address` a subprocess can join). Registered in tests/conftest.py.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

RAY_OPTIONS = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}


class RaySessions:
    """The one Ray of this test process: which kind runs now, started on demand, stopped when the kind changes."""

    def __init__(self) -> None:
        self.kind: str | None = None
        self.cluster = None

    def local(self) -> None:
        """A local Ray with 2 CPUs."""
        import ray

        if self.kind != "local":
            self.stop()
            ray.init(address="local", num_cpus=2, **RAY_OPTIONS)  # never another one running here
            self.kind = "local"

    def two_nodes(self):
        """A simulated cluster of two nodes of one CPU each, this process connected to it; returns the Cluster."""
        import ray
        from ray.cluster_utils import Cluster

        if self.kind != "two_nodes":
            self.stop()
            self.cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
            self.cluster.add_node(num_cpus=1)
            self.cluster.wait_for_nodes()
            ray.init(address=self.cluster.address, log_to_driver=False, logging_level=logging.ERROR)
            self.kind = "two_nodes"
        return self.cluster

    def stop(self) -> None:
        """Shut down whatever runs (the driver's connection, then the cluster's nodes)."""
        import ray

        if ray.is_initialized():
            ray.shutdown()
        if self.cluster is not None:
            self.cluster.shutdown()
            self.cluster = None
        self.kind = None


@pytest.fixture(scope="session")
def ray_sessions() -> Iterator[RaySessions]:
    """The session's Ray manager; shuts everything down at the end."""
    sessions = RaySessions()
    yield sessions
    sessions.stop()


@pytest.fixture
def ray_local(ray_sessions: RaySessions) -> None:
    """A local Ray with 2 CPUs, shared with the other tests that use it."""
    ray_sessions.local()


@pytest.fixture
def ray_two_nodes(ray_sessions: RaySessions):
    """A two-node simulated cluster (one CPU each), shared with the other tests that use it; yields the Cluster."""
    return ray_sessions.two_nodes()


def descendants(pid: int) -> list[int]:
    """Every live process below pid (Linux /proc), nearest first."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as file:
                    parent = int(file.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, queue = [], list(children.get(pid, []))
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue += children.get(child, [])
    return found


def command_line(pid: int) -> str:
    """A process's command line ('' once it is gone); Ray workers show 'ray::TASK' while they run one."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def in_session(sid: int) -> list[int]:
    """Live processes of a session id (a child started with start_new_session=True and all it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid and command_line(int(entry)):
                    found.append(int(entry))
            except OSError:
                continue
    return found
