import math

import pytest

from gpulab import files
from gpulab import records
from gpulab.errors import GpulabError
from gpulab.run.lab import config_run_key


def test_csv_round_trip(tmp_path):
    rows = [
        {"experiment": "sgemm", "variant": "v1", "params": "TILE=16", "shape": "17x33x65", "m": 17,
         "correct": True, "max_rel_err": 1.25e-7, "time_ms": 0.0123, "grid": (3, 2, 1), "gpu": "NVIDIA H200"},
        {"experiment": "sgemm", "variant": "cublas", "params": "", "shape": "17x33x65", "m": 17,
         "correct": False, "max_rel_err": float("nan"), "skip_reason": "wrong output", "gpu": "NVIDIA H200"},
    ]
    path = tmp_path / "out" / "sgemm.csv"
    records.write_csv(path, rows)
    back = records.read_csv(path)
    assert back[0]["variant"] == "v1" and back[0]["m"] == 17 and back[0]["correct"] is True
    assert back[0]["max_rel_err"] == pytest.approx(1.25e-7) and back[0]["time_ms"] == pytest.approx(0.0123)
    assert back[0]["grid"] == "3x2x1"
    assert back[1]["params"] is None and back[1]["correct"] is False and math.isnan(back[1]["max_rel_err"])
    header = path.read_text().splitlines()[0].split(",")
    assert header[:3] == ["experiment", "variant", "params"] and header[-1] == "gpu"


def test_atomic_write_keeps_old_file_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "x.csv"
    records.write_csv(path, [{"experiment": "a", "variant": "b"}])
    before = path.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", boom)
    with pytest.raises(GpulabError, match="disk full"):
        records.write_csv(path, [{"experiment": "c", "variant": "d"}])
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["x.csv"]  # no temporary file left behind


def test_environment_without_gpu_has_versions():
    env = records.environment(None, "sm_90")
    assert env["gpu"] == "none" and env["arch"] == "sm_90" and env["nvrtc"] and env["date"]


def test_check_writable_refuses_a_folder_and_creates_nothing(tmp_path):
    with pytest.raises(GpulabError, match="is a folder"):
        files.check_writable(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(GpulabError, match="is a file, not a folder"):
        files.check_writable(tmp_path / "file" / "deeper" / "x.csv")
    files.check_writable(tmp_path / "new" / "deeper" / "x.csv")
    files.check_writable(tmp_path / "x.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # no folder, no trial file left


def test_a_newer_best_row_replaces_the_shapes_older_one_whatever_it_ran(tmp_path):
    # gpulab's best row at a shape is one result, whichever kernel and params the pick ran; other
    # variants' rows of other params are runs of their own and stay.
    path = tmp_path / "sgemm.csv"
    first = [
        {"experiment": "sgemm", "variant": "best", "params": "BM=64 BN=128", "shape": "4096x4096x4096", "time_ms": 2.84},
        {"experiment": "sgemm", "variant": "v11", "params": "BM=64 BN=128", "shape": "4096x4096x4096", "time_ms": 2.84},
        {"experiment": "sgemm", "variant": "best", "params": "BM=64 BN=64", "shape": "512x512x512", "time_ms": 0.02},
    ]
    records.upsert(path, first, records.run_key)
    records.upsert(path, [
        {"experiment": "sgemm", "variant": "best", "params": "BM=64 BN=128 S=16", "shape": "4096x4096x4096", "time_ms": 2.74},
        {"experiment": "sgemm", "variant": "v11", "params": "BM=64 BN=256", "shape": "4096x4096x4096", "time_ms": 2.90},
    ], records.run_key)
    rows = records.read_csv(path)
    best = {r["shape"]: r for r in rows if r["variant"] == records.BEST}
    assert len([r for r in rows if r["variant"] == records.BEST]) == 2
    assert best["4096x4096x4096"]["params"] == "BM=64 BN=128 S=16" and best["512x512x512"]["time_ms"] == 0.02
    assert sorted(r["params"] for r in rows if r["variant"] == "v11") == ["BM=64 BN=128", "BM=64 BN=256"]


def test_a_run_file_without_its_key_columns_is_refused_not_rewritten(tmp_path):
    """profile.csv (or a bench CSV) whose header lost `variant`: every old row would key as blank and
    the file be rewritten around them; upsert_runs refuses it and leaves it as it was."""
    path = tmp_path / "profile.csv"
    records.write_csv(path, [{"experiment": "sgemm", "params": "", "shape": "512x512x512", "x": 1}])
    before = path.read_bytes()
    with pytest.raises(records.DamagedFile, match="lacks the column variant"):
        records.upsert_runs(path, [{"experiment": "sgemm", "variant": "cublas", "params": "", "shape": "512x512x512"}])
    assert path.read_bytes() == before
    records.upsert_runs(tmp_path / "new.csv", [{"experiment": "e", "variant": "v", "params": "", "shape": "1"}])


def test_config_run_key_names_every_param_of_the_variant_as_it_is_today():
    t4 = "BM=128 BN=256 STAGES=4 GROUP_M=8 CLUSTER=2 STORE=1 PINGPONG=0 SCHEDULE=0"
    row = {"experiment": "gemm_bf16", "variant": "t4", "params": t4, "shape": "4097x4097x4097"}
    # recorded before EDGE existed: the same run as EDGE at its default, not as another value
    assert config_run_key(row) == config_run_key(dict(row, params=t4 + " EDGE=0"))
    assert config_run_key(row) != config_run_key(dict(row, params=t4 + " EDGE=2"))
    # what it cannot place keeps the recorded key: a vendor library, a gone variant or param, the best row
    no_params = {k: v for k, v in row.items() if k != "params"}
    for other in (dict(row, variant="cublas", params=""), dict(row, variant="t99"), dict(row, params=t4 + " NEW=1"),
                  dict(row, params=t4.replace("STAGES=4", "STAGES=7")), dict(row, variant="best"), no_params):
        assert config_run_key(other) == records.run_key(other)
