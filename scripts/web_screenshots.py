"""Screenshots of the web page for the README: `python scripts/web_screenshots.py [--out docs/img]`.

Starts `python play.py --web --no-browser` on a seeded match, plays it by clicks in headless Chromium (Debian's
`chromium`, through Playwright), and saves web-mid-hand.png (a few turns in, hints on) and web-hand-end.png (the
first hand's end). Needs the test extra and `apt-get install chromium`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"Your match is at (http://\S+)")


def start_server(opponent: str, seed: int, seat: int) -> tuple[subprocess.Popen, str]:
    """play.py --web on a seeded match; (the process, the page's address)."""
    command = [sys.executable, str(ROOT / "play.py"), "--web", "--no-browser", "--seed", str(seed), "--seat", str(seat)]
    if opponent:
        command += ["--opponent", opponent]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in process.stdout:
        found = URL.search(line)
        if found:
            return process, found.group(1)
    raise SystemExit(f"play.py --web did not start (exit status {process.wait()})")


def click(page, selector: str) -> None:
    """Click a move element and wait for the server's answer."""
    with page.expect_response(lambda r: "/api/matches" in r.url and r.request.method == "POST"):
        page.click(selector)


def one_turn(page) -> None:
    """A plain player: knock when it can, take a face-up card that makes a meld, else draw, and discard the card
    that leaves least deadwood."""
    knocks = page.locator("[data-action=knock]")
    if knocks.count():
        return click(page, f"[data-action=knock][data-card='{knocks.first.get_attribute('data-card')}']")
    if page.locator("[data-action=pass]:enabled").count():
        return click(page, "[data-action=pass]")
    if page.locator("[data-action=draw]:enabled").count():
        return click(page, "[data-action=draw]")
    cards = page.locator("[data-action=discard]:enabled")
    best = min(range(cards.count()), key=lambda i: int(cards.nth(i).get_attribute("title").split()[-1]))
    click(page, f"[data-action=discard][data-card='{cards.nth(best).get_attribute('data-card')}']")


def main() -> int:
    """Make the two screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img"), help="folder for the two PNG files")
    parser.add_argument("--opponent", default="", help="as play.py (default: play.py's default, the shipped bot)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--seat", type=int, default=0)
    parser.add_argument("--turns", type=int, default=6, help="your turns before the mid-hand picture")
    args = parser.parse_args()
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise SystemExit("needs Debian's chromium: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    process, url = start_server(args.opponent, args.seed, args.seat)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
            page.goto(url)
            page.wait_for_selector("#prompt:not(:empty)")
            for _ in range(args.turns):
                if not page.locator("#hand-end").is_hidden():
                    break
                one_turn(page)
            page.check("#hint-toggle")
            page.wait_for_selector("#hint li")
            page.screenshot(path=str(out / "web-mid-hand.png"))
            page.uncheck("#hint-toggle")
            while page.locator("#hand-end").is_hidden():
                one_turn(page)
            page.screenshot(path=str(out / "web-hand-end.png"))
            browser.close()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    print(f"wrote {out / 'web-mid-hand.png'} and {out / 'web-hand-end.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
