"""One engine process as the web server sees it: lines in, lines out, asynchronously.

The public client (:class:`c4engine.engine.EngineClient`) blocks a thread until
an answer comes; the web server runs on one asyncio loop and must forward every
``info`` line the moment it arrives while it keeps serving the page, so it
reads the engine through an asyncio subprocess protocol of its own instead
(the lines themselves are read with the public client's
:func:`~c4engine.engine.parse_info` and :func:`~c4engine.engine.engine_move`).
Each line (and the end of output) is handed to a callback tagged with the
process' serial number, so that lines from a process that was killed and
replaced can be told apart from the new one's, and with the time it arrived,
so that a deadline is judged by when the engine answered, not by when the
session got round to the line.

The protocol is ours, not asyncio's stream reader, for two reasons: a line
over :data:`~c4engine.protocol.lines.MAX_LINE_BYTES` is dropped and counted
(the stream reader can only give up on the whole output), and ending the
engine closes its transport, so that no pipe a child still holds is left for
the garbage collector to close after the loop is gone.

What is not about asyncio comes from the public client, so that the web board
and the referee start and end engines alike: the process starts in a process
group of its own (:func:`~c4engine.engine.spawn_arguments`), ending the engine
ends the whole group (:class:`~c4engine.engine.ProcessGroup`), and the end is
told in the client's words (:func:`~c4engine.engine.how_it_ended`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Sequence

from ..engine.client import EXIT_GRACE
from ..engine.process import (
    STDERR_LINES_KEPT,
    ProcessGroup,
    how_it_ended,
    spawn_arguments,
)
from ..protocol.lines import MAX_LINE_BYTES

EXIT_WAIT = 1.0  # seconds to wait for the exit status once the output has ended
STDOUT, STDERR = 1, 2

LineCallback = Callable[[int, "str | None", float], None]  # serial, line (None: the end), arrival


class LineSplitter:
    """Bytes as they come, cut into lines of at most ``limit`` bytes (newline not
    counted): None stands for a longer line, given as soon as it is seen to be
    one, and the rest of it is dropped as it comes, so at most ``limit`` bytes
    are ever kept."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._dropping = False

    def feed(self, data: bytes) -> list[bytes | None]:
        lines: list[bytes | None] = []
        self._pending += data
        while (end := self._pending.find(b"\n")) >= 0:
            line = bytes(self._pending[:end])
            del self._pending[:end + 1]
            if not self._dropping:
                lines.append(line if len(line) <= self.limit else None)
            self._dropping = False
        if len(self._pending) > self.limit:
            if not self._dropping:
                lines.append(None)
            self._dropping = True
            self._pending.clear()
        return lines

    def finish(self) -> list[bytes | None]:
        """What is left at the end of output: a last line without its newline."""
        last, self._pending = bytes(self._pending), bytearray()
        return [last] if last and not self._dropping else []


class _EngineOutput(asyncio.SubprocessProtocol):
    """The engine's two output pipes and its exit, as the loop reports them."""

    def __init__(self, serial: int, on_line: LineCallback) -> None:
        self.serial = serial
        self.on_line = on_line
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self.dropped_lines = 0
        self.lines_passed = 0  # to on_line, the end of output included
        self.stdout_closed = asyncio.Event()
        self.exited = asyncio.Event()
        self._splitters = {STDOUT: LineSplitter(), STDERR: LineSplitter()}

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._take(fd, self._splitters[fd].feed(data), time.monotonic())

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd in self._splitters:
            self._take(fd, self._splitters[fd].finish(), time.monotonic())
        if fd == STDOUT:
            self.stdout_closed.set()

    def process_exited(self) -> None:
        self.exited.set()

    def _take(self, fd: int, lines: list[bytes | None], arrived: float) -> None:
        for raw in lines:
            text = None if raw is None else raw.decode("utf-8", "replace").rstrip("\r")
            if fd == STDERR:
                self.stderr.append(f"(a line over {MAX_LINE_BYTES} bytes)" if text is None else text)
            elif text is None:
                self.dropped_lines += 1
            else:
                self.pass_on(text, arrived)

    def pass_on(self, line: str | None, arrived: float) -> None:
        self.lines_passed += 1
        self.on_line(self.serial, line, arrived)


class EngineProcess:
    """A started engine; ``on_line(serial, line, arrived)`` gets each output line,
    and ``on_line(serial, None, arrived)`` once its output ends.  ``dropped_lines``
    counts the lines over :data:`MAX_LINE_BYTES` it wrote (not passed on)."""

    _serials = 0

    def __init__(self, transport: asyncio.SubprocessTransport, output: _EngineOutput) -> None:
        self.serial = output.serial
        self.transport = transport
        self.output = output
        self.pid = transport.get_pid()
        self.group = ProcessGroup(self.pid)
        self._tasks = [asyncio.create_task(self._report_end()),
                       asyncio.create_task(self._end_group_on_exit())]

    @classmethod
    async def start(cls, argv: Sequence[str], on_line: LineCallback) -> EngineProcess:
        """Start ``argv`` in its own process group; OSError when it cannot be started."""
        EngineProcess._serials += 1
        serial = EngineProcess._serials
        transport, output = await asyncio.get_running_loop().subprocess_exec(
            lambda: _EngineOutput(serial, on_line), *argv, **spawn_arguments())
        return cls(transport, output)

    @property
    def dropped_lines(self) -> int:
        return self.output.dropped_lines

    @property
    def lines_passed(self) -> int:
        return self.output.lines_passed

    def send(self, line: str) -> bool:
        """Write one command line; False when the engine's input is closed."""
        stdin = self.transport.get_pipe_transport(0)
        if stdin is None or stdin.is_closing():
            return False
        stdin.write((line + "\n").encode())  # type: ignore[attr-defined]
        return True

    def why_it_ended(self) -> str:
        """The exit status and the last lines of standard error, for the page."""
        return how_it_ended(self.transport.get_returncode(), self.output.stderr)

    async def kill(self) -> None:
        """End the process and anything it started in its group, at once, wait for
        its exit (it is ours: we started it), :data:`EXIT_WAIT` at most, and close
        its pipes, even those a child out of the group's reach still holds.

        The pipes are closed even when the wait is cancelled (the page's connection
        dropped, the server stopping): a transport left open is closed by the
        garbage collector after its loop has gone, which fails on the loop."""
        self.group.end()
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.output.exited.wait(), EXIT_WAIT)
        finally:
            for task in self._tasks:
                task.cancel()
            self.transport.close()

    async def _end_group_on_exit(self) -> None:
        """Once the engine has exited (and its last lines had :data:`EXIT_GRACE` to
        arrive), end what it left in its group: a child still holding its output
        would keep the page waiting for an end of output that never comes."""
        await self.output.exited.wait()
        await asyncio.sleep(EXIT_GRACE)
        self.group.end()

    async def _report_end(self) -> None:
        """The end of output, once the exit status has had :data:`EXIT_WAIT` to come."""
        await self.output.stdout_closed.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.output.exited.wait(), EXIT_WAIT)
        self.output.pass_on(None, time.monotonic())
