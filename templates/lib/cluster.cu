/* lib/cluster.cu -- thread-block clusters (sm_90): a barrier over every thread
 * of the cluster, and 16-byte stores and loads of shared memory across it
 * (distributed shared memory: a peer's address comes from mapa). */
static __device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/* The two halves of cluster_sync, to overlap work with the barrier. */
static __device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/* The address of this CTA's shared-memory word addr in cluster CTA rank. */
static __device__ __forceinline__ u32 cluster_map(u32 addr, u32 rank)
{
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
static __device__ __forceinline__ void sts128(u32 addr, int a, int b, int c, int d)
{
    asm volatile("st.shared.v4.s32 [%0], { %1, %2, %3, %4};\n" :: "r"(addr), "r"(a), "r"(b), "r"(c), "r"(d)
                 : "memory");
}
static __device__ __forceinline__ int4 ld_cluster128(u32 addr)
{
    int4 v;
    asm volatile("ld.shared::cluster.v4.s32 { %0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
    return v;
}
