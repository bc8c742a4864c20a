"""A against B: is one kernel faster than another, here, now? Two runs of one experiment at one shape
(two variants, two configs of one, or a variant and the vendor library) checked, then launched in
interleaved rounds on the same inputs, each launch behind the L2 flush and the hold kernel as every
timing (gpulab.gpu.timing.Window), A first in even rounds and B first in odd ones. A round's ratio
time_B / time_A is taken on one card state, so what drifts between rounds (clocks, heat, a neighbour)
cancels in it; the verdict is read from the median of those ratios and its order-statistics
interval (gpulab.gpu.stats.verdict: why those and not a bootstrap).

Rounds go on until the ratio's interval is within half the resolution (`noise`) of the ratio, or
the budget of timed device time ends: a difference of one and a half resolutions is then told apart
from none. After the rounds, one more round runs on fresh inputs into poisoned outputs and both are
checked again, as a bench row's last timed launch is (gpulab.run.lab.Lab.time).

Two rows from two `gpulab bench` commands differ by the card's drift between them as well as by the
kernels (on the H200 the SM clock follows power: results/h200/ceilings.csv recorded cuBLAS at 8192^3
at 1,710 and 1,725 MHz against the card's 1,980); this is the command that compares.
"""

from __future__ import annotations

import dataclasses
import statistics
import uuid
from pathlib import Path
from typing import Callable

from gpulab.errors import GpulabError
from gpulab.gpu import nvml, seam
from gpulab.gpu.stats import Verdict, rounds_done, summarize, verdict
from gpulab.gpu.timing import Window, reset_persisting_l2, warm_up
from gpulab.gpu.launch import synchronize
from gpulab.records import upsert
from gpulab.run.args import make_spec, parse_variant_arg
from gpulab.run.lab import RECHECK_SEED, TIMING_SEED, Lab, RunSpec, constraint_reason, refill_inputs


@dataclasses.dataclass(frozen=True)
class AbPolicy:
    noise: float = 0.005  # the resolution: a difference within it is 'same within noise'
    warmup_ms: float = 30.0  # both warmed up, in turn, for this much device time
    budget_ms: float = 2000.0  # timed device time of both together, at most ...
    min_rounds: int = 10  # ... and at least this many rounds
    max_rounds: int = 2000
    flush_l2: bool = True


@dataclasses.dataclass
class AbResult:
    a: RunSpec
    b: RunSpec
    times_a: list[float]
    times_b: list[float]
    verdict: Verdict
    hit_budget: bool  # the budget ended before the ratio's interval was within half the resolution
    card: dict  # gpulab.gpu.nvml.card_columns over all the rounds
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def same_run(self) -> bool:
        """A and B are one run (an A/A test: it measures the timer's noise and should say 'same')."""
        return self.a.label == self.b.label

    def names(self) -> tuple[str, str]:
        """What a sentence calls A and B: the variant and its params ('v13 BM=128 ...'), or 'A' and
        'B' where those are the same words."""
        words = [" ".join(filter(None, (spec.name, spec.variant.params_label(spec.params) if spec.variant else "")))
                 for spec in (self.a, self.b)]
        return ("A", "B") if words[0] == words[1] else (words[0], words[1])

    def sentence(self) -> str:
        """The verdict in one line (gpulab.gpu.stats.Verdict.sentence) with A's and B's names."""
        return self.verdict.sentence(*self.names())

    def rows(self, env: dict) -> list[dict]:
        """One record per side: its own median, interval and range over the rounds, and the ratio
        B / A with its interval and the verdict on both (each row stands alone in a CSV)."""
        v = self.verdict
        shared = {"ab_id": self.id, "ab_ratio": v.ratio, "ab_ratio_ci_low": v.low, "ab_ratio_ci_high": v.high,
                  "ab_verdict": v.word, "ab_resolution": v.resolution, "hit_budget": self.hit_budget}
        out = []
        for side, spec, times in (("A", self.a, self.times_a), ("B", self.b, self.times_b)):
            s = summarize(times)
            out.append(spec.base_record() | {
                "side": side, "time_ms": s.median, "time_min_ms": s.minimum, "time_max_ms": s.maximum, "reps": s.n,
                "l2_flushed": True, "time_ci_low_ms": s.ci_low, "time_ci_high_ms": s.ci_high,
                "rel_noise": s.rel_noise} | shared | self.card | env)
        return out


