"""``--cluster ADDRESS``: a match, or a strength run, on a Ray cluster.

SPRT decides small Elo differences only after thousands of games, too many for
one machine; Ray (``pip install 'c4engine[cluster]'``) spreads them over many.
Ray is imported here only, and only when ``--cluster`` is given.  The work is
spread with Ray's own mechanisms, not a scheduler of ours:

- an actor per concurrency slot holds long-lived engine processes (a pair for a
  match, one engine for ``strength``), started once because an engine may take
  seconds to load; a :class:`ray.util.ActorPool` hands each idle actor the next
  piece of work (a game pair: an opening, both colours) and yields the results
  as they finish (``ray.wait``, a second at a time: a wait without a timeout
  blocks inside Ray, where no signal reaches Python but Ctrl-C);
- the work starts on the first actor whose engines run, and the others join
  as theirs come up: an actor the cluster cannot place (its CPUs held by
  another job, or counted on a machine just lost and not yet declared dead)
  holds nothing up; with none running after :data:`READY_SECONDS` the
  command fails, naming the CPUs free, where Ray would wait for ever;
- a lost worker process or machine: Ray restarts the actor (``max_restarts``),
  on another node if need be, and runs the call it was in the middle of again
  (``max_task_retries``).  A pair reports its two games only when both are
  over, so a replay loses no result and counts none twice;
- an SPRT decision submits nothing more and ends the actors, abandoning the
  games they were playing.

An engine that crashes inside an actor is judged by
:func:`~c4engine.referee.game.play_game`, exactly as on one machine.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..engine.limits import Limit
from ..engine.process import EngineError
from .config import GameSpec, MatchConfig
from .game import GameOutcome, play_game
from .openings import schedule
from .players import Player
from .workers import MatchReport, Recorder, player_names, start_players

if TYPE_CHECKING:
    from .strength import EngineUnderTest, TestPosition, Verdict

INSTALL = "pip install 'c4engine[cluster]'"
ADDRESS_FORMS = "auto, ray://HOST:PORT or HOST:PORT"
_ADDRESS = re.compile(r"auto|(ray://)?[\w.\-]+:\d{1,5}")
RESTARTS = 3  # times an actor is restarted after its worker is lost
# A call to a lost actor is retried until the actor runs again or is lost for good:
# a lost machine is declared dead only after Ray's health checks (15-30 s), and
# until then every retry fails at once, so a count of retries would run out first.
RETRY_UNTIL_RESTARTED = -1
CONNECT_SECONDS = 10.0  # for a cluster's head to accept a connection
INIT_ATTEMPTS = 3  # for a Ray Client session the server aborted while setting it up
CLOSE_SECONDS = 10.0  # for the actors to end their engines before they are killed
READY_SECONDS = 600.0  # for every actor to be placed and its engines to answer
POLL_SECONDS = 1.0  # the longest single wait inside Ray

T = TypeVar("T")


def check_address(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """The click callback of ``--cluster``: a bad address is a usage error at once."""
    if value is None or _ADDRESS.fullmatch(value):
        return value
    raise click.BadParameter(f"'{value}': expected {ADDRESS_FORMS}")


def import_ray() -> ModuleType:
    """Ray, or a click error that says how to install it (it is an optional extra)."""
    try:
        import ray
    except ImportError:
        raise click.ClickException(f"--cluster needs Ray, which is not installed: {INSTALL}") \
            from None
    return ray


def check_reachable(address: str) -> None:
    """A click error at once when nothing listens at HOST:PORT, where ``ray.init``
    would wait for minutes (it retries the head's GCS every 30 s)."""
    if address == "auto":
        return  # Ray reads this machine's cluster address from its own files
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as err:
        raise click.ClickException(f"no Ray cluster answers at {address}: "
                                   f"{err.strerror or err}") from None


@contextmanager
def connected(address: str, forward_output: bool = False) -> Iterator[ModuleType]:
    """Ray, connected to the cluster at ``address`` for the length of the block.

    The workers' output reaches this process only with ``forward_output`` (for
    ``--debug``, whose log runs on the workers): setting up Ray's forwarding
    takes half a second (``ray.init`` 0.57 s against 0.04 s here), a tenth of a
    short match.  Failures reach this process either way, with the calls'
    results."""
    check_reachable(address)
    ray = import_ray()
    try:
        _init(ray, address, forward_output)
        yield ray
    finally:
        ray.shutdown()  # after a failed init too, which may leave half a connection


def _init(ray: ModuleType, address: str, forward_output: bool) -> None:
    """``ray.init``, tried again when a Ray Client server aborts the session it was
    setting up (``ConnectionAbortedError``): its proxy starts a server process per
    client, and that start fails now and then on Ray's side (a process that dies
    while the proxy checks it), where the next attempt starts a new one."""
    for attempt in range(1, INIT_ATTEMPTS + 1):
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=forward_output)
            return
        except ConnectionAbortedError as err:
            ray.shutdown()
            if attempt == INIT_ATTEMPTS:
                raise _unreachable(address, err) from None
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise _unreachable(address, err) from None


