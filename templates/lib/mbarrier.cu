/* lib/mbarrier.cu -- mbarriers in shared memory (sm_90): phases that complete
 * on a count of arrivals and of bytes (TMA copies, stores from the cluster's
 * peers). Rendered once per kernel whoever asks first (lib/tma.cu,
 * lib/cluster.cu). */
#ifndef QJIT_MBARRIER
#define QJIT_MBARRIER
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
#endif
