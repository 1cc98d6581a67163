"""A network namespace of its own in which only loopback exists, for tests whose
servers would otherwise reach the network: Ray binds its head to the machine's
own address even when told 127.0.0.1.

As root: ``unshare --net`` makes the namespace, ``ip link set lo up`` brings up
its one interface, and the calling thread enters it (``setns``), so that what
it starts (a Ray head, the drivers and engines talking to it) runs there and
its traffic cannot leave the machine.  Linux keeps a network namespace per
thread: pytest runs the tests in its main thread, which enters and leaves.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000


def namespace_of(pid: int | str = "thread-self") -> int:
    """The inode naming the network namespace of process ``pid`` (this thread's by default)."""
    return os.stat(f"/proc/{pid}/ns/net").st_ino


def _enter(namespace_fd: int) -> None:
    """Move the calling thread into the network namespace open as ``namespace_fd``."""
    if ctypes.CDLL(None, use_errno=True).setns(namespace_fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


@contextmanager
def loopback_only() -> Iterator[int]:
    """Run the calling thread, and what it starts, in a new network namespace where
    only loopback is up; yields the namespace's inode.  Needs root: a RuntimeError
    says so, rather than a test quietly reaching the network."""
    if os.geteuid() != 0:
        raise RuntimeError("a network namespace of its own needs root (id -u is "
                           f"{os.geteuid()}): run these tests as root")
    ip, unshare = shutil.which("ip"), shutil.which("unshare")
    if ip is None or unshare is None:
        raise RuntimeError("a network namespace needs unshare (util-linux) and ip (iproute2)")
    holder = subprocess.Popen(
        [unshare, "--net", "sh", "-c", f"{ip} link set lo up && echo up && exec sleep infinity"],
        stdout=subprocess.PIPE, text=True)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "up\n", \
            "unshare --net or ip link set lo up failed"
        isolated = os.open(f"/proc/{holder.pid}/ns/net", os.O_RDONLY)
        try:
            _enter(isolated)
        finally:
            os.close(isolated)
        yield namespace_of()
    finally:
        _enter(home)
        os.close(home)
        holder.kill()
        holder.wait()


def interfaces() -> list[str]:
    """The network interfaces of this thread's namespace (read through a socket:
    /sys/class/net shows the namespace sysfs was mounted in)."""
    return sorted(name for _index, name in socket.if_nameindex())
