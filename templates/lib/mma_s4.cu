/* lib/mma_s4.cu -- the INT4 tensor-core MMA (mma=s4): D = A * B + D, INT4 x
 * INT4 -> INT32, A 16x64 (row), B 64x8 (col), eight 4-bit values a
 * register, the lower k in the lower bits. Its registers hold the same
 * bytes as an m16n8k32 INT8 MMA's on operands packed two values per byte,
 * so the same ldmatrix layouts load them. sm_80/86/89 run it on their INT4
 * tensor cores; sm_90 has none: ptxas widens the operands (about 170
 * integer instructions) and issues two INT8 MMAs. */
static __device__ __forceinline__ void mma_s4_16864(int (&d)[4], const u32 (&a)[4], u32 b0, u32 b1)
{
    asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 "
                 "{ %0, %1, %2, %3}, { %4, %5, %6, %7}, { %8, %9}, { %0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Two 8 x 16-byte matrices: lanes 0..7 give the rows of the first, 8..15
 * those of the second. */
static __device__ __forceinline__ void ldmatrix_x2(u32 addr, u32 &r0, u32 &r1)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 { %0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}
