"""Fitting the linear evaluation's weights to exactly scored positions (Texel tuning).

The evaluation (:mod:`c4engine.kernel.evaluation`) is linear in its weights:
``evaluate = features @ weights``.  Training fits those weights to positions
whose game-theoretic result is known (:mod:`c4engine.training.data`), by an
ordinal logistic model of the result from the side to move's view:

    P(win) = sigmoid(e - margin),  P(loss) = sigmoid(-e - margin),  P(draw) = the rest,

with ``e = features @ w`` in units of one logit and ``margin >= 0`` learned too.
The hand-written weights are judged by the same model with only their scale and
margin fitted, so the log-loss and accuracy of old and new compare like with like.
The learned weights are stored as integers in centipawns: ``CP_PER_LOGIT``
centipawns make one logit, about the scale the hand-written weights have.
``tools/train_evaluation.py`` fits the weights and writes
``c4engine/data/evaluation-<board>.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..geometry import Geometry
from ..kernel.evaluation import (
    COLUMN_STONES, FIRST_THREATS, MAX_EDGE_STEPS, N_LINEAR, N_THREAT_TERMS, SECOND_THREATS, THREAT_WEIGHTS,
)
from ..kernel.specialise import kernel_for
from .data import Dataset
from .packing import unpack

CP_PER_LOGIT = 40

def feature_matrix(data: Dataset) -> np.ndarray:
    """One row of the evaluation's counts per position (``evaluate = row @ weights``)."""
    geometry = data.geometry
    kernel = kernel_for(geometry)
    out = np.zeros((len(data), N_LINEAR), dtype=np.int64)
    for i in range(len(data)):
        bits = kernel.bits(unpack(int(data.current[i]), geometry), unpack(int(data.mask[i]), geometry))
        kernel.evaluation.features(*bits, int(data.stones[i]), out[i])
    return out.astype(np.float64)


def tied_threats() -> np.ndarray:
    """The hand-written model's shape as a map from its free parameters to the weight
    vector: the same four threat weights for both players, no first player bonus,
    stones weighted by steps from the edge (one parameter): Texel tuning of the
    existing terms."""
    basis = np.zeros((N_LINEAR, N_THREAT_TERMS + 1))
    for term in range(N_THREAT_TERMS):
        basis[FIRST_THREATS + term, term] = basis[SECOND_THREATS + term, term] = 1.0
    basis[COLUMN_STONES:COLUMN_STONES + MAX_EDGE_STEPS, N_THREAT_TERMS] = np.arange(MAX_EDGE_STEPS)
    return basis


def full_model() -> np.ndarray:
    """Every weight free."""
    return np.eye(N_LINEAR)


@dataclass(frozen=True)
class Fit:
    """Weights in logits per count and the draw margin of the ordinal model."""

    weights: np.ndarray
    margin: float


