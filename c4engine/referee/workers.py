"""Running a match: engine pairs started at once, games handed to one worker thread
per pair, each finished game recorded as it comes.

The seam for other runners (a cluster) is in two parts that know nothing of
threads: :func:`~c4engine.referee.game.play_game` plays one game spec on one pair
of players, wherever they run, and a :class:`Recorder` takes the outcomes in any
order (tally, PGN, progress line) and says when the SPRT has decided.
:func:`play_on_threads` is the local runner that joins them; :func:`run_match`
is the whole match on this machine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..engine.uci import lists_option
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


def start_players(config: MatchConfig, log: Callable[[str], None] | None,
                  progress: Callable[[str], None] | None = None) -> list[tuple[Player, Player]]:
    """Start a pair of engines per concurrent game: first one engine of each command,
    alone, which prepares the board for the others (:meth:`Player.start`; ``progress``
    hears of a long wait), then all the others at once (a Python engine may take
    seconds to load).  If any fails, end the others and raise its EngineError."""
    pairs = [(Player(config.engines[0], config, log), Player(config.engines[1], config, log))
             for _ in range(min(config.concurrency, config.games))]
    everyone = [p for pair in pairs for p in pair]
    first_of_command: dict[str, Player] = {}
    for player in everyone:
        first_of_command.setdefault(player.spec.command, player)
    firsts = list(first_of_command.values())
    try:
        for player in firsts:
            player.start(progress or _quiet)
        _start_at_once([p for p in everyone if p not in firsts])
    except BaseException:
        for player in everyone:
            player.client.kill()
        raise
    return pairs


def _quiet(_line: str) -> None:
    """Where a start's progress goes when nobody listens."""


def _start_at_once(players: Sequence[Player]) -> None:
    """Start ``players`` together; the first failure is raised once all have tried."""
    if not players:
        return
    with ThreadPoolExecutor(max_workers=len(players)) as pool:
        errors = [f.exception() for f in [pool.submit(p.start) for p in players]]
    failure = next((e for e in errors if e is not None), None)
    if failure is not None:
        raise failure


def display_names(config: MatchConfig, id_names: Sequence[str | None]) -> tuple[str, str]:
    """--name, else the engine's ``id name``, else the command; made distinct."""
    names = [spec.name or id_name or spec.command
             for spec, id_name in zip(config.engines, id_names)]
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return names[0], names[1]


def player_names(config: MatchConfig, id_names: Sequence[str | None],
                 listed: Sequence[Collection[str]], progress: Callable[[str], None]) -> tuple[str, str]:
    """The players' names (:func:`display_names`) from what one pair of engines says
    of itself; a warning to ``progress`` for each --option an engine does not list."""
    names = display_names(config, id_names)
    for spec, name, options in zip(config.engines, names, listed):
        for option, _ in spec.options:
            if not lists_option(options, option):
                progress(f"warning: {name} does not list an option '{option}'")
    return names


def run_match(config: MatchConfig, progress: Callable[[str], None],
              log: Callable[[str], None] | None = None) -> MatchReport:
    """Play the match; ``progress`` gets a line per finished game.  Raises EngineError
    before any game when an engine cannot be started."""
    pairs = start_players(config, log, progress)
    names = player_names(config, [player.client.id_name for player in pairs[0]],
                         [player.client.options for player in pairs[0]], progress)
    for pair in pairs:
        for player, name in zip(pair, names):
            player.client.name = name  # what messages about it will call it
    specs = schedule(config.openings, config.games, config.order, config.seed)
    recorder = Recorder(config, names, progress)
    try:
        play_on_threads(specs, pairs, names, config, recorder)
    except BaseException:
        recorder.abort()  # Ctrl-C: the games cut short by ending the engines are no results
        raise
    finally:
        recorder.stopped.set()  # no new games while the engines are ended
        for pair in pairs:
            for player in pair:
                player.close()
    return MatchReport(recorder.tally, len(specs))


class Recorder:
    """Takes finished games, in any order and from any thread: adds them to the
    tally, appends them to the PGN file, reports a progress line, and sets
    ``stopped`` once the SPRT has decided (or a runner gives up).  After
    :meth:`abort` nothing more is recorded."""

    def __init__(self, config: MatchConfig, names: tuple[str, str],
                 progress: Callable[[str], None]) -> None:
        self.config = config
        self.tally = Tally(names, config.sprt)
        self.progress = progress
        self.stopped = threading.Event()
        self._aborted = False
        self._lock = threading.Lock()

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            self.stopped.set()

    def record(self, outcome: GameOutcome) -> None:
        with self._lock:
            if self._aborted:
                return
            self.tally.add(outcome)
            self._write_pgn([outcome])
            self.progress(self.tally.progress_line(outcome))
            if self.tally.decision() is not None:
                self.stopped.set()

    def _write_pgn(self, outcomes: Sequence[GameOutcome]) -> None:
        """Append games to the PGN file, if there is one (a runner may hold some back)."""
        if self.config.pgn_path is not None and outcomes:
            with self.config.pgn_path.open("a", encoding="utf-8") as out:
                out.write("".join(write_game(o.pgn) for o in outcomes))


def play_on_threads(specs: Iterable[GameSpec], pairs: list[tuple[Player, Player]],
                    names: tuple[str, str], config: MatchConfig, recorder: Recorder) -> None:
    """Play ``specs`` on the local engine ``pairs``, one worker thread per pair taking
    the next game when it is free, until all are played or the recorder stops; the
    first exception of a worker (a bug: engines' faults are forfeits) is raised."""
    pending = iter(specs)
    lock = threading.Lock()
    failures: list[BaseException] = []

    def next_spec() -> GameSpec | None:
        with lock:
            return None if recorder.stopped.is_set() else next(pending, None)

    def work(pair: tuple[Player, Player]) -> None:
        try:
            while (spec := next_spec()) is not None:
                recorder.record(play_game(spec, pair, names, config))
        except BaseException as err:  # a bug here must not leave the match hanging
            failures.append(err)
            recorder.stopped.set()

    threads = [threading.Thread(target=work, args=(pair,), daemon=True, name=f"match-worker-{i}")
               for i, pair in enumerate(pairs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
