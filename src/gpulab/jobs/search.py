"""How a tune chooses the configs it times: the strategy, and the budget that stops it.

    grid    every feasible config, in the product's order (the config the card runs today first)
    random  a sample drawn with a seed (today's config first): what a tune did past its limit
    bayes   a tree-structured Parzen estimator (TPE: J. Bergstra, R. Bardenet, Y. Bengio and
            B. Kegl, "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011,
            https://papers.nips.cc/paper/4443) through optuna's ask-and-tell interface
            (https://optuna.readthedocs.io): asked for a few configs at a time, told each one's
            score as it comes, so a tune keeps its own loop (in process, or on a Dask cluster)

Why optuna and not Kernel Tuner's strategies (https://github.com/KernelTuner/kernel_tuner): Kernel
Tuner's strategies drive the loop themselves (they call a cost function, or Kernel Tuner's own
runner, config by config), while a gpulab tune must time through its own lab, save each row as it
comes, fan out over a Dask cluster and resume from its CSV. optuna's ask/tell hands the loop back:
a config is asked, timed however gpulab times it, and told; rows an earlier tune saved are added
to the study as finished trials before the first ask.

Constraints. A config the variant's constraints reject is never compiled and never told as a
trial: the search space is restricted up front to the feasible configs. TPE proposes a point of
the whole product (each param an index into its choices, so neighbouring tile sizes are near); a
proposal that is infeasible, or was timed already, is told back as failed (TPE ignores failed
trials, so it learns nothing false from them) and the config nearest to it (in index steps) among
the feasible ones not yet tried is asked in its place (enqueued, so the study records the config
that really ran). A config that compiles but cannot be used (it spills, fails its check, faults)
costs an evaluation and is told as pruned: TPE counts it among the bad ones.

Budget: a number of configs (every config the tune scores, those resumed from its CSV included,
so re-running a stopped tune ends where the first run would have), or a time ('90s', '10m', '1h':
no config starts after it; the one under way finishes).
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
import time
import warnings

import numpy as np

from gpulab.errors import GpulabError
from gpulab.experiments.base import Params

STRATEGIES = ("grid", "random", "bayes")
OPTUNA_HINT = "--strategy bayes needs optuna: pip install 'gpulab[tune]' (or pip install 'optuna>=4')"
DEFAULT_BUDGET = 120  # configs: what `gpulab tune --limit` defaulted to


@dataclasses.dataclass(frozen=True)
class Budget:
    """When a search stops: after `configs` configs, or once `seconds` have passed (one of them)."""

    configs: int | None = DEFAULT_BUDGET
    seconds: float | None = None

    @classmethod
    def parse(cls, value) -> "Budget":
        """40 or '40': configs; '90s', '10m', '1.5h': time. Anything else: one line saying so."""
        if isinstance(value, Budget):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                raise GpulabError(f"budget must be at least 1 config; got {value}")
            return cls(configs=value)
        text = str(value).strip().lower()
        if text.isdigit():
            return cls.parse(int(text))
        if m := re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smh])", text):
            seconds = float(m[1]) * {"s": 1, "m": 60, "h": 3600}[m[2]]
            if seconds > 0:
                return cls(configs=None, seconds=seconds)
        raise GpulabError(f"budget takes a number of configs (40) or a time (90s, 10m, 1h); got {value!r}")

    @property
    def label(self) -> str:
        return f"{self.configs} configs" if self.configs is not None else f"{self.seconds:g} s"

    def deadline(self) -> float | None:
        """The monotonic time past which no config starts (None: a budget of configs)."""
        return None if self.seconds is None else time.monotonic() + self.seconds


def check_strategy(strategy: str | None) -> None:
    if strategy is not None and strategy not in STRATEGIES:
        raise GpulabError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")


def resolve(strategy: str | None, feasible: int, budget: Budget) -> str:
    """The strategy a tune runs: the one asked for; else grid when every feasible config fits in a
    budget of configs, random past it (what a tune did before it had strategies) or on a time budget."""
    check_strategy(strategy)
    if strategy is None:
        return "grid" if budget.configs is not None and feasible <= budget.configs else "random"
    if strategy == "grid" and budget.configs is not None and feasible > budget.configs:
        raise GpulabError(f"strategy grid times every config: {feasible} feasible configs are over the budget of "
                          f"{budget.configs}; raise the budget, restrict the params, or use strategy random or bayes")
    return strategy


def listed(strategy: str, configs: list[Params], budget: Budget, first: Params | None, seed: int) -> list[Params]:
    """The configs of a list strategy, in the order they are timed, `first` leading if feasible:
    grid's product order (the whole space fits in the budget: resolve() saw to it), or random's
    sample drawn with `seed` (on a time budget, every feasible config in a random order). Past the
    budget, random with the generator started at zero is the sample a tune drew before it had
    strategies."""
    head = [first] if first is not None and first in configs else []
    rest = [c for c in configs if c != first]
    if strategy == "grid":
        return head + rest
    n = len(rest) if budget.configs is None else max(min(budget.configs - len(head), len(rest)), 0)
    return head + random.Random(seed).sample(rest, n)


def startup_trials(budget: Budget) -> int:
    """Random configs TPE asks before it models anything: a third of a budget of configs, between 3
    and optuna's own default of 10 (a model of fewer than 3 points is noise; a small budget spent
    on 10 random configs leaves TPE little to do)."""
    if budget.configs is None:
        return 10
    return max(3, min(10, budget.configs // 3))


def load_optuna():
    """optuna, imported on the first bayes search only: an optional dependency (the `tune` extra)
    that takes a second to import."""
    try:
        import optuna
    except ImportError:
        raise GpulabError(OPTUNA_HINT) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no line per trial: the tune prints its own
    return optuna


class BayesSearch:
    """TPE over the params' choices (optuna's TPESampler, multivariate: params are modelled jointly,
    the way tile sizes and stages interact), restricted to `feasible` (see the module's docstring).

    axes: {name: choices} in the variant's order (a param with one choice is not searched);
    first: a config to ask before anything else (the card's current default), if feasible."""

    def __init__(self, axes: dict[str, tuple[int, ...]], feasible: list[Params], seed: int = 0,
                 first: Params | None = None, startup: int = 10):
        optuna = load_optuna()
        self._optuna = optuna
        self.names = [n for n, choices in axes.items() if len(choices) > 1]
        self.axes = {n: tuple(axes[n]) for n in self.names}
        self.fixed = {n: c[0] for n, c in axes.items() if len(c) == 1}
        self.distributions = {n: optuna.distributions.IntDistribution(0, len(c) - 1) for n, c in self.axes.items()}
        self.feasible = {self.key(p): p for p in feasible}
        self.keys = np.array(list(self.feasible), dtype=np.int64).reshape(len(self.feasible), len(self.names))
        self.tried = np.zeros(len(self.keys), dtype=bool)
        self.index = {k: i for i, k in enumerate(self.feasible)}
        self.pending: dict[tuple, object] = {}  # key -> the trial asked for it, until told
        self.told = 0
        self.startup = startup
        self.rng = random.Random(seed)
        with warnings.catch_warnings():  # optuna 4 calls multivariate TPE experimental
            warnings.simplefilter("ignore")
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, multivariate=True,
                                                 constant_liar=True)
        self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self.first = first if first is not None and self.key(first) in self.feasible else None

    def key(self, params: Params) -> tuple[int, ...]:
        """A config as the study sees it: each searched param's index among its choices."""
        return tuple(self.axes[n].index(params[n]) for n in self.names)

    def knows(self, params: Params) -> bool:
        """Whether `params` is one of the feasible configs this search chooses from."""
        return all(params.get(n) in self.axes[n] for n in self.names) and self.key(params) in self.index

    def config(self, key: tuple[int, ...]) -> Params:
        return self.feasible[key]

    @property
    def left(self) -> int:
        """Feasible configs not asked or told yet."""
        return int((~self.tried).sum())

    def batch(self, parallel: int = 1) -> int:
        """How many configs to ask next: the random start all at once (nothing is learnt between
        them), then `parallel` (the GPUs that time them; constant liar keeps a batch spread out)."""
        start = self.startup - self.told - len(self.pending)
        return max(start, parallel, 1)

    def ask(self, n: int) -> list[Params]:
        """Up to `n` feasible configs never asked or told before ([] once every one has been)."""
        out = []
        for _ in range(n):
            if not self.left:
                break
            key = self._ask_one()
            self.tried[self.index[key]] = True
            out.append(self.config(key))
        return out

    def _ask_one(self) -> tuple[int, ...]:
        if self.first is not None:
            if not self.tried[self.index[self.key(self.first)]]:  # (a resumed tune may know it already)
                self.study.enqueue_trial(dict(zip(self.names, self.key(self.first))))
            self.first = None
        trial = self.study.ask(self.distributions)
        key = tuple(trial.params[n] for n in self.names)
        if key not in self.index or self.tried[self.index[key]]:
            self.study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
            key = self._nearest_untried(key)
            self.study.enqueue_trial(dict(zip(self.names, key)))
            trial = self.study.ask(self.distributions)
            assert tuple(trial.params[n] for n in self.names) == key, "optuna did not ask the enqueued config"
        self.pending[key] = trial
        return key

    def _nearest_untried(self, key: tuple[int, ...]) -> tuple[int, ...]:
        """The feasible config not tried yet with the fewest index steps from `key`; ties drawn
        with the search's seed."""
        untried = np.flatnonzero(~self.tried)
        steps = np.abs(self.keys[untried] - np.array(key, dtype=np.int64)).sum(axis=1)
        nearest = untried[steps == steps.min()]
        return tuple(int(x) for x in self.keys[self.rng.choice(list(nearest))])

    def tell(self, params: Params, value: float | None) -> None:
        """A config's score (higher is better), or None where it could not be used. A config this
        search did not ask (a row a resumed tune found) is added to the study as a finished trial."""
        if not self.knows(params):
            return  # a row of a config outside this search's space says nothing about it
        key = self.key(params)
        TrialState = self._optuna.trial.TrialState
        if (trial := self.pending.pop(key, None)) is not None:
            if value is None or not math.isfinite(value):
                self.study.tell(trial, state=TrialState.PRUNED)
            else:
                self.study.tell(trial, float(value))
        else:
            if key in self.index:
                self.tried[self.index[key]] = True
            finished = self._optuna.trial.create_trial(
                params=dict(zip(self.names, key)), distributions=self.distributions,
                **({"state": TrialState.PRUNED} if value is None or not math.isfinite(value) else {"value": float(value)}))
            self.study.add_trial(finished)
        self.told += 1


def bayes_search(variant, overrides: dict[str, tuple[int, ...]], feasible: list[Params], budget: Budget,
                 seed: int, first: Params | None) -> BayesSearch:
    """A BayesSearch over a variant's params (`overrides` restricting their choices, as -p does)."""
    axes = {p.name: tuple(overrides.get(p.name, p.choices)) for p in variant.params}
    return BayesSearch(axes, feasible, seed, first, startup_trials(budget))
