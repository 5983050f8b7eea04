"""What `fairway verify` costs: a 10-deal Hang Ten game for 6 players (docs/BENCHMARKS.md).

    uv run python benchmarks/export_verify_bench.py [--repeats 7] [--seed 1]

Plays the game with random bots as the service stores it (each action in its events'
metadata, v2 deals from a seed chain), exports it, and times, alternating, in this process:
`verify_export` of the export (parse, chain, commitments, every move decided again, scores,
winners, the header) and one fold of the same game's events (`domain.variants.fold`, the
cheapest read of a game). Prints the medians and their ratio from the same run, then the
wall time of the real `fairway verify FILE` subprocess (Python start-up and imports
included) beside the in-process figure.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from domain.variants import fold  # noqa: E402
from events.schema.common import GameOptions, GameStarted  # noqa: E402
from service.audit.export import export_game  # noqa: E402
from service.audit.offline import verify_export  # noqa: E402
from tests.support.histories import played, rows  # noqa: E402

GAME = "0123456789abcdef"


def cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    stored, _ = played("hang-ten", 6, seed=args.seed, options=GameOptions(hands=10))
    document = msgspec.json.encode(export_game(GAME, rows(GAME, stored)))
    events = [event for event, _ in stored]
    started = next(i for i, e in enumerate(events) if isinstance(e, GameStarted))
    hands = sum(type(e).__name__ == "HandEnded" for e in events)
    print(f"cpu: {cpu()}")
    size = f"export {len(document) / 1e6:.2f} MB"
    print(f"game: hang-ten, 6 players, {hands} deals, {len(events)} events, {size}")

    verify_ms: list[float] = []
    fold_ms: list[float] = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        report = verify_export(document)
        t1 = time.perf_counter()
        fold(events[started:])
        t2 = time.perf_counter()
        assert report.ok, [f.line() for f in report.failures]
        verify_ms.append((t1 - t0) * 1000)
        fold_ms.append((t2 - t1) * 1000)
    ratios = [v / f for v, f in zip(verify_ms, fold_ms, strict=True)]
    v, f = statistics.median(verify_ms), statistics.median(fold_ms)
    print(f"verify_export (in process): median {v:.1f} ms over {args.repeats} runs")
    print(f"fold once:                  median {f:.1f} ms")
    print(
        f"ratio verify / fold:        {v / f:.1f} (per-pair median {statistics.median(ratios):.1f})"
    )

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "game.json"
        path.write_bytes(document)
        walls = []
        for _ in range(3):
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "service.cli", "verify", str(path)],
                cwd=ROOT,
                capture_output=True,
                check=False,
            )
            walls.append((time.perf_counter() - t0) * 1000)
            assert done.returncode == 0, done.stdout + done.stderr
    print(f"fairway verify FILE (subprocess, wall): median {statistics.median(walls):.0f} ms of 3")


if __name__ == "__main__":
    main()
