// t4 persistent, clustered warp specialization: t3's producer + two wgmma consumers, now in clusters
// of CLUSTER blocks that share the Bt tile through TMA multicast, on a persistent grid (one block per
// SM) that walks the output tiles in grouped order, with one wgmma group kept in flight.
// Changed from t3:
//   - Persistent grid: gridDim.x = SMs (rounded down to whole clusters); cluster c takes cluster
//     tiles c, c + clusters, ... The ring's slot and parity run on one counter across tiles, so the
//     producer loads the next tile's first STAGES k-tiles while the consumers store the current
//     tile: the epilogue no longer leaves the copy engine idle, and there is one prologue (barrier
//     init, setmaxnreg) per SM instead of one per tile (t3 at 4096^3: 512 blocks, 3.9 waves).
//   - Clusters of CLUSTER (2) blocks stacked along M: both need the same BN x 64 Bt tile per
//     k-tile, so each block loads BN / CLUSTER of its rows and multicasts them to both blocks
//     (cp.async.bulk.tensor ... multicast::cluster). L2 -> SM traffic per block and k-tile goes from
//     (128 + 256) x 128 B = 48 KiB to (128 + 128) x 128 B = 32 KiB (-33%) at 128 x 256 tiles.
//     A slot is refilled only when the consumers of EVERY block of the cluster released it (the
//     multicast writes into the peer's slot too): each consumer warp arrives on empty[s] of every
//     block (mapa + remote arrive), empty[s] counts 4 x CONSUMERS x CLUSTER arrivals.
//   - wgmma wait depth 1: a consumer issues k-tile kt's 4 wgmma, then waits only for k-tile kt-1's
//     group and releases that slot, so the tensor cores have the next group queued while the warps
//     wait on the next full barrier (t3 drained the pipe after every k-tile: wait 0).
//   - Tile order: grouped rasterization of cluster tiles (GROUP_M cluster-rows at a time), so the
//     132 tiles in flight share ~GROUP_M A block-rows and ~132/GROUP_M Bt block-columns in L2.
//   - Epilogue through shared memory (STORE = 1): t3's STG.64 from the fragment touch 8 lines per
//     warp instruction (~8 L1 wavefronts; 1024 of them per 128 x 256 FP32 tile: ~4 us of an SM's
//     ~47 us mainloop at 4096^3, with the tensor cores idle). Here each consumer writes 64 x 32 FP32
//     chunks into a 128-byte-swizzled 8 KiB buffer (2 wavefronts per float2 store: ~1 us per tile)
//     and one thread hands each chunk to a TMA store (asynchronous, clipped at the M/N edges), two
//     buffers per consumer so writing one overlaps the other's store. N % 4 != 0 (an FP32 row pitch
//     TMA cannot take): the same buffers, copied out by the warpgroup a row at a time (store_tile_smem).
// Expected effect: t3 ran 718 TFLOP/s at 4096^3 and 8192^3 (0.95x and 0.98x cuBLAS BF16 758 / 731).
//   The wait-depth change removes a ~4-wgmma drain per k-tile (~5-8%), multicast takes a third of
//   the L2 traffic off (8 -> 5.3 TB/s needed at 700 TFLOP/s, away from the L2 bandwidth limit), the
//   persistent grid hides the per-block prologue and the staged epilogue cuts the tensor cores' idle
//   time per tile from ~4 to ~1 us (~2-6%): aim 760-800 TFLOP/s, 1.0-1.05x cuBLAS. 2048^3: 64 cluster
//   tiles for 66 clusters, 1 wave; expect ~0.95x cuBLAS.
// Measured (H200, 2026-12-01, default PINGPONG = 0): 589 / 741 / 739 TFLOP/s at 2048^3 / 4096^3 /
//   8192^3, 0.965x / 0.993x / 1.013x cuBLAS BF16; with PINGPONG = 0 both consumers still write their
//   chunks together while the tensor cores idle (~1 us per tile): PINGPONG = 1 below is the answer.
// PINGPONG = 1 (the consumers alternate whole tiles, CUTLASS's "pingpong" schedule): consumer c
//   takes this block's tiles c, c + 2, ... and computes all 128 rows of each (two m64nBNk16 per k16
//   slice, 2 x BN / 2 accumulators: BN = 128 only, 128 registers). The two mainloops are ordered by
//   two mbarriers (order[c]: the other consumer has issued its last wgmma of the tile before), so
//   one consumer's TMA-store epilogue (~1 us per tile) and its final wgmma drain run while the
//   other's wgmma keep the tensor cores busy; the producer's ring order is unchanged, each slot is
//   read by one consumer (empty[s] counts 4 x CLUSTER arrivals). Expected: at 4096^3 the
//   cooperative schedule idles the tensor cores ~1 us of every ~47 us tile (~2%) plus a wgmma
//   drain per tile; pingpong hides both, but 128 x 128 tiles double the TMA bytes per FLOP into
//   shared memory (32 KiB per 2 MFLOP k-tile vs 48 KiB per 4 MFLOP): a measured question, +0-4%.
// SCHEDULE = 1 (a stream-K tail, Osama et al., PPoPP 2023, as CUTLASS's "data-parallel + stream-K"):
//   with SCHEDULE = 0 the cluster tiles go out whole, round by round, and the last round is partial:
//   at 4096^3 256 tiles for 66 clusters are 3.88 rounds, 8 clusters idle through the fourth (~3% of
//   the run); 8192^3 1024 / 66 = 15.5 rounds (~3%); 4097^3 289 / 66 = 4.38 rounds. Measured
//   (H200, 2026-12-01, SCHEDULE = 0): 747 / 741 TFLOP/s at 4096^3 / 8192^3, 0.988x / 0.987x
//   cuBLAS BF16. SCHEDULE = 1 keeps all the full rounds but one whole and splits the rest (the last
//   partial round plus one full round: >= `clusters` tiles, chosen on the host, tma_rungs.
//   t4_stream_k_tiles) by k-tiles: their (tile, k-tile) iterations are laid end to end and each
//   cluster takes one contiguous `1 / clusters` of them (WorkList below; both blocks of a cluster
//   the same ranges, so the Bt multicast still pairs up; the ring's counter runs on across units).
//   A share is at least one tile's k-tiles, so a tile is split between two neighbouring clusters at
//   most. Cluster c takes its share head first: the head of its last tile (k-tiles 0 ..), handed over
//   at once (each consumer thread's accumulators to the workspace, thread-major, then a flag per
//   consumer warpgroup, release at GPU scope); then its whole tiles; then the tail of its first tile,
//   whose consumers wait on cluster c - 1's flag for that tile's head (acquire; all clusters are
//   resident: a persistent grid; by then c - 1 handed it over ~share - k_tiles k-tiles before), clear
//   it for the next launch, add the partial to their accumulators (a fixed order: the same bits every
//   run) and run the usual epilogue. Each unit starts at the k-tile its step count points to, where it
//   holds that k-tile, so all clusters read near the same k-tile at any moment (WorkList). Falls back
//   to whole tiles where the tiles fill whole rounds,
//   where there are no more tiles than clusters (2048^3: 64 tiles, 64 clusters launched; splitting
//   over 66 would gain <= 3% and split tiles three ways) and where K is one k-tile. Workspace (an extra argument,
//   allocated by the host): BM x BN FP32 per block of the grid (132 x 128 KiB = 17.3 MB at BN =
//   256) and one flag per consumer warpgroup (zeroed once, cleared by the kernel). Expected: the
//   tail's idle clusters busy, minus a ~1-2 us hand-over per split tile (128 KiB out and in through
//   L2): +2-3% at 4096^3 and 8192^3, more at 4097^3. PINGPONG = 1 is refused (its consumers find a
//   tile's first k-tile in the ring at j * k_tiles, which units of unequal length break).
//   Measured first with the share taken in linear order (H200, 2026-12-01, one run, TFLOP/s,
//   SCHEDULE 1 against 0): 705.8 / 740.4 at 4096^3, 725.4 / 739.0 at 8192^3, 665.1 / 698.7 at
//   4000^3, 405.0 / 399.4 at 4097^3. gpulab compare at 4096^3 showed why: DRAM reads 274 MB against
//   149 MB, L2 hit rate 67.5% against 78.1%; the clusters' k-tiles were spread over all of K.
//   Taken head first, k-aligned (H200, 2026-12-01, notebook/probes/ab_rungs.py, medians of 4 rounds in
//   alternation with cuBLAS, SCHEDULE 1 against 0): 192.5 / 186.5 us at 4096^3, 1467.1 / 1476.6 us
//   at 8192^3, 296.6 / 307.0 us at 4097^3, 190.4 / 184.3 us at 4000^3. At 4096^3 DRAM reads fell to
//   197 MB, yet the tail's consumers still wait on their loads (mbarrier try_wait executed 1.61 M
//   times against 0.91 M with whole tiles). Prefetching the partial into L2 as the tail starts and
//   releasing the head's flag a k-tile into the next unit changed nothing (192.0-192.3 us): the
//   hand-over is not the cost. The default stays 0; the tune decides per shape (tuned.json).
// BN = 192 (m64n192k16, 96 accumulators a thread, six C chunks per consumer): for shapes whose
//   256 x 256 cluster tiles leave clusters idle. At 1000x3000x776 they are 4 x 12 = 48 for 66
//   clusters; 256 x 192 tiles are 4 x 16 = 64, three quarters of the work each. Measured (H200,
//   2026-12-02, notebook/device/device_bn192.sh, medians of 5 rounds in alternation with cuBLAS, us):
//   1000x3000x776 17.2 (BN 256) / 16.1 (BN 192) / 17.5 (BN 192, CLUSTER 1), cuBLAS 14.1;
//   1000x3000x777 (staged) 21.8 / 19.6 / 18.5; 2048^3 29.5 / 38.8 / 38.0, where 64 tiles of 256 x 256
//   fill 64 clusters in one round and 256 x 192 make 88 (two rounds). The tune picks per shape.
// BN = 200 and CLUSTER = 4 (cuBLAS's own tile at 1000x3000x776: nvjet 200x128 in clusters of four,
//   M = 1000 and N = 3000 being 8 x 128 and 15 x 200): 30 cluster tiles of 512 x 200 for the 30
//   clusters of four the H200 holds at once (a GPC's SMs need not come in fours: 120 of its 132
//   SMs; the grid is sized by gpulab.gpu.clusters, where 132 / 4 = 33 clusters ran their last 3
//   after the others). Each block loads 50 of the 200 Bt rows and multicasts them (the slices start
//   128 bytes apart, not on the swizzle's 1024-byte period: TMA swizzles by address, and wgmma reads
//   the tile from its 1024-byte-aligned start). L2 -> SM traffic per block and k-tile: 16 KiB of A +
//   6.25 KiB of Bt, against 28 KiB at BN = 192 in clusters of two. wgmma m64n200k16 (100 accumulators);
//   the epilogue's 32-column TMA boxes cover 192 columns, the last 8 go out from registers
//   (store_accumulators' STG.64, before the chunks). Measured (H200, 2026-12-02,
//   notebook/device/device_bn200_48.sh and device_c4_49.sh, medians of 7 rounds in alternation with cuBLAS):
//   1000x3000x776 15.6 / 15.5 us against 16.2 / 16.1 at BN = 192 in clusters of two (cuBLAS 14.0:
//   89.8% / 90.1%); but 1000x3000x777, staged, 18.6 / 18.8 against 17.6 / 17.7 at BN = 192 in
//   clusters of one: the clusters of four lose 3.2 us to the staging copy before them, the plain
//   grid 0.3 (docs/gemm_bf16-notes.md, "cuBLAS's tile").
// EDGE = 2 (the producer warpgroup's three idle warps take the ragged edge): where M is one or two rows
//   past whole cluster tiles or N one or two columns past whole BN tiles, the tiles cover only the
//   whole part (m_main x n_main, chosen on the host: gemm_bf16/edge.py) and warps 1-3 of the
//   producer warpgroup, idle while thread 0 issues the TMA copies, compute the rest on CUDA cores:
//   C's rows m_main .. M - 1 and columns n_main .. N - 1, each element a dot product of an A row and
//   a Bt row read from global memory (edge_dots below). At 4097^3 the tiles were 17 x 17 cluster
//   tiles of 256 x 256 for 16.004 x 16.004 tiles' worth of work: the 33 in the last row and column
//   hold one row or column each, and they make 4.4 rounds of 66 clusters where 4096^3 has 3.9. With
//   the edge aside, the 16 x 16 tiles of 4096^3 remain, and the edge is 8,193 dot products of 4,097
//   (33.6 M FMA and 67 MB read, over 396 warps that otherwise idle). Expected: 4097^3 near 4096^3's
//   time plus the staging and the odd N's copy-out, ~230 us against ~296.
//   A first version took up to 8 rows and columns, one 16-byte chunk per lane in flight (H200,
//   2026-12-02, notebook/device/device_edge41.sh, 4 rounds in alternation with cuBLAS): 341.0 us at 4097^3
//   against 296.0 for ragged tiles (BN 192), 590.8 against 287.6 at 4100^3, 885.2 against 251.1 at
//   4104^3. The edge's loads, one L2/DRAM latency after another in 3 warps per SM, outlasted the
//   tiles. So: at most 2 rows, loads in flight by unrolling, the next item's row prefetched to L2.
// Params: BN (128, 192, 200 or 256), STAGES (ring slots), GROUP_M (cluster-rows per group), CLUSTER (1: no
//   multicast, t3's loads on the persistent grid; 2 or 4 blocks along M), STORE (0: registers,
//   1: shared memory + TMA store), PINGPONG (0: both consumers share each tile, 1: whole tiles in
//   turn, BN = 128), SCHEDULE (0: whole tiles, 1: the stream-K tail above; default 0), EDGE (0: ragged
//   tiles, 2: up to 2 rows and columns past the whole tiles on the producer's idle warps, above).
//   BM = 128 (two consumer warpgroups of 64 rows), BK = 64. Dynamic
//   shared memory: STAGES * (128 + BN) * 128 + 1024 (+ 32768 with STORE = 1) bytes <= 227 KiB:
//   BN 256, 200 or 192 -> 4 stages, BN 128 -> 6. Tensor map boxes: A 64 x 128, Bt 64 x BN / CLUSTER, C 32 x 64.
//   Registers: producer 40, consumers 232 (setmaxnreg), as t3; with EDGE 64 and 216.
// Descriptors: each consumer builds the low words of its wgmma descriptors once, for the ring's first
//   slot, and adds a slot's and a k16 slice's offsets to them (hopper.cuh): 80 SASS instructions per
//   k-tile and warp in its loop, where computing each descriptor from its address took 100. Measured
//   (H200, 2026-12-01, notebook/device/device_desc2.sh, 5 rounds in alternation with cuBLAS): 183.4 against
//   184.1 us at 4096^3, 181.4 against 181.6 at 4000^3, 29.6 against 29.5 at 2048^3.
// A unit's first wgmma runs with scale-d = 0 (D = A x B, the accumulators' old values ignored), so the
//   consumers no longer zero their 128 accumulators (64 CS2R per thread) between the epilogue and the
//   next tile. Measured (H200, 2026-12-01, notebook/device/device_epvar.sh, 5 rounds in alternation with
//   cuBLAS): 182.9 against 183.2 us at 4096^3, 181.1 against 181.3 at 4000^3, 29.5 against 29.6 at
//   2048^3, 1,459.2 against 1,462.7 at 8192^3 (3 rounds).
// Shapes: as t3: any M, N, K >= 1; ragged M, N by TMA zero fill and clipped/masked stores (a block whose
//   rows lie past M still loads its share of Bt for its peer); for K not a multiple of 8 the host
//   stages padded copies of A and Bt (staging.py) and the tensor maps describe those, as t3.
//   Measured (H200, 2026-12-01): 4097^3 314.3 us (437.6 TFLOP/s), of which the staging ~34 us
//   (4097x4097x4104, unstaged, 280.3 us); the register epilogue for its odd N took it to 346.2 us.
//   The copy-out for an odd N, its addressing hoisted and its 16 rows unrolled (store_tile_smem),
//   took 4097^3 from 302.4 to 278.3 us with SCHEDULE = 1 (H200, 2026-12-01, 4 rounds in alternation).
#include "gemm_bf16/hopper.cuh"

