"""The pages' speed (issue 21): the weight of each page's first load (bytes, and gzip), the
time until a seat's table answers clicks in headless chromium, and the delay from one seat's
click to the other seat's page showing it (p50, p95), beside the same delay measured on the
raw stream in the same run. Prints figures for docs/BENCHMARKS.md; no test runs it.

    .venv/bin/python benchmarks/web_bench.py [--loads 10] [--games 2]

It starts `fairway serve` (one worker, the embedded store in a temporary directory, bots
without a pause) on a free loopback port and drives Debian's chromium (/usr/bin/chromium)
with Playwright. Times are wall-clock epoch milliseconds taken inside each page
(performance.timeOrigin + performance.now()) and in this process (time.time()), one machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.web.assets import bundle  # noqa: E402

PAGES = (
    "lobby.html",
    "table.html",
    "replay.html",
    "standings.html",
    "organise.html",
    "verify.html",
)
LEGAL = "button.legal:not([disabled])"
NOW = "() => performance.timeOrigin + performance.now()"
WATCH = """() => {
  window.seenAt = {};
  new MutationObserver(() => {
    window.seenAt[document.body.dataset.version] ??= performance.timeOrigin + performance.now();
  }).observe(document.body, { attributes: true, attributeFilter: ["data-version"] });
}"""
CLICK = f"""() => {{
  const t = ({NOW})();
  document.querySelector({json.dumps(LEGAL)}).click();
  return t;
}}"""
SHOWN = "(v) => Object.entries(window.seenAt).filter(([k]) => Number(k) >= v).map(([, t]) => t)"


def weight(page: str) -> tuple[int, int, int]:
    """(files, bytes, gzip bytes) of a page and every file it loads, imports followed."""
    built = bundle()
    seen: set[str] = set()
    todo = re.findall(r"/static/([\w.-]+)", built.pages[page].decode())
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += re.findall(r'from "\./([\w.-]+)"', built.assets[name].body.decode())
    bodies = [built.pages[page]] + [built.assets[name].body for name in seen]
    return len(bodies), sum(map(len, bodies)), sum(len(gzip.compress(b, 6)) for b in bodies)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def seat(base: str, variant: str, bots: int, name: str) -> tuple[str, list[dict[str, Any]]]:
    """A game of `variant` with `bots` greedy bots after the people: its id and the people's
    seats (with tokens), started."""
    people = 2 if bots == 0 else 1
    body = {
        "variant": variant,
        "seats": people + bots,
        "options": {"hands": 1},
        "bots": [{"seat": people + i, "level": "greedy"} for i in range(bots)],
    }
    made = httpx.post(f"{base}/games", json=body).json()
    held = []
    for s in range(people):
        claim = httpx.post(
            f"{base}/games/{made['game_id']}/seats",
            json={"name": f"{name}{s}", "seat": s},
            headers={"Idempotency-Key": os.urandom(16).hex()},
        ).json()
        held.append({"seat": claim["seat"], "token": claim["token"], "name": f"{name}{s}"})
    if not httpx.get(f"{base}/games/{made['game_id']}").json()["started"]:
        httpx.post(
            f"{base}/games/{made['game_id']}/start",
            headers={"Authorization": f"Bearer {made['creator_token']}"},
        )
    return made["game_id"], held


def hold(page: Page, game_id: str, held: dict[str, Any]) -> None:
    page.goto("/organise")  # any page of the origin, to reach its localStorage
    page.evaluate(
        "([id, held]) => localStorage.setItem('fairway.seats', JSON.stringify({[id]: held}))",
        [game_id, held],
    )


def time_to_clicks(browser: Any, base: str, loads: int) -> list[float]:
    found = []
    for i in range(loads):
        game_id, (held,) = seat(base, "golf", 1, f"load{i}-")
        context = browser.new_context(base_url=base)
        page = context.new_page()
        hold(page, game_id, held)
        page.goto(f"/play/{game_id}", wait_until="commit")
        page.wait_for_selector(LEGAL, timeout=60_000)
        found.append(page.evaluate("() => performance.now()"))  # since this navigation began
        context.close()
    return found


def raw_stream(
    base: str, game_id: str, token: str, seen: dict[int, float], stop: threading.Event
) -> None:
    with httpx.stream(
        "GET",
        f"{base}/games/{game_id}/stream",
        headers={"Authorization": f"Bearer {token}"},
        timeout=None,
    ) as r:
        for line in r.iter_lines():
            if line.startswith("id: "):
                seen[int(line[4:])] = time.time() * 1000
            if stop.is_set():
                return


def click_delays(browser: Any, base: str, games: int) -> tuple[list[float], list[float]]:
    page_delays: list[float] = []
    raw_delays: list[float] = []
    for g in range(games):
        game_id, held = seat(base, "golf", 0, f"pair{g}-")
        pages = []
        for person in held:
            page = browser.new_context(base_url=base).new_page()
            hold(page, game_id, person)
            page.goto(f"/play/{game_id}")
            page.wait_for_selector("body[data-stream=live]")
            page.evaluate(WATCH)
            pages.append(page)
        raws: list[dict[int, float]] = [{}, {}]
        stop = threading.Event()
        for person, seen in zip(held, raws, strict=True):
            threading.Thread(
                target=raw_stream, args=(base, game_id, person["token"], seen, stop), daemon=True
            ).start()
        while True:
            status = httpx.get(f"{base}/games/{game_id}").json()["status"]
            if status["phase"] == "game_over":
                break
            mover = status["to_act"][0]
            page, other = pages[mover], pages[1 - mover]
            page.wait_for_selector(LEGAL)
            before = int(page.evaluate("document.body.dataset.version"))
            clicked = page.evaluate(CLICK)
            page.wait_for_function("(v) => Number(document.body.dataset.version) > v", arg=before)
            after = int(page.evaluate("document.body.dataset.version"))
            other.wait_for_function("(v) => Number(document.body.dataset.version) >= v", arg=after)
            shown = other.evaluate(SHOWN, after)
            page_delays.append(min(shown) - clicked)
            deadline = time.time() + 10
            while after not in raws[1 - mover] and time.time() < deadline:
                time.sleep(0.002)
            if after in raws[1 - mover]:
                raw_delays.append(raws[1 - mover][after] - clicked)
        stop.set()
    return page_delays, raw_delays


def figures(what: str, values: list[float]) -> None:
    p50, p95 = pct(values, 0.5), pct(values, 0.95)
    print(f"{what}: p50 {p50:.1f} ms, p95 {p95:.1f} ms ({len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--games", type=int, default=2)
    args = parser.parse_args()
    print("page            files  bytes  gzip")
    for page in PAGES:
        files, raw, packed = weight(page)
        print(f"{page:<15} {files:>5} {raw:>6} {packed:>5}")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        env = {
            **os.environ,
            "FAIRWAY_DATA_DIR": data,
            "FAIRWAY_BOT_THINK": "0",
            "FAIRWAY_LOG_LEVEL": "warning",
            "FAIRWAY_RATE_LIMIT_PER_SECOND": "100000",
            "FAIRWAY_RATE_LIMIT_BURST": "100000",
        }
        env.pop("DATABASE_URL", None)
        server = subprocess.Popen(
            [str(ROOT / ".venv/bin/fairway"), "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(200):
                try:
                    if httpx.get(f"{base}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.05)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=["--no-sandbox"]
                )
                loads = time_to_clicks(browser, base, args.loads)
                figures("the table answers clicks after", loads)
                shown, raw = click_delays(browser, base, args.games)
                figures("a click to the other seat's page", shown)
                figures("a click to the other seat's raw stream", raw)
                print(f"load average: {os.getloadavg()[0]:.1f}")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=20)


if __name__ == "__main__":
    main()
