"""A real ``c4engine serve`` process on loopback for the service's tests, and a plain
HTTP client (the standard library's) to talk to it."""

from __future__ import annotations

import ctypes
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ADDRESS = re.compile(r"c4engine serve on (http://127\.0\.0\.1:\d+)/")
START_SECONDS = 180.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h  # a first start may compile the kernel for each board


class ServiceProcess:
    """``python -m c4engine serve --port 0`` with the given options; its standard error
    is kept in ``log`` as it comes."""

    def __init__(self, cache: Path, *options: str) -> None:
        argv = [sys.executable, "-m", "c4engine", "serve", "--port", "0", "--cache", str(cache), *options]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=_die_with_parent)
        self.log: list[str] = []
        self._ready = threading.Event()
        self.url = ""
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(START_SECONDS) or not self.url:
            self.kill()
            raise RuntimeError("c4engine serve did not start:\n" + "".join(self.log))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            found = ADDRESS.search(line)
            if found:
                self.url = found.group(1)
                self._ready.set()
        self._ready.set()

    def get(self, path: str, timeout: float = 60.0, headers: dict[str, str] | None = None
            ) -> tuple[int, dict[str, str], Any]:
        """Status, headers and the JSON (or text) body of ``GET path``."""
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, dict(response.headers), _body(response.read(), response.headers)
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), _body(err.read(), err.headers)

    def __enter__(self) -> ServiceProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.kill()

    def stop(self) -> int:
        """SIGTERM, and the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


def _die_with_parent() -> None:
    """In the child: SIGKILL when the process that started it ends (Linux), so that a
    test or a measurement stopped half-way leaves no server behind."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _body(data: bytes, headers: Any) -> Any:
    return json.loads(data) if headers.get("Content-Type", "").startswith("application/json") else data.decode()


def wait_until(condition: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())
