"""Run the page: bind the port, print the URL, open the browser, serve with uvicorn until Ctrl-C (or SIGTERM).

The server answers whatever its clients do: a connection owes its request's head and body within deadlines and the
connections are bounded, the stalled ones closed first (`limited_protocol`); its log lines go out through a queue
and a thread of their own, so a full or unread stderr never stops it (`quiet_log`); Ctrl-C stops it at once and
says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import logging.handlers
import queue
import socket
import sys
import webbrowser
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from hollywood_gin_env.play.web.app import BODY_SECONDS, LOOPBACK_HOSTS, create_app
from hollywood_gin_env.play.web.matches import Matches

IDLE_SECONDS = 5.0  # a page's requests come in bursts; a connection waiting for a request is closed soon after
#: A request's body arrives with its head; the app answers 408 after BODY_SECONDS, and a connection still owing its
#: body a second later is closed.
BODY_DEADLINE = BODY_SECONDS + 1.0
MAX_CONNECTIONS = 256  # a page opens about six; beyond this many the one stalled longest is closed
HEAD_BYTES = 16 * 1024  # a request's line and headers (a page's are under 2 KB, with localhost cookies more)
BACKLOG = 128  # connections queued before accepting, and accepted in one go
SHUTDOWN_SECONDS = 1.0  # after Ctrl-C, how long requests in progress may take to finish
LOG_QUEUE = 1000  # log lines waiting for stderr; beyond them lines are dropped (and counted), never waited for


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


class HeadLimitedConnection(h11.Connection):
    """h11's server connection refusing a request whose line and headers exceed `head_bytes` however they arrived:
    h11's own bound holds only while a head is incomplete, so a 20 KB head in one segment would pass it."""

    def __init__(self, head_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=head_bytes)
        self.head_bytes = head_bytes

    def next_event(self) -> Any:
        """h11's next event; RemoteProtocolError (uvicorn answers 400 and closes) for a head over the bound."""
        event = super().next_event()
        if isinstance(event, h11.Request):
            size = len(event.method) + len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers)
            if size > self.head_bytes:
                raise h11.RemoteProtocolError(f"request headers of {size:,} bytes", error_status_hint=431)
        return event


def limited_protocol(
    max_connections: int = MAX_CONNECTIONS,
    idle_seconds: float = IDLE_SECONDS,
    body_seconds: float = BODY_DEADLINE,
    head_bytes: int = HEAD_BYTES,
) -> type:
    """uvicorn's h11 protocol with deadlines on what the client owes and a bound on connections.

    A connection is *stalled* while it waits on its client: for a request's head (from when it opened or its last
    response ended: `idle_seconds`, however many bytes trickle in) or for the rest of a request's body (from its
    head: `body_seconds`); past its deadline it is closed. uvicorn times a connection out only between requests and
    only until its next byte, and its `limit_concurrency` counts idle connections too, so a few dozen trickling
    sockets would make every request answer 503. Beyond `max_connections` open at once, a new connection closes the
    one stalled longest, never itself: stalled sockets cannot crowd out a real request and the server's descriptors
    stay bounded (only connections whose requests are being answered may briefly pass the bound). A request's head
    is at most `head_bytes` (HeadLimitedConnection).
    """
    stalled: dict[H11Protocol, asyncio.TimerHandle] = {}  # the connections waiting on their clients, longest first

    class LimitedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.conn = HeadLimitedConnection(head_bytes)
            self.waits_for: str | None = None  # "head" or "body" while stalled

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.stall("head", idle_seconds)
            if len(self.connections) > max_connections:
                longest = next(iter(stalled))
                if longest is not self:
                    longest.close_stalled()

        def connection_lost(self, exc: Exception | None) -> None:
            self.unstall()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.between_requests():
                return
            if self.cycle.more_body and not self.cycle.response_complete:
                if self.waits_for != "body":  # its head came: now the body is owed, in its place in the line
                    self.stall("body", body_seconds)
            else:
                self.unstall()  # the request is whole: the app is answering

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.between_requests() and not self.transport.is_closing():
                self.unstall()
                self.stall("head", idle_seconds)  # the next request's head, at the back of the line

        def between_requests(self) -> bool:
            """True while no request is in progress (uvicorn's own test in `shutdown`)."""
            return self.cycle is None or self.cycle.response_complete

        def stall(self, what: str, seconds: float) -> None:
            """Wait on the client for `what`, at most `seconds`; a connection already waiting keeps its place."""
            timer = stalled.get(self)
            if timer is not None:
                timer.cancel()
            stalled[self] = self.loop.call_later(seconds, self.close_stalled)
            self.waits_for = what

        def unstall(self) -> None:
            """The client gave what was owed, or the connection closed: no deadline."""
            timer = stalled.pop(self, None)
            if timer is not None:
                timer.cancel()
            self.waits_for = None

        def close_stalled(self) -> None:
            """Close the connection: its client missed its deadline, or others need its place."""
            self.unstall()
            self.transport.close()

    return LimitedH11Protocol


