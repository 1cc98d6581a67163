#!/usr/bin/env python3
"""Make the cutechess games the review's oracle test judges (tests/data/cutechess_fsf_games.pgn).

Real games of c4engine against Fairy-Stockfish under cutechess-cli, variant
``cfour``, each opening played with both colours: first from 2-ply openings given
as moves (a PGN book: the games start from the empty board), then from 3-ply
openings given as positions (an EPD book: the games carry cutechess' ``SetUp`` and
``FEN`` tags).  The file is cutechess' own output, unchanged, its ``Event`` tag
naming the programs and their versions; tests/test_review.py reviews it and checks
every verdict against bitbully's per-column scores.

cutechess-cli and Fairy-Stockfish are test tools built outside the repo.
Fairy-Stockfish has no built-in ``cfour``: it reads it from tests/data/variants.ini,
named in FAIRY_STOCKFISH_VARIANT_PATH so that the variant is in the list it gives
cutechess in answer to ``uci``.

    PYTHONPATH=. python tools/make_cutechess_games.py --cutechess PATH/cutechess-cli --fsf PATH/stockfish
"""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from c4engine.rules.notation import format_move, parse_digits, to_fen

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "tests" / "data" / "cutechess_fsf_games.pgn"
VARIANTS = ROOT / "tests" / "data" / "variants.ini"
COLUMNS = "1234567"


def moves_book() -> str:
    """Every 2-ply opening as a one-game PGN that cutechess reads as cfour."""
    games = []
    for digits in itertools.product(COLUMNS, repeat=2):
        pos = parse_digits("")
        sans = []
        for digit in digits:
            sans.append(format_move(int(digit) - 1, pos, drops=True))
            pos = pos.play(int(digit) - 1)
        games.append(f'[Variant "cfour"]\n\n1. {" ".join(sans)} *\n')
    return "\n".join(games)


def positions_book() -> str:
    """Every position after 3 plies, once, as an EPD line (the FEN's first four fields)."""
    fens = dict.fromkeys(to_fen(parse_digits("".join(d))) for d in itertools.product(COLUMNS, repeat=3))
    return "".join(" ".join(fen.split()[:4]) + "\n" for fen in fens)


def fsf_name(fsf: Path) -> str:
    """Fairy-Stockfish's ``id name``, its build date included."""
    answer = subprocess.run([str(fsf)], input="uci\nquit\n", capture_output=True, text=True, check=True)
    return next(line.removeprefix("id name ") for line in answer.stdout.splitlines() if line.startswith("id name "))


def cutechess_version(cutechess: Path) -> str:
    answer = subprocess.run([str(cutechess), "--version"], capture_output=True, text=True, check=True)
    return answer.stdout.splitlines()[0]


def match_command(cutechess: Path, fsf: Path, event: str, book: Path, book_format: str,
                  openings: int, seed: int, tc: str, pgn: Path) -> list[str]:
    """One cutechess-cli match: ``openings`` openings drawn from ``book``, each played twice."""
    return [str(cutechess), "-variant", "cfour", "-event", event,
            "-engine", "name=c4engine", f"cmd={sys.executable}", "arg=-m", "arg=c4engine", f"dir={ROOT}",
            "-engine", "name=Fairy-Stockfish", f"cmd={fsf}",
            "-each", "proto=uci", f"tc={tc}", "timemargin=200",
            "-openings", f"file={book}", f"format={book_format}", "order=random",
            "-repeat", "-games", "2", "-rounds", str(openings), "-srand", str(seed), "-pgnout", str(pgn)]


@click.command()
@click.option("--cutechess", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--fsf", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True,
              help="Fairy-Stockfish, built with largeboards=yes.")
@click.option("--move-openings", type=click.IntRange(1), default=6, show_default=True,
              help="2-ply openings from the PGN book, each played with both colours.")
@click.option("--position-openings", type=click.IntRange(1), default=4, show_default=True,
              help="3-ply positions from the EPD book, each played with both colours.")
@click.option("--tc", default="2+0.1", show_default=True, help="cutechess time control.")
@click.option("--seed", type=int, default=22, show_default=True, help="cutechess' -srand.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=OUTPUT, show_default=True)
def main(cutechess: Path, fsf: Path, move_openings: int, position_openings: int, tc: str, seed: int,
         output: Path) -> None:
    event = f"{cutechess_version(cutechess)}: c4engine vs {fsf_name(fsf)}"
    environment = {**os.environ, "FAIRY_STOCKFISH_VARIANT_PATH": str(VARIANTS), "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as folder:
        pgn = Path(folder) / "games.pgn"
        books = ((Path(folder) / "openings.pgn", "pgn", moves_book(), move_openings),
                 (Path(folder) / "openings.epd", "epd", positions_book(), position_openings))
        for book, book_format, text, openings in books:
            book.write_text(text, encoding="utf-8")
            command = match_command(cutechess, fsf, event, book, book_format, openings, seed, tc, pgn)
            click.echo(shlex.join(command), err=True)
            subprocess.run(command, env=environment, check=True)
        output.write_text(pgn.read_text(encoding="utf-8"), encoding="utf-8")
    click.echo(f"wrote {output}")


if __name__ == "__main__":
    main()
