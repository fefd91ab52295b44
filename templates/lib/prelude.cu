/* lib/prelude.cu -- address and copy primitives (sm_80+). Generated kernels
 * include no CUDA headers: NVRTC then parses a few hundred lines, not tens of
 * thousands. */
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

static __device__ __forceinline__ u32 smem_addr(const void *p)
{
    u32 r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

/* 16-byte global->shared copy that bypasses L1; with ok == false the
 * destination is zero-filled and nothing is read. */
static __device__ __forceinline__ void cp_async16(u32 dst, const void *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(ok ? 16 : 0));
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

static __device__ __forceinline__ uint4 lds128(u32 addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 { %0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}
static __device__ __forceinline__ u32 lds32(u32 addr)
{
    u32 v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
    return v;
}
static __device__ __forceinline__ void sts32(u32 addr, u32 v)
{
    asm volatile("st.shared.u32 [%0], %1;\n" :: "r"(addr), "r"(v) : "memory");
}

/* Four 8x8 b16 matrices (here: 8 rows x 16 int8 each); lanes 8j..8j+7 give
 * the row addresses of matrix j. */
static __device__ __forceinline__ void ldmatrix_x4(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 { %0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

//% -- The activations' and outputs' 16-bit floats (key field dtype): FP16, or
//% -- BF16 (bf16 set by the template that renders this).
/* The tokens' and outputs' 16-bit floats ({{ bf16 and "BF16" or "FP16" }}) to and from float. */
static __device__ __forceinline__ float x_to_float(u16 h)
{
//% if bf16 then
    return __uint_as_float((u32)h << 16);           /* exact */
//% else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
//% end
}
static __device__ __forceinline__ u16 float_to_y(float f)
{
    u16 h;
    asm("cvt.rn.{{ bf16 and "bf16" or "f16" }}.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
/* Two of them in one word, lo in the low half (rounded as float_to_y). */
static __device__ __forceinline__ u32 floats_to_y2(float lo, float hi)
{
    u32 h;
    asm("cvt.rn.{{ bf16 and "bf16x2" or "f16x2" }}.f32 %0, %1, %2;" : "=r"(h) : "f"(hi), "f"(lo));
    return h;
}
