"""The results so far and the report on them: score, Elo, pentanomial pairs, SPRT, forfeits."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..protocol.lines import MAX_LINE_BYTES
from .game import GameOutcome
from .stats import (
    Pentanomial,
    SprtParams,
    draw_ratio,
    elo_estimate,
    los,
    pentanomial,
    score,
    sprt_decision,
    sprt_llr_pentanomial,
)


@dataclass
class Tally:
    """Results so far, from engine 0's side."""

    names: tuple[str, str]
    sprt: SprtParams | None = None
    outcomes: list[GameOutcome] = field(default_factory=list)

    def add(self, outcome: GameOutcome) -> None:
        self.outcomes.append(outcome)

    def wdl(self, white: int | None = None) -> tuple[int, int, int]:
        """Engine 0's wins, draws, losses (only the games where engine ``white`` was White)."""
        points = [o.points for o in self.outcomes if white is None or o.spec.white == white]
        return points.count(1.0), points.count(0.5), points.count(0.0)

    def pentanomial(self) -> Pentanomial:
        """Pair counts over the rounds whose two games are both finished."""
        rounds: dict[int, list[float]] = {}
        for o in self.outcomes:
            rounds.setdefault(o.spec.round, []).append(o.points)
        return pentanomial([(p[0], p[1]) for p in rounds.values() if len(p) == 2])

    def llr(self) -> float | None:
        return sprt_llr_pentanomial(self.pentanomial(), self.sprt) if self.sprt else None

    def decision(self) -> str | None:
        llr = self.llr()
        return None if llr is None or self.sprt is None else sprt_decision(llr, self.sprt)

    def forfeits(self, engine: int) -> Counter[str]:
        return Counter(o.pgn.termination for o in self.outcomes if o.forfeit == engine)

    def stale_bestmoves(self, engine: int) -> int:
        return sum(o.stale_bestmoves[engine] for o in self.outcomes)

    def dropped_lines(self, engine: int) -> int:
        return sum(o.dropped_lines[engine] for o in self.outcomes)

    def score_line(self) -> str:
        """cutechess' ``Score of A vs B: W - L - D [score] N``."""
        wins, draws, losses = self.wdl()
        return (f"Score of {self.names[0]} vs {self.names[1]}: {wins} - {losses} - {draws}  "
                f"[{score(wins, draws, losses):.3f}] {wins + draws + losses}")

    def progress_line(self, outcome: GameOutcome) -> str:
        pgn = outcome.pgn
        line = (f"Finished game {outcome.spec.number} ({pgn.white} vs {pgn.black}, opening "
                f"{outcome.spec.opening}): {pgn.result} {{{pgn.result_comment}}} | "
                f"{self.score_line()}")
        llr = self.llr()
        if llr is not None and self.sprt is not None:
            line += f" | LLR {llr:.2f} ({self.sprt.lower:.2f}, {self.sprt.upper:.2f})"
        return line

    def summary_lines(self, scheduled: int) -> list[str]:
        wins, draws, losses = self.wdl()
        elo = elo_estimate(wins, draws, losses)
        penta = self.pentanomial()
        lines = [self.score_line()]
        for engine, colour in ((0, "White"), (1, "Black")):
            cw, cd, cl = self.wdl(white=engine)
            lines.append(f"...      {self.names[0]} playing {colour}: {cw} - {cl} - {cd}  "
                         f"[{score(cw, cd, cl):.3f}] {cw + cd + cl}")
        lines.append(f"Elo difference: {elo.diff:.1f} +/- {elo.margin:.1f}, "
                     f"LOS: {100 * los(wins, losses):.1f} %, "
                     f"DrawRatio: {100 * draw_ratio(wins, draws, losses):.1f} %")
        lines.append(f"Ptnml(0-2): {list(penta.by_score())} "
                     f"(pairs LL, LD, WL+DD, WD, WW; WL {penta.wl}, DD {penta.dd})")
        lines += self._sprt_lines()
        for engine in (0, 1):
            reasons = self.forfeits(engine)
            if reasons:
                detail = ", ".join(f"{why} {count}" for why, count in sorted(reasons.items()))
                lines.append(f"Forfeits by {self.names[engine]}: "
                             f"{sum(reasons.values())} ({detail})")
            stale = self.stale_bestmoves(engine)
            if stale:
                lines.append(f"Discarded from {self.names[engine]}: {stale} bestmove(s) "
                             f"that answered no go")
            dropped = self.dropped_lines(engine)
            if dropped:
                lines.append(f"Dropped from {self.names[engine]}: {dropped} line(s) over "
                             f"{MAX_LINE_BYTES} bytes")
        lines.append(f"{len(self.outcomes)} of {scheduled} games finished.")
        return lines

    def _sprt_lines(self) -> list[str]:
        llr, params = self.llr(), self.sprt
        if llr is None or params is None:
            return []
        verdict = {"H1": "H1 was accepted", "H0": "H0 was accepted", None: "no decision yet"}
        return [f"SPRT ({params.model}, pentanomial): elo0 {params.elo0:g}, elo1 {params.elo1:g}, "
                f"alpha {params.alpha:g}, beta {params.beta:g}: llr {llr:.2f}, "
                f"lbound {params.lower:.2f}, ubound {params.upper:.2f} - "
                f"{verdict[self.decision()]}"]