#define BM 128
#define BK 64
#define CONSUMERS 2
#define THREADS (128 * (CONSUMERS + 1))
#define A_TILE_BYTES (BM * BK * 2)
#define B_TILE_BYTES (BN * BK * 2)
#define B_SLICE_ROWS (BN / CLUSTER)  // the rows of Bt each block of a cluster loads and multicasts
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define SLOT_DESC_STEP (STAGE_BYTES / 16)  // one ring slot further: the descriptors' low words (hopper.cuh)
#define ACC (BN / 2)  // one 64-row half's accumulators per thread
// EDGE: edge_dots' loads in flight need more than 40 (48 spilled there; 56 with 224 for the consumers
// spilled with SCHEDULE = 1); the consumers' 216 still hold 128 accumulators without spilling, and
// 128 x 64 + 256 x 216 fit the SM's 65,536 registers.
#define PRODUCER_REGS (EDGE ? 64 : 40)
#define CONSUMER_REGS (EDGE ? 216 : 232)
#ifndef PINGPONG
#define PINGPONG 0
#endif
#define READERS_PER_SLOT (PINGPONG ? 1 : CONSUMERS)  // consumer warpgroups that read one slot
#define RELEASES_PER_SLOT (4 * READERS_PER_SLOT * CLUSTER)  // one per reading consumer warp of every block
#define C_CHUNK_COLS 32                               // FP32 columns of one TMA store box: 128 bytes
#define C_CHUNK_BYTES (64 * C_CHUNK_COLS * 4)          // a consumer's 64 rows of them: 8 KiB
#define C_BUFFERS 2                                   // per consumer: fill one while the other drains
// Two hooks for a kernel that includes this file to run t4 on other operands (sgemm's v14: 3xTF32,
// WGMMA_TF32 in hopper.cuh): its entry's name, and the k extent the ring walks, in the tensor maps'
// 16-bit elements (64 to a 128-byte k-tile), as a function of the entry's K. Here: gemm_bf16 and K.
#ifndef T4_ENTRY
#define T4_ENTRY gemm_bf16
#endif
#ifndef RING_K
#define RING_K(K) (K)
#endif
// FLUSH (v14 sets it; 0 here): the consumers (PINGPONG = 0) start a fresh wgmma accumulation every
// FLUSH k-tiles and add each block's result into a second set of FP32 registers with ordinary,
// round-to-nearest adds. The tensor cores' own FP32 accumulation then runs over FLUSH k-tiles at a
// time, not the whole of K (v14's header: why it matters there). IN_BLOCK(i): k-tile i's place in
// its block (with FLUSH = 0 one block, the unit).
#ifndef FLUSH
#define FLUSH 0
#endif
#if FLUSH
#define IN_BLOCK(i) ((i) % FLUSH)
#else
#define IN_BLOCK(i) (i)
#endif
#if FLUSH && PINGPONG
#error "FLUSH needs PINGPONG = 0: a pingpong consumer's two accumulator sets leave no registers for the sums"
#endif

