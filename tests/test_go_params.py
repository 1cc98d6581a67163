"""The ``go`` command's parameters (c4engine.protocol.go_params) and the protocol's one number
syntax (notation.parse_int): what is refused, and that formatting and parsing are
each other's inverse, so an engine and a client can never disagree on a command."""

from __future__ import annotations

import random

import pytest

from c4engine.protocol.go_params import GoParams, GoParamsError
from c4engine.rules.notation import parse_int

SEED = 20261122


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("42", 42), ("-7", -7), ("0012", 12)])
def test_parse_int_reads_ascii_digits_and_a_leading_minus(text: str, value: int) -> None:
    assert parse_int(text) == value


@pytest.mark.parametrize("text", ["", "-", "1_0", "+2", "٣", "²", " 3", "3 ", "1.0", "1e3", "--1", "0x10",
                                  "9" * 31])
def test_parse_int_refuses_what_python_int_would_take(text: str) -> None:
    """``int()`` accepts underscores, a plus sign, blanks and any script's digits; the
    protocol does not."""
    with pytest.raises(ValueError):
        parse_int(text)


@pytest.mark.parametrize(("line", "expected"), [
    ("go", GoParams()),
    ("go depth 6", GoParams(depth=6)),
    ("go infinite", GoParams(infinite=True)),
    ("go ponder wtime 1000 btime -20 winc 10 binc 0 movestogo 3",
     GoParams(ponder=True, wtime=1000, btime=-20, winc=10, binc=0, movestogo=3)),
    ("go movetime 30 nodes 5000 mate 2", GoParams(movetime=30, nodes=5000, mate=2)),
])
def test_parse_reads_every_parameter(line: str, expected: GoParams) -> None:
    assert GoParams.parse(line.split()[1:]) == expected


@pytest.mark.parametrize(("line", "message"), [
    ("go depth", "'depth' needs a value"),
    ("go depth x", "depth 'x' is not a whole number"),
    ("go depth 1_0", "depth '1_0' is not a whole number"),
    ("go depth +2", "depth '\\+2' is not a whole number"),
    ("go depth ٣", "is not a whole number"),
    ("go depth 0", "depth must be at least 1"),
    ("go mate 0", "mate must be at least 1"),
    ("go nodes -5", "nodes must not be negative"),
    ("go movetime -1", "movetime must not be negative"),
    ("go movestogo -1", "movestogo must not be negative"),
    ("go depth 3 depth 4", "'depth' is given twice"),
    ("go infinite infinite", "'infinite' is given twice"),
    ("go searchmoves 4", "unknown parameter 'searchmoves'"),
    ("go nodes 2000000000000", "nodes 2000000000000 is too large"),
])
def test_parse_refuses_a_malformed_go(line: str, message: str) -> None:
    with pytest.raises(GoParamsError, match=message):
        GoParams.parse(line.split()[1:])


def test_construction_checks_ranges_too() -> None:
    """A client building the command gets the engine's refusal before sending it."""
    with pytest.raises(GoParamsError, match="depth must be at least 1"):
        GoParams(depth=0)


def test_command_and_parse_are_inverse() -> None:
    """Random parameter sets: ``parse(command())`` gives the same parameters back, and
    ``str`` is the command line."""
    rng = random.Random(SEED)
    for _ in range(500):
        values: dict[str, int | bool] = {}
        for key in GoParams.number_keys():
            if rng.random() < 0.4:
                low = -1000 if key in ("wtime", "btime", "winc", "binc") else 1
                values[key] = rng.randint(low, 10 ** rng.randint(1, 9))
        for flag in ("infinite", "ponder"):
            if rng.random() < 0.2:
                values[flag] = True
        params = GoParams(**values)  # type: ignore[arg-type]
        line = params.command()
        assert str(params) == line
        assert line.split()[0] == "go"
        assert GoParams.parse(line.split()[1:]) == params


@pytest.mark.parametrize(("params", "first", "expected"), [
    (GoParams(wtime=1000, btime=500, winc=10, binc=20), True, (1000, 10)),
    (GoParams(wtime=1000, btime=500, winc=10, binc=20), False, (500, 20)),
    (GoParams(wtime=-30, binc=-5), True, (0, 0)),
    (GoParams(wtime=-30, binc=-5), False, (None, 0)),
    (GoParams(movetime=100), True, (None, 0)),
])
def test_clock_is_the_movers_with_negatives_as_zero(params: GoParams, first: bool,
                                                     expected: tuple[int | None, int]) -> None:
    assert params.clock(first) == expected
