"""The reports recorded on the H200 (tests/fixtures/ncu_reports, written by
scripts/ncu_capture_fixtures.py), replayed on a CPU through the report interface: every metric gpulab
asks for has a value in them (cp.async's, ldmatrix's, wgmma's and TMA's counters among them, parsed
from a real capture here and nowhere else without a GPU); the counts the card recorded as exact in
results/h200/fidelity.csv are the reports' and the access model's; each launch's attributes are the
ones the child program made; two captures of one launch differ only where hardware counters move;
a library's call reads as its kernels, longest first. Each test skips, naming the capture command,
while its report is not committed, and, naming what to install, where no interface can read it."""

import json
import math

import pytest

from gpulab import quantities as Q
from gpulab.gpu import ncu, ncu_reader
from gpulab.jobs import fidelity
from gpulab.jobs.profile import library_facts
from gpulab.records import read_csv
from gpulab.run.args import make_spec
from ncu_reports import FIXTURES, launches, recorded, recorded_info

FIDELITY_H200 = FIXTURES.parents[2] / "results" / "h200" / fidelity.FILE_NAME
# A variant's fixtures: (experiment, variant, shape), registry-default params (as fidelity runs them).
RUNS = {
    "sgemm_v1_512": ("sgemm", "v1", "512x512x512"),
    "sgemm_v9_129x67x33": ("sgemm", "v9", "129x67x33"),
    "gemm_bf16_t1_131x67x37": ("gemm_bf16", "t1", "131x67x37"),
    "gemm_bf16_t4_131x67x37": ("gemm_bf16", "t4", "131x67x37"),
}
LIBRARY = ("sgemm_cublas_512", "gemm_bf16_cublas_512")


def spec_of(name: str):
    experiment, variant, shape = RUNS[name]
    return make_spec(experiment, variant, {}, shape)


def launch_of(name: str):
    return ncu.single_launch(launches(name), spec_of(name).experiment.entry)


def measured(name: str) -> dict:
    """The report's quantities as fidelity reads them (the derived ones computed from the counts)."""
    return fidelity.measured_quantities(Q.measure(launch_of(name).metrics))


def card_rows(spec) -> dict[str, dict]:
    """results/h200/fidelity.csv's rows of the run by quantity, measured on today's kernel source."""
    rows = {r["quantity"]: r for r in read_csv(FIDELITY_H200)
            if (r["experiment"], r["variant"], r["shape"]) == (spec.experiment.name, spec.name, spec.shape.label)
            and r.get("params") == spec.variant.params_label(spec.params) and r.get("source_sha") == spec.source_sha()}
    if not rows:
        pytest.skip(f"results/h200/fidelity.csv holds no row of {spec.label} on today's kernel source: run "
                    f"`gpulab fidelity {spec.experiment.name} -v {spec.name} --shape {spec.shape.label}` on the card")
    return rows


def test_the_reports_are_small_and_were_written_by_the_recorded_ncu():
    paths = [recorded(name) for name in (*RUNS, *LIBRARY, "sgemm_v1_512_again", "sgemm_v9_129x67x33_source")]
    manifest = json.loads((FIXTURES / "MANIFEST.json").read_text())
    for path in paths:
        # a per-instruction capture carries the kernel's SASS and a counter per instruction: 2 MB on the H200
        limit = 2 << 20 if path.stem.endswith("_source") else 1 << 20
        assert path.stat().st_size < limit, f"{path.name}: {path.stat().st_size:,} bytes"
        assert ncu_reader.report_writer(path) == manifest["ncu_version"], path.name


@pytest.mark.parametrize("name", [*RUNS, *LIBRARY])
def test_every_metric_gpulab_asks_for_has_a_value(name):
    """No exemption: the cp.async (ldgsts), ldmatrix (ldsm), wgmma (gmma) and TMA counters too."""
    for launch in launches(name):
        assert ncu.missing_metrics(launch, Q.metric_names()) == [], launch.kernel


@pytest.mark.parametrize("name", RUNS)
def test_the_counts_the_card_held_exact_are_the_reports_and_the_models(name):
    spec = spec_of(name)
    rows, now, predicted = card_rows(spec), measured(name), fidelity.predicted_quantities(spec)
    exact = [q for q, r in rows.items() if r.get("exact") is True]
    assert len(exact) >= 15, exact
    for q in exact:
        assert now[q] == rows[q]["measured"] == predicted[q], q


def test_cp_async_counts_of_sgemm_v9():
    spec, now = spec_of("sgemm_v9_129x67x33"), measured("sgemm_v9_129x67x33")
    predicted = fidelity.predicted_quantities(spec)
    for q in ("gmem_ldgsts_requests", "smem_ldgsts_requests"):
        assert now[q] == predicted[q] > 0, q
    assert now["smem_ldgsts_wavefronts"] > 0 and "smem_ldgsts_wavefronts" not in fidelity.predicted_quantities(spec)


