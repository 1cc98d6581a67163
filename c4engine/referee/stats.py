"""Match statistics: score, Elo with its 95% interval, LOS, draw ratio, pentanomial
pair counts and the SPRT, as pure functions of the counts.

Everything is seen from one engine (call it A) against the other.  The formulas
follow the two tools people compare results with, so that a number printed here
means what it means there:

* Elo difference and its error margin: the trinomial model of cutechess (and of
  fastchess' ``EloWDL``): the per-game score variance of the W/D/L sample gives a
  95% interval on the score, mapped through the logistic Elo curve.
* LOS: cutechess' formula, which ignores draws: ``Phi((W - L) / sqrt(W + L))``.
* SPRT: fastchess' generalized SPRT (Michel Van den Bergh's "normalized Elo"
  maximum-likelihood estimate, fastchess' default model) on the pentanomial
  counts of game pairs, or on W/D/L counts.  Pairs are the better model when
  each opening is played twice with colours swapped: the two games of a pair are
  correlated, and the trinomial model overstates the variance.  The ``logistic``
  model (bounds in plain Elo) is there too, as in fastchess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

NELO_SCALE = 800.0 / math.log(10.0)  # normalized Elo per unit of t = (score - 0.5) / sigma
PENTA_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # mean score of a pair: LL, LD, WL/DD, WD, WW
TRI_SCORES = (0.0, 0.5, 1.0)  # loss, draw, win


@dataclass(frozen=True)
class Pentanomial:
    """Game pairs (same opening, colours swapped) by their outcome for A."""

    ll: int = 0
    ld: int = 0
    wl: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    @property
    def pairs(self) -> int:
        return self.ll + self.ld + self.wl + self.dd + self.wd + self.ww

    def by_score(self) -> tuple[int, int, int, int, int]:
        """Counts for pair scores 0, 1/2, 1, 3/2, 2 (WL and DD both score 1)."""
        return (self.ll, self.ld, self.wl + self.dd, self.wd, self.ww)


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference and the half-width of its 95% interval."""

    diff: float
    margin: float


@dataclass(frozen=True)
class SprtParams:
    """The hypotheses H0: elo = elo0 and H1: elo = elo1, with the error rates."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def __post_init__(self) -> None:
        if not all(math.isfinite(x) for x in (self.elo0, self.elo1, self.alpha, self.beta)):
            raise ValueError("SPRT: elo0, elo1, alpha and beta must be finite numbers")
        if not self.elo0 < self.elo1:
            raise ValueError("SPRT: elo0 must be less than elo1")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError("SPRT: alpha and beta must lie in (0, 1) and add up to less than 1")
        if self.model not in ("normalized", "logistic"):
            raise ValueError(f"SPRT: model must be normalized or logistic, not {self.model!r}")
        try:  # refused now rather than after the first finished pair of games
            sprt_llr_pentanomial(Pentanomial(), self)
        except ValueError:
            raise ValueError(f"SPRT: the {self.model} model cannot be computed for elo0 "
                             f"{self.elo0:g} and elo1 {self.elo1:g} (on game pairs, normalized "
                             f"Elo bounds must stay within about +/-230)") from None

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)


def score(wins: int, draws: int, losses: int) -> float:
    """Points per game, a draw counting half; 0.5 for an empty sample."""
    games = wins + draws + losses
    return (wins + 0.5 * draws) / games if games else 0.5


def draw_ratio(wins: int, draws: int, losses: int) -> float:
    """Share of games drawn (0 for an empty sample)."""
    games = wins + draws + losses
    return draws / games if games else 0.0


def elo_from_score(p: float) -> float:
    """The logistic Elo difference that predicts a score ``p``; infinite at 0 and 1."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / p - 1.0)


def elo_estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """Elo difference and error margin as cutechess computes them (trinomial model)."""
    games = wins + draws + losses
    if games == 0:
        return EloEstimate(0.0, math.inf)
    mu = score(wins, draws, losses)
    variance = (wins * (1 - mu) ** 2 + draws * (0.5 - mu) ** 2 + losses * mu ** 2) / games
    stdev = math.sqrt(variance / games)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    margin = (elo_from_score(mu + z * stdev) - elo_from_score(mu - z * stdev)) / 2
    # A score of 0 or 1 has no spread and an infinite difference: inf - inf is no margin.
    return EloEstimate(elo_from_score(mu), math.inf if math.isnan(margin) else margin)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority, cutechess' formula (draws carry no information)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def pentanomial(pairs: Sequence[tuple[float, float]]) -> Pentanomial:
    """Counts of pairs by outcome, from A's points (1, 0.5 or 0) in the two games."""
    keys = {(1.0, 1.0): "ww", (0.5, 1.0): "wd", (0.0, 1.0): "wl",
            (0.5, 0.5): "dd", (0.0, 0.5): "ld", (0.0, 0.0): "ll"}
    counts = dict.fromkeys(keys.values(), 0)
    for first, second in pairs:
        counts[keys[(min(first, second), max(first, second))]] += 1
    return Pentanomial(**counts)