// EDGE: the most rows (columns) past the whole tiles that the producer's idle warps compute (0: none,
// the tiles cover all of C, ragged ones masked). A kernel that includes this file on other operands
// (v14) leaves it 0: edge_dots reads BF16.
#ifndef EDGE
#define EDGE 0
#endif
#if EDGE != 0 && EDGE != 2
#error "EDGE must be 0 (ragged tiles) or 2 (up to 2 rows and columns past the whole tiles, on CUDA cores)"
#endif
#define EDGE_WARPS 3  // warps 1-3 of the producer warpgroup

#if BN != 128 && BN != 192 && BN != 200 && BN != 256
#error "BN must be 128, 192, 200 or 256"
#endif
#if CLUSTER != 1 && CLUSTER != 2 && CLUSTER != 4
#error "CLUSTER must be 1, 2 or 4"
#endif
#if (BN / CLUSTER) * CLUSTER != BN
#error "BN must split into CLUSTER equal slices of Bt rows"
#endif
#if PINGPONG != 0 && PINGPONG != 1
#error "PINGPONG must be 0 (both consumers share each tile) or 1 (they alternate whole tiles)"
#endif
#if PINGPONG && BN != 128
#error "PINGPONG = 1 needs BN = 128: one warpgroup holds a whole 128 x BN tile's accumulators"
#endif
#ifndef SCHEDULE
#define SCHEDULE 0
#endif
#if SCHEDULE != 0 && SCHEDULE != 1
#error "SCHEDULE must be 0 (whole tiles) or 1 (whole tiles, then a stream-K tail)"
#endif
#if SCHEDULE && PINGPONG
#error "SCHEDULE = 1 needs PINGPONG = 0: pingpong consumers find tile j's first k-tile at j * k_tiles in the ring"
#endif
#if STORE != 0 && STORE != 1
#error "STORE must be 0 (from registers) or 1 (through shared memory, TMA store)"
#endif

