"""The answers to recent queries, in memory, in front of the books and the cache.

Reading a position's digits or FEN and probing the books and SQLite cost far more
than answering (a quarter of a millisecond for 12 moves in pure Python), so the
last exact answers are kept by the text of the query that asked for them, least
recently asked first out.  An answer that came from the search is told as
``cache`` when found here, as from the persistent cache: it is stored there too.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from ..geometry import Geometry
from .answer import Analysis

Key = tuple[Geometry, str, str]


class RecentAnswers:
    """At most ``size`` exact analyses by query text; used from the event loop only."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[Key, Analysis] = OrderedDict()

    def get(self, key: Key) -> Analysis | None:
        analysis = self._answers.get(key)
        if analysis is not None:
            self._answers.move_to_end(key)
        return analysis

    def put(self, key: Key, analysis: Analysis) -> None:
        self._answers[key] = replace(analysis, source="cache") if analysis.source == "search" else analysis
        self._answers.move_to_end(key)
        if len(self._answers) > self.size:
            self._answers.popitem(last=False)
