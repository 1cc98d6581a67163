"""The engine process: a UCI-style line protocol on stdin and stdout.

This module starts the process's threads and is its main thread.  Four kinds
of thread, so that nothing slow can keep the process from hearing ``quit`` or
the end of its input:

- the main thread only reads lines; ``quit`` and end of input it acts on itself;
- one command thread (:mod:`.command_thread`) carries out every other command,
  in order, while the main thread still reads;
- a search runs in a worker thread (:mod:`.search_job`), so ``stop``,
  ``isready`` and ``ponderhit`` are answered while it thinks;
- one writer thread (:mod:`.output`) owns stdout, so a reader that does not
  read blocks nobody.

The commands themselves are :mod:`.server`'s; ``protocol.md`` is the contract
for every one of them.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Iterator, NoReturn

from .command_thread import CommandThread, Refusal
from .lines import MAX_LINE_BYTES, bounded_lines, is_command
from .output import Output
from .server import Server


def read_lines(stream: IO[bytes]) -> Iterator[str | Refusal]:
    """Lines of input as text; an over-long or non-UTF-8 line as the Refusal that
    replaces it, for its error to be written in its turn."""
    for raw in bounded_lines(stream):
        if raw is None:
            yield Refusal(f"line longer than {MAX_LINE_BYTES} bytes ignored")
            continue
        try:
            yield raw.decode("utf-8").strip("\r\n")
        except UnicodeDecodeError:
            yield Refusal("line is not valid UTF-8; ignored")


def is_quit(line: str) -> bool:
    return line.split() == ["quit"]


def run(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> NoReturn:
    """The protocol loop; it ends the process with status 0.

    ``quit`` ends the process at once: the running search is stopped and its
    bestmove written, the commands read before it are carried out (a ``go``
    among them is answered as if stopped at once, a ``perft`` ends at once), but
    a command that cannot be interrupted (``bench``, a table or board being set
    up, a variants file being read, a wait for the start-up) is not waited for,
    nor the commands after it, unless a ``go`` among them still awaits its
    ``bestmove``: every ``go`` gets one.  At the
    end of input the commands already read are carried out (see
    :meth:`Server.end_of_input`).  Either way the output is written out unless
    the reader has stopped reading; a reader that is gone ends the process
    quietly with status 0."""
    stream = stdout or sys.stdout
    if hasattr(stream, "reconfigure"):  # echoed input must never fail to encode
        stream.reconfigure(errors="backslashreplace")
    out = Output(stream, on_gone=_exit_quietly)
    server = Server(out)
    commands = CommandThread(server)
    quit_read = _hand_over(read_lines(stdin or sys.stdin.buffer), server, commands)
    commands.finish(stop=quit_read)
    while commands.thread.is_alive():
        commands.thread.join(0.05)
        if quit_read and server.busy and not commands.go_pending():
            break
    out.drain()
    _exit_quietly()


def _hand_over(lines: Iterator[str | Refusal], server: Server, commands: CommandThread) -> bool:
    """Queue every line for the command thread until ``quit`` (True), which stops the
    running search at once, or the end of input (False).  A ``stop`` is also told
    to the server as it is read: a ``perft`` running on the command thread ends."""
    for line in lines:
        if isinstance(line, Refusal):
            commands.refuse(line)
            continue
        if is_quit(line):
            server.interrupt()
            return True
        if is_command(line, "stop"):  # with any words after it, as the command thread counts it
            server.stop_read()
        commands.put(line)
    return False


def _exit_quietly() -> NoReturn:
    """Exit with status 0 at once, without the interpreter's shutdown: that takes
    most of a second (numba's and numpy's clean-up) when quit is meant to be
    prompt, and it would block on, or complain about, a stdout that cannot be
    flushed because its reader is gone or not reading.  Every line the reader
    could take has been written and flushed by then."""
    sys.stderr.flush()
    os._exit(0)
