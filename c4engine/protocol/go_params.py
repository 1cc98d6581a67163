"""What one ``go`` command says: parsed strictly, written back as a command line.

The engine reads ``go`` lines and clients (the referee, the GUI, the public
engine client) write them; both sides use this one class, so the two can
never disagree on a parameter's name, range or spelling.  It describes only
what the command says.  How long the search then runs (soft and hard times
after ``Move Overhead``, the clock budget) is :class:`c4engine.limits.Limits`,
which the engine derives from these parameters.  This module sits at the
bottom of the package and imports nothing from the search, so a client can
use it without loading numba.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..rules.notation import parse_int

MAX_VALUE = 1 << 40
CLOCK_KEYS = ("wtime", "btime", "winc", "binc")  # GUIs may send a negative clock
AT_LEAST_ONE = ("depth", "mate")  # 0 would mean "search nothing" or "never satisfied"
FLAGS = ("infinite", "ponder")


class GoParamsError(ValueError):
    """A malformed ``go`` command; the message says what is wrong."""


@dataclass(frozen=True)
class GoParams:
    """The parameters of one ``go`` command; ``None`` (or ``False``) is not given.

    Times are in milliseconds, as the protocol sends them.  Construction checks
    the ranges, so a client cannot build a command the engine would refuse."""

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    mate: int | None = None
    infinite: bool = False
    ponder: bool = False

    def __post_init__(self) -> None:
        for key in self.number_keys():
            value = getattr(self, key)
            if value is None:
                continue
            if value < 0 and key not in CLOCK_KEYS:
                raise GoParamsError(f"go: {key} must not be negative")
            if value < 1 and key in AT_LEAST_ONE:
                raise GoParamsError(f"go: {key} must be at least 1")
            if abs(value) > MAX_VALUE:
                raise GoParamsError(f"go: {key} {value} is too large")

    @staticmethod
    def number_keys() -> tuple[str, ...]:
        """The parameters that take a number, in the order :meth:`command` writes them."""
        return _NUMBER_KEYS

    @classmethod
    def parse(cls, tokens: list[str]) -> GoParams:
        """The words after ``go``, in any order; anything malformed refuses the whole
        command (an unknown word such as ``searchmoves``, a missing or non-numeric
        value, a parameter given twice)."""
        given: dict[str, int | bool] = {}
        i = 0
        while i < len(tokens):
            key = tokens[i]
            if key not in FLAGS and key not in cls.number_keys():
                raise GoParamsError(f"go: unknown parameter '{key}'")
            if key in given:
                raise GoParamsError(f"go: '{key}' is given twice")
            if key in FLAGS:
                given[key] = True
                i += 1
                continue
            if i + 1 >= len(tokens):
                raise GoParamsError(f"go: '{key}' needs a value")
            try:
                given[key] = parse_int(tokens[i + 1])
            except ValueError as err:
                raise GoParamsError(f"go: {key} {err}") from None
            i += 2
        return cls(**given)  # type: ignore[arg-type]

    def command(self) -> str:
        """The ``go`` command line that says exactly this."""
        words = ["go"]
        for key in self.number_keys():
            value = getattr(self, key)
            if value is not None:
                words += [key, str(value)]
        words += [flag for flag in FLAGS if getattr(self, flag)]
        return " ".join(words)

    __str__ = command

    @property
    def on_a_clock(self) -> bool:
        """A game's move: a clock and no ``movetime``.  Only its result matters, so the
        search may stop at a proven win without its distance (see protocol.md)."""
        return self.movetime is None and (self.wtime is not None or self.btime is not None)

    def clock(self, first_player_to_move: bool) -> tuple[int | None, int]:
        """The mover's time left (``None`` without a clock) and increment, negatives
        read as 0."""
        time_left, increment = (self.wtime, self.winc) if first_player_to_move else (self.btime, self.binc)
        if time_left is None:
            return None, max(0, increment or 0)
        return max(0, time_left), max(0, increment or 0)


_NUMBER_KEYS = tuple(f.name for f in fields(GoParams) if f.name not in FLAGS)
