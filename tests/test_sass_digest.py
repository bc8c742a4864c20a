"""scripts/sass_digest.py, the check that an edit changed no machine code: it compiles each config
for the variant's own target (the Hopper rungs need sm_90a), and a config that did not compile is
reported and fails the comparison instead of counting as identical SASS (before, two failed compiles
compared equal: every t2, t3 and t4 config "passed" without being compiled)."""

import sys
from pathlib import Path

import pytest

from gpulab.experiments import get_experiment

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import sass_digest  # noqa: E402  (a script, imported for its functions)


@pytest.mark.parametrize("name", ["t2", "t3", "t4"])
def test_the_hopper_rungs_compile_for_their_own_target(name):
    exp = get_experiment("gemm_bf16")
    variant = exp.variant(name)
    compiled = sass_digest.compile_config(exp, variant, variant.default_params())
    assert compiled.resources.registers > 0 and compiled.resources.spill_stores_bytes == 0


RECORD = {"reg_per_thread": 168, "smem_static_bytes": 96, "spill_stores_bytes": 0, "spill_loads_bytes": 0,
          "stack_frame_bytes": 0, "barriers": 16, "cmem_bytes": 0, "instructions": 3, "sass_sha": "a",
          "sass_sorted_sha": "s", "opcodes": {"HGMMA": 2, "EXIT": 1}}


def test_identical_sass_passes():
    lines, code = sass_digest.compare({"k": RECORD}, {"k": dict(RECORD)})
    assert code == 0 and lines[-1].startswith("1 configs: 0 not compiled; 0 with other resources; 1 identical")


def test_a_config_that_failed_to_compile_is_not_counted_identical():
    failed = {"error": "ptxas: wgmma not supported on .target sm_90"}
    lines, code = sass_digest.compare({"k": failed}, {"k": dict(failed)})
    assert code == 1
    assert lines[0].startswith("NOT COMPARED k: ptxas") and "1 not compiled" in lines[-1] and "0 identical" in lines[-1]


def test_other_resources_fail_and_other_sass_is_described():
    more_regs = dict(RECORD, reg_per_thread=200)
    lines, code = sass_digest.compare({"k": RECORD}, {"k": more_regs})
    assert code == 1 and lines[0].startswith("RESOURCES DIFFER k")
    other = dict(RECORD, sass_sha="b", sass_sorted_sha="t", opcodes={"HGMMA": 2, "NOP": 1, "EXIT": 1})
    lines, code = sass_digest.compare({"k": RECORD}, {"k": other})
    assert code == 0 and "3 -> 4 instructions; opcodes added {'NOP': 1}" in lines[0]


@pytest.mark.parametrize("text, why", [('{"k": {"reg_per', "is not a whole fingerprint"),
                                       ("[1, 2]", "is not a fingerprint written by this script")])
def test_a_damaged_earlier_fingerprint_is_refused_in_one_line(tmp_path, text, why):
    path = tmp_path / "before.json"
    path.write_text(text)
    with pytest.raises(sass_digest.GpulabError, match=why):
        sass_digest.read_fingerprint(path)
    with pytest.raises(sass_digest.GpulabError, match="cannot read"):
        sass_digest.read_fingerprint(tmp_path / "missing.json")


def test_bad_input_exits_2_before_compiling_and_leaves_the_output_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sass_digest.shutil, "which", lambda name: f"/usr/bin/{name}")  # the tools' check passes
    out = tmp_path / "out.json"
    out.write_text('{"kept": {}}\n')
    damaged = tmp_path / "before.json"
    damaged.write_text('{"k": ')
    assert sass_digest.main(["--out", str(out), "--compare", str(damaged)]) == 2
    assert sass_digest.main(["--out", str(out), "--experiments", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)
    assert out.read_text() == '{"kept": {}}\n'