def _regularize(count: float) -> float:
    """fastchess replaces an empty category by 1e-3 so that the MLE stays defined."""
    return count if count else 1e-3


def sprt_llr_trinomial(wins: int, draws: int, losses: int, params: SprtParams) -> float:
    """Log-likelihood ratio of H1 against H0 from W/D/L counts."""
    counts = [_regularize(c) for c in (losses, draws, wins)]
    return _llr(TRI_SCORES, counts, params, t_scale=1.0)


def sprt_llr_pentanomial(penta: Pentanomial, params: SprtParams) -> float:
    """Log-likelihood ratio of H1 against H0 from pair counts (fastchess' default)."""
    counts = [_regularize(c) for c in penta.by_score()]
    # A pair's score has half the per-game variance of a single game's for the same
    # normalized Elo, hence sqrt(2) on t (fastchess' neloToScorePenta).
    return _llr(PENTA_SCORES, counts, params, t_scale=math.sqrt(2.0))


def sprt_decision(llr: float, params: SprtParams) -> str | None:
    """``"H1"`` (A is better by elo1), ``"H0"`` (not better than elo0), or None to go on."""
    if llr >= params.upper:
        return "H1"
    if llr <= params.lower:
        return "H0"
    return None


def _llr(scores: Sequence[float], counts: Sequence[float], params: SprtParams,
         t_scale: float) -> float:
    """Generalized SPRT: total * E_hat[log p1 - log p0], where p0 and p1 are the
    maximum-likelihood distributions under each hypothesis given the sample."""
    total = sum(counts)
    probs = [c / total for c in counts]
    if params.model == "normalized":
        p0 = _mle_normalized(scores, probs, t_scale * params.elo0 / NELO_SCALE)
        p1 = _mle_normalized(scores, probs, t_scale * params.elo1 / NELO_SCALE)
    else:
        p0 = _mle_logistic(scores, probs, _logistic_score(params.elo0))
        p1 = _mle_logistic(scores, probs, _logistic_score(params.elo1))
    return total * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1))


def _logistic_score(elo: float) -> float:
    """Expected score at a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def _mle_logistic(scores: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """The distribution closest to the sample (in likelihood) whose mean is ``s``
    (Van den Bergh, "Comments on Normalized Elo", proposition 1.1)."""
    phi = [a - s for a in scores]
    theta = _solve_theta(phi, probs)
    return [p / (1.0 + theta * f) for p, f in zip(probs, phi)]


def _mle_normalized(scores: Sequence[float], probs: Sequence[float], t: float) -> list[float]:
    """The distribution closest to the sample whose ``(mean - 0.5) / sigma`` is ``t``
    (same paper, section 4.1): a fixed-point iteration from the uniform distribution."""
    p = [1.0 / len(scores)] * len(scores)
    for _ in range(1000):
        mu = sum(a * q for a, q in zip(scores, p))
        sigma = math.sqrt(sum(q * (a - mu) ** 2 for a, q in zip(scores, p)))
        phi = [a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in scores]
        theta = _solve_theta(phi, probs)
        new = [q / (1.0 + theta * f) for q, f in zip(probs, phi)]
        converged = max(abs(a - b) for a, b in zip(new, p)) < 1e-9
        p = new
        if converged:
            break
    return p


def _solve_theta(phi: Sequence[float], probs: Sequence[float]) -> float:
    """The root of ``sum p_i phi_i / (1 + theta phi_i)``, which falls from +inf to -inf
    between ``-1/max(phi)`` and ``-1/min(phi)``: bisection cannot miss it."""
    if not min(phi) < 0.0 < max(phi):
        raise ValueError("SPRT: elo0/elo1 lie outside what the scores can express")

    def f(x: float) -> float:
        return sum(p * v / (1.0 + x * v) for p, v in zip(probs, phi))

    lo, hi = -1.0 / max(phi), -1.0 / min(phi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
