"""Access models of the GEMV-class kernels: gt (a warp per row of A, a few columns) and gv (a few
rows, K split across blocks with the ordered fixup of split_k.cuh). Conventions as
gpulab.experiments.sgemm.ladder.access."""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.gemm_common import passes_past_l2
from gpulab.experiments.sgemm.ladder.access import F32, work
from gpulab.experiments.sgemm.split_workspace import last_slice, last_to_arrive, split_bases
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, ragged, same, shifted


def gt_access(params: Params, shape: Shape) -> KernelAccess:
    """gt_gemv_cols.cu: warp w = bx*WARPS + warp owns rows w*RW + rr (rr < RW; a warp past M returns),
    for the BN columns from col0 = by*BN. Three paths, chosen per launch (allocations are 256-byte
    aligned, so the kernel's alignment tests pass and K % 4 decides):

    K % 4 == 0: a main loop of K // (128*U) steps; per step U LDG.128 of A (lane l reads the float4
    at k + (u*32 + l)*4) and, when N == 1, U LDG.128 of B's column at the same k; for N > 1, 4*BN
    scalar LDG of B per float4 of A (B[kk+q][col0+n], predicated on col0+n < N). Then a tail of
    whole float4s: one LDG.128 of A per 128 k, lanes whose float4 is inside K, 4*BN scalar B loads.
    K % 4 != 0: one scalar LDG of A per 32 k (lane l at k + l, k + l < K) and BN scalar B loads.
    The compiler unrolls these loops (2x and 4x in the sm_90 SASS) without changing how many times
    each load runs. Last, BN shuffle sums and one STG per column by lane n (col0+n < N).
    """
    BN_, W, RW, U = params["BN"], params["WARPS"], params["RW"], params["U"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    grid = (cdiv(M, W * RW), cdiv(N, BN_), 1)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N)

    def row(i):
        return (i.bx * W + i.warp) * RW + i.rr

    def live(i):
        return row(i) < M

    nx, ny = grid[0], grid[1]
    # Symmetry: every loop moves its addresses by whole multiples of 128 B per step (128 k of A per
    # float4 step and 32 per scalar step; B rows N apart, as many), so its steps are one class but
    # for the last, whose guard cuts lanes. Blocks along y move B and C by BN columns (classes by
    # address mod 128, the ragged last one alone) and leave A alone; blocks along x move A and C by
    # W*RW rows, B not at all, and cut rows only in the last block. Rows of a warp (RW <= 4) are
    # each their own class.
    x_edge, y_edge = ragged(nx, W * RW, M), ragged(ny, BN_, N)
    a_blocks = {"x": shifted(nx, F32 * W * RW * K, x_edge), "y": same(ny)}
    b_blocks = {"x": shifted(nx, 0, x_edge), "y": shifted(ny, F32 * BN_, y_edge)}
    c_blocks = {"x": shifted(nx, F32 * W * RW * N, x_edge), "y": shifted(ny, F32 * BN_, y_edge)}
    rows = Loop("rr", RW)

    def steps(name, trips):
        return Loop(name, trips, shifted(trips, 0, (trips - 1,)))

    b_cols = [n for n in range(BN_)]
    instructions: list[Instruction] = []

    def b_scalar(name, k_of, loops, active):
        # B[k][col0 + n] for the 4 k of a float4 (vec paths) or the one k (scalar path)
        for n in b_cols:
            instructions.append(Instruction(
                f"ldg B[{name}][col0+{n}]", "global", "load", F32,
                address=lambda i, n=n: base["B"] + F32 * (k_of(i) * N + i.by * BN_ + n),
                active=lambda i, n=n: active(i) & (i.by * BN_ + n < N), loops=loops, blocks=b_blocks))

    if K % 4 == 0:
        step = 128 * U
        main, rest = K // step, K - (K // step) * step
        loops = (rows, steps("t", main))
        for u in range(U):
            def kk(i, u=u):
                return i.t * step + (u * 32 + i.lane) * 4

            instructions.append(Instruction(
                f"ldg.128 A[row][k+{u}]", "global", "load", 16,
                address=lambda i, kk=kk: base["A"] + F32 * (row(i) * K + kk(i)), active=live, loops=loops,
                blocks=a_blocks))
            if N == 1:
                instructions.append(Instruction(
                    f"ldg.128 B[k+{u}]", "global", "load", 16,
                    address=lambda i, kk=kk: base["B"] + F32 * kk(i), active=live, loops=loops,
                    blocks={"x": b_blocks["x"], "y": same(ny)}))
            else:
                for q in range(4):
                    b_scalar(f"k+{u}.{q}", lambda i, kk=kk, q=q: kk(i) + q, loops, live)
        tail = (rows, steps("r", cdiv(rest, 128)))

        def tk(i):
            return main * step + i.r * 128 + 4 * i.lane

        def in_tail(i):
            return live(i) & (tk(i) + 4 <= K)

        instructions.append(Instruction(
            "ldg.128 A[row][tail]", "global", "load", 16,
            address=lambda i: base["A"] + F32 * (row(i) * K + tk(i)), active=in_tail, loops=tail, blocks=a_blocks))
        for q in range(4):
            b_scalar(f"tail.{q}", lambda i, q=q: tk(i) + q, tail, in_tail)
    else:
        loops = (rows, steps("s", cdiv(K, 32)))

        def sk(i):
            return i.s * 32 + i.lane

        def in_k(i):
            return live(i) & (sk(i) < K)

        instructions.append(Instruction(
            "ldg A[row][k]", "global", "load", F32,
            address=lambda i: base["A"] + F32 * (row(i) * K + sk(i)), active=in_k, loops=loops, blocks=a_blocks))
        b_scalar("k", sk, loops, in_k)
    for n in b_cols:
        instructions.append(Instruction(
            f"stg C[row][col0+{n}]", "global", "store", F32,
            address=lambda i, n=n: base["C"] + F32 * (row(i) * N + i.by * BN_ + n),
            active=lambda i, n=n: live(i) & (i.lane == n) & (i.by * BN_ + n < N), loops=(rows,), blocks=c_blocks))
    return KernelAccess(grid=grid, block=(32 * W, 1, 1), instructions=tuple(instructions), **work(M, N, K))