def _unreachable(address: str, err: Exception) -> click.ClickException:
    return click.ClickException(f"cannot reach the Ray cluster at {address}: {err}")


def live_cpus(ray: ModuleType) -> list[int]:
    """The CPUs of each node that is alive.  Not ``ray.cluster_resources()``: it
    counts a machine just lost until Ray's health checks declare it dead (15-30 s),
    and actors sized for it could not all be placed."""
    return [int(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node["Alive"]]


def default_concurrency(ray: ModuleType) -> int:
    """One game per two CPUs of each live node (a game runs two engines)."""
    return max(1, sum(cpus // 2 for cpus in live_cpus(ray)))


def _cpus_per_actor(ray: ModuleType, count: int) -> float:
    """A CPU per actor (a game's engines think in turn), a fraction when more actors
    are asked for than the live nodes have CPUs: 1/k of a CPU fits k actors on
    every CPU of every live node, so all of them can be placed."""
    total = sum(live_cpus(ray))
    return 1.0 / math.ceil(count / total) if total else 0.0


def first_done(ray: ModuleType, refs: list[Any], deadline: float = math.inf,
               ) -> tuple[list[Any], list[Any]]:
    """``ray.wait`` for one of ``refs``: the one done and the others, or none done once
    ``deadline`` (``time.monotonic()``) is past.  It waits a POLL_SECONDS slice at a
    time, since a signal cannot reach Python inside one wait."""
    while time.monotonic() < deadline:
        done, waiting = ray.wait(refs, num_returns=1, timeout=POLL_SECONDS)
        if done:
            return done, waiting
    return [], refs


def worker_name() -> str:
    """How messages name the machine an actor runs on: its host name and address."""
    import ray  # runs on a worker, inside Ray

    return f"{socket.gethostname()} ({ray.util.get_node_ip_address()})"


# -- the actors' side ---------------------------------------------------------


class _EngineHost:
    """What both kinds of actor share.  Their engines start in the constructor, which
    Ray runs again when it restarts the actor; a failure is kept, naming the worker,
    and raised by every call, whereas raised from the constructor it would only
    show as an actor that died."""

    failure: str | None = None

    def _started(self, start: Callable[[], T]) -> T | None:
        try:
            return start()
        except EngineError as err:
            self.failure = f"worker {worker_name()}: {err}"
            return None

    def _check(self, engines: T | None) -> T:
        if engines is None:
            raise EngineError(self.failure or "no engines")
        return engines


class PairHost(_EngineHost):
    """A pair of engines that plays game pairs; the body of a match actor."""

    def __init__(self, config: MatchConfig, log: Callable[[str], None] | None) -> None:
        self.config = config
        self.abandoned = False
        self.players = self._started(lambda: start_players(replace(config, concurrency=1),
                                                           log)[0])

    def ready(self) -> tuple[list[str | None], list[list[str]]]:
        """The engines' ``id name`` and the options they list."""
        players = self._check(self.players)
        return ([p.client.id_name for p in players],
                [sorted(p.client.options) for p in players])

    def play_pair(self, specs: Sequence[GameSpec], names: tuple[str, str]) -> list[GameOutcome]:
        """Play the games of one round; all their outcomes, or none if abandoned."""
        players = self._check(self.players)
        for player, name in zip(players, names):
            player.client.name = name  # what messages about it will call it
        outcomes = []
        for spec in specs:
            if self.abandoned:
                return []
            outcomes.append(play_game(spec, players, names, self.config))
        return outcomes

    def close(self, abandon: bool) -> None:
        """Quit the engines, both at once (an engine may take a second to exit);
        ``abandon`` kills them, ending a game being played."""
        self.abandoned |= abandon
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda player: _end(player, abandon), self.players or ()))


class StrengthHost(_EngineHost):
    """One engine asked for moves in test positions; the body of a strength actor."""

    def __init__(self, command: str, options: Sequence[tuple[str, str]]) -> None:
        from .strength import EngineUnderTest

        self.engine = self._started(lambda: EngineUnderTest(command, options))

    def ready(self) -> None:
        self._check(self.engine)

    def move(self, index: int, position: TestPosition, limit: Limit) -> tuple[int, Verdict]:
        return index, self._check(self.engine).move(position, limit)

    def close(self, abandon: bool) -> None:
        if self.engine is not None:
            _end(self.engine, abandon)


def _end(engine: Player | EngineUnderTest, abandon: bool) -> None:
    if abandon:
        engine.client.kill()
    else:
        engine.close()


# -- the driver's side ----------------------------------------------------------


class ActorGroup:
    """``count`` actors of one host class, spread over the nodes, each restarted by Ray
    when its worker is lost; calls made through :meth:`unordered` are retried then."""

    def __init__(self, ray: ModuleType, host: type, args: tuple[Any, ...], count: int,
                 kind: str) -> None:
        self.ray = ray
        remote = ray.remote(host)
        self.cpus = _cpus_per_actor(ray, count)
        options = dict(num_cpus=self.cpus, scheduling_strategy="SPREAD",
                       max_restarts=RESTARTS, max_task_retries=RETRY_UNTIL_RESTARTED,
                       max_concurrency=2)  # close() may end a call still running
        self.actors = [remote.options(name=f"{kind}-{slot}", **options).remote(*args)
                       for slot in range(count)]
        self.starting: dict[Any, Any] = {}  # ready() calls not yet answered, and their actors
        self.running: list[Any] = []  # actors whose engines run

    def ready(self) -> Any:
        """The answer to ``ready()`` of the first actor whose engines run; the others join
        the work as theirs come up (:meth:`unordered`), so that actors the cluster
        cannot place hold nothing up.  Actors whose engines do not start fail the whole
        group, and so does no actor running after :data:`READY_SECONDS`."""
        self.starting = {actor.ready.remote(): actor for actor in self.actors}
        deadline = time.monotonic() + READY_SECONDS
        with self._engine_errors():
            done, _ = first_done(self.ray, list(self.starting), deadline)
            if not done:
                raise EngineError(self._not_ready())
            self.running = [self.starting.pop(done[0])]
            return self.ray.get(done[0])

    def _not_ready(self) -> str:
        free = self.ray.available_resources().get("CPU", 0)
        total = sum(live_cpus(self.ray))
        return (f"none of the {len(self.actors)} Ray actors running after {READY_SECONDS:g} s; "
                f"the cluster has {free:g} of {total:g} CPUs free, and each actor needs {self.cpus:g}")

    def unordered(self, method: str, calls: Sequence[tuple[Any, ...]]) -> Iterator[Any]:
        """The results of ``method(*args)`` for each of ``calls``, as they finish, each
        call made on whichever running actor is free.  Stop iterating and nothing more
        starts."""
        pool = self.ray.util.ActorPool(self.running)
        for args in calls:
            pool.submit(lambda actor, call: getattr(actor, method).remote(*call), args)
        with self._engine_errors():
            while pool.has_next():
                self._join_started(pool)
                try:
                    result = pool.get_next_unordered(timeout=POLL_SECONDS)
                except TimeoutError as err:
                    if isinstance(err, self.ray.exceptions.RayError):
                        raise  # a call's own TimeoutError, raised through Ray
                    continue  # nothing finished within this wait
                yield result

    def _join_started(self, pool: Any) -> None:
        """The actors whose engines have come up since, into ``pool``; one whose engines
        failed to start raises its error here."""
        if not self.starting:
            return
        done, _ = self.ray.wait(list(self.starting), num_returns=len(self.starting), timeout=0)
        for ref in done:
            self.ray.get(ref)
            actor = self.starting.pop(ref)
            self.running.append(actor)
            pool.push(actor)

    def close(self, abandon: bool) -> None:
        """End the engines of the running actors (quit, or killed when ``abandon``), then
        every actor: one still starting has its engines end with it (their input
        closes), and one never placed would never answer."""
        self.ray.wait([actor.close.remote(abandon) for actor in self.running],
                      num_returns=len(self.running), timeout=CLOSE_SECONDS)
        for actor in self.actors:
            self.ray.kill(actor)

    @contextmanager
    def _engine_errors(self) -> Iterator[None]:
        """An EngineError raised in an actor as our own, with its message only; an actor
        lost more often than Ray restarts it as one too, so the command fails cleanly."""
        errors = self.ray.exceptions
        try:
            yield
        except errors.RayTaskError as err:
            if isinstance(err.cause, EngineError):
                raise EngineError(str(err.cause)) from None
            raise
        except errors.RayActorError as err:
            raise EngineError(f"a Ray actor was lost more than {RESTARTS} times: {err}") \
                from None


class GameOrderRecorder(Recorder):
    """The local :class:`Recorder` (tally, progress line, SPRT stop as each game
    finishes), writing the PGN in game order: a game is held back until those
    before it are written; :meth:`flush` writes those left when a stop cut the
    match short."""

    def __init__(self, config: MatchConfig, names: tuple[str, str],
                 progress: Callable[[str], None]) -> None:
        super().__init__(config, names, progress)
        self.held: dict[int, GameOutcome] = {}
        self.next_number = 1

    def _write_pgn(self, outcomes: Sequence[GameOutcome]) -> None:
        self.held.update((o.spec.number, o) for o in outcomes)
        due = []
        while self.next_number in self.held:
            due.append(self.held.pop(self.next_number))
            self.next_number += 1
        super()._write_pgn(due)

    def flush(self) -> None:
        super()._write_pgn([self.held.pop(number) for number in sorted(self.held)])


def game_pairs(specs: Sequence[GameSpec]) -> list[list[GameSpec]]:
    """The schedule by rounds: an opening with both colours (one game if it was cut)."""
    return [list(games) for _, games in itertools.groupby(specs, key=lambda s: s.round)]


def _play_pairs(group: ActorGroup, pairs: list[list[GameSpec]], names: tuple[str, str],
                recorder: Recorder) -> bool:
    """Record the games of each pair as it finishes; whether all pairs were played
    (not when the SPRT decided first)."""
    for outcomes in group.unordered("play_pair", [(pair, names) for pair in pairs]):
        for outcome in outcomes:
            recorder.record(outcome)
        if recorder.stopped.is_set():
            return False
    return True


def run_cluster_match(config: MatchConfig, progress: Callable[[str], None],
                      log: Callable[[str], None] | None = None, *, address: str,
                      concurrency: int | None = None) -> MatchReport:
    """:func:`~c4engine.referee.workers.run_match` on the Ray cluster at ``address``
    with ``concurrency`` actors (default: one per two CPUs the cluster reports);
    ``config.concurrency`` is not used.  ``log`` runs on the workers, whose output
    Ray forwards to this process."""
    specs = schedule(config.openings, config.games, config.order, config.seed)
    pairs = game_pairs(specs)
    with connected(address, forward_output=log is not None) as ray:
        config = replace(config, concurrency=concurrency or default_concurrency(ray))
        group = ActorGroup(ray, PairHost, (config, log), min(config.concurrency, len(pairs)),
                           "match")
        finished = False
        try:
            id_names, listed = group.ready()
            names = player_names(config, id_names, listed, progress)
            recorder = GameOrderRecorder(config, names, progress)
            try:
                finished = _play_pairs(group, pairs, names, recorder)
            finally:
                recorder.flush()  # on Ctrl-C too: every game recorded is in the PGN
        finally:
            group.close(abandon=not finished)
    return MatchReport(recorder.tally, len(specs))


def run_cluster_strength(address: str, command: str, options: Sequence[tuple[str, str]],
                         positions: Sequence[TestPosition], limit: Limit,
                         progress: Callable[[Verdict], None] | None = None) -> list[Verdict]:
    """:func:`~c4engine.referee.strength.run_positions` on the Ray cluster at
    ``address``: an engine per CPU, positions handed to whichever is free; the
    verdicts in the order of ``positions``, ``progress`` called as they come."""
    if not positions:
        return []
    with connected(address) as ray:
        count = min(len(positions), max(1, sum(live_cpus(ray))))
        group = ActorGroup(ray, StrengthHost, (command, tuple(options)), count, "strength")
        finished = False
        verdicts: dict[int, Verdict] = {}
        try:
            group.ready()
            calls = [(index, position, limit) for index, position in enumerate(positions)]
            for index, verdict in group.unordered("move", calls):
                verdicts[index] = verdict
                if progress:
                    progress(verdict)
            finished = True
        finally:
            group.close(abandon=not finished)
    return [verdicts[index] for index in range(len(positions))]
