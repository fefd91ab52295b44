/* lib/tma.cu -- the tensor memory accelerator (sm_90): a tensor map passed by
 * value, and a 2D tile load that completes its bytes on an mbarrier
 * (lib/mbarrier.cu). */
/* A tensor map (the driver's CUtensorMap: 128 opaque bytes), passed as a
 * __grid_constant__ kernel parameter so the TMA unit can read it in place. */
struct __align__(64) qjit_tmap { unsigned long long opaque[16]; };

{{ render("lib/mbarrier.cu") }}
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
