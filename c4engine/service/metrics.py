"""The service's counters, written in Prometheus' text exposition format (version 0.0.4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

SOLVE_BUCKETS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """Requests by route and status, answers by source, solve times, and gauges read
    when scraped (queue depth, cache rows)."""

    def __init__(self, gauges: dict[str, tuple[str, Callable[[], float]]]) -> None:
        self.requests: Counter[tuple[str, int]] = Counter()
        self.answers: Counter[tuple[str, bool]] = Counter()
        self.solve_buckets = [0] * len(SOLVE_BUCKETS)
        self.solve_count = 0
        self.solve_sum = 0.0
        self.gauges = gauges

    def count_request(self, route: str, status: int) -> None:
        self.requests[(route, status)] += 1

    def count_answer(self, source: str, exact: bool) -> None:
        self.answers[(source, exact)] += 1

    def count_solve(self, seconds: float) -> None:
        self.solve_count += 1
        self.solve_sum += seconds
        for i, bound in enumerate(SOLVE_BUCKETS):
            if seconds <= bound:
                self.solve_buckets[i] += 1

    def text(self) -> str:
        lines = ["# HELP c4engine_requests_total HTTP requests answered, by route and status.",
                 "# TYPE c4engine_requests_total counter"]
        lines += [f'c4engine_requests_total{{route="{route}",status="{status}"}} {count}'
                  for (route, status), count in sorted(self.requests.items())]
        lines += ["# HELP c4engine_answers_total Positions answered, by where the answer came from "
                  "(a cache hit is source=\"cache\") and whether it was exact.",
                  "# TYPE c4engine_answers_total counter"]
        lines += [f'c4engine_answers_total{{source="{source}",exact="{str(exact).lower()}"}} {count}'
                  for (source, exact), count in sorted(self.answers.items())]
        lines += ["# HELP c4engine_solve_seconds Time of each solve on a worker.",
                  "# TYPE c4engine_solve_seconds histogram"]
        lines += [f'c4engine_solve_seconds_bucket{{le="{bound}"}} {count}'
                  for bound, count in zip(SOLVE_BUCKETS, self.solve_buckets)]
        lines += [f'c4engine_solve_seconds_bucket{{le="+Inf"}} {self.solve_count}',
                  f"c4engine_solve_seconds_sum {self.solve_sum:.6f}", f"c4engine_solve_seconds_count {self.solve_count}"]
        for name, (help_text, read) in self.gauges.items():
            lines += [f"# HELP c4engine_{name} {help_text}", f"# TYPE c4engine_{name} gauge",
                      f"c4engine_{name} {read():g}"]
        return "\n".join(lines) + "\n"