def test_ldmatrix_counts_of_gemm_bf16_t1():
    spec, now = spec_of("gemm_bf16_t1_131x67x37"), measured("gemm_bf16_t1_131x67x37")
    predicted = fidelity.predicted_quantities(spec)
    for q in ("smem_ldsm_requests", "smem_ldsm_wavefronts", "smem_ldsm_bank_conflicts"):
        assert now[q] == predicted[q], q
    assert now["smem_ldsm_requests"] > 0 and now["smem_ldsm_wavefronts"] >= now["smem_ldsm_requests"]


def test_wgmma_and_tma_counts_of_gemm_bf16_t4():
    spec, now = spec_of("gemm_bf16_t4_131x67x37"), measured("gemm_bf16_t4_131x67x37")
    predicted = fidelity.predicted_quantities(spec)
    for q in ("gmma_requests", "tma_load_requests", "tma_load_bytes"):
        assert now[q] == predicted[q] > 0, q
    assert now["smem_gmma_wavefronts"] > 0  # measured, not modelled


def test_a_rung_without_them_counts_none_of_them():
    """sgemm v1 issues no cp.async, ldmatrix, wgmma or TMA instruction: each counter reads 0, the model's 0."""
    spec, now = spec_of("sgemm_v1_512"), measured("sgemm_v1_512")
    predicted = fidelity.predicted_quantities(spec)
    for q in ("gmem_ldgsts_requests", "smem_ldgsts_requests", "smem_ldgsts_wavefronts", "smem_ldsm_requests",
              "smem_ldsm_wavefronts", "gmma_requests", "smem_gmma_wavefronts", "tma_load_requests", "tma_load_bytes"):
        assert now[q] == 0 == predicted[q], q


@pytest.mark.parametrize("name", RUNS)
def test_the_launch_is_the_one_the_child_program_made(name):
    """Grid, block, registers and shared memory as ncu saw the launch, against what the child
    compiled and launched (gpulab.run.ncu_child's info): the captured launch is the one gpulab meant."""
    launch, info = launch_of(name), recorded_info(name)
    assert info["check"]["correct"] is True
    assert launch.dims("grid") == info["launch"]["grid"] and launch.dims("block") == info["launch"]["block"]
    assert launch.get("launch__registers_per_thread") == info["resources"]["reg_per_thread"]
    assert launch.get("launch__shared_mem_per_block_static") == info["resources"]["smem_static_bytes"]
    assert launch.get("launch__shared_mem_per_block_dynamic") == info["launch"]["smem_dynamic_bytes"]


def test_two_captures_of_one_launch_differ_only_where_hardware_counters_move():
    """sgemm v1 at 512^3 captured twice: every count held exactly is the same in both. Arbitration
    between warps adds a few shared wavefronts that change from capture to capture (on the H200 with
    TILE=16: 6,295,263 and 6,295,490 load wavefronts), and ncu counts exactly those as bank conflicts:
    the hardware's wavefronts minus its conflicts are the same in both."""
    a, b = launch_of("sgemm_v1_512"), ncu.single_launch(launches("sgemm_v1_512_again"), "sgemm")
    for q in Q.COUNTED:
        if q.metric and q.judged in (Q.EXACT, Q.INSTRUMENTED):
            assert a.get(q.metric) == b.get(q.metric), q.key
    for op in ("ld", "st"):
        waves = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
        conflicts = f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"
        assert a.get(waves) - a.get(conflicts) == b.get(waves) - b.get(conflicts), op


@pytest.mark.parametrize("name", LIBRARY)
def test_a_library_call_reads_as_its_kernels_longest_first(name):
    found = launches(name)
    first, *others = ncu.range_launches(found)
    assert len(found) == 1 + len(others) and first.kernel not in ("sgemm", "gemm_bf16")
    assert all(first.get("gpu__time_duration.sum") >= k.get("gpu__time_duration.sum") > 0 for k in others)
    facts = library_facts(first)
    block = first.dims("block")
    assert facts["launch"]["block"] == block and facts["launch"]["grid"] == first.dims("grid") and len(block) == 3
    assert facts["resources"]["reg_per_thread"] == first.get("launch__registers_per_thread") > 0
    occ = facts["occupancy"]
    limits = [first.get(m) for m in ("launch__occupancy_limit_warps", "launch__occupancy_limit_blocks",
                                     "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem")]
    assert occ["blocks_per_sm"] == min(limits) >= 1 and occ["warps_per_block"] == math.ceil(math.prod(block) / 32)
    assert 0 < occ["theoretical_occupancy_pct"] <= 100 and occ["occupancy_limiter"]


def test_a_call_s_counts_add_up_over_its_kernels():
    """cuBLAS FP32 at 512^3: counts, bytes and time summed over the call's kernels, rates not."""
    found = launches("sgemm_cublas_512")
    call = Q.measure_call([k.metrics for k in found])
    for key in ("duration_ns", "warp_instructions", "gmem_load_requests", "dram_bytes"):
        assert call[key] == pytest.approx(sum(Q.measure(k.metrics)[key] for k in found)), key
    assert "sm_clock_hz" not in call
