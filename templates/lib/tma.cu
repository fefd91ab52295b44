/* lib/tma.cu -- the tensor memory accelerator (sm_90): a tensor map passed by
 * value, mbarriers, and a 2D tile load that completes its bytes on an mbarrier. */
/* A tensor map (the driver's CUtensorMap: 128 opaque bytes), passed as a
 * __grid_constant__ kernel parameter so the TMA unit can read it in place. */
struct __align__(64) qjit_tmap { unsigned long long opaque[16]; };

static __device__ __forceinline__ void mbar_init(u32 bar, u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
/* Makes initialized mbarriers visible to the other threads and to the TMA unit. */
static __device__ __forceinline__ void mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
static __device__ __forceinline__ void mbar_arrive(u32 bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
/* Arrives and announces `bytes` more to come from TMA copies on this phase. */
static __device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
/* Announces `bytes` more to come on this phase, without arriving: the
 * phase cannot complete before the arrival that follows. */
static __device__ __forceinline__ void mbar_add_tx(u32 bar, u32 bytes)
{
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
/* Whether the phase of the given parity has completed (no wait). */
static __device__ __forceinline__ bool mbar_test(u32 bar, u32 parity)
{
    u32 done;
    asm volatile("{ .reg .pred p;\n"
                 "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n }\n"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done != 0;
}
/* Waits until the phase of the given parity has completed. */
static __device__ __forceinline__ void mbar_wait(u32 bar, u32 parity)
{
    u32 done;
    do {
        asm volatile("{ .reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n }\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
/* Box (c0, c1) of a 2D tensor map into shared memory; rows and columns
 * outside the tensor arrive as zeros and count toward the bytes. */
static __device__ __forceinline__ void tma_load_2d(u32 dst, const qjit_tmap *map, int c0, int c1, u32 bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                 "[%0], [%1, { %2, %3 }], [%4];\n"
                 :: "r"(dst), "l"((u64)map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
/* Box (c0, c1) of a 2D tensor map from shared memory (the parts outside
 * the tensor are not written), in this thread's bulk group; the issuing
 * thread waits for the group to have read it with bulk_wait_read. */
static __device__ __forceinline__ void tma_store_2d(const qjit_tmap *map, u32 src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, { %2, %3 }], [%1];\n"
                 :: "l"((u64)map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
static __device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* This thread's bulk stores have read their shared memory. */
static __device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
