/* lib/cluster.cu -- thread-block clusters (sm_90): a barrier over every thread
 * of the cluster that publishes nothing, and 16-byte stores into a peer's
 * shared memory that count their bytes on the peer's mbarrier (distributed
 * shared memory: a peer's address comes from mapa). */
{{ render("lib/mbarrier.cu") }}
/* Every thread of the cluster that has not exited arrives, then waits for
 * the others. Relaxed: it orders no memory operation before it (a peer's
 * writes after it wait for what they need on an mbarrier). */
static __device__ __forceinline__ void cluster_sync_relaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n"
                 "barrier.cluster.wait.aligned;\n" ::: "memory");
}
/* The address of this CTA's shared-memory word addr in cluster CTA rank. */
static __device__ __forceinline__ u32 cluster_map(u32 addr, u32 rank)
{
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
/* Four words into a peer's shared memory at addr (cluster_map'd), their 16
 * bytes completing on the peer's mbarrier bar (cluster_map'd). */
static __device__ __forceinline__ void st_async128(u32 addr, int a, int b, int c, int d, u32 bar)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.s32 [%0], { %1, %2, %3, %4 }, [%5];\n"
                 :: "r"(addr), "r"(a), "r"(b), "r"(c), "r"(d), "r"(bar) : "memory");
}