#if CLUSTER > 1
#define CLUSTER_DIMS __cluster_dims__(CLUSTER, 1, 1)  // fixed at compile time: a plain launch forms clusters
#else
#define CLUSTER_DIMS
#endif

// Cluster tile t (GROUP_M cluster-rows per group, column-major inside a group) -> this block's
// (m0, n0): a cluster tile is CLUSTER * BM rows by BN columns, block rank r takes rows r * BM ...
__device__ __forceinline__ void cluster_tile(int t, const int* tile_grid, unsigned rank, int& m0, int& n0) {
    const int tiles_m = *(const volatile int*)&tile_grid[0], tiles_n = *(const volatile int*)&tile_grid[1];
    const int per_group = GROUP_M * tiles_n;
    const int first_m = (t / per_group) * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int in_group = t % per_group;
    m0 = ((first_m + in_group % group_rows) * CLUSTER + (int)rank) * BM;
    n0 = (in_group / group_rows) * BN;
}

// The units of work of one cluster, in order, the same for its producer and consumers and for both
// blocks of the cluster (so the multicast halves of Bt pair up): (tile t, k-tiles kb .. ke - 1, taken
// from kb + rot on, wrapping: kb + (i + rot) % (ke - kb) for the unit's i-th k-tile).
// First the data-parallel tiles, cluster_id, cluster_id + clusters, ... below dp_tiles, whole; then
// (SCHEDULE = 1) this cluster's contiguous share [g, g_end) of the last sk_tiles tiles' k-tiles,
// linearized as (t - dp_tiles) * k_tiles + kt and cut into `clusters` equal ranges. The host chooses
// sk_tiles >= clusters (tma_rungs.t4_stream_k_tiles), so every range spans at least one tile's
// k-tiles and a tile is split between at most two neighbouring clusters: a range starts inside tile
// a (its tail, k-tiles g % k_tiles .. k_tiles - 1) and ends inside tile b (its head, k-tiles 0 ..
// g_end % k_tiles - 1), with whole tiles between.
// The share is taken head first, then the whole tiles, then the tail, each as close as it can to the
// k-tile the step count points at (step s takes k-tile s % k_tiles): so at any moment every cluster
// works near the same k-tile, as in the data-parallel rounds, and the L2 serves the clusters reading
// the same A block-row or Bt block-column from one copy. (Taken in linear order, cluster c started
// at k-tile g % k_tiles, spread evenly over K: at 4096^3 the tail's operands, ~50 MB, did not stay in
// the L2, DRAM reads went from 149 to 274 MB and the schedule ran 5% slower than whole tiles.)
// The head goes to the workspace for the next cluster, which finishes tile b last in its share; the
// tail is finished here, with the previous cluster's head of tile a (done first thing in its share).
// It holds the cursor; the launch's constants (clusters, dp_tiles, k_tiles) come with each call.
struct WorkList {
    int tile;      // the next data-parallel tile
    int g, g_end;  // this cluster's stream-K range, in the linearized k-tiles (< 2^31: sk_tiles <= 2 x
                   // clusters, k_tiles <= 2^14 at gemm_bf16's max_dim)
    int part;      // 0: the head next, 1: whole tiles, 2: the tail, 3: done
    int whole;     // whole tiles of the range taken so far
    int steps;     // stream-K k-tiles taken so far (every data-parallel tile is k_tiles of them: 0 mod k_tiles)
    __device__ WorkList(int cluster_id, int clusters, int sk_tiles, int k_tiles)
        : tile(cluster_id), part(0), whole(0), steps(0) {
        const long long total = (long long)sk_tiles * k_tiles;
        g = (int)(total * cluster_id / clusters);
        g_end = (int)(total * (cluster_id + 1) / clusters);
    }
    // The next unit into (t, kb, ke, rot); false when this cluster has none left.
    __device__ bool next(int clusters, int dp_tiles, int k_tiles, int& t, int& kb, int& ke, int& rot) {
        if (tile < dp_tiles) {
            t = tile;
            kb = 0;
            ke = k_tiles;
            rot = 0;
            tile += clusters;
            return true;
        }
        if (part == 0) {  // the head of the range's last tile
            part = 1;
            if (g < g_end && g_end % k_tiles) {
                t = dp_tiles + g_end / k_tiles;
                kb = 0;
                ke = g_end % k_tiles;
                rot = 0;
                steps += ke;
                return true;
            }
        }
        if (part == 1) {
            const int w = (g + k_tiles - 1) / k_tiles + whole;
            if (g < g_end && w < g_end / k_tiles) {
                t = dp_tiles + w;
                kb = 0;
                ke = k_tiles;
                rot = steps % k_tiles;
                ++whole;
                steps += k_tiles;
                return true;
            }
            part = 2;
        }
        if (part == 2) {  // the tail of the range's first tile
            part = 3;
            if (g < g_end && g % k_tiles) {
                t = dp_tiles + g / k_tiles;
                kb = g % k_tiles;
                ke = k_tiles;
                const int s = steps % k_tiles;
                rot = s >= kb ? s - kb : 0;
                steps += ke - kb;
                return true;
            }
        }
        return false;
    }
};

