"""Run the page: bind the port, print the URL, open the browser, serve with uvicorn until Ctrl-C."""

from __future__ import annotations

import socket
import webbrowser
from collections.abc import Callable
from typing import Any

import uvicorn

from hollywood_gin_env.play.web.app import LOOPBACK_HOSTS, create_app
from hollywood_gin_env.play.web.matches import Matches

KEEP_ALIVE_SECONDS = 5  # a page's requests come in bursts; an idle connection is closed soon after
MAX_CONNECTIONS = 64  # a page opens a handful; beyond this many at once uvicorn answers 503


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); OSError with the reason if that fails."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(64)
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


def server_config(app: Any) -> uvicorn.Config:
    """uvicorn's settings: quiet, an idle connection closed after KEEP_ALIVE_SECONDS, and 503 beyond
    MAX_CONNECTIONS concurrent connections (with the app's body timeout, stalled clients hold few descriptors)."""
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        limit_concurrency=MAX_CONNECTIONS,
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
