"""Load on ``c4engine serve`` over loopback with wrk (Debian's ``wrk`` package), bounded
in time, and the figures issue 30 asks for.

    python tools/measure_service_load.py cached --seconds 30 --connections 64
    python tools/measure_service_load.py uncached --seconds 30 --connections 16
    python tools/measure_service_load.py fill --positions 100000 --cache-mb 2
    python tools/measure_service_load.py exactness --positions 200 --stones 12-30

``cached``: 1,000 random 7x6 positions are asked once, then wrk asks them over and
over; prints the rate, p50/p99 latency and errors.  ``uncached``: wrk asks distinct
random 7x6 positions of 8-30 stones, never the same twice; prints the same, the
deliberate 503s apart, and the server's resident memory before and after.
``fill``: that many distinct positions through a client of the standard library,
then the cache file's size against its bound.  ``exactness``: distinct positions
one at a time, how many are exact within the cap.  Each run starts its own server
(``--threads 2`` unless told) on 127.0.0.1 with a fresh cache file.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from service_process import ServiceProcess  # noqa: E402

from c4engine.rules.board import Board  # noqa: E402

LUA = """
paths = {%s}
i = 0
request = function()
  i = i + 1
  if i > #paths then i = 1 end
  return wrk.format("GET", paths[i])
end
"""


def random_positions(count: int, low: int, high: int, seed: int) -> list[str]:
    """``count`` distinct positions (as digits) of ``low`` to ``high`` stones, not over:
    every such position along random 7x6 games, in a random order."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < count:
        board = Board()
        while board.stones < high and not board.is_over():
            board = board.play(rng.choice(board.legal_moves()))
            if low <= board.stones and not board.is_over() and len(seen) < count:
                seen["".join(str(col + 1) for col in board.history)] = None
                if len(seen) % 1000 == 0:
                    click.echo(f"\r{len(seen)}/{count} positions", nl=False, err=True)
    click.echo("", err=True)
    positions = list(seen)
    rng.shuffle(positions)
    return positions


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_wrk(url: str, paths: list[str], seconds: int, connections: int, workdir: Path) -> str:
    script = workdir / "paths.lua"
    script.write_text(LUA % ",".join(f'"{path}"' for path in paths))
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s",
               "-s", str(script), url]
    click.echo("$ " + " ".join(command), err=True)
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def summary(output: str) -> str:
    """Rate, p50, p99 and the errors from wrk's report."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    p50, p99 = (re.search(rf"\s{p}%\s+([\d.]+\w+)", output) for p in (50, 99))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    total = re.search(r"(\d+) requests in", output)
    return (f"{total.group(1) if total else '?'} requests, {rate.group(1) if rate else '?'} requests/s, "
            f"p50 {p50.group(1) if p50 else '?'}, p99 {p99.group(1) if p99 else '?'}, "
            f"non-2xx {non_2xx.group(1) if non_2xx else 0}, socket errors: {errors.group(1) if errors else 'none'}")


@click.group()
def main() -> None:
    """Measure c4engine serve under load (see the module's docstring)."""


def start(workdir: Path, threads: int, *options: str) -> ServiceProcess:
    return ServiceProcess(workdir / "cache.sqlite", "--threads", str(threads), *options)


@main.command()
@click.option("--seconds", default=30, show_default=True)
@click.option("--connections", default=64, show_default=True)
@click.option("--threads", default=2, show_default=True)
@click.option("--workers", default=1, show_default=True, help="Server processes on the one port.")
def cached(seconds: int, connections: int, threads: int, workers: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        workdir = Path(name)
        server = start(workdir, threads, "--workers", str(workers))
        try:
            paths = [f"/solve?pos={moves}" for moves in random_positions(1000, 0, 30, 1)]
            for path in paths:
                server.get(path)
            click.echo(summary(run_wrk(server.url, paths, seconds, connections, workdir)))
        finally:
            server.stop()


@main.command()
@click.option("--seconds", default=30, show_default=True)
@click.option("--connections", default=16, show_default=True)
@click.option("--threads", default=2, show_default=True)
@click.option("--movetime", default=1000, show_default=True, help="The server's time cap, ms.")
@click.option("--positions", default=20_000, show_default=True, help="Distinct positions, more than wrk asks.")
def uncached(seconds: int, connections: int, threads: int, movetime: int, positions: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        workdir = Path(name)
        server = start(workdir, threads, "--movetime", str(movetime))
        try:
            paths = [f"/api/v1/position?pos={moves}" for moves in random_positions(positions, 8, 30, 2)]
            before = resident_mb(server.proc.pid)
            output = run_wrk(server.url, paths, seconds, connections, workdir)
            click.echo(summary(output))
            click.echo(f"server resident memory {before:.0f} MB before, {resident_mb(server.proc.pid):.0f} MB after")
            metrics = server.get("/metrics")[2]
            click.echo("".join(line + "\n" for line in metrics.splitlines()
                               if line.startswith(("c4engine_requests_total", "c4engine_answers_total",
                                                   "c4engine_solve_seconds_count", "c4engine_solve_seconds_sum"))))
        finally:
            server.stop()


@main.command()
@click.option("--positions", default=200, show_default=True)
@click.option("--stones", default="12-30", show_default=True, help="Range of stones on the board.")
@click.option("--movetime", default=1000, show_default=True, help="The server's time cap, ms.")
def exactness(positions: int, stones: str, movetime: int) -> None:
    """Distinct random 7x6 positions asked one at a time (no queue): how many are
    exact, and the longest answer."""
    low, high = (int(part) for part in stones.split("-"))
    with tempfile.TemporaryDirectory() as name:
        server = start(Path(name), 1, "--movetime", str(movetime))
        try:
            exact, longest = 0, (0.0, "")
            for moves in random_positions(positions, low, high, 4):
                began = time.perf_counter()
                _status, _headers, body = server.get(f"/api/v1/position?pos={moves}")
                longest = max(longest, (time.perf_counter() - began, moves))
                exact += bool(body["exact"])
        finally:
            server.stop()
    click.echo(f"{exact}/{positions} exact within {movetime} ms; longest answer {longest[0] * 1000:.0f} ms "
               f"(pos={longest[1]})")


@main.command()
@click.option("--positions", default=100_000, show_default=True)
@click.option("--cache-mb", default=2, show_default=True)
@click.option("--threads", default=2, show_default=True)
def fill(positions: int, cache_mb: int, threads: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        workdir = Path(name)
        server = start(workdir, threads, "--cache-mb", str(cache_mb))
        try:
            moves = random_positions(positions, 16, 36, 3)
            began, done = time.monotonic(), 0
            with ThreadPoolExecutor(8) as pool:
                for status, _headers, _body in pool.map(lambda m: server.get(f"/api/v1/position?pos={m}"), moves):
                    done += 1
                    if status != 200:
                        click.echo(f"\nstatus {status}", err=True)
                    if done % 1000 == 0:
                        click.echo(f"\r{done}/{positions} asked in {time.monotonic() - began:.0f} s", nl=False,
                                   err=True)
            click.echo("", err=True)
        finally:
            server.stop()
        files = {path.name: path.stat().st_size for path in workdir.glob("cache.sqlite*")}
        click.echo(f"{positions} positions in {time.monotonic() - began:.0f} s; files {files}; "
                   f"bound {cache_mb << 20} bytes; main file within it: {files['cache.sqlite'] <= cache_mb << 20}")


if __name__ == "__main__":
    main()