// Stream-K partials: one slot of BM x BN FP32 per block of a contributing cluster, per consumer
// warpgroup 64 x BN, stored thread-major (float4 i of thread t at [i][t]): whatever the fragment
// layout, the owning warpgroup reads back the same registers, and each warp's float4 stores cover 512
// contiguous bytes. Through L2 (.cg): the reader runs on another SM.
__device__ __forceinline__ float4* partial_slot(float* workspace, int cluster, unsigned rank, int c) {
    const long long warpgroup = (long long)(cluster * CLUSTER + (int)rank) * CONSUMERS + c;
    return reinterpret_cast<float4*>(workspace) + warpgroup * 32 * ACC + threadIdx.x % 128;  // 32 x ACC float4
}
__device__ __forceinline__ void store_partial(const float (&acc)[ACC], float4* slot) {
#pragma unroll
    for (int i = 0; i < ACC / 4; ++i) {
        __stcg(slot + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
    }
}
// acc += the partial, in a fixed order (the same bits every run), eight float4 per thread at a time
// with a barrier of the warpgroup between the batches: ptxas hoists loads over anything else (an
// empty asm, a dependence it can see through), and 128 loaded values next to the 128 accumulators
// spilled (STORE = 0, BN = 256). (Loading the partial as the starting accumulators instead made
// ptxas serialize the wgmma: C7515.)
__device__ __forceinline__ void add_partial(float (&acc)[ACC], const float4* slot, int barrier_id) {
#pragma unroll
    for (int i0 = 0; i0 < ACC / 4; i0 += 8) {
        float4 v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = __ldcg(slot + (i0 + i) * 128);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            acc[4 * (i0 + i)] += v[i].x;
            acc[4 * (i0 + i) + 1] += v[i].y;
            acc[4 * (i0 + i) + 2] += v[i].z;
            acc[4 * (i0 + i) + 3] += v[i].w;
        }
        named_barrier_sync(barrier_id, 128);
    }
}

// This consumer warp is done reading `slot`: one arrival on the slot's empty barrier in every block
// of the cluster (each block's producer refills its share of the slot in all of them).
__device__ __forceinline__ void release_slot(unsigned long long* empty_slot) {
    if (threadIdx.x % 32 == 0) {
#if CLUSTER > 1
#pragma unroll
        for (unsigned r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty_slot, r);
#else
        mbar_arrive(empty_slot);
#endif
    }
}

#if EDGE
// x . y over eight BF16 pairs, added to acc in order: a BF16 is the high half of an FP32.
__device__ __forceinline__ float dot8(const uint4 x, const uint4 y, float acc) {
    const unsigned xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        acc = fmaf(__uint_as_float(xs[i] << 16), __uint_as_float(ys[i] << 16), acc);
        acc = fmaf(__uint_as_float(xs[i] & 0xffff0000u), __uint_as_float(ys[i] & 0xffff0000u), acc);
    }
    return acc;
}

// One item of the edge: the dots of `row` with the R edge rows (`chunks` 16-byte chunks apart), lane e
// storing row e's at out + e * out_step. Lane l reads chunks l, l + 32, ... of each row (512 contiguous
// bytes per warp load), the item's row streaming (evict first), the edge rows from L1 (the same for
// every item). The loads are all that takes time, one latency after another, so U chunks of each row
// are loaded before any is used: U x (4 + 4 R) registers, within the producer warpgroup's
// PRODUCER_REGS (R = 1 with U = 2 and R = 2 with U = 1; 8 rows with U = 1 spilled at 56).
// The chunk loop is warp-uniform (a lane past the row idles): one warp load per 32 chunks and row,
// however it unrolls. Each lane sums its products in FP32; the warp adds the lanes' sums by shuffles.
template <int R, int U>
__device__ __forceinline__ void edge_item(const uint4* __restrict__ row, const uint4* __restrict__ edge,
                                          long long stride, int chunks, float* out, long long out_step) {
    const int lane = threadIdx.x % 32;
    float acc[R];
#pragma unroll
    for (int e = 0; e < R; ++e) acc[e] = 0.0f;
#pragma unroll 1
    for (int c0 = 0; c0 < chunks; c0 += 32 * U) {
        uint4 x[U], y[U][R];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int c = c0 + 32 * u + lane;
            if (c < chunks) {
                x[u] = __ldcs(row + c);
#pragma unroll
                for (int e = 0; e < R; ++e) y[u][e] = __ldg(edge + e * stride + c);
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (c0 + 32 * u + lane < chunks) {
#pragma unroll
                for (int e = 0; e < R; ++e) acc[e] = dot8(x[u], y[u][e], acc[e]);
            }
        }
    }
    float mine = 0.0f;  // lane e keeps edge row e's sum
#pragma unroll
    for (int e = 0; e < R; ++e) {
#pragma unroll
        for (int d = 16; d > 0; d /= 2) acc[e] += __shfl_xor_sync(0xffffffffu, acc[e], d);
        if (lane == e) mine = acc[e];
    }
    if (lane < R) out[lane * out_step] = mine;
}

// Ask L2 for the next item's row (its 128-byte lines, a lane per line in turn) while this one's loads
// wait: those then come from L2, not DRAM. A prefetch holds no register.
__device__ __forceinline__ void prefetch_row(const uint4* row, int chunks) {
    const char* bytes = reinterpret_cast<const char*>(row);
#pragma unroll 1
    for (int line = threadIdx.x % 32; line * 8 < chunks; line += 32) {
        asm volatile("prefetch.global.L2 [%0];" ::"l"(bytes + line * 128));
    }
}

// edge_item for the launch's R (1 or 2 edge rows).
__device__ __forceinline__ void edge_item_of(int rows, const uint4* row, const uint4* edge, long long stride,
                                             int chunks, float* out, long long out_step) {
    if (rows == 1) edge_item<1, 2>(row, edge, stride, chunks, out, out_step);
    else edge_item<2, 1>(row, edge, stride, chunks, out, out_step);
}