def gv_access(params: Params, shape: Shape) -> KernelAccess:
    """gv_gemv_rows.cu: grid (ceil(N/BN), S, ceil(M/BM)), BN = 4*CT, THREADS = CT*KT; thread (tn =
    tid % CT, tk = tid / CT) of block (bx, z, bz) takes k = kb + tk, kb + tk + KT, ... < ke of slice z
    (kb = z*per_slice, per_slice = ceil(ceil(K/S) / (KT*U)) * KT*U, ke = min(K, kb + per_slice)) and
    4 columns of rows row0 = bz*BM .. +BM-1 (rows past M read row M-1, never stored).

    float4 path (N % 4 == 0; cudaMalloc'd B is 16-byte aligned), lanes whose float4 at cfirst = col0 +
    4*tn is inside N: a main loop of U LDG.128 of B (rows k + u*KT) and U*BM LDG.32 of A (one address
    per thread row: a broadcast) while k + (U-1)*KT < ke, step KT*U; then a rolled tail (`#pragma
    unroll 1`) of one LDG.128 and BM LDG.32 per k < ke. Scalar path (N % 4 != 0): per k, 4 LDG.32 of
    B (columns col0 + tn + j*CT, each predicated on being < N) and BM of A. Then 4*BM STS.32 of the
    partials part[tk][m][cfirst - col0 + j*cstep] (every thread, unguarded), and for o = tid + i*T <
    BM*BN: KT LDS.32 of part[t][o] (predicated on o < BM*BN) and, inside o < BM*BN, r < M, c < N,
    one STG.32 to C (S = 1) or to the workspace plane z. S > 1: last_to_arrive (`last_to_arrive`),
    then in the last block per o, S LDG.32 .STRONG.GPU (__ldcg) of the planes and one STG.32 of C.

    Read off the SASS (NVRTC 13.5, sm_90) at the default and at BM = 4. Not exact in one case: the
    scalar path's k loop (N % 4 != 0) is unrolled x4 by the compiler with the leftover trips first;
    with CT = 16 a warp holds two thread rows, whose trip counts differ by one in a slice where the k
    range is not a multiple of KT (the last slice of a ragged K), and there the leftover trips run
    apart from the main ones: the model (one warp instruction per trip) then counts fewer requests
    than the kernel issues. CT >= 32 (one thread row per warp) is exact everywhere."""
    BM, CT, KT, U, S = (params[k] for k in ("BM", "CT", "KT", "U", "S"))
    M, N, K = shape["M"], shape["N"], shape["K"]
    BN, T = 4 * CT, CT * KT
    nx, nz = cdiv(N, BN), cdiv(M, BM)
    step = KT * U
    per_slice = cdiv(cdiv(K, S), step) * step
    base = split_bases(M, N, K, S, nx * nz)
    vec = N % 4 == 0
    cstep = 1 if vec else CT
    plane = M * N
    kbs = np.arange(S, dtype=np.int64) * per_slice
    kes = np.minimum(K, kbs + per_slice)

    def tn(i):
        return i.tid % CT

    def tk(i):
        return i.tid // CT

    def col0(i):
        return i.bx * BN

    def cfirst(i):
        return col0(i) + (4 * tn(i) if vec else tn(i))

    def arow(i, m):  # the row of A that row0 + m reads: clamped to M-1
        return np.minimum(i.bz * BM + m, M - 1)

    def kb(i):
        return kbs[i.by]

    def ke(i):
        return kes[i.by]

    def trips(first, last, stride):  # trips of `for (k = first; k < last; k += stride)`
        return np.maximum(0, -((first - last) // stride))

    # the k loops' trip counts per (slice, thread row): the most any thread runs, and from which
    # trip on some thread has stopped (those trips are each their own class)
    tks = np.arange(KT, dtype=np.int64)
    main_n = trips(kbs[:, None] + tks[None, :] + (U - 1) * KT, kes[:, None], step)
    tail_n = trips(kbs[:, None] + tks[None, :] + main_n * step, kes[:, None], KT)
    scalar_n = trips(kbs[:, None] + tks[None, :], kes[:, None], KT)

    def loop(name, n, stride_bytes):
        most, least = int(n.max()), int(n.min())
        return Loop(name, most, shifted(most, stride_bytes, range(least, most)))

    # blocks: along x B and C move BN columns (>= 64 floats: whole lines), the last block cut by N;
    # slices (y) and row blocks (z) each their own class where they move A / C, alike where not
    x_cols = shifted(nx, F32 * BN, ragged(nx, BN, N))
    a_blocks = {"x": x_cols, "y": every(S), "z": shifted(nz, F32 * BM * K, ragged(nz, BM, M))}
    b_blocks = {"x": x_cols, "y": every(S), "z": same(nz)}  # B's loads do not depend on the row block
    c_blocks = {"x": x_cols, "y": every(S), "z": shifted(nz, F32 * BM * N, ragged(nz, BM, M))}
    all_blocks = {"x": same(nx), "y": same(S), "z": same(nz)}
    rows = range(BM)
    out: list[Instruction] = []

    def a_loads(name, k_of, loops, active, count):
        for m in rows:
            for u in range(count):
                out.append(Instruction(
                    f"ldg A[row0+{m}][{name}{f'+{u}*KT' if count > 1 else ''}]", "global", "load", F32,
                    address=lambda i, m=m, u=u: base["A"] + F32 * (arow(i, m) * K + k_of(i) + u * KT),
                    active=active, loops=loops, blocks=a_blocks))

    if vec:
        def live(i):
            return cfirst(i) < N

        def k_main(i):
            return kb(i) + tk(i) + i.j * step

        def in_main(i):
            return live(i) & (i.j < main_n[i.by, tk(i)])

        main = (loop("j", main_n, F32 * step * N),)
        for u in range(U):
            out.append(Instruction(
                f"ldg.128 B[k+{u}*KT][cfirst..+3] (__ldcs)", "global", "load", 16,
                address=lambda i, u=u: base["B"] + F32 * ((k_main(i) + u * KT) * N + cfirst(i)),
                active=in_main, loops=main, blocks=b_blocks))
        a_loads("k", k_main, (loop("j", main_n, F32 * step),), in_main, U)

        def k_tail(i):
            return kb(i) + tk(i) + main_n[i.by, tk(i)] * step + i.r * KT

        def in_tail(i):
            return live(i) & (i.r < tail_n[i.by, tk(i)])

        tail = (Loop("r", int(tail_n.max()), every(int(tail_n.max()))),)
        out.append(Instruction(
            "ldg.128 B[k][cfirst..+3] (tail)", "global", "load", 16,
            address=lambda i: base["B"] + F32 * (k_tail(i) * N + cfirst(i)), active=in_tail, loops=tail,
            blocks=b_blocks))
        a_loads("k (tail)", k_tail, tail, in_tail, 1)
    else:
        def k_s(i):
            return kb(i) + tk(i) + i.j * KT

        def in_s(i):
            return i.j < scalar_n[i.by, tk(i)]

        for jj in range(4):
            out.append(Instruction(
                f"ldg B[k][col0+tn+{jj}*CT] (scalar path)", "global", "load", F32,
                address=lambda i, jj=jj: base["B"] + F32 * (k_s(i) * N + cfirst(i) + jj * CT),
                active=lambda i, jj=jj: in_s(i) & (cfirst(i) + jj * CT < N),
                loops=(loop("j", scalar_n, F32 * KT * N),), blocks=b_blocks))
        a_loads("k", k_s, (loop("j", scalar_n, F32 * KT),), in_s, 1)

    # the KT thread rows' partials, added in order; the block's sums stored where inside C
    smem = {"x": same(nx), "y": same(S), "z": same(nz)}
    out.append(Instruction(
        "sts part[tk][m][cfirst-col0 + j*cstep]", "shared", "store", F32,
        address=lambda i: F32 * ((tk(i) * BM + i.m) * BN + cfirst(i) - col0(i) + i.jj * cstep),
        loops=(Loop("m", BM, every(BM)), Loop("jj", 4, every(4))), blocks=smem))
    sums = cdiv(BM * BN, T)

    def o(i):
        return i.tid + i.s * T

    def r(i):
        return i.bz * BM + o(i) // BN

    def c(i):
        return col0(i) + o(i) % BN

    def stored(i):
        return (o(i) < BM * BN) & (r(i) < M) & (c(i) < N)

    per_sum = Loop("s", sums, every(sums))
    out.append(Instruction(
        "lds part[t][o]", "shared", "load", F32, address=lambda i: F32 * (i.t * BM * BN + o(i)),
        active=lambda i: o(i) < BM * BN, loops=(per_sum, Loop("t", KT, every(KT))), blocks=smem))
    if S == 1:
        out.append(Instruction("stg C[r][c]", "global", "store", F32,
                               address=lambda i: base["C"] + F32 * (r(i) * N + c(i)), active=stored,
                               loops=(per_sum,), blocks=c_blocks))
    else:
        out.append(Instruction("stg work[z][r][c]", "global", "store", F32,
                               address=lambda i: base["W"] + F32 * (i.by * plane + r(i) * N + c(i)), active=stored,
                               loops=(per_sum,), blocks=c_blocks))
        out += last_to_arrive(S, all_blocks, counter=lambda i: base["counters"] + F32 * (i.bz * nx + i.bx))
        fix = {**c_blocks, "y": last_slice(S)}

        def fixing(i):
            return stored(i) & (i.by == S - 1)

        out += [
            Instruction("ldg work[p][r][c] (fixup, __ldcg)", "global", "load", F32,
                        address=lambda i: base["W"] + F32 * (i.p * plane + r(i) * N + c(i)), active=fixing,
                        loops=(per_sum, Loop("p", S, every(S))), blocks=fix),
            Instruction("stg C[r][c] (fixup)", "global", "store", F32,
                        address=lambda i: base["C"] + F32 * (r(i) * N + c(i)), active=fixing,
                        loops=(per_sum,), blocks=fix),
        ]
    floor = work(M, N, K)
    # Each row block reads all of B. Counted once, gv's passes at 4 to 16 rows lent one token an
    # efficiency of 0.45: 143 us at 1x8192x8192, where it ran 64.3 (H200, 2026-12-05), and on a fresh
    # H100 the model alone picked sx there, 1.46x gv's time (notebook/probes/alone-h100/call94/)
    floor["dram_compulsory_bytes"] += passes_past_l2(nz, F32 * N * K)
    return KernelAccess(grid=(nx, S, nz), block=(T, 1, 1), instructions=tuple(out), **floor)
