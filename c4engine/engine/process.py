"""Starting and ending an engine process: its command line, its process group, how it ended."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from ..protocol.lines import bounded_lines

STDERR_LINES_KEPT = 20


class EngineError(Exception):
    """The engine did not do what the protocol asks; the message names the engine."""


class EngineTimeout(EngineError):
    """The engine did not answer in time (it may still be running)."""


class EngineDied(EngineError):
    """The engine's process ended or closed its output."""


class EngineEnded(EngineError):
    """The client ended the engine: it did not answer in time, and not even the
    ``stop`` and ``isready`` after it (deaf, or flooding its output).  Not a
    crash: the engine was alive; start it again to go on."""


@dataclass(frozen=True)
class _OutputEnd:
    """The end of an engine's output; ``failure`` says why it could not be read on,
    when the reading failed before the end."""

    failure: str = ""


Output = str | None | _OutputEnd  # a line, a line over MAX_LINE_BYTES (dropped), the end


def _pump(stream: IO[bytes], sink: Callable[[Output], None]) -> None:
    """Feed ``sink`` each line of ``stream`` as text (None for a line too long,
    :func:`~c4engine.protocol.lines.bounded_lines`), then the end.  Whatever stops the
    reading (a MemoryError under a memory cap, say) ends the output with its
    reason: the thread itself never dies of it."""
    failure = ""
    try:
        with stream:
            for raw in bounded_lines(stream):
                sink(None if raw is None else raw.decode("utf-8", "replace").rstrip("\r\n"))
    except Exception as err:  # noqa: BLE001 - reported to the caller as the end of output
        failure = f"its output could not be read ({err!r})"
    sink(_OutputEnd(failure))


def engine_argv(command: str | Sequence[str]) -> list[str]:
    """The arguments of an engine command, a shell-quoted string or a list already;
    EngineError when the string cannot be parsed or the command is empty."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise EngineError(f"cannot parse engine command {command!r}: {err}") from None
    else:
        argv = list(command)
    if not argv:
        raise EngineError("empty engine command")
    return argv


def own_engine_argv() -> list[str]:
    """c4engine itself, run by the Python that runs the caller: the engine a tool
    measures or shows when it is given none."""
    return [sys.executable, "-m", "c4engine"]


def spawn_arguments() -> dict[str, Any]:
    """How an engine process is started, by :class:`EngineClient` (threads) and by
    the web board (asyncio) alike: its three streams as pipes, and a session of its
    own, whose process group :class:`ProcessGroup` ends with everything the engine
    started in it."""
    return {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
            "start_new_session": True}


class ProcessGroup:
    """The process group of an engine started with :func:`spawn_arguments` (its id
    is the engine's pid).  It is signalled once only: once the group is gone, its
    id may be reused by an unrelated process."""

    def __init__(self, leader: int) -> None:
        self._id: int | None = leader

    def end(self) -> None:
        """Kill the engine and anything it started in its group, at once."""
        if self._id is None:
            return
        try:
            os.killpg(self._id, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone already
        self._id = None


def start_failure(command: str, err: OSError) -> str:
    """What to say when ``command`` could not be started."""
    return f"cannot start {command!r}: {err.strerror or err}"


def how_it_ended(code: int | None, stderr: Iterable[str]) -> str:
    """How an engine's process ended, for a message: its exit status (None: it
    closed its output and may still run) and its last lines on stderr."""
    how = "closed its output" if code is None else f"exited with code {code}"
    tail = " | ".join(stderr)
    return how + (f" (stderr: {tail})" if tail else "")
