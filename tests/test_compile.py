"""Compilation needs no GPU: every registered variant compiles for sm_90 without spills, the ptxas
report is parsed, errors carry NVRTC's file and line, and the cache is keyed by what matters."""

import pytest

from gpulab.errors import CompileError, GpulabError
from gpulab.experiments import all_experiments
from gpulab.gpu import compile as gcompile
from gpulab.run.lab import RunSpec, compile_record

# Recorded from NVRTC 13.5 compiling a kernel for sm_90 with -Xptxas=-v.
PTXAS_LOG = """ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function 'sgemm' for 'sm_90'
ptxas info    : Function properties for sgemm
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 16384 bytes smem, 400 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compile time = 40.123 ms
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers, 368 bytes cmem[0]
"""


def test_parse_ptxas_log():
    parsed = gcompile.parse_ptxas_log(PTXAS_LOG)
    s = parsed["sgemm"]
    assert (s.registers, s.barriers, s.smem_static_bytes) == (168, 1, 16384)
    assert (s.stack_frame_bytes, s.spill_stores_bytes, s.spill_loads_bytes) == (24, 8, 12)
    assert s.cmem_bytes == 408
    o = parsed["other"]
    assert (o.registers, o.barriers, o.smem_static_bytes, o.cmem_bytes) == (10, 0, 0, 368)


def _every_config():
    for exp in all_experiments():
        shape = exp.default_shape_list()[0]
        for v in exp.variants:
            grid = v.param_grid(dict(v.sweep)) if v.sweep else [v.default_params()]
            for params in grid:
                yield pytest.param(RunSpec(exp, v, params, shape), id=f"{exp.name}-{v.name}-{v.params_label(params)}")


@pytest.mark.parametrize("spec", list(_every_config()))
def test_every_variant_compiles_for_sm90_without_spills(spec, tmp_path, monkeypatch):
    record = compile_record(spec, "sm_90")
    assert not record.get("skip_reason"), record.get("skip_reason")
    assert record["spill_stores_bytes"] == 0 and record["spill_loads_bytes"] == 0
    assert record["reg_per_thread"] > 0


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPULAB_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_compile_error_shows_file_and_line(fresh_cache):
    src = fresh_cache / "broken.cu"
    src.write_text('extern "C" __global__ void k(float* a) {\n  a[0] = undefined_name;\n}\n')
    with pytest.raises(CompileError) as info:
        gcompile.compile_kernel(src, "k")
    message = str(info.value)
    assert "broken.cu:2: error" in message and "undefined_name" in message
    assert "\n" not in message  # one line: the CLI shows it as it is


def test_missing_entry_is_a_clear_error(fresh_cache):
    src = fresh_cache / "k.cu"
    src.write_text('extern "C" __global__ void k(float* a) { a[0] = 1.f; }\n')
    with pytest.raises(CompileError, match="no kernel named 'sgemm'"):
        gcompile.compile_kernel(src, "sgemm")


def test_cache_is_keyed_by_params_and_arch(fresh_cache):
    src = fresh_cache / "k.cu"
    src.write_text('extern "C" __global__ void k(float* a) { a[threadIdx.x] = VALUE; }\n')
    a = gcompile.compile_kernel(src, "k", {"VALUE": 1})
    again = gcompile.compile_kernel(src, "k", {"VALUE": 1})
    b = gcompile.compile_kernel(src, "k", {"VALUE": 2})
    c = gcompile.compile_kernel(src, "k", {"VALUE": 1}, arch="sm_80")
    assert a.cubin_path == again.cubin_path
    assert len({a.cubin_path, b.cubin_path, c.cubin_path}) == 3
    src.write_text('extern "C" __global__ void k(float* a) { a[threadIdx.x] = VALUE + 1; }\n')
    assert gcompile.compile_kernel(src, "k", {"VALUE": 1}).cubin_path != a.cubin_path


def test_bad_arch_is_refused(fresh_cache):
    with pytest.raises(GpulabError, match="sm_XY"):
        gcompile.compile_kernel(fresh_cache / "x.cu", "k", arch="hopper")


@pytest.mark.parametrize("version, expected", [("12.8", []), ("12.9", ["--no-cache"]), ("13.0", ["--no-cache"])])
def test_nvrtc_own_cache_is_off_where_it_exists(version, expected):
    """A hit in NVRTC's own cache (12.9+, with a driver) skips ptxas and its report."""
    assert gcompile.own_cache_options(version) == expected


def test_nvrtc_is_asked_not_to_cache_and_each_kernel_compiles_once(fresh_cache, monkeypatch):
    src = fresh_cache / "k.cu"
    src.write_text('extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1.f; }\n')
    calls = []
    real = gcompile._run_nvrtc

    def spy(text, name, options):
        calls.append(options)
        return real(text, name, options)

    monkeypatch.setattr(gcompile, "_run_nvrtc", spy)
    first = gcompile.compile_kernel(src, "k")
    second = gcompile.compile_kernel(src, "k")
    assert len(calls) == 1 and second.resources == first.resources
    assert set(gcompile.own_cache_options(gcompile.nvrtc_version())) <= set(calls[0])


