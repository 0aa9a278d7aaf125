"""The real web server (uvicorn, on 127.0.0.1) under idle and trickling sockets: a normal request is answered at once
while thousands of sockets that send nothing are open, such sockets are closed after the idle timeout, and a page's
own keep-alive requests are never refused. Every socket here goes to 127.0.0.1, a bounded number, for a few seconds.
"""

from __future__ import annotations

import resource
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.session import Session

pytest.importorskip("uvicorn", reason="the web server needs the [web] extra (in the test extra)")
import uvicorn  # noqa: E402

from hollywood_gin_env.play.web.app import create_app  # noqa: E402
from hollywood_gin_env.play.web.matches import Matches, session_maker  # noqa: E402
from hollywood_gin_env.play.web.server import bind, server_config  # noqa: E402

IDLE_SOCKETS = 2000
IDLE_SECONDS = 1.0  # the server's idle timeout in these tests, so they take seconds


@contextmanager
def running_server(**limits) -> Iterator[int]:
    """The page's server on 127.0.0.1 (a free port) in a thread, with `server_config`'s limits; yields the port."""
    first = Session(Game(seed=5), 0, "greedy", None, hold_hand_ends=True)
    server = uvicorn.Server(server_config(create_app(Matches(session_maker(first, "0"))), **limits))
    sock = bind("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert server.started, "the server did not start"
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def request(port: int, path: str = "/", sock: socket.socket | None = None) -> tuple[int, float]:
    """(status, seconds) of one keep-alive GET on `sock` (a new connection if None)."""
    conn = sock or socket.create_connection(("127.0.0.1", port), timeout=5)
    start = time.monotonic()
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(65536)
        assert chunk, f"the server closed the connection: {head!r}"
        head += chunk
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    body = head.split(b"\r\n\r\n", 1)[1]
    while len(body) < length:
        body += conn.recv(65536)
    if sock is None:
        conn.close()
    return int(head.split()[1]), time.monotonic() - start


def closed_by_server(sock: socket.socket) -> bool:
    """True if the server has closed this connection (a read returns end of file or a reset)."""
    sock.settimeout(0.01)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def open_idle_sockets(port: int, count: int) -> list[socket.socket]:
    """`count` connections to 127.0.0.1:port that send nothing."""
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]


def enough_descriptors(count: int) -> None:
    """Raise this process's open-file limit to hold `count` more sockets, or skip where the system forbids it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = count + 1024
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"the open-file limit ({hard}) cannot hold {count} sockets")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def test_a_request_is_answered_within_a_second_while_two_thousand_idle_sockets_are_open():
    """2,000 sockets that connect and send nothing neither delay nor refuse a normal request (it gets its 200 within
    a second), and the server closes every one of them once the idle timeout has passed."""
    enough_descriptors(IDLE_SOCKETS)
    with running_server(idle_seconds=IDLE_SECONDS) as port:
        idle = open_idle_sockets(port, IDLE_SOCKETS)
        try:
            status, seconds = request(port)
            assert status == 200 and seconds < 1.0, (status, seconds)
            time.sleep(IDLE_SECONDS + 1.0)
            still_open = sum(not closed_by_server(s) for s in idle)
            assert still_open == 0, f"{still_open} of {IDLE_SOCKETS} idle sockets still open"
            assert request(port)[0] == 200
        finally:
            for s in idle:
                s.close()


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off_at_the_idle_timeout():
    """A client trickling its request line a byte every 0.2 s does not keep the connection: it is closed once the
    idle timeout has passed since the connection opened, however many bytes arrived meanwhile."""
    with running_server(idle_seconds=IDLE_SECONDS) as port:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        start = time.monotonic()
        try:
            for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"a" * 100:
                sock.sendall(bytes([byte]))
                time.sleep(0.2)
                if closed_by_server(sock) or time.monotonic() - start > IDLE_SECONDS + 3:
                    break
            assert closed_by_server(sock) and time.monotonic() - start < IDLE_SECONDS + 1.5
        finally:
            sock.close()


def test_beyond_the_connection_limit_the_longest_idle_socket_is_closed_not_the_new_request():
    """With the limit at 8 connections, 20 idle sockets leave at most 8 open on the server (the oldest closed first)
    and a new connection's request is still answered."""
    with running_server(max_connections=8, idle_seconds=30) as port:
        idle = open_idle_sockets(port, 20)
        try:
            assert request(port)[0] == 200
            time.sleep(0.2)
            still_open = [not closed_by_server(s) for s in idle]
            assert sum(still_open) <= 8 and not any(still_open[:10]), still_open
        finally:
            for s in idle:
                s.close()


def test_a_pages_keep_alive_connections_are_served_within_the_limits():
    """Six keep-alive connections (a browser's per-host number) each make several requests in turn, with pauses
    under the idle timeout: every request is answered 200 on its own connection."""
    with running_server(max_connections=8, idle_seconds=IDLE_SECONDS) as port:
        conns = open_idle_sockets(port, 6)
        try:
            for _ in range(3):
                for conn in conns:
                    assert request(port, "/favicon.ico", conn)[0] == 200
                time.sleep(IDLE_SECONDS / 2)
        finally:
            for conn in conns:
                conn.close()