// The edge the tiles leave out (EDGE above): C's rows m_main .. M - 1 across all N columns (item
// b < N: column b, Bt row b against A's edge rows) and its columns n_main .. N - 1 for the rows above
// (item N + a: row a, A row a against Bt's edge rows). EDGE_WARPS warps of every block take the items
// in turn. Rows are `pitch` elements apart (the host's gemm_bf16.staging.row_pitch: K, or the staged
// copies' padded pitch, zeros past K); each item reads the chunks that hold K.
__device__ __forceinline__ void edge_dots(const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt, float* C,
                                          int M, int N, int K, int pitch, int m_main, int n_main) {
    const int chunks = (K + 7) / 8;
    const long long stride = pitch / 8;  // uint4 chunks from one row to the next
    const int bottom = m_main < M ? N : 0, items = bottom + (n_main < N ? m_main : 0);
    const int step = gridDim.x * EDGE_WARPS;
    int item = blockIdx.x * EDGE_WARPS + threadIdx.x / 32 - 1;
    const uint4* a = reinterpret_cast<const uint4*>(A);
    const uint4* bt = reinterpret_cast<const uint4*>(Bt);
    for (; item < bottom; item += step) {
        if (item + step < bottom) prefetch_row(bt + (item + step) * stride, chunks);
        else if (item + step < items) prefetch_row(a + (item + step - bottom) * stride, chunks);
        edge_item_of(M - m_main, bt + item * stride, a + m_main * stride, stride, chunks,
                     C + (long long)m_main * N + item, N);
    }
    for (; item < items; item += step) {
        const int r = item - bottom;
        if (item + step < items) prefetch_row(a + (r + step) * stride, chunks);
        edge_item_of(N - n_main, a + r * stride, bt + n_main * stride, stride, chunks,
                     C + (long long)r * N + n_main, 1);
    }
}
#endif

// Where `on`, w[i] and w[i ^ d] trade places for every i (d = 1 or 2): w[g] then holds what w[g ^ d]
// held. Selects on registers, no indexing by a run-time value (which would go through local memory).
__device__ __forceinline__ void xor_order(float2 (&w)[4], int d, bool on) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if ((i & d) == 0) {
            const float2 a = w[i], b = w[i ^ d];
            w[i] = on ? b : a;
            w[i ^ d] = on ? a : b;
        }
    }
}

// The epilogue with STORE = 1: this consumer warpgroup's 64 x BN accumulators go out in chunks of
// 64 x 32 FP32 through two 8 KiB shared buffers (128-byte swizzled, as the C map's box). The threads
// write float2s, each half-warp 4 rows x 32 B into 8 different 16-byte bank groups (the swizzle puts
// chunk q of row r at q ^ (r % 8), and the store order below spreads the rows), so 2 wavefronts per
// store, against ~8 L1 wavefronts per STG.64 of the register epilogue (8 lines). Then, where C has a tensor map (`tma`: N % 4 == 0), one thread
// hands the chunk to a TMA store while the next chunk is written; a buffer is rewritten only once the
// store two chunks back has read it (wait_group.read 1, across tiles too: the count runs on), and
// every chunk's writes are fenced for the async proxy first. Where N % 4 != 0 (a row pitch TMA
// cannot take) the warpgroup copies the chunk out itself, a row of 32 floats per warp instruction
// (128 contiguous bytes, masked at the edges): register stores of an odd N could not pair columns,
// and each scalar STG of 8 rows x 4 columns touched 8 sectors for 128 bytes.
__device__ __forceinline__ void store_tile_smem(const float (&acc)[ACC], unsigned char* buffers,
                                                const TmaDescriptor* map_c, bool tma, float* C, int M, int N, int m0,
                                                int n0, int barrier_id) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#if BN % C_CHUNK_COLS
    // BN = 200: the last 8 columns from registers (no 32-column box fits them without writing the
    // next tile's columns), before the chunks, so their stores are in flight while the chunks go out.
    store_accumulators<BN, BN / C_CHUNK_COLS * C_CHUNK_COLS / 8>(acc, C, M, N, m0, n0);
