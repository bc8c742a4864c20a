"""Which of the best-row model's estimates to trust first: one whose config the card timed at the
shape, else one it timed at a shape of the same kind, over an untimed one the model puts only a
little ahead (gpulab.jobs.best reads it; the rule's rationale is in MEASURED_EDGE's comment)."""

from __future__ import annotations

from gpulab.jobs.cost import Estimate

MEASURED_HERE = "measured for this config at "
# How much faster (modelled) a config never timed must be to win over one timed (prefer_measured):
# under it, a lead is the model's noise. Leaving each tuned shape out of the H200's tunes in turn and
# pairing the configs timed there (notebook/probes/replay_picks.py edge, 2026-12-05), a config never
# timed elsewhere that the model put 8-12% ahead of one timed elsewhere ran 1.05x its time (geometric
# mean of 320 pairs), 12-16% ahead 0.98x, 16-20% ahead 0.93x: the lead pays from about 13%.
MEASURED_EDGE = 0.15


def prefer_measured(estimates: list[Estimate], timed_alike=lambda e: False) -> Estimate:
    """The best estimate, except that one whose config was timed at the shape (Selector.measured_here)
    wins over those within MEASURED_EDGE of it whose configs were not: they differ by less than the
    spread of the efficiencies they borrow (stencil's shfl PER=16, never timed at 16777216, came out
    1.8% ahead of PER=8, timed there, on PER=8's own run of R=8). Failing that, one timed on this card
    at a shape of the same kind (`timed_alike`: Selector.timed_alike) wins likewise: gemm_bf16's d0 in
    G=4 U=1, never timed, came out 0.7% ahead of G=2 U=2 at 1x10240x8192 and ran 1.32x its time
    there, and sgemm's v13 in 128-row tiles, never timed, 5-7% ahead of its 64-row tiles at 128
    tokens on a count of warps that registers would have cut (H200, 2026-12-04)."""
    best = min(estimates, key=lambda e: e.order)
    near = [e for e in estimates if e.seconds <= best.seconds * (1 + MEASURED_EDGE)]
    for evidence in (lambda e: e.efficiency_from.startswith(MEASURED_HERE), timed_alike):
        timed = [e for e in near if evidence(e)]
        if timed:
            return min(timed, key=lambda e: e.order)
    return best
