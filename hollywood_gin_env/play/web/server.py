"""Run the page: bind the port, print the URL, open the browser, serve with uvicorn until Ctrl-C."""

from __future__ import annotations

import asyncio
import socket
import webbrowser
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from hollywood_gin_env.play.web.app import LOOPBACK_HOSTS, create_app
from hollywood_gin_env.play.web.matches import Matches

IDLE_SECONDS = 5.0  # a page's requests come in bursts; a connection waiting for a request is closed soon after
MAX_CONNECTIONS = 256  # a page opens about six; beyond this many the one idle longest is closed
HEAD_BYTES = 16 * 1024  # a request's line and headers (a page's are under 2 KB, with localhost cookies more)
BACKLOG = 128  # connections queued before accepting, and accepted in one go


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); OSError with the reason if that fails."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def page_url(sock: socket.socket, match_id: str) -> str:
    """The URL of a match's page on this socket (the id after #, so it never reaches a server log)."""
    host, port = sock.getsockname()[:2]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # every address: this machine's is one of them
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/#{match_id}"


def exposure_warning(host: str) -> str | None:
    """A warning line when the server listens beyond this machine's loopback address."""
    if host in LOOPBACK_HOSTS:
        return None
    return (
        f"Warning: listening on {host}, not 127.0.0.1: anyone who can reach this address can open the page "
        "and start matches (not see yours: each match is behind its own unguessable id)."
    )


def idle_limited_protocol(max_connections: int = MAX_CONNECTIONS, idle_seconds: float = IDLE_SECONDS) -> type:
    """uvicorn's h11 protocol, closing a connection that has waited `idle_seconds` for a request's headers and,
    beyond `max_connections` open at once, the one that has waited longest.

    uvicorn times a connection out only between requests and only until its next byte, so a client that connects
    and sends nothing (or a byte now and then) holds its connection for ever; and its `limit_concurrency` counts
    such connections, so a few dozen idle sockets would make every request answer 503. Here a connection waits
    for a request's headers at most `idle_seconds` from when it opened or its last response ended, however many
    bytes trickle in; a connection with a request in progress is never closed this way (the app bounds a body's
    wait itself). A new connection beyond the limit closes the longest-waiting one (itself if all others are
    busy), so idle sockets cannot crowd out a real request and the server's descriptors stay bounded.
    """
    waiting: dict[H11Protocol, asyncio.TimerHandle] = {}  # connections awaiting a request's headers, oldest first

    class IdleLimitedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.await_request()
            if len(self.connections) > max_connections and waiting:
                next(iter(waiting)).close_idle()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_waiting()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if not self.between_requests():
                self.stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.between_requests() and not self.transport.is_closing():
                self.await_request()

        def between_requests(self) -> bool:
            """True while no request is in progress (uvicorn's own test in `shutdown`)."""
            return self.cycle is None or self.cycle.response_complete

        def await_request(self) -> None:
            """Start the wait for the next request's headers."""
            self.stop_waiting()
            waiting[self] = self.loop.call_later(idle_seconds, self.close_idle)

        def stop_waiting(self) -> None:
            """A request arrived or the connection closed: no deadline."""
            timer = waiting.pop(self, None)
            if timer is not None:
                timer.cancel()

        def close_idle(self) -> None:
            """Close the connection: it waited too long for a request, or others need its place."""
            self.stop_waiting()
            self.transport.close()

    return IdleLimitedH11Protocol


def server_config(
    app: Any, max_connections: int = MAX_CONNECTIONS, idle_seconds: float = IDLE_SECONDS
) -> uvicorn.Config:
    """uvicorn's settings: quiet, h11 with `idle_limited_protocol`'s limits, request headers of at most HEAD_BYTES.

    uvicorn's `limit_concurrency` is left off: it counts idle connections too, which the protocol bounds instead."""
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        http=idle_limited_protocol(max_connections, idle_seconds),
        timeout_keep_alive=max(1, round(idle_seconds)),  # uvicorn's own wait after a response; ours is as long
        h11_max_incomplete_event_size=HEAD_BYTES,
        backlog=BACKLOG,
    )


def serve(matches: Matches, host: str, port: int, open_browser: bool, say: Callable[[str], None] = print) -> int:
    """Serve the page for `matches` (its first match made now) until interrupted; 0 when stopped."""
    warning = exposure_warning(host)
    if warning:
        say(warning)
    sock = bind(host, port)
    url = page_url(sock, matches.create())
    say(f"Your match is at {url}  (Ctrl-C stops the server)")
    if open_browser:
        webbrowser.open(url)
    allowed = LOOPBACK_HOSTS if warning is None else None  # beyond loopback the Host header can be anything
    try:
        uvicorn.Server(server_config(create_app(matches, allowed))).run(sockets=[sock])
    finally:
        sock.close()
    return 0
