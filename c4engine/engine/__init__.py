"""``c4engine.engine``: a client for any engine that speaks our UCI-style protocol.

Its modules: ``info`` (reading answers), ``process`` (starting and ending the
process), ``client`` (:class:`EngineClient`), ``simple`` (:class:`SimpleEngine`);
the public names are the ones below, in ``__all__``.

Two levels, in the shape and with the names of python-chess' ``chess.engine``:

- :class:`SimpleEngine` is the public client: ``SimpleEngine.popen(command)`` as a
  context manager, ``configure``, ``play(position, Limit(...)) -> PlayResult``,
  ``analyse(position, limit, multipv=N)`` and ``quit``.  Positions are read
  through two attributes only, ``moves`` (the columns 1-7 played since the start)
  and ``start_fen`` (None for the empty board), so :class:`c4engine.Position`
  or anything shaped like it will do.  Moves come back as columns 1-7.
- :class:`EngineClient` is one engine process line by line, with deadlines and
  the arrival time of each line.  The referee (``c4engine match``,
  ``c4engine strength``) uses it directly because it judges what the engine
  said, clocks included.  :func:`parse_info`, :func:`merge_info` and
  :func:`collect_lines` read ``info`` lines for any other client (they need no
  process).

An engine is another program and may hang, crash or babble, so every read has a
deadline: a reader thread moves the engine's output lines into a queue, stamped
with the time they arrived, and the client waits on the queue.  The stamp (not
the moment the caller gets round to reading) is what a move's time is measured
against, so a busy caller does not make an engine look slow.  What it trusts
nothing of:

- numbers: ASCII digits with an optional minus, at most :data:`MAX_NUMBER`;
  an ``info`` line with any other number is ignored as a whole;
- ``bestmove``: only one written after the engine read the ``go`` answers it
  (an ``isready`` sent just before ``go`` fences off older output); extra ones
  (printed twice, or before any ``go``) are discarded and counted in
  :attr:`EngineClient.stale_bestmoves`, and a move time is never negative;
- notation: after ``UCI_Variant cfour`` a move must be a drop ``P@d1``, before
  it a digit; the other notation is an illegal move, as in cutechess;
- output: a line over :data:`MAX_LINE_BYTES` is dropped (and counted in
  :attr:`EngineClient.dropped_lines`) as soon as it is seen to be one, and at
  most :data:`QUEUED_LINES` lines wait for the caller (an engine that writes
  faster than it is read waits on its pipe), so an engine's output costs
  bounded memory, and a reader that fails all the same ends the output with
  its reason, not the thread with a traceback;
- the process: it runs in its own process group, and ending the engine ends the
  whole group, so a child left holding the engine's output cannot keep the
  connection open or outlive it.  The engine's own exit is noticed even while a
  child keeps the pipe open.

What went wrong is named by the exception, each an :class:`EngineError`:
:class:`EngineDied` (the process exited or closed its output),
:class:`EngineTimeout` (no answer in time; the engine still runs) and
:class:`EngineEnded` (no answer even to ``stop`` and ``isready`` after a
timeout, so the client ended it).

Not thread-safe: one thread drives one engine.
"""

from __future__ import annotations

from .client import EngineClient
from .limits import Limit, SearchResult
from .info import InfoDict, Score, collect_lines, merge_info, parse_info
from .process import EngineDied, EngineEnded, EngineError, EngineTimeout
from .simple import PlayResult, SimpleEngine

__all__ = [
    "EngineClient", "EngineDied", "EngineEnded", "EngineError", "EngineTimeout", "InfoDict", "Limit", "PlayResult",
    "Score", "SearchResult", "SimpleEngine", "collect_lines", "merge_info", "parse_info",
]