def server_config(
    app: Any,
    max_connections: int = MAX_CONNECTIONS,
    idle_seconds: float = IDLE_SECONDS,
    body_seconds: float = BODY_DEADLINE,
) -> uvicorn.Config:
    """uvicorn's settings: quiet, h11 with `limited_protocol`'s deadlines and bounds, logging left to the caller
    (`serve` sends it through `quiet_log`).

    uvicorn's `limit_concurrency` is left off: it counts idle connections too, which the protocol bounds instead."""
    return uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,
        access_log=False,
        http=limited_protocol(max_connections, idle_seconds, body_seconds),
        timeout_keep_alive=max(1, round(idle_seconds)),  # uvicorn's own wait after a response; ours is as long
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        backlog=BACKLOG,
    )


class DroppingQueueHandler(logging.handlers.QueueHandler):
    """A QueueHandler that never waits: a record that finds the queue full is dropped and counted."""

    def __init__(self, records: queue.Queue) -> None:
        super().__init__(records)
        self.dropped = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        """Queue the record, or drop it if the queue is full."""
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1


@contextlib.contextmanager
def quiet_log(stream: TextIO | None = None) -> Iterator[DroppingQueueHandler]:
    """uvicorn's log lines (its warnings, a failure's traceback) written to `stream` (stderr) by a thread of their
    own: the server never waits on them, even with stderr a pipe nobody reads (a full queue drops lines)."""
    records: queue.Queue = queue.Queue(LOG_QUEUE)
    handler = DroppingQueueHandler(records)
    writer = logging.StreamHandler(stream or sys.stderr)
    writer.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    logger = logging.getLogger("uvicorn")
    saved = logger.handlers[:], logger.propagate
    logger.handlers, logger.propagate = [handler], False
    # a daemon thread, never joined: one stuck on a full pipe holds up neither the server nor its exit
    logging.handlers.QueueListener(records, writer).start()
    try:
        yield handler
    finally:
        logger.handlers, logger.propagate = saved


def serve(matches: Matches, host: str, port: int, open_browser: bool, say: Callable[[str], None] = print) -> int:
    """Serve the page for `matches` (its first match made now) until Ctrl-C (then say so) or SIGTERM; 0 when
    stopped."""
    warning = exposure_warning(host)
    if warning:
        say(warning)
    sock = bind(host, port)
    url = page_url(sock, matches.create())
    say(f"Your match is at {url}  (Ctrl-C stops the server)")
    if open_browser:
        webbrowser.open(url)
    allowed = LOOPBACK_HOSTS if warning is None else None  # beyond loopback the Host header can be anything
    with quiet_log() as log:
        try:
            uvicorn.Server(server_config(create_app(matches, allowed))).run(sockets=[sock])
        except KeyboardInterrupt:  # uvicorn stops on Ctrl-C, then raises it again
            pass
        finally:
            sock.close()
    dropped = f" ({log.dropped:,} log lines were dropped: stderr was not read)" if log.dropped else ""
    say(f"Server stopped.{dropped}")
    return 0