#endif
#pragma unroll
    for (int j = 0; j < BN / C_CHUNK_COLS; ++j) {
        unsigned char* buf = buffers + (j % C_BUFFERS) * C_CHUNK_BYTES;
        if (tma && t == 0) bulk_wait_group_read<C_BUFFERS - 1>();
        named_barrier_sync(barrier_id, 128);  // buf is free: its last store or copy has read it
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = warp * 16 + lane / 4 + half * 8;
            // The chunk's 8-column groups g (accumulator group 4j + g), stored in the order g ^ s,
            // s = r % 4: in the order 0..3 a half-warp's rows r and r ^ 1 wrote the same two
            // 16-byte bank groups (q and q + 1 land at q ^ (r % 8)), 4 wavefronts per STS.64; so
            // the four rows cover all eight, 2 wavefronts (the minimum for 256 bytes). The order
            // is a register choice made per thread: two rounds of conditional swaps (SEL).
            const int s = (lane / 4) % 4;
            float2 w[4];
#pragma unroll
            for (int g = 0; g < 4; ++g) w[g] = make_float2(acc[4 * (4 * j + g) + 2 * half], acc[4 * (4 * j + g) + 2 * half + 1]);
            xor_order(w, 1, s & 1);
            xor_order(w, 2, s & 2);
#pragma unroll
            for (int g = 0; g < 4; ++g) {  // w[g] is group g ^ s
                const int q = 2 * (g ^ s) + (lane % 4) / 2;  // 16-byte chunk of the 128-byte row
                *reinterpret_cast<float2*>(buf + r * 128 + ((q ^ (r % 8)) * 16) + (lane % 2) * 8) = w[g];
            }
        }
        if (tma) fence_proxy_async_shared();
        named_barrier_sync(barrier_id, 128);
        if (tma) {
            if (t == 0) {
                tma_store_2d(map_c, buf, n0 + j * C_CHUNK_COLS, m0);
                bulk_commit_group();
            }
        } else {
            // This warp's rows warp + 4i, i = 0..15, unrolled with the addressing hoisted: row r's
            // swizzle is r % 8 = warp or warp + 4 (i even or odd), so two shared-memory bases; the
            // global address steps by 4 rows. (A loop with each row's addressing computed in turn
            // kept the warps waiting on the chain of one row at a time, "wait" stalls in ncu: ~17,500
            // SM cycles per 128 x 256 tile; this, ~8,800; the TMA store, ~4,600. notebook/device/device_oddn.sh,
            // device_copyout.sh.)
            const int col = n0 + j * C_CHUNK_COLS + lane;
            const unsigned char* even = buf + warp * 128 + ((lane / 4) ^ warp) * 16 + (lane % 4) * 4;
            const unsigned char* odd = buf + (warp + 4) * 128 + ((lane / 4) ^ (warp + 4)) * 16 + (lane % 4) * 4;
            float* dst = C + (long long)(m0 + warp) * N + col;
            const int rows_left = col < N ? M - m0 - warp : 0;  // rows warp + 4i with 4i < rows_left exist
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                const float x = *reinterpret_cast<const float*>((i % 2 ? odd : even) + (i / 2) * 8 * 128);
                if (4 * i < rows_left) *dst = x;
                dst += 4LL * N;
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) CLUSTER_DIMS
T4_ENTRY(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C, const __grid_constant__ TmaDescriptor tma_a,
          const __grid_constant__ TmaDescriptor tma_bt, const __grid_constant__ TmaDescriptor tma_c,
          float* __restrict__ workspace, unsigned* __restrict__ flags, int sk_tiles, int m_main, int n_main,
          int pitch) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    // PINGPONG: order[c] completes a phase when the other consumer has issued a tile's last wgmma.
    __shared__ unsigned long long order[CONSUMERS];
    // The tile grid (tiles_m, tiles_n), read back at every unit: held in registers through the
    // consumers' mainloop, next to 128 accumulators, ptxas spilled it with SCHEDULE = 1.
    __shared__ int tile_grid[2];
    // Same offset in every block of a cluster (same kernel, same static layout): multicast relies on it.
    unsigned char* ring = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);

    // The tiles cover m_main x n_main: all of C, or with EDGE its whole tiles (the rest: edge_dots).
    const int tiles_m = (m_main + BM * CLUSTER - 1) / (BM * CLUSTER), tiles_n = (n_main + BN - 1) / BN;
    const int tiles = tiles_m * tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const unsigned rank = CLUSTER > 1 ? cluster_ctarank() : 0;
    const int k_tiles = (RING_K(K) + BK - 1) / BK;
    const int wg = threadIdx.x / 128;
    // SCHEDULE = 0, or a host value that breaks the at-most-two-clusters-per-tile rule: whole tiles.
    if (!SCHEDULE || sk_tiles < clusters || sk_tiles > tiles || k_tiles < 2) sk_tiles = 0;

    // C's rows must start on 16-byte boundaries for its tensor map (the host passes zeros otherwise).
    const bool tma_store = STORE && (N % 4) == 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], RELEASES_PER_SLOT);
        }
        for (int c = 0; c < CONSUMERS; ++c) mbar_init(&order[c], 128);
        fence_barrier_init();
        tile_grid[0] = tiles_m;
        tile_grid[1] = tiles_n;
    }
    __syncthreads();
#if CLUSTER > 1
    cluster_sync();  // the peer's barriers exist before any multicast or remote arrival reaches them
