"""scripts/bank_stalls.py: the join of ncu's per-instruction stall samples with the local disassembly,
and the grouping of a hot loop's FFMAs by register-file reads and banks, on a hand-written excerpt
(nvdisasm -c's format, and rows as `gpulab profile --sass-csv` writes them: ncu's text has no reuse
flags and orders LDGSTS's operands differently)."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _script():
    sys.path.insert(0, str(SCRIPTS))  # bank_stalls imports its sibling sass_banks
    try:
        spec = importlib.util.spec_from_file_location("bank_stalls", SCRIPTS / "bank_stalls.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


BS = _script()

LOCAL = [
    "MOV R1, c[0x0][0x28]",
    "LDGSTS.E [R43], desc[UR8][R22.64], P0",
    "FFMA R10, R4.reuse, R8, R10",   # reads R4 R8 R10 (R4 then cached in slot a)
    "FFMA R11, R4, R9, R12",         # reads R9 R12: the cache serves R4
    "FFMA R13, R5, R9, R17",         # no cache: R5 R9 R17, all odd; mod 4: 1 1 1
    "@!P0 BRA `(.L_x_5)",
    "EXIT",
]
ROWS = [  # executed, dispatch samples
    ("MOV R1, c[0x0][0x28]", 10, 0),
    ("LDGSTS.E desc[UR8][R22.64], P0, [R43]", 1000, 4),
    ("FFMA R10, R4, R8, R10", 1000, 30),
    ("FFMA R11, R4, R9, R12", 1000, 2),
    ("FFMA R13, R5, R9, R17", 1000, 50),
    ("@!P0 BRA 0x7f0000001200", 1000, 1),
    ("EXIT", 10, 0),
]


def _rows(rows=ROWS):
    return [{"instruction": t, "executed": str(e), "stall_dispatch": str(d)} for t, e, d in rows]


def test_the_hot_loop_and_the_reads_each_ffma_makes_from_the_register_file():
    stalls, reads = BS.hot_loop_dispatch(LOCAL, _rows())
    assert stalls == [4.0, 30.0, 2.0, 50.0, 1.0]  # LDGSTS .. BRA: the rows run as often as the hottest
    assert reads == {1: [4, 8, 10], 2: [9, 12], 3: [5, 9, 17]}


def test_ffmas_grouped_by_reads_and_banks():
    groups = BS.by_bank_class(*BS.hot_loop_dispatch(LOCAL, _rows()))
    # R4 R8 R10: all even (3 in one bank by reg % 2); by reg % 4: 0 0 2 -> two in one bank.
    # R9 R12: odd and even; 1 and 0. R5 R9 R17: all odd; all 1 by reg % 4.
    assert groups == {(3, 3, 2): [30.0], (2, 1, 1): [2.0], (3, 3, 3): [50.0]}


def test_a_capture_of_other_code_is_refused():
    other = _rows(ROWS[:3] + [("FFMA R11, R4, R9, R14", 1000, 2)] + ROWS[4:])
    with pytest.raises(ValueError, match="not this build's code"):
        BS.hot_loop_dispatch(LOCAL, other)
    with pytest.raises(ValueError, match="6 instructions there, 7 here"):
        BS.hot_loop_dispatch(LOCAL, _rows(ROWS[:-1]))
