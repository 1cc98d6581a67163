"""What a match is asked to do: the engines, the limits, the schedule's settings.

Plain data shared by every part of the referee, built by the command line or by tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..engine.limits import HANDSHAKE_TIMEOUT, SEARCH_TIMEOUT
from ..geometry import STANDARD
from ..rules.variants import Variant, built_in
from .stats import SprtParams

STALL_TIMEOUT = SEARCH_TIMEOUT  # seconds a depth- or node-limited search may take


@dataclass(frozen=True)
class EngineSpec:
    """How to run one engine: its command line, display name, and options to set."""

    command: str
    name: str | None = None
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TimeControl:
    """A base time and an increment per move, in milliseconds."""

    base_ms: int
    inc_ms: int

    def __str__(self) -> str:
        """cutechess' form, ``10+0.1`` (seconds)."""
        base = f"{self.base_ms / 1000:g}"
        return f"{base}+{self.inc_ms / 1000:g}" if self.inc_ms else base


@dataclass(frozen=True)
class MatchConfig:
    """Everything a match needs; built by the command line or by tests."""

    engines: tuple[EngineSpec, EngineSpec]
    openings: tuple[str, ...]
    games: int
    tc: TimeControl | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    timemargin: int = 0
    stall_timeout: float = STALL_TIMEOUT
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    order: str = "sequential"
    seed: int | None = None
    concurrency: int = 1
    sprt: SprtParams | None = None
    pgn_path: Path | None = None
    variant: Variant = built_in(STANDARD)  # the game and its board (--board, --variant)
    variants_path: str | None = None  # a variants file for the engines' VariantPath (--variants)


@dataclass(frozen=True)
class GameSpec:
    """One game of the schedule; ``white`` is the index of the engine that moves first."""

    number: int
    round: int
    opening: str
    white: int
