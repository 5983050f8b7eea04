"""What fair deals and receipts cost (docs/BENCHMARKS.md, "Fair deals and receipts").

    .venv/bin/python benchmarks/fairness_bench.py [--repeats 31]

Pure CPU, no store. Prints, each as a median of --repeats runs, beside ratios measured in
the same run:
- a hand's server seed from a seed chain of L = 1,000 (the default for a game without a
  fixed number of hands) at the worst link (k = 1: 999 hashes) and at the best (k = L),
  and drawing the chain when a game is created (1,000 hashes), against a v1 deal's
  `secrets.token_bytes(32)`;
- a whole v2 deal (`decide` of `DealHand` with the server seed and 4 seat seeds, then
  `evolve`) against the v1 deal of the same hand;
- `check_deals` over a finished 9-hand Golf game's events against folding those events;
- signing a receipt and verifying one (Ed25519).
"""

from __future__ import annotations

import argparse
import platform
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.fairness import check_deals
from domain.grid import GOLF
from domain.seed_chain import new_chain
from domain.variants import fold
from events.schema.common import DealHand, GameOptions, GameStarted
from service.contract.receipts import ReceiptKey, sign, verify_receipt
from tests.support.fair_games import play


def median_us(fn: Callable[[], object], repeats: int, inner: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times) * 1e6


def cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    return next(
        (line.split(":", 1)[1].strip() for line in out.splitlines() if "Model name" in line),
        "unknown",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=31)
    repeats = parser.parse_args().repeats
    print(f"CPU: {cpu()}; Python {platform.python_version()}")

    chain = new_chain(secrets.token_bytes(32), 1, 1000)
    v1_seed = median_us(lambda: secrets.token_bytes(32), repeats, 2000)
    worst = median_us(lambda: chain.server_seed(1), repeats, 20)
    best = median_us(lambda: chain.server_seed(1000), repeats, 2000)
    draw = median_us(lambda: new_chain(secrets.token_bytes(32), 1, 1000), repeats, 20)
    print(f"v1 seed (token_bytes 32)          {v1_seed:9.2f} us")
    print(f"server seed, L=1000, k=1 (worst)  {worst:9.2f} us  = {worst / v1_seed:7.1f} x v1")
    print(f"server seed, L=1000, k=L (best)   {best:9.2f} us  = {best / v1_seed:7.1f} x v1")
    print(f"draw a chain of 1000 (create)     {draw:9.2f} us  = {draw / v1_seed:7.1f} x v1")

    state = GOLF.initial_state(4, GameOptions())
    server = chain.server_seed(1).hex()
    v2_cmd = DealHand(server_seed=server, seat_seeds=("Ada", "Grace", "Alan", "Edsger"))
    v1_cmd = DealHand(secrets.token_bytes(32).hex())

    def deal(command: DealHand) -> object:
        (dealt,) = GOLF.decide(state, command)
        return GOLF.evolve(state, dealt)

    v1_deal = median_us(lambda: deal(v1_cmd), repeats, 200)
    v2_deal = median_us(lambda: deal(v2_cmd), repeats, 200)
    print(f"v1 deal, Golf 4 players           {v1_deal:9.2f} us")
    print(f"v2 deal (HMAC of 4 seat seeds)    {v2_deal:9.2f} us  = {v2_deal / v1_deal:7.3f} x v1")

    events = play("golf", 4, GameOptions(), seeds={2: {0: "a"}, 5: {3: "b"}}, game=1)
    played = [e for _, e in events]
    start = next(i for i, e in enumerate(played) if isinstance(e, GameStarted))
    folding = median_us(lambda: fold(played[start:]), repeats, 3)
    checking = median_us(lambda: check_deals(events), repeats, 3)
    print(f"fold a 9-hand Golf game ({len(events)} events) {folding:9.1f} us")
    print(
        f"check_deals over the same events  {checking:9.1f} us  = {checking / folding:7.3f} x fold"
    )

    key = ReceiptKey.generate()
    digest = secrets.token_bytes(32)
    signing = median_us(lambda: sign(key, "0123456789abcdef", 1234, digest), repeats, 200)
    receipt = sign(key, "0123456789abcdef", 1234, digest)
    public = key.public_key
    verifying = median_us(lambda: verify_receipt(receipt, public), repeats, 200)
    print(
        f"sign a receipt                    {signing:9.2f} us  = {signing / v2_deal:7.3f} x v2 deal"
    )
    print(
        f"verify a receipt                  {verifying:9.2f} us  = "
        f"{verifying / signing:7.2f} x sign"
    )


if __name__ == "__main__":
    main()