#endif
    wait_for_prior_grid();  // a staged A and Bt are written (hopper.cuh)

    if (wg == 0) {
        // Producer warpgroup: one thread issues every copy (K % 8 != 0 reaches here staged: staging.py).
        regs_dealloc<PRODUCER_REGS>();
#if EDGE
        // Warps 1-3 the edge, if any (a branch apart from thread 0's: the producer's state is not live
        // through edge_dots, which has the producer warpgroup's registers to itself).
        if (threadIdx.x >= 32) {
            if (m_main < M || n_main < N) edge_dots(A, Bt, C, M, N, K, pitch, m_main, n_main);
        } else
#endif
        if (threadIdx.x == 0) {
            unsigned it = 0;  // k-tiles issued by this block so far, over all its units: slot and parity
            WorkList work(cluster_id, clusters, sk_tiles, k_tiles);
            int t, kb, ke, rot;
            while (work.next(clusters, tiles - sk_tiles, k_tiles, t, kb, ke, rot)) {
                int m0, n0;
                cluster_tile(t, tile_grid, rank, m0, n0);
                for (int i = 0, kt = kb + rot; i < ke - kb; ++i, ++it, kt = (kt + 1 == ke ? kb : kt + 1)) {
                    const unsigned slot = it % STAGES;
                    // The slot's previous k-tile (it - STAGES) was read by every consumer of the cluster.
                    if (it >= STAGES) mbar_wait(&empty[slot], ((it / STAGES) - 1) & 1);
                    unsigned char* a_tile = ring + slot * STAGE_BYTES;
                    // This block's A tile, and its slice of the shared Bt tile into every block.
                    mbar_arrive_expect_tx(&full[slot], STAGE_BYTES);
                    tma_load_2d(a_tile, &tma_a, &full[slot], kt * BK, m0);
#if CLUSTER > 1
                    tma_load_2d_multicast(a_tile + A_TILE_BYTES + rank * B_SLICE_ROWS * BK * 2, &tma_bt,
                                          &full[slot], kt * BK, n0 + (int)rank * B_SLICE_ROWS,
                                          (unsigned short)((1u << CLUSTER) - 1));
#else
                    tma_load_2d(a_tile + A_TILE_BYTES, &tma_bt, &full[slot], kt * BK, n0);
#endif
                }
            }
        }
    } else if (!PINGPONG) {
        // Consumer warpgroups 1 and 2: rows (wg - 1) * 64 .. + 63 of each block tile.
        regs_alloc<CONSUMER_REGS>();
        const int c = wg - 1;
        unsigned it = 0;  // k-tiles consumed so far: the producer's counter, in step
        // The first slot's descriptors (low words): this warpgroup's 64 rows of the A tile, the Bt tile.
        const unsigned a_low0 = desc_k_major_sw128_low(ring + c * 64 * BK * 2);
        const unsigned b_low0 = desc_k_major_sw128_low(ring + A_TILE_BYTES);
        WorkList work(cluster_id, clusters, sk_tiles, k_tiles);
        int t, kb, ke, rot;  // the consumers need only the unit's length: which k-tile is the producer's
        while (work.next(clusters, tiles - sk_tiles, k_tiles, t, kb, ke, rot)) {
            int m0, n0;
            cluster_tile(t, tile_grid, rank, m0, n0);
            float acc[ACC];  // not zeroed: the unit's first wgmma ignores it (scale-d = 0)
#if FLUSH
            float sum[ACC];  // the unit's blocks of FLUSH k-tiles, added in FP32 (round to nearest)
#pragma unroll
            for (int j = 0; j < ACC; ++j) sum[j] = 0.0f;
#endif
            for (int i = 0; i < ke - kb; ++i, ++it) {
                const unsigned slot = it % STAGES;
                mbar_wait(&full[slot], (it / STAGES) & 1);
                const unsigned a_low = a_low0 + slot * SLOT_DESC_STEP, b_low = b_low0 + slot * SLOT_DESC_STEP;
                fence_registers(acc);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) {  // k16 slice kk: 32 bytes along the rows
                    wgmma_m64k16<BN>(acc, desc_k_major_sw128_of(a_low + 2 * kk), desc_k_major_sw128_of(b_low + 2 * kk),
                                     IN_BLOCK(i) > 0 || kk > 0);
                }
                wgmma_commit();
#if FLUSH
                if ((i + 1) % FLUSH == 0 || i + 1 == ke - kb) {
                    // The block's last k-tile: wait for all of it, free the slots it still holds, add it.
                    wgmma_wait<0>();
                    fence_registers(acc);
                    if (IN_BLOCK(i) > 0) release_slot(&empty[(it - 1) % STAGES]);
                    release_slot(&empty[slot]);
#pragma unroll
                    for (int j = 0; j < ACC; ++j) sum[j] += acc[j];
                    continue;
                }
#endif
                // Keep this k-tile's group in flight; the previous one has retired, free its slot.
                wgmma_wait<1>();
                fence_registers(acc);
                if (IN_BLOCK(i) > 0) release_slot(&empty[(it - 1) % STAGES]);
            }
#if FLUSH
#pragma unroll
            for (int j = 0; j < ACC; ++j) acc[j] = sum[j];
#else
            wgmma_wait<0>();
            fence_registers(acc);
            release_slot(&empty[(it - 1) % STAGES]);
#endif
            if (SCHEDULE && ke < k_tiles) {
                // The head of a split tile, this cluster's first stream-K unit: the next cluster
                // finishes the tile last in its share, so hand it the partial (ready long before)
                // and go on to the next unit.
                store_partial(acc, partial_slot(workspace, cluster_id, rank, c));
                named_barrier_sync(1 + c, 128);  // the warpgroup's stores, before its flag
                if (threadIdx.x % 128 == 0) flag_release(&flags[(cluster_id * CLUSTER + rank) * CONSUMERS + c]);
                continue;
            }
            if (SCHEDULE && kb > 0) {
                // The tail of a split tile, the last unit of this share: the previous cluster computed
                // its head first thing in its share (long done, unless the shares are near one tile).
                const int prev = cluster_id - 1;
                if (threadIdx.x % 128 == 0) flag_acquire_and_clear(&flags[(prev * CLUSTER + rank) * CONSUMERS + c]);
                named_barrier_sync(1 + c, 128);
                add_partial(acc, partial_slot(workspace, prev, rank, c), 1 + c);
            }
            // The producer is already filling the ring with the next tile while these stores run.
            if (STORE) {
                store_tile_smem(acc, ring + STAGES * STAGE_BYTES + c * C_BUFFERS * C_CHUNK_BYTES, &tma_c, tma_store, C,
                                M, N, m0 + c * 64, n0, 1 + c);
            } else {
                store_accumulators<BN>(acc, C, M, N, m0 + c * 64, n0);
            }
        }
        if (tma_store && threadIdx.x % 128 == 0) bulk_wait_group<0>();  // its buffers outlive the stores
    } else {
        // PINGPONG: consumer c computes this block's tiles j = c, c + 2, ... whole (rows 0-63 in acc0,
        // 64-127 in acc1); its mainloop of tile j starts once the other consumer has issued all of
        // tile j - 1's wgmma, so the tensor cores switch from one to the other without a gap while
        // the first drains and stores.
        regs_alloc<CONSUMER_REGS>();
        const int c = wg - 1;
        const int k_tiles_u = k_tiles;
        const unsigned a_low0 = desc_k_major_sw128_low(ring), b_low0 = desc_k_major_sw128_low(ring + A_TILE_BYTES);
        for (int j = c, t = cluster_id + c * clusters; t < tiles; j += 2, t += 2 * clusters) {
            int m0, n0;
            cluster_tile(t, tile_grid, rank, m0, n0);
            unsigned it = (unsigned)j * (unsigned)k_tiles_u;  // the ring's counter at this tile's first k-tile
            float acc0[ACC], acc1[ACC];  // not zeroed: the tile's first wgmma ignore them (scale-d = 0)
            if (j > 0) mbar_wait(&order[c], ((j - 1) / 2) & 1);  // the other consumer issued tile j - 1
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const unsigned slot = it % STAGES;
                mbar_wait(&full[slot], (it / STAGES) & 1);
                const unsigned a_low = a_low0 + slot * SLOT_DESC_STEP, b_low = b_low0 + slot * SLOT_DESC_STEP;
                fence_registers(acc0);
                fence_registers(acc1);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) {
                    const unsigned long long db = desc_k_major_sw128_of(b_low + 2 * kk);
                    const unsigned scale_d = kt > 0 || kk > 0;
                    wgmma_m64k16<BN>(acc0, desc_k_major_sw128_of(a_low + 2 * kk), db, scale_d);
                    wgmma_m64k16<BN>(acc1, desc_k_major_sw128_of(a_low + (64 * BK * 2) / 16 + 2 * kk), db, scale_d);
                }
                wgmma_commit();
                wgmma_wait<1>();
                fence_registers(acc0);
                fence_registers(acc1);
                if (kt > 0) release_slot(&empty[(it - 1) % STAGES]);
            }
            mbar_arrive(&order[1 - c]);  // every wgmma of tile j is issued: the other consumer's turn
            wgmma_wait<0>();
            fence_registers(acc0);
            fence_registers(acc1);
            release_slot(&empty[(it - 1) % STAGES]);
            unsigned char* buffers = ring + STAGES * STAGE_BYTES + c * C_BUFFERS * C_CHUNK_BYTES;
            if (STORE) {
                store_tile_smem(acc0, buffers, &tma_c, tma_store, C, M, N, m0, n0, 1 + c);
                store_tile_smem(acc1, buffers, &tma_c, tma_store, C, M, N, m0 + 64, n0, 1 + c);
            } else {
                store_accumulators<BN>(acc0, C, M, N, m0, n0);
                store_accumulators<BN>(acc1, C, M, N, m0 + 64, n0);
            }
        }
        if (tma_store && threadIdx.x % 128 == 0) bulk_wait_group<0>();  // its buffers outlive the stores
    }
#if CLUSTER > 1
    cluster_sync();  // no block exits while its peer may still arrive on its barriers
#endif
}