def specs(exp, a: str, b: str, params: dict[str, int], shape) -> tuple[RunSpec, RunSpec]:
    """A and B as RunSpecs: VARIANT[:NAME=V,...] or a vendor library's name each; `params`
    ({'BK': 16}, one value each) apply to each side that has them (an error where neither has)."""
    flags = dict(params)
    used: set[str] = set()
    out = []
    for text in (a, b):
        name, inline = parse_variant_arg(text)
        if name in exp.vendor_baselines():
            mine: dict[str, int] = {}
        else:
            have = {p.name for p in exp.variant(name).params}  # an unknown variant: its one-line error
            mine = {k: v for k, v in flags.items() if k in have}
            if clash := sorted(set(inline) & set(mine)):
                raise GpulabError(f"{', '.join(clash)} given both in '{text}' and separately; give it once")
        used |= set(mine)
        out.append(make_spec(exp, name, inline | mine, shape))
    if unused := sorted(set(flags) - used):
        raise GpulabError(f"neither {a} nor {b} has a param {unused[0]}: drop it")
    return out[0], out[1]


def run(lab: Lab, a: RunSpec, b: RunSpec, policy: AbPolicy = AbPolicy(),
        status: Callable[[str], None] | None = None) -> AbResult:
    """Check A and B, then time them in interleaved rounds (see the module's docstring); `status`
    hears each step."""
    cupy = seam.cupy()
    say = status or (lambda text: None)
    for side, spec in (("A", a), ("B", b)):
        if reason := constraint_reason(spec, lab.arch):
            raise GpulabError(f"{side} ({spec.label}) cannot run here: {reason}")
        lab.ensure_fits(spec)
    for side, spec in (("A", a), ("B", b)):
        say(f"checking {side}: {spec.label}")
        result = lab.verify(spec)
        if not result.ok or (spec.variant is not None and spec.variant.expected_wrong):
            raise GpulabError(f"{side} ({spec.label}) is wrong ({result.describe()}); ab compares correct kernels: "
                              "fix it first")

    inputs = lab.device_inputs(a, exact=False, seed=lab.options.seed + TIMING_SEED)
    outs = [a.experiment.output(a.shape, cupy), b.experiment.output(b.shape, cupy)]
    flusher = lab.l2_flusher() if policy.flush_l2 else None
    windows = [Window(lab.launcher(spec, inputs, out), flusher) for spec, out in zip((a, b), outs)]
    reset_persisting_l2()
    say(f"timing {a.name} and {b.name} in interleaved rounds")
    warm_up(windows, policy.warmup_ms)

    times: tuple[list[float], list[float]] = ([], [])
    ratios: list[float] = []

    def one_round() -> None:
        order = (0, 1) if len(ratios) % 2 == 0 else (1, 0)
        for i in order:
            windows[i].queue()
        got = {i: windows[i].elapsed_ms() for i in order}
        times[0].append(got[0])
        times[1].append(got[1])
        ratios.append(got[1] / got[0])

    with nvml.Watch() as card:
        stop, met = False, False
        while not stop:
            one_round()
            stop, met = rounds_done(ratios, sum(times[0]) + sum(times[1]), policy.noise, policy.budget_ms,
                                    policy.min_rounds, policy.max_rounds)
        # The last round: fresh inputs in place of the timed ones, poisoned outputs, both checked after.
        refill_inputs(inputs, lab.device_inputs(a, exact=False, seed=lab.options.seed + RECHECK_SEED))
        for spec, out in zip((a, b), outs):
            cupy.copyto(out, spec.experiment.output(spec.shape, cupy))
        one_round()
    synchronize(f"{a.label} against {b.label}")
    for side, spec, out in (("A", a, outs[0]), ("B", b, outs[1])):
        after = spec.experiment.check(out, inputs, spec.shape, False, cupy)
        if not after.ok:
            raise GpulabError(
                f"{side} ({spec.label}) gave a wrong output on its last timed launch, on fresh inputs into a poisoned "
                f"output ({after.describe()}): it does not do all its work on every launch, so its time is not a "
                f"time of the work (median {statistics.median(times[0 if side == 'A' else 1]):.4g} ms)")
    return AbResult(a, b, times[0], times[1], verdict(ratios, policy.noise), not met, card.columns())


# A/B records join one CSV run after run: a run's two rows are keyed by its id and side.
def save(path: Path, rows: list[dict]) -> Path:
    upsert(path, rows, key=lambda r: (str(r.get("ab_id")), str(r.get("side"))), required=("ab_id", "side"))
    return path
