"""The evaluation's weight vectors by name, and the learned ones shipped per board.

``learned`` weights were fitted to exactly scored positions of one board
(``tools/train_evaluation.py``, :mod:`c4engine.training`) and live in
``c4engine/data/evaluation-<W>x<H>k<K>.json``; a board without such a file
has none, and its engine falls back to the hand-written threat weights.
"""

from __future__ import annotations

import functools
import json
from importlib.resources import files

import numpy as np

from ..geometry import Geometry
from ..kernel.evaluation import CENTRE_ONLY, N_WEIGHTS, THREAT_WEIGHTS

LEARNED = "learned"
HAND_WRITTEN = {"threats": THREAT_WEIGHTS, "centre": CENTRE_ONLY}
NAMES = (LEARNED, *HAND_WRITTEN)


def weights_file_name(geometry: Geometry) -> str:
    return f"evaluation-{geometry.width}x{geometry.height}k{geometry.connect}.json"


@functools.cache
def learned_weights(geometry: Geometry) -> np.ndarray | None:
    """The weights learned for ``geometry``'s board, or None when it has none.
    A file that is there but unreadable is a packaging bug: ValueError."""
    resource = files("c4engine").joinpath("data", weights_file_name(geometry))
    if not resource.is_file():
        return None
    document = json.loads(resource.read_text())
    weights = np.array(document["weights"], dtype=np.int64)
    if document.get("board") != geometry.name or weights.shape != (N_WEIGHTS,):
        raise ValueError(f"{weights_file_name(geometry)}: not {N_WEIGHTS} weights for the {geometry} board")
    weights.flags.writeable = False
    return weights


def weights_named(name: str, geometry: Geometry) -> tuple[np.ndarray, bool]:
    """The weights ``name`` stands for on ``geometry``'s board, and whether they are
    the hand-written threats standing in for learned weights the board lacks."""
    if name == LEARNED:
        learned = learned_weights(geometry)
        return (THREAT_WEIGHTS, True) if learned is None else (learned, False)
    return HAND_WRITTEN[name], False
