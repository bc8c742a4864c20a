"""A stand-in for Nsight Compute's Python report interface (`ncu_report`), for tests without it: a
"report" is a JSON file listing launches and their metrics, read through the same calls gpulab makes
of the real interface (load_report -> IContext -> IRange -> IAction -> IMetric). A file that is not
such JSON loads as an empty report, as the real interface loads a report it cannot read."""

import json


class IMetric:
    def __init__(self, spec: dict):
        self._spec = spec

    def unit(self):
        return self._spec.get("unit", "")

    def has_value(self):
        return "value" in self._spec

    def value(self, idx=None):
        return self._spec.get("value") if idx is None else self._spec["instances"][idx]

    def num_instances(self):
        return len(self._spec.get("instances", []))

    def has_correlation_ids(self):
        return "pcs" in self._spec

    def correlation_ids(self):
        return IMetric({"value": 0, "instances": self._spec["pcs"]}) if "pcs" in self._spec else None


class IAction:
    def __init__(self, spec: dict):
        self._spec = spec

    def name(self):
        return self._spec["name"]

    def metric_names(self):
        return tuple(self._spec["metrics"])

    def metric_by_name(self, name):
        return IMetric(self._spec["metrics"][name]) if name in self._spec["metrics"] else None

    def sass_by_pc(self, address):
        return self._spec.get("sass", {}).get(str(address), "")


class IRange:
    def __init__(self, actions):
        self._actions = actions

    def num_actions(self):
        return len(self._actions)

    def action_by_idx(self, idx):
        return IAction(self._actions[idx])


class IContext:
    def __init__(self, ranges):
        self._ranges = ranges

    def num_ranges(self):
        return len(self._ranges)

    def range_by_idx(self, idx):
        return IRange(self._ranges[idx])


def load_report(file_name):
    try:
        with open(file_name) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return IContext([])
    return IContext(data.get("ranges", []))
