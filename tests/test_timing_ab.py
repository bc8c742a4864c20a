"""`gpulab ab` and the timing columns without a GPU: the command's one-line errors, how A and B are
named, the two records an A/B run makes, and how the bench table and the HTML page show a row's
noise, its budget and a slowdown it was timed under."""

import os
import subprocess
import sys

import pytest
from rich.console import Console

from gpulab import api
from gpulab.errors import GpulabError
from gpulab.gpu.stats import verdict
from gpulab.jobs.ab import AbResult, specs
from gpulab.records import read_csv, write_csv
from gpulab.report.html import records_table
from gpulab.report.tables import ab_table, bench_table, noise_text, throttle_note

ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, env=ENV,
                          cwd=cwd, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["ab", "sgemm", "v99", "v13"], "no variant 'v99'"),
    (["ab", "sgemm", "v13", "nosuch:BM=64"], "no variant 'nosuch'"),
    (["ab", "nosuch", "v1", "v2"], "unknown experiment"),
    (["ab", "sgemm", "v13", "cublas", "-p", "NOPE=1"], "neither v13 nor cublas has a param NOPE"),
    (["ab", "sgemm", "v13:BM=64", "v12", "-p", "BM=128"], "given both in 'v13:BM=64' and separately; give it once"),
    (["ab", "sgemm", "cublas:BM=64", "v13"], "takes no params"),
    (["ab", "sgemm", "v13", "cublas", "--noise", "80%"], "error: noise 80%: must be above 0 and below 50%"),
    (["ab", "sgemm", "v13", "cublas", "--size", "4096", "--shape", "64x64x64"], "one shape at a time"),
    (["ab", "sgemm", "v13", "v13", "--size", "4096"], "no NVIDIA GPU"),
    (["ab", "sgemm", "v13", "cublas", "--lock-clocks", "1755"], "no NVIDIA GPU"),
])
def test_ab_errors_are_one_line_exit_2(args, words, tmp_path):
    r = gpulab(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_param_goes_to_each_side_that_has_it():
    exp = api.experiment("sgemm")
    a, b = specs(exp, "v12", "v13", {"BK": 8}, exp.square(1024))
    assert a.params["BK"] == 8 and b.params["BK"] == 8
    a, b = specs(exp, "v1", "cublas", {"TILE": 8}, exp.square(1024))
    assert a.params["TILE"] == 8 and b.library == "cublas" and b.variant is None
    with pytest.raises(GpulabError, match="not accepted|choose"):
        specs(exp, "v1", "v1", {"TILE": 7}, exp.square(1024))


def _result(times_b, ratio_list, budget=False):
    exp = api.experiment("sgemm")
    a, b = specs(exp, "v13", "cublas", {}, exp.square(4096))
    card = {"sm_clock_mhz": 1860, "power_w": 655.0, "temp_c": 51, "throttle": "sw_power_cap"}
    return AbResult(a, b, [3.0] * len(times_b), times_b, verdict(ratio_list, 0.005), budget, card)


def test_an_ab_run_makes_two_records_that_stand_alone(tmp_path):
    result = _result([2.7] * 12, [0.9] * 12)
    rows = result.rows({"gpu": "NVIDIA H200", "date": "2026-12-03T00:00:00+00:00"})
    assert [r["side"] for r in rows] == ["A", "B"] and [r["variant"] for r in rows] == ["v13", "cublas"]
    assert rows[0]["time_ms"] == 3.0 and rows[1]["time_ms"] == 2.7 and rows[1]["reps"] == 12
    for r in rows:
        assert r["ab_ratio"] == pytest.approx(0.9) and r["ab_verdict"] == "faster" and r["ab_id"] == result.id
        assert r["sm_clock_mhz"] == 1860 and r["throttle"] == "sw_power_cap" and r["gpu"] == "NVIDIA H200"
    path = tmp_path / "ab.csv"
    write_csv(path, rows)
    back = read_csv(path)
    assert back[1]["ab_ratio_ci_low"] == pytest.approx(0.9) and back[0]["hit_budget"] is False
    assert result.names() == ("v13 " + result.a.variant.params_label(result.a.params), "cublas")
    assert result.sentence().startswith("cublas is faster than v13")
    table = ab_table(rows, "sgemm at 4096x4096x4096")
    text = _render(table)
    assert "2.7000" in text and "3.0000" in text and "±0.00%" in text


def test_the_same_run_on_both_sides_is_an_aa_test():
    exp = api.experiment("sgemm")
    a, b = specs(exp, "v13", "v13", {}, exp.square(4096))
    result = AbResult(a, b, [3.0] * 12, [3.0] * 12, verdict([1.0] * 12, 0.005), False, {})
    assert result.same_run and result.names() == ("A", "B")
    assert result.sentence().startswith("B and A are the same within noise")


def _render(table) -> str:
    console = Console(width=400, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def _row(**extra):
    return {"experiment": "sgemm", "variant": "v13", "params": "", "shape": "4096x4096x4096", "time_ms": 2.8,
            "gflops": 49000.0, "gbps": 100.0, "correct": True, "max_rel_err": 1e-6, **extra}


def test_the_bench_table_shows_the_noise_the_budget_and_the_slowdowns():
    rows = [_row(rel_noise=0.0021, hit_budget=False, sm_clock_mhz=1980, throttle=""),
            _row(variant="v12", rel_noise=0.0123, hit_budget=True, sm_clock_mhz=1755, throttle="sw_power_cap"),
            _row(variant="v11", rel_noise=0.003, hit_budget=False, sm_clock_mhz=1980, throttle="",
                 retimed="hw_thermal_slowdown")]
    text = _render(bench_table(rows, "sgemm"))
    lines = {name: line for line in text.splitlines() for name in ("v11", "v12", "v13") if f" {name} " in line}
    assert "±0.21%" in lines["v13"] and "1980" in lines["v13"] and "throttled" not in lines["v13"]
    assert "±1.23% budget" in lines["v12"] and "1755" in lines["v12"]
    assert "throttled while timed: sw_power_cap" in lines["v12"]
    assert "retimed after a cool-down (the first timing ran under hw_thermal_slowdown)" in lines["v11"]
    assert "throttled while timed" not in lines["v11"]


def test_rows_from_before_the_noise_columns_show_as_they_did():
    text = _render(bench_table([_row()], "sgemm"))
    assert "± 95%" not in text and "SM MHz" not in text and "ok" in text


def test_the_html_table_flags_the_same_rows():
    page = records_table([_row(rel_noise=0.0123, hit_budget=True, sm_clock_mhz=1755, throttle="sw_power_cap sync_boost"),
                          _row(variant="v11", rel_noise=0.002, hit_budget=False, sm_clock_mhz=1980, throttle="sync_boost")])
    assert "± 95%" in page and "SM MHz" in page
    assert '<span class="skip">±1.23% budget</span>' in page
    assert '<span class="wrong">throttled while timed: sw_power_cap</span>' in page
    v11 = page.split("v11")[1]
    assert "throttled" not in v11 and "±0.20%" in v11  # sync_boost is recorded, not a heat or power flag


def test_noise_text_and_throttle_note():
    assert noise_text({}) == "" and noise_text({"rel_noise": 0.004}) == "±0.40%"
    assert noise_text({"hit_budget": True}) == "budget"  # too few repetitions for an interval
    assert throttle_note({"throttle": "hw_power_brake"}) == "throttled while timed: hw_power_brake"
    assert throttle_note({"throttle": ""}) == ""
