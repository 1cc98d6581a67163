"""Hostile HTTP servers on loopback, for the tests of ``c4engine.remote`` and of
``gui --service``: each answers every request with the bytes a test chooses, at
the pace it chooses, and keeps the request lines it was sent."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable

Answer = Callable[[str], Iterable[bytes]]  # the request line in, the answer's pieces out


def http_answer(body: bytes, status: str = "200 OK", headers: str = "Content-Type: application/json\r\n"
                ) -> list[bytes]:
    """A whole HTTP/1.1 answer, its length declared, in one piece."""
    head = f"HTTP/1.1 {status}\r\n{headers}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return [head.encode() + body]


def json_answer(document: object) -> Answer:
    """Every request answered 200 with ``document`` as JSON."""
    body = json.dumps(document).encode()
    return lambda _line: http_answer(body)


class HostileServer:
    """A server on 127.0.0.1 answering each connection with ``answer(request line)``,
    sleeping ``pause_s`` between its pieces; a client that leaves ends its answer."""

    def __init__(self, answer: Answer, pause_s: float = 0.0) -> None:
        self.answer = answer
        self.pause_s = pause_s
        self.requests: list[str] = []
        self.closed = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                connection, _address = self.listener.accept()
            except OSError:  # the listener was closed
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            head = b""
            try:
                while b"\r\n\r\n" not in head and (data := connection.recv(4096)):
                    head += data
                self.requests.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
                for piece in self.answer(self.requests[-1]):
                    if self.closed.is_set():
                        return
                    connection.sendall(piece)
                    time.sleep(self.pause_s)
            except OSError:  # the client left
                return
