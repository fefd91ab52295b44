/* lib/wgmma.cu -- warpgroup MMA (sm_90a): D(64 x {{ nt }}, INT32) (+)= A(64 x 32, INT8,
 * registers: the m16n8k32 A fragment per warp, warp w holding rows
 * 16w..16w+15) x B(32 x {{ nt }}, INT8, shared memory through a descriptor), plus
 * the fences the asynchronous MMA needs. D's per-warp layout is that of
 * {{ nt // 8 }} m16n8 accumulator fragments side by side. SCALE_D = 0 overwrites D
 * (D = A * B) instead of adding to it; the _sd form takes it at run time.
//% if atype == "u8" then
 * The register operand's bytes are unsigned (UINT8, wu8=1).
//% end
 */
//% local nd = nt // 2
static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> static __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
/* Keeps the compiler from moving accesses to an accumulator across the
 * asynchronous MMAs that write it. */
static __device__ __forceinline__ void reg_fence(int &r) { asm volatile("" : "+r"(r) :: "memory"); }
/* Keeps a register's definition ahead of the next asm statement (the
 * wgmma_fence, the MMAs): where the compiler sinks a cheap definition (a
 * zeroing, a mask of a loaded word) between a wgmma_fence and the MMAs that
 * read it, ptxas serializes every wgmma of the kernel (C7515, C7520). */
template <typename T> static __device__ __forceinline__ void reg_pin(T &r) { asm volatile("" : "+r"(r)); }

//% -- Two forms: SCALE_D a template constant, or (_sd) a run-time value.
//% for _, form in ipairs({ { suffix = "", head = "template <int SCALE_D = 1>\n", param = "", arg = '"n"(SCALE_D)' },
//%                         { suffix = "_sd", head = "", param = ", int scale_d", arg = '"r"(scale_d)' } }) do
{{ form.head }}static __device__ __forceinline__ void wgmma_s8_m64n{{ nt }}k32{{ form.suffix }}(int (&d)[{{ nd }}], const u32 (&a)[4], u64 desc{{ form.param }})
{
    asm volatile("{ .reg .pred p;\n"
                 "setp.ne.b32 p, %{{ nd + 5 }}, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n{{ nt }}k32.s32.{{ atype or "s8" }}.s8 "
//% for i = 0, nd - 1, 16 do
//%   local regs = {}
//%   for r = i, math.min(nd - 1, i + 15) do regs[#regs + 1] = "%" .. r end
                 "{{ i == 0 and "{ " or "" }}{{ table.concat(regs, ", ") }}{{ i + 16 >= nd and " }, " or ", " }}"
//% end
                 "{ %{{ nd }}, %{{ nd + 1 }}, %{{ nd + 2 }}, %{{ nd + 3 }} }, %{{ nd + 4 }}, p;\n }\n"
//% for i = 0, nd - 1, 8 do
//%   local outs = {}
//%   for r = i, math.min(nd - 1, i + 7) do outs[#outs + 1] = '"+r"(d[' .. r .. '])' end
                 {{ i == 0 and ": " or "  " }}{{ table.concat(outs, ", ") }}{{ i + 8 < nd and "," or "" }}
//% end
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), {{ form.arg }});
}
//% end
//% if ss then
/* D += A(64 x 32, INT8, shared memory) x B(32 x {{ nt }}, INT8, shared memory): both
 * operands through descriptors. */
static __device__ __forceinline__ void wgmma_s8_m64n{{ nt }}k32_ss(int (&d)[{{ nd }}], u64 adesc, u64 bdesc)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n{{ nt }}k32.s32.s8.s8 "
//% for i = 0, nd - 1, 16 do
//%   local regs = {}
//%   for r = i, math.min(nd - 1, i + 15) do regs[#regs + 1] = "%" .. r end
                 "{{ i == 0 and "{ " or "" }}{{ table.concat(regs, ", ") }}{{ i + 16 >= nd and " }, " or ", " }}"
//% end
                 "%{{ nd }}, %{{ nd + 1 }}, 1;\n"
//% for i = 0, nd - 1, 8 do
//%   local outs = {}
//%   for r = i, math.min(nd - 1, i + 7) do outs[#outs + 1] = '"+r"(d[' .. r .. '])' end
                 {{ i == 0 and ": " or "  " }}{{ table.concat(outs, ", ") }}{{ i + 8 < nd and "," or "" }}
//% end
                 : "l"(adesc), "l"(bdesc));
}
//% end
/* Four (x4) or two (x2) 8 x 8 blocks of 16-bit values, each held as an MMA
 * fragment (a lane's register: row lane / 4, columns 2 (lane % 4) and the
 * next), stored transposed: row r of block b goes to the address lane
 * 8 b + r gives, and holds the block's column r. */
static __device__ __forceinline__ void stsm_x4_trans(u32 addr, const u32 (&v)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], { %1, %2, %3, %4 };\n"
                 :: "r"(addr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
}
static __device__ __forceinline__ void stsm_x2_trans(u32 addr, const u32 (&v)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], { %1, %2 };\n"
                 :: "r"(addr), "r"(v[0]), "r"(v[1]) : "memory");
}
