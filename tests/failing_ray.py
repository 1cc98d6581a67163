"""A stand-in for a Ray connection whose every task raises, for the commands'
reports of a task that fails on the cluster (no cluster needed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any


class TaskFailed(Exception):
    """What ``ray.get`` raises for a task that raised: Ray's RayTaskError keeps the
    task's own exception as ``cause``."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"the task raised {cause!r}")
        self.cause = cause


def failing_ray(cause: BaseException) -> SimpleNamespace:
    """Ray's calls that ``tasks_on_ray`` makes; each task's result raises ``cause``."""

    def remote(**_: Any) -> Callable[[Callable[..., Any]], SimpleNamespace]:
        return lambda function: SimpleNamespace(remote=lambda *args: args)

    def get(_: Any) -> Any:
        raise TaskFailed(cause)

    return SimpleNamespace(remote=remote, cluster_resources=lambda: {"CPU": 2},
                           wait=lambda refs, num_returns, timeout: (refs[:1], refs[1:]), get=get,
                           exceptions=SimpleNamespace(RayError=TaskFailed))


@contextmanager
def connected_to_failing_ray(address: str, forward_output: bool = False) -> Iterator[SimpleNamespace]:
    """``c4engine.referee.cluster.connected``'s place: a cluster whose tasks overflow."""
    yield failing_ray(OverflowError("Python int too large to convert to C long"))
