"""The registry: every experiment by name, in the order `gpulab run` takes them.

Each experiment is a subpackage exposing EXPERIMENT (an Experiment instance). This list is the
single source of the CLI's choices, the reports and the tests: register a new experiment here.
"""

from __future__ import annotations

import importlib

from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment

EXPERIMENT_MODULES = ("sgemm", "coalesce", "stencil", "grayscale")


def all_experiments() -> list[Experiment]:
    return [importlib.import_module(f"gpulab.experiments.{m}").EXPERIMENT for m in EXPERIMENT_MODULES]


def get_experiment(name: str) -> Experiment:
    for exp in all_experiments():
        if exp.name == name:
            return exp
    raise GpulabError(
        f"unknown experiment '{name}'; choose from " + ", ".join(e.name for e in all_experiments())
    )
