"""Match statistics against values known from elsewhere: cutechess' printed output,
fastchess' own test values, and small cases worked by hand."""

from __future__ import annotations

import math

import pytest

from c4engine.referee.stats import (
    Pentanomial,
    SprtParams,
    draw_ratio,
    elo_estimate,
    elo_from_score,
    los,
    pentanomial,
    score,
    sprt_decision,
    sprt_llr_pentanomial,
    sprt_llr_trinomial,
)


def test_score_and_draw_ratio():
    assert score(3, 2, 5) == pytest.approx(0.4)
    assert draw_ratio(3, 2, 5) == pytest.approx(0.2)
    assert score(0, 0, 0) == 0.5


def test_elo_from_score_by_hand():
    # -400 * log10(1/0.75 - 1) = 400 * log10(3) = 190.848...
    assert elo_from_score(0.75) == pytest.approx(190.848501, abs=1e-6)
    assert elo_from_score(0.25) == pytest.approx(-190.848501, abs=1e-6)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_elo_interval_by_hand():
    # W=6 D=2 L=2: mu = 0.7; per-game variance = (6*.09 + 2*.04 + 2*.49)/10 = 0.16;
    # stdev of the mean = sqrt(0.016) = 0.1264911; z = 1.9599640;
    # score bounds 0.7 -+ 0.2479180 = 0.4520820 and 0.9479180:
    # Elo = -400 * log10(1/p - 1): -400 * log10(1.2119884) = -33.400 and
    # -400 * log10(0.0549443) = 504.031, so the margin is (504.031 + 33.400) / 2 = 268.716;
    # the difference itself is 400 * log10(7/3) = 147.191.
    est = elo_estimate(6, 2, 2)
    assert est.diff == pytest.approx(147.191, abs=2e-3)
    assert est.margin == pytest.approx(268.716, abs=2e-3)


# Lines printed by cutechess-cli ("Score of A vs B: W - L - D", "Elo difference: x +/- y,
# LOS: z %, DrawRatio: r %").  cutechess rounds to one decimal and uses an approximate
# inverse error function, so margins may differ by one in the last digit.
CUTECHESS = [
    ((449, 276, 275), 60.7, 18.5, 100.0, 27.5),
    ((382, 320, 298), 21.6, 18.1, 99.0, 29.8),
    ((372, 322, 306), 17.4, 17.9, 97.1, 30.6),
    ((435, 293, 272), 49.7, 18.5, 100.0, 27.2),
]


@pytest.mark.parametrize("wld, diff, margin, los_pct, draw_pct", CUTECHESS)
def test_matches_cutechess_output(wld, diff, margin, los_pct, draw_pct):
    wins, losses, draws = wld
    est = elo_estimate(wins, draws, losses)
    assert est.diff == pytest.approx(diff, abs=0.051)
    assert est.margin == pytest.approx(margin, abs=0.11)
    assert 100 * los(wins, losses) == pytest.approx(los_pct, abs=0.051)
    assert 100 * draw_ratio(wins, draws, losses) == pytest.approx(draw_pct, abs=0.051)


def test_matches_fastchess_elo_wdl():
    est = elo_estimate(136, 111, 96)  # fastchess elo_test "EloWDL 2": Stats(W136, L96, D111)
    assert est.diff == pytest.approx(40.70, abs=0.01)
    assert est.margin == pytest.approx(30.43, abs=0.01)


def test_a_clean_sweep_has_an_infinite_difference_and_margin():
    est = elo_estimate(4, 0, 0)
    assert (est.diff, est.margin) == (math.inf, math.inf)


def test_los_by_hand():
    assert los(5, 5) == 0.5
    assert los(0, 0) == 0.5
    # W=10, L=0: Phi(10 / sqrt(10)) = Phi(3.1623) = 0.999217
    assert los(10, 0) == pytest.approx(0.999217, abs=1e-6)
    assert los(0, 10) == pytest.approx(1 - 0.999217, abs=1e-6)


def test_pentanomial_counts_pairs_by_outcome():
    pairs = [(1, 1), (1, 0.5), (0.5, 1), (1, 0), (0, 1), (0.5, 0.5), (0, 0.5), (0, 0)]
    penta = pentanomial(pairs)
    assert penta == Pentanomial(ll=1, ld=1, wl=2, dd=1, wd=2, ww=1)
    assert penta.by_score() == (1, 1, 3, 2, 1)
    assert penta.pairs == 8


