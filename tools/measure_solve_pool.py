"""Threads or processes for the service's solves: the same positions solved column by
column (as ``c4engine serve`` does) by one worker, by two threads, and by two
processes, each worker with its own searcher; prints the wall time of each.

    python tools/measure_solve_pool.py --positions 300 --stones 12-24
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

import click

from c4engine.kernel.book import OpeningBook
from c4engine.geometry import STANDARD
from c4engine.rules.board import Board
from c4engine.search.pool import StopSignal
from c4engine.service.books import Books
from c4engine.service.solving import Solver

_worker = threading.local()


def random_positions(count: int, low: int, high: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    out: list[tuple[int, ...]] = []
    while len(out) < count:
        board, stones = Board(), rng.randint(low, high)
        while board.stones < stones and not board.is_over():
            board = board.play(rng.choice(board.legal_moves()))
        if not board.is_over():
            out.append(board.history)
    return out


def build_solver() -> None:
    """This worker's own solver (each thread or process has one)."""
    _worker.solver = Solver([STANDARD], 16, Books(OpeningBook.load()))


def settle(seconds: float) -> None:
    """Keep a worker busy, so that every worker starts and builds its solver."""
    time.sleep(seconds)


def solve_all(moves_list: list[tuple[int, ...]]) -> int:
    solver = _worker.solver
    for moves in moves_list:
        solver.analyse(Board().play_all(moves), StopSignal())
    return len(moves_list)


def timed(executor: Executor, chunks: list[list[tuple[int, ...]]]) -> float:
    list(executor.map(settle, [2.0] * len(chunks)))
    began = time.perf_counter()
    list(executor.map(solve_all, chunks))
    return time.perf_counter() - began


@click.command()
@click.option("--positions", default=300, show_default=True)
@click.option("--stones", default="12-24", show_default=True, help="Range of stones on the board.")
@click.option("--seed", default=1, show_default=True)
def main(positions: int, stones: str, seed: int) -> None:
    low, high = (int(part) for part in stones.split("-"))
    moves = random_positions(positions, low, high, seed)
    halves = [moves[0::2], moves[1::2]]
    with ThreadPoolExecutor(1, initializer=build_solver) as one:
        click.echo(f"1 thread:    {timed(one, [moves]):.2f} s for {positions} positions")
    with ThreadPoolExecutor(2, initializer=build_solver) as two:
        click.echo(f"2 threads:   {timed(two, halves):.2f} s")
    with ProcessPoolExecutor(2, initializer=build_solver) as processes:
        click.echo(f"2 processes: {timed(processes, halves):.2f} s")


if __name__ == "__main__":
    main()
