"""The cost of a node in the two-word kernel (boards past 64 bits) against the one-word
kernel, on the same 7x6 positions: the two search exactly alike there (the same
nodes, position by position), so their nodes per second of CPU compare the kernels
and nothing else.  Positions: a file of ``<moves> [<score>]`` lines such as Pascal
Pons' test sets; each kernel solves them all once to warm up, then ``--rounds`` times.

    python tools/measure_two_words.py Test_L2_R1 --rounds 3
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from c4engine.rules.notation import parse_digits
from c4engine.search.searcher import Searcher


def solve_all(searcher: Searcher, lines: list[str]) -> tuple[int, list[int]]:
    """Nodes and scores of solving each position from an empty table."""
    nodes, scores = 0, []
    for moves in lines:
        pos = parse_digits(moves)
        searcher.clear()
        searcher.fit_table(pos)
        score, count = searcher.solve(pos)
        nodes += count
        scores.append(score)
    return nodes, scores


@click.command()
@click.argument("positions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--count", default=200, show_default=True, help="Positions taken from the file's start.")
@click.option("--rounds", default=3, show_default=True)
def main(positions: Path, count: int, rounds: int) -> None:
    lines = [line.split()[0] for line in positions.read_text().splitlines() if line.strip()][:count]
    rates = {}
    results = {}
    for two_words in (False, True):
        searcher = Searcher(solving_only=True, two_words=two_words)
        results[two_words] = solve_all(searcher, lines)
        began = time.process_time()
        for _ in range(rounds):
            nodes, _ = solve_all(searcher, lines)
        seconds = time.process_time() - began
        rates[two_words] = nodes * rounds / seconds
        click.echo(f"{'two words' if two_words else 'one word '}: {nodes} nodes a round, "
                   f"{seconds:.2f} s CPU for {rounds} rounds, {rates[two_words] / 1e6:.2f} M nodes/s")
    click.echo(f"same nodes and scores: {results[False] == results[True]}; "
               f"one word / two words: {rates[False] / rates[True]:.3f}x the nodes per second")


if __name__ == "__main__":
    main()