def test_a_variant_newer_than_the_arch_says_why_and_every_other_compiles_for_sm_75(fresh_cache):
    """NVRTC 13 targets sm_75 (the T4 of the sources in docs/SOURCES.md) and newer; only what declares min_sm is left out."""
    for exp in all_experiments():
        shape = exp.shape(*exp.default_shapes[0])
        for v in exp.variants:
            reason = v.arch_reason("sm_75")
            if v.arch_specific:  # sm_90a code (wgmma) runs on sm_90 alone
                assert reason == f"needs sm_{v.min_sm}a ({v.min_sm_for}), whose code runs on sm_{v.min_sm} only; this is sm_75"
                assert v.arch_reason(f"sm_{v.min_sm}") is None and v.arch_reason("sm_100a") is not None
                continue
            if v.min_sm:
                assert reason == f"needs sm_{v.min_sm} or newer ({v.min_sm_for}); this is sm_75"
                assert v.arch_reason("sm_90") is None and v.arch_reason("sm_100a") is None
                continue
            assert reason is None
            record = compile_record(RunSpec(exp, v, v.default_params(), shape), "sm_75")
            assert record["reg_per_thread"] > 0 and record["spill_stores_bytes"] == 0, (exp.name, v.name)


# -- a damaged or unwritable cache, an arch NVRTC does not know -----------------------------------
KERNEL = 'extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n'


@pytest.mark.parametrize("damage", [
    lambda c: c.cubin_path.write_bytes(c.cubin_path.read_bytes()[:100]),  # the cubin cut short
    lambda c: c.cubin_path.with_suffix(".json").write_text('{"resources": {"regis'),  # the report cut short
    lambda c: c.cubin_path.with_suffix(".json").write_text('{"resources": {}, "log": ""}'),  # an older entry
])
def test_a_damaged_cache_entry_is_discarded_and_rebuilt(fresh_cache, damage):
    src = fresh_cache / "k.cu"
    src.write_text(KERNEL)
    first = gcompile.compile_kernel(src, "k")
    whole = first.cubin_path.read_bytes()
    damage(first)
    again = gcompile.compile_kernel(src, "k")
    assert again.cubin_path == first.cubin_path and again.cubin_path.read_bytes() == whole
    assert again.resources == first.resources
    assert gcompile.compile_kernel(src, "k").resources == first.resources  # and it stays whole


def test_an_unwritable_cache_is_one_line_naming_gpulab_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("GPULAB_CACHE", str(blocker))
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    with pytest.raises(GpulabError, match="kernel cache .* is not writable .*set GPULAB_CACHE"):
        gcompile.compile_kernel(src, "k")


def test_an_arch_nvrtc_does_not_support_lists_the_valid_ones(fresh_cache):
    with pytest.raises(GpulabError, match=r"does not support sm_50; choose one of sm_75, .*sm_90") as err:
        gcompile.compile_kernel(fresh_cache / "x.cu", "k", arch="sm_50")
    assert "x.cu" not in str(err.value)
    gcompile.check_arch("sm_90a")  # a suffixed arch of a supported number is fine


def test_a_header_beside_the_source_is_part_of_the_cache_key(fresh_cache):
    """NVRTC finds `#include "mine.cuh"` beside the .cu; editing it must compile again, not reuse."""
    (fresh_cache / "mine.cuh").write_text("#define VALUE 1.0f\n")
    src = fresh_cache / "k.cu"
    src.write_text('#include "mine.cuh"\nextern "C" __global__ void k(float* a) { a[0] = VALUE; }\n')
    first = gcompile.compile_kernel(src, "k")
    (fresh_cache / "mine.cuh").write_text("#define VALUE 2.0f\n")
    assert gcompile.compile_kernel(src, "k").cubin_path != first.cubin_path


def test_the_fingerprint_follows_the_code_not_its_comments_or_where_it_lives(tmp_path):
    """source_fingerprint: a comment, a blank or a reflowed line leave it as it was; moving code into
    a header the source includes leaves it too; a change of code (or of the gpulab variant
    declaration, which sets the launch) changes it; so does a change inside an included header."""
    from gpulab.gpu.compile import source_fingerprint

    body = 'extern "C" __global__ void k(float* o) {\n  o[0] = 1.0f;  // one\n}\n'
    a = tmp_path / "a.cu"
    a.write_text(body)
    before = source_fingerprint(a)
    a.write_text("/* a comment */\n\n" + body.replace("  o[0] = 1.0f;", "o[0]   =   1.0f; /* x */"))
    assert source_fingerprint(a) == before
    (tmp_path / "part.cuh").write_text('  o[0] = 1.0f;\n')
    a.write_text('extern "C" __global__ void k(float* o) {\n#include "part.cuh"\n}\n')
    assert source_fingerprint(a) == before
    (tmp_path / "part.cuh").write_text('  o[0] = 2.0f;\n')
    assert source_fingerprint(a) != before
    a.write_text(body.replace("1.0f", "2.0f"))
    assert source_fingerprint(a) != before
    a.write_text("/* gpulab variant\nparams: T=1\n*/\n" + body)
    declared = source_fingerprint(a)
    a.write_text("/* gpulab variant\nparams: T=2\n*/\n" + body)
    assert source_fingerprint(a) not in (before, declared)
    a.write_text(body.replace("1.0f", '"//" [0] * 1.0f'))  # a literal holding // is code, not a comment
    assert source_fingerprint(a) != before
