"""What every benchmark reports: latency percentiles and throughput of one scenario."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Figures:
    target: str
    scenario: str
    concurrency: int
    requests: int
    p50_ms: float
    p95_ms: float
    requests_per_s: float


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
