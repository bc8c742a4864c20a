"""scripts/sass_banks.py: the FFMA register-bank collision count SGEMM v11's header cites, on a
hand-written excerpt in nvdisasm -c's format (the counts worked out by hand in the comments)."""

import importlib.util
from pathlib import Path


def _script():
    """scripts/sass_banks.py (a script, not a package module)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / "sass_banks.py"
    spec = importlib.util.spec_from_file_location("sass_banks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SB = _script()

SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x00000a0000017a02 */
        /*0010*/              @!P1 BRA `(.L_x_9) ;                         /* 0x0000000000009947 */
.L_x_5:
        /*0100*/                   LDS.128 R4, [R2] ;                      /* 0x0000000002047984 */
        /*0110*/                   FFMA R10, R4.reuse, R8, R10 ;           /* 0x0000000804 */
        /*0120*/                   FFMA R11, R4, R9, R12 ;                 /* 0x0000000904 */
        /*0130*/                   FFMA R12, R5, R9, R13 ;                 /* 0x0000000905 */
        /*0140*/                   FFMA R14, R6, R7, R14 ;                 /* 0x0000000706 */
        /*0150*/              @!P0 BRA `(.L_x_5) ;                         /* 0xfffffffc00008947 */
.L_x_9:
        /*0160*/                   EXIT ;                                  /* 0x000000000000794d */
"""


def test_the_loop_is_found_by_its_backward_branch_only():
    instrs, labels = SB.parse(SASS)
    assert labels == {".L_x_5": 0x100, ".L_x_9": 0x160}
    assert SB.loops(instrs, labels) == [(0x100, 0x150)]  # the forward branch to .L_x_9 is no loop


def test_collisions_count_register_file_reads_after_the_reuse_cache():
    counts = SB.hot_loop(SASS)
    # 0x110: R4 R8 R10 all even -> 2-same and 3-same; mod 4: 0 0 2 -> 2-same.
    # 0x120: R4 comes from the reuse cache (slot a, .reuse above); R9 odd, R12 even -> none
    #        (read from the file, R4 would collide with R12).
    # 0x130: no cache (no .reuse above): R5 R9 R13 all odd -> 2-same, 3-same; mod 4: 1 1 1.
    # 0x140: R6 R14 even, R7 odd -> 2-same; mod 4: 2 3 2 -> 2-same.
    assert counts == {"instr": 6, "ffma": 4, "same2": 3, "same3": 2, "same2_4": 3}


def test_operands_other_than_registers_are_no_reads():
    assert SB.sources("FFMA R3, R2, c[0x0][0x10], RZ") == [(2, False), (None, False), (None, False)]
    assert SB.sources("@P0 FFMA R3, -R2.reuse, R4, R6") == [(2, True), (4, False), (6, False)]
