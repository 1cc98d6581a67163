"""One engine process as the web server sees it: lines in, lines out, asynchronously.

The public client (:class:`c4engine.engine.EngineClient`) blocks a thread until
an answer comes; the web server runs on one asyncio loop and must forward every
``info`` line the moment it arrives while it keeps serving the page, so it
reads the engine with asyncio's own subprocess streams instead (the lines
themselves are read with the public client's :func:`~c4engine.engine.parse_info`
and :func:`~c4engine.engine.engine_move`).  Each line
(and the end of output) is handed to a callback tagged with the process'
serial number, so that lines from a process that was killed and replaced can
be told apart from the new one's.

What is not about asyncio comes from the public client, so that the web board
and the referee start and end engines alike: the process starts in a process
group of its own (:func:`~c4engine.engine.spawn_arguments`), ending the engine
ends the whole group (:class:`~c4engine.engine.ProcessGroup`), and the end is
told in the client's words (:func:`~c4engine.engine.how_it_ended`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Sequence

from ..engine import EXIT_GRACE, POLL_SECONDS, STDERR_LINES_KEPT, ProcessGroup, how_it_ended, spawn_arguments

MAX_LINE_BYTES = 1 << 16
EXIT_WAIT = 1.0  # seconds to wait for the exit status once the output has ended


class EngineProcess:
    """A started engine; ``on_line(serial, line)`` gets each output line, and
    ``on_line(serial, None)`` once its output ends."""

    _serials = 0

    def __init__(self, process: asyncio.subprocess.Process,
                 on_line: Callable[[int, str | None], None]) -> None:
        EngineProcess._serials += 1
        self.serial = EngineProcess._serials
        self.process = process
        self.group = ProcessGroup(process.pid)
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._tasks = [asyncio.create_task(self._read_stdout(on_line)),
                       asyncio.create_task(self._read_stderr()),
                       asyncio.create_task(self._end_group_on_exit())]

    @classmethod
    async def start(cls, argv: Sequence[str],
                    on_line: Callable[[int, str | None], None]) -> EngineProcess:
        """Start ``argv`` in its own process group; OSError when it cannot be started."""
        process = await asyncio.create_subprocess_exec(*argv, **spawn_arguments(),
                                                       limit=MAX_LINE_BYTES)
        return cls(process, on_line)

    def send(self, line: str) -> bool:
        """Write one command line; False when the engine's input is closed."""
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return False
        stdin.write((line + "\n").encode())
        return True

    def why_it_ended(self) -> str:
        """The exit status and the last lines of standard error, for the page."""
        return how_it_ended(self.process.returncode, self.stderr)

    async def kill(self) -> None:
        """End the process and anything it started in its group, at once, and wait
        for its exit (it is ours: we started it), :data:`EXIT_WAIT` at most."""
        self.group.end()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exited(), EXIT_WAIT)
        for task in self._tasks:
            task.cancel()

    async def _exited(self) -> None:
        """Return once the engine's process has exited.  The exit is polled, as the
        public client does: asyncio's ``wait()`` returns only once the pipes are
        closed too, which a child still holding them (in a session of its own,
        out of the group's reach) may prevent for ever."""
        while self.process.returncode is None:
            await asyncio.sleep(POLL_SECONDS)

    async def _end_group_on_exit(self) -> None:
        """Once the engine has exited (and its last lines had :data:`EXIT_GRACE` to
        arrive), end what it left in its group: a child still holding its output
        would keep the page waiting for an end of output that never comes."""
        await self._exited()
        await asyncio.sleep(EXIT_GRACE)
        self.group.end()

    async def _read_stdout(self, on_line: Callable[[int, str | None], None]) -> None:
        assert self.process.stdout is not None
        try:
            while raw := await self.process.stdout.readline():
                on_line(self.serial, raw.decode("utf-8", "replace").rstrip("\r\n"))
        except (ValueError, ConnectionError):  # an over-long line or a broken pipe
            pass
        with contextlib.suppress(asyncio.TimeoutError):  # for the exit status, if it comes
            await asyncio.wait_for(asyncio.shield(self.process.wait()), EXIT_WAIT)
        on_line(self.serial, None)

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        with contextlib.suppress(ValueError, ConnectionError):
            while raw := await self.process.stderr.readline():
                self.stderr.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
