"""One run named on a command line, read the same way by `gpulab profile`, `compare` and `predict`
and by the program Nsight Compute runs (gpulab.run.ncu_child): an experiment, a variant with optional
inline params (`v1` or `v1:TILE=16,BM=64`), `--param NAME=VALUE` flags (one value each) and a shape.
In the variant's place a vendor library the experiment runs as its baseline (`cublas`) names that
library's row: no params, no access model, profiled like a variant.
`run_argv` writes a RunSpec back as those words, so the profiled program rebuilds exactly the spec
the parent holds (every param explicit: defaults cannot drift between the two processes)."""

from __future__ import annotations

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.run.lab import RunSpec, param_values, parse_param_overrides


def parse_variant_arg(text: str) -> tuple[str, dict[str, int]]:
    """'v1' -> ('v1', {}); 'v1:TILE=16' or 'v1:TILE=16,BM=64' -> ('v1', {'TILE': 16, 'BM': 64})."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise GpulabError(f"'{text}' names no variant; write it as VARIANT or VARIANT:NAME=VALUE,...")
    params: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise GpulabError(f"'{text}': params after ':' look like NAME=VALUE (e.g. v1:TILE=16)")
        try:
            params[k.strip().upper()] = int(v)
        except ValueError:
            raise GpulabError(f"'{text}': {k.strip()}={v} is not a whole number") from None
    return name.strip(), params


def single_params(texts: list[str]) -> dict[str, int]:
    """--param NAME=V (repeatable), one value each."""
    return one_config(parse_param_overrides(texts))


def one_config(params) -> dict[str, int]:
    """The params of one run: {'TILE': 16} (a value may come as a one-element tuple, as
    parse_param_overrides gives them), checked as param_values checks them, one value each."""
    out = {}
    for name, values in param_values(params).items():
        if len(values) != 1:
            raise GpulabError(f"param {name}: one config at a time (one value, e.g. {name}={values[0]})")
        out[name] = values[0]
    return out


def make_spec(experiment, variant: str, params: dict[str, int], shape) -> RunSpec:
    """A RunSpec for one (experiment, variant, params, shape); params missing take their default.
    `experiment` is an Experiment or its name; `shape` is a Shape, its text ('512x512x512'), or None
    for the experiment's first default."""
    exp = get_experiment(experiment) if isinstance(experiment, str) else experiment
    if shape is None:
        shape = exp.default_shape_list()[0]
    elif isinstance(shape, str):
        shape = exp.parse_shape(shape)
    if variant in exp.vendor_baselines():
        if params:
            raise GpulabError(f"{variant} is the vendor library {exp.name} runs beside its variants: it takes "
                              f"no params (drop {', '.join(sorted(params))})")
        return RunSpec(exp, None, {}, shape, library=variant)
    v = exp.variant(variant)
    for name in params:
        v.param(name)  # a clear error for a param this variant lacks
    (chosen,) = v.param_grid({k: (val,) for k, val in params.items()})
    spec = RunSpec(exp, v, chosen, shape)
    reason = v.constraints(chosen, shape)
    if reason:
        raise GpulabError(f"{spec.label} cannot run: {reason}")
    return spec


def spec_for(experiment, variant_text: str, params: dict[str, int], shape) -> RunSpec:
    """The RunSpec of EXPERIMENT VARIANT[:NAME=V,...] with `params` ({'TILE': 16}) at `shape`."""
    if not isinstance(variant_text, str) or not variant_text.strip():
        raise GpulabError(f"a variant is named by text, e.g. 'v1' or 'v1:TILE=16'; got {variant_text!r:.60}")
    name, inline = parse_variant_arg(variant_text)
    flags = one_config(params)
    clash = set(inline) & set(flags)
    if clash:
        raise GpulabError(f"{', '.join(sorted(clash))} given both in '{variant_text}' and separately; give it once")
    return make_spec(experiment, name, inline | flags, shape)


def run_argv(spec: RunSpec) -> list[str]:
    """The words the child reads back as `spec`: EXPERIMENT VARIANT [--kernel FILE.cu ...]
    --param NAME=V ... --shape S (a copy's one-file variants as the files that declare them)."""
    argv = [spec.experiment.name, spec.name]  # a variant's name, or the library's
    for path in spec.experiment.kernel_files:  # one-file variants (--kernel): the child adds them too
        argv += ["--kernel", str(path)]
    for name, value in spec.params.items():
        argv += ["--param", f"{name}={value}"]
    return argv + ["--shape", spec.shape.label]