def probabilities(evaluation: np.ndarray, margin: float) -> np.ndarray:
    """P(loss), P(draw), P(win) per row of an evaluation in logits."""
    win = _sigmoid(evaluation - margin)
    loss = _sigmoid(-evaluation - margin)
    return np.stack([loss, np.clip(1.0 - win - loss, 1e-12, 1.0), win], axis=1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def log_loss(evaluation: np.ndarray, margin: float, result: np.ndarray) -> float:
    p = probabilities(evaluation, margin)[np.arange(result.size), result + 1]
    return float(-np.mean(np.log(np.maximum(p, 1e-12))))


def accuracy(evaluation: np.ndarray, margin: float, result: np.ndarray) -> float:
    """How often the likeliest outcome is the true one."""
    return float(np.mean(np.argmax(probabilities(evaluation, margin), axis=1) == result + 1))


def fit(features: np.ndarray, result: np.ndarray, basis: np.ndarray, steps: int = 1000,
        l2: float = 1e-4) -> Fit:
    """Weights ``basis @ v`` and margin minimising the log-loss plus ``l2`` times the
    squared weights in logits (which keeps a rare term, a stacked pair, from growing
    without bound); full-batch Adam on standardised parameters."""
    x = features @ basis
    scale = np.maximum(np.abs(x).mean(axis=0), 1e-9)
    xs = x / scale
    params = np.zeros(xs.shape[1] + 1)  # v (standardised), log(margin)
    params[-1] = np.log(0.5)
    moment, square = np.zeros_like(params), np.zeros_like(params)
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    win, loss = (result == 1).astype(np.float64), (result == -1).astype(np.float64)
    for step in range(1, steps + 1):
        v, margin = params[:-1], float(np.exp(params[-1]))
        e = xs @ v
        p = probabilities(e, margin)
        s_win, s_loss = _sigmoid(e - margin), _sigmoid(-e - margin)
        d_win, d_loss = s_win * (1 - s_win), s_loss * (1 - s_loss)
        draw = 1.0 - win - loss
        # d(-log P)/de and d(-log P)/dmargin for each outcome
        g_e = -win * (1 - s_win) + loss * (1 - s_loss) - draw * (-d_win + d_loss) / p[:, 1]
        g_m = win * (1 - s_win) + loss * (1 - s_loss) - draw * (d_win + d_loss) / p[:, 1]
        grad = np.append(xs.T @ g_e / result.size + 2 * l2 * v / scale ** 2, np.mean(g_m) * margin)
        moment = beta1 * moment + (1 - beta1) * grad
        square = beta2 * square + (1 - beta2) * grad * grad
        params -= rate * (moment / (1 - beta1 ** step)) / (np.sqrt(square / (1 - beta2 ** step)) + 1e-12)
    return Fit(basis @ (params[:-1] / scale), float(np.exp(params[-1])))


def fit_scale(evaluation: np.ndarray, result: np.ndarray) -> Fit:
    """The logits per centipawn and margin that best fit fixed evaluations (a one-term
    model), for judging weights that were not fitted (the hand-written ones)."""
    return fit(evaluation[:, None], result, np.eye(1), steps=300)


def integer_weights(found: Fit) -> np.ndarray:
    """Learned weights in centipawns, as the kernel takes them."""
    return np.round(found.weights * CP_PER_LOGIT).astype(np.int64)


@dataclass(frozen=True)
class Score:
    """How well one evaluation predicts the held-out results."""

    name: str
    accuracy: float
    log_loss: float


def judge(name: str, weights: np.ndarray, train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray,
          test_y: np.ndarray) -> Score:
    """Held-out accuracy and log-loss of integer ``weights``, with the logits per
    centipawn and the margin fitted on the training positions only."""
    linear = weights[:N_LINEAR]
    calibration = fit_scale(train_x @ linear, train_y)
    e = (test_x @ linear) * calibration.weights[0]
    return Score(name, accuracy(e, calibration.margin, test_y), log_loss(e, calibration.margin, test_y))


@dataclass(frozen=True)
class Training:
    weights: np.ndarray
    scores: list[Score]
    trained_on: int
    held_out: int


def train(data: Dataset, steps: int = 1000) -> Training:
    """Fit the full model on the training positions; score the hand-written weights,
    the tuned hand-written terms and the learned weights on the held-out ones."""
    x, y = feature_matrix(data), data.result.astype(np.int64)
    train_rows, test_rows = ~data.held_out, data.held_out
    tx, ty, hx, hy = x[train_rows], y[train_rows], x[test_rows], y[test_rows]
    tuned = integer_weights(fit(tx, ty, tied_threats(), steps))
    learned = integer_weights(fit(tx, ty, full_model(), steps))
    scores = [judge(name, weights, tx, ty, hx, hy) for name, weights in
              (("threats (hand-written)", THREAT_WEIGHTS), ("threats, tuned", tuned), ("learned", learned))]
    return Training(learned, scores, int(train_rows.sum()), int(test_rows.sum()))


# -- weight files -------------------------------------------------------------


def write_weights(path: Path, geometry: Geometry, training: Training, made_by: str) -> None:
    document = {
        "board": geometry.name,
        "weights": [int(w) for w in training.weights],
        "cp_per_logit": CP_PER_LOGIT,
        "made_by": made_by,
        "trained_on": training.trained_on,
        "held_out": {s.name: {"positions": training.held_out, "accuracy": round(s.accuracy, 4),
                              "log_loss": round(s.log_loss, 4)} for s in training.scores},
    }
    path.write_text(json.dumps(document, indent=1) + "\n")
