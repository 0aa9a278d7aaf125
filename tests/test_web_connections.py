"""The real web server (uvicorn, on 127.0.0.1) under idle and trickling sockets: a normal request is answered at once
while thousands of sockets that send nothing are open, such sockets are closed after the idle timeout, and a page's
own keep-alive requests are never refused. Every socket here goes to 127.0.0.1, a bounded number, for a few seconds.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import resource
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.session import Opponent, Session

pytest.importorskip("uvicorn", reason="the web server needs the [web] extra (in the test extra)")
import uvicorn  # noqa: E402

from hollywood_gin_env.play.web.app import create_app  # noqa: E402
from hollywood_gin_env.play.web.matches import Matches, session_maker  # noqa: E402
from hollywood_gin_env.play.web.server import bind, quiet_log, server_config  # noqa: E402

IDLE_SOCKETS = 2000
IDLE_SECONDS = 1.0  # the server's idle timeout in these tests, so they take seconds


@contextmanager
def running_server(first: Session | None = None, **limits) -> Iterator[int]:
    """The page's server on 127.0.0.1 (a free port) in a thread, with `server_config`'s limits, its first match
    `first` (a fresh one against greedy if None); yields the port."""
    first = first or Session(Game(seed=5), 0, "greedy", None, hold_hand_ends=True)
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


def stalled_body(port: int) -> socket.socket:
    """A connection that sends a POST's head promising a 4,000-byte body, and then a few bytes of it."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = f"POST /api/matches HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    sock.sendall(f"{head}Content-Length: 4000\r\n\r\n   ".encode())
    return sock


def test_beyond_the_connection_limit_a_stalled_body_is_closed_not_the_new_request():
    """With the limit at 8 connections, 20 sockets that send a request's head and trickle its body leave at most 8
    open (the longest stalled closed first), and each of 10 new connections still gets its request answered."""
    with running_server(max_connections=8, idle_seconds=30, body_seconds=30) as port:
        stalled = []
        try:
            for _ in range(20):
                stalled.append(stalled_body(port))
                time.sleep(0.01)  # in this order on the server too
            assert [request(port)[0] for _ in range(10)] == [200] * 10
            time.sleep(0.2)
            still_open = [not closed_by_server(s) for s in stalled]
            assert sum(still_open) <= 8 and not any(still_open[:12]), still_open
        finally:
            for s in stalled:
                s.close()


def test_a_body_that_does_not_arrive_by_its_deadline_is_cut_off():
    """A request's body is owed within the body deadline from its head, however its bytes trickle in: a client
    sending one byte of it every 0.2 s is closed once the deadline has passed."""
    with running_server(idle_seconds=30, body_seconds=1.0) as port:
        sock = stalled_body(port)
        start = time.monotonic()
        try:
            while not closed_by_server(sock) and time.monotonic() - start < 5:
                sock.sendall(b" ")
                time.sleep(0.2)
            assert closed_by_server(sock) and 0.9 < time.monotonic() - start < 2.5
        finally:
            sock.close()


@pytest.mark.parametrize("size", [20_000, 100_000])
def test_a_request_head_over_the_limit_is_refused_even_in_one_segment(size):
    """A head of 20 KB (over the 16 KB bound) sent in one segment is refused with 400 like one that trickles in,
    and the connection closed; a page's own requests (a few KB) pass."""
    with running_server() as port:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Big: {'a' * size}\r\n\r\n".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:80]
        finally:
            sock.close()
        assert request(port, "/?" + "a" * 4000)[0] == 200


def test_clients_that_leave_mid_request_log_nothing(caplog):
    """Twenty clients that send a request's head and part of its body, then reset the connection: the server logs
    nothing for them (a client leaving is no error) and goes on answering."""
    with caplog.at_level(logging.INFO), running_server() as port:
        for _ in range(20):
            sock = stalled_body(port)
            time.sleep(0.02)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
            sock.close()
        time.sleep(0.5)
        assert request(port)[0] == 200
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("uvicorn")]


def test_the_server_answers_while_its_log_goes_to_a_pipe_nobody_reads():
    """With the log's stream a pipe that is never read (a service's unread stderr), 3,000 malformed requests (a
    warning each: far more than the pipe holds) neither stop the server nor slow it: the next request is answered."""
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    try:
        with quiet_log(stream) as log, running_server() as port:
            for _ in range(3000):
                bad = socket.create_connection(("127.0.0.1", port), timeout=5)
                bad.sendall(b"NOT HTTP AT ALL \x01\r\n\r\n")
                bad.recv(100)
                bad.close()
            status, seconds = request(port)
            assert status == 200 and seconds < 1.0, (status, seconds)
        assert log.dropped > 0  # the lines the pipe could not take were dropped, not waited for
    finally:  # drain the pipe from now on, so the log's thread is not left waiting on it
        threading.Thread(target=drain, args=(read_end,), daemon=True).start()


def drain(descriptor: int) -> None:
    """Read a pipe until its writer closes it."""
    while os.read(descriptor, 65536):
        pass


class GatedAgent:
    """greedy, made to wait at `gate` while it is armed (a slow bot: a large network on a busy machine)."""

    def __init__(self) -> None:
        self.agent, self.name, self.armed, self.gate = load_agent("greedy"), "greedy", False, threading.Event()

    def act(self, observations, action_masks):
        if self.armed:
            self.gate.wait(10)
        return self.agent.act(observations, action_masks)


def post_json(port: int, path: str) -> dict:
    """The JSON answer to a POST of {} (a new match)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, body=b"{}", headers={"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    conn.close()
    return answer


def test_a_slow_hint_holds_up_neither_the_page_nor_the_other_matches():
    """While one match's hint waits on a slow bot, the page's files and another match's state are answered at once;
    the hint is answered when the bot is done."""
    bot = Opponent("greedy")
    bot.agent = gated = GatedAgent()
    with running_server(Session(Game(seed=5), 0, bot, None, hold_hand_ends=True)) as port:
        slow, other = post_json(port, "/api/matches")["id"], post_json(port, "/api/matches")["id"]
        gated.armed = True
        hinted: list = []
        asking = threading.Thread(target=lambda: hinted.append(request(port, f"/api/matches/{slow}/hint")))
        asking.start()
        time.sleep(0.3)  # the hint is waiting on the bot
        try:
            for path in ("/static/app.js", f"/api/matches/{other}"):
                status, seconds = request(port, path)
                assert status == 200 and seconds < 0.5, (path, status, seconds)
            assert not hinted
        finally:
            gated.gate.set()
            asking.join(10)
        assert hinted and hinted[0][0] == 200