def test_sprt_bounds():
    params = SprtParams(0, 10, 0.05, 0.05)
    assert params.lower == pytest.approx(math.log(0.05 / 0.95))
    assert params.upper == pytest.approx(math.log(0.95 / 0.05))
    assert params.upper == pytest.approx(2.944, abs=1e-3)
    assert sprt_decision(3.0, params) == "H1"
    assert sprt_decision(-3.0, params) == "H0"
    assert sprt_decision(0.5, params) is None


@pytest.mark.parametrize("kwargs", [dict(elo0=5, elo1=5), dict(alpha=0), dict(beta=1),
                                    dict(alpha=0.6, beta=0.5), dict(model="bayesian")])
def test_sprt_params_refuse_nonsense(kwargs):
    with pytest.raises(ValueError):
        SprtParams(**kwargs)


# fastchess' tests (app/tests/sprt_test.cpp): Stats(W, L, D) and pair counts.
FASTCHESS_TRINOMIAL = [
    ((36433, 36027, 68692), 0, 2, "normalized", 0.92),
    ((10871, 10650, 20431), -1.75, 0.25, "normalized", 2.30),
    ((21404, 21184, 40708), 0.5, 2.5, "logistic", -1.57),
    ((57433, 57030, 106593), 0, 2, "logistic", -2.59),
]
FASTCHESS_PENTANOMIAL = [
    (dict(ll=365, ld=16618, wl=36029, dd=200, wd=16974, ww=390), 0, 2, "normalized", 2.25),
    (dict(ll=127, ld=4883, wl=10311, dd=401, wd=5150, ww=104), -1.75, 0.25, "normalized", 3.01),
    (dict(ll=223, ld=9863, wl=20279, dd=1000, wd=10037, ww=246), 0.5, 2.5, "logistic", -3.07),
    (dict(ll=871, ld=26175, wl=55003, dd=980, wd=26678, ww=821), 0, 2, "logistic", -4.98),
]
# fastchess' two degenerate cases (all draws, all WW pairs) are left out: there its
# root finder stops before the estimate converges (an all-draws sample giving +2.97
# for H1 cannot be right: a score of exactly 0.5 is H0 itself).


@pytest.mark.parametrize("wld, elo0, elo1, model, expected", FASTCHESS_TRINOMIAL)
def test_sprt_trinomial_matches_fastchess(wld, elo0, elo1, model, expected):
    wins, losses, draws = wld
    llr = sprt_llr_trinomial(wins, draws, losses, SprtParams(elo0, elo1, model=model))
    assert llr == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("counts, elo0, elo1, model, expected", FASTCHESS_PENTANOMIAL)
def test_sprt_pentanomial_matches_fastchess(counts, elo0, elo1, model, expected):
    llr = sprt_llr_pentanomial(Pentanomial(**counts), SprtParams(elo0, elo1, model=model))
    assert llr == pytest.approx(expected, rel=0.01)


def test_sprt_logistic_agrees_with_the_normal_approximation():
    # For a large sample the GSPRT is close to the LLR of two normals with the sample
    # variance: N * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var).
    wins, draws, losses = 3400, 3000, 3600
    n = wins + draws + losses
    mean = (wins + draws / 2) / n
    var = (wins * (1 - mean) ** 2 + draws * (0.5 - mean) ** 2 + losses * mean ** 2) / n
    s0, s1 = 0.5, 1 / (1 + 10 ** (-5 / 400))
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    exact = sprt_llr_trinomial(wins, draws, losses, SprtParams(0, 5, model="logistic"))
    assert exact == pytest.approx(approx, rel=0.02)


def test_sprt_sign_follows_the_results():
    params = SprtParams(0, 10)
    good = Pentanomial(ll=10, ld=30, wl=20, dd=40, wd=50, ww=20)
    bad = Pentanomial(ll=20, ld=50, wl=20, dd=40, wd=30, ww=10)
    assert sprt_llr_pentanomial(good, params) > 0 > sprt_llr_pentanomial(bad, params)
