"""Running a match: engine pairs started at once, games handed to one worker thread
per pair, each finished game recorded (tally, PGN, progress line) as it comes.

:func:`run_match` is the whole match on this machine.  The seam for other runners
(a cluster) is :func:`~c4engine.referee.game.play_game`: a game spec played on a
pair of players gives a :class:`GameOutcome`, whichever machine plays it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .config import GameSpec, MatchConfig
from .game import GameOutcome, play_game
from .openings import schedule
from .pgn import write_game
from .players import Player
from .tally import Tally

@dataclass
class MatchReport:
    """The results, and how many games were scheduled (an SPRT may stop earlier)."""

    tally: Tally
    scheduled: int


def start_players(config: MatchConfig,
                  log: Callable[[str], None] | None) -> list[tuple[Player, Player]]:
    """Start a pair of engines per concurrent game, all at once (a Python engine may
    take seconds to load); if any fails, end the others and raise its EngineError."""
    pairs = [(Player(config.engines[0], config, log), Player(config.engines[1], config, log))
             for _ in range(min(config.concurrency, config.games))]
    everyone = [p for pair in pairs for p in pair]
    with ThreadPoolExecutor(max_workers=len(everyone)) as pool:
        errors = [f.exception() for f in [pool.submit(p.start) for p in everyone]]
    failure = next((e for e in errors if e is not None), None)
    if failure is not None:
        for player in everyone:
            player.client.kill()
        raise failure
    return pairs


def display_names(config: MatchConfig, first_pair: tuple[Player, Player]) -> tuple[str, str]:
    """--name, else the engine's ``id name``, else the command; made distinct."""
    names = [spec.name or player.client.id_name or spec.command
             for spec, player in zip(config.engines, first_pair)]
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return names[0], names[1]


def run_match(config: MatchConfig, progress: Callable[[str], None],
              log: Callable[[str], None] | None = None) -> MatchReport:
    """Play the match; ``progress`` gets a line per finished game.  Raises EngineError
    before any game when an engine cannot be started."""
    pairs = start_players(config, log)
    names = display_names(config, pairs[0])
    for pair in pairs:
        for player, name in zip(pair, names):
            player.client.name = name  # what messages about it will call it
    for player in pairs[0]:
        for option, _ in player.spec.options:
            if option not in player.client.options:
                progress(f"warning: {player.client.name} does not list an option '{option}'")
    specs = schedule(config.openings, config.games, config.order, config.seed)
    runner = _Runner(config, names, specs, progress)
    try:
        runner.run(pairs)
    finally:
        runner.stopped.set()  # on Ctrl-C: no new games while the engines are ended
        for pair in pairs:
            for player in pair:
                player.close()
    return MatchReport(runner.tally, len(specs))


class _Runner:
    """Hands games to worker threads, one per pair of engines, and records results."""

    def __init__(self, config: MatchConfig, names: tuple[str, str], specs: list[GameSpec],
                 progress: Callable[[str], None]) -> None:
        self.config = config
        self.names = names
        self.pending = iter(specs)
        self.progress = progress
        self.tally = Tally(names, config.sprt)
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.failures: list[BaseException] = []

    def run(self, pairs: list[tuple[Player, Player]]) -> None:
        threads = [threading.Thread(target=self._work, args=(pair,), daemon=True,
                                    name=f"match-worker-{i}") for i, pair in enumerate(pairs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self.failures:
            raise self.failures[0]

    def _next(self) -> GameSpec | None:
        with self.lock:
            return None if self.stopped.is_set() else next(self.pending, None)

    def _work(self, pair: tuple[Player, Player]) -> None:
        try:
            while (spec := self._next()) is not None:
                self._record(play_game(spec, pair, self.names, self.config))
        except BaseException as err:  # a bug here must not leave the match hanging
            with self.lock:
                self.failures.append(err)
            self.stopped.set()

    def _record(self, outcome: GameOutcome) -> None:
        with self.lock:
            self.tally.add(outcome)
            if self.config.pgn_path is not None:
                with self.config.pgn_path.open("a", encoding="utf-8") as out:
                    out.write(write_game(outcome.pgn))
            self.progress(self.tally.progress_line(outcome))
            if self.tally.decision() is not None:
                self.stopped.set()
