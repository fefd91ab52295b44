/* packed.h -- the packed-weight buffer: a versioned, self-describing header
 * with a table of named sections, then the payload the kernels read.
 *
 * PACKED-WEIGHT BUFFER, version 2 (all fields little-endian):
 *   0   char magic[8]      "QJITWTS1"
 *   8   u32  version       2
 *   12  u32  scheme        qjit_scheme value (include/qjit.h)
 *   16  i64  N             rows (output channels), N % 16 == 0
 *   24  i64  K             columns (input channels), K % 64 == 0
 *   32  i32  group         0 = per channel; else K % group == 0, group % 64 == 0
 *   36  u32  flags         bit 0: a sparse residual follows the scheme's sections
 *                          (residual.h); bit 1: its blocks were chosen by
 *                          Hessian-weighted error (only with bit 0); others 0
 *   40  u32  nsections     1 .. 8 (the scheme's, plus 3 with a residual)
 *   44  u32  header_bytes  64 + 32 nsections + 16, rounded up to 256; the payload starts here
 *   48  i32  param         the scheme's layer parameter (scheme.h: prepare), else 0
 *   52  u32  residual      block_n | block_k << 16 with a residual, else 0
 *   56  u64  payload_bytes
 *   64  nsections entries of 32 bytes:
 *         char name[16]    NUL-padded ("qweight", "gparams", "scale", "zero";
 *                          "rptr", "ridx", "rweight" of the residual)
 *         u64  offset      from the payload's start, a multiple of 256
 *         u64  bytes
 *   64 + 32 nsections      u64 payload_hash   qjit__hash64(payload, payload_bytes, 0)
 *   72 + 32 nsections      u64 header_hash    qjit__hash64(header bytes before this field, 0)
 *   zero padding to header_bytes; then the payload.
 * The sections are the scheme's, in its order, with the sizes it states
 * (runtime/schemes.c; their bit layouts are in layout.h). A buffer is
 * accepted only if every field, size and checksum agrees.
 *
 * Version 1 (written by qjit 0.1, for the schemes with reads_v1) is still
 * read: a 64-byte header (scheme at 12, N, K, group, flags as above,
 * payload_bytes at 40, payload_hash at 48, header_hash at 56 over bytes
 * 0..55) and the scheme's sections back to back. */
#ifndef QJIT_PACKED_H
#define QJIT_PACKED_H

#include <stddef.h>
#include <stdint.h>
#include "qjit.h"
#include "scheme.h"
#include "view.h"

#define QJIT__WEIGHTS_MAGIC "QJITWTS1"
#define QJIT__SECTION_ALIGN 256

/* Parses and verifies (magic, version, scheme, sizes, section table, both
 * hashes) a packed buffer. verify_payload = 0 skips the payload hash.
 * @return QJIT_CORRUPT_WEIGHTS (message says what is wrong) or
 * QJIT_INVALID_ARGUMENT for NULL/short input. */
qjit_status qjit__weights_view_init(qjit_context *ctx, const void *packed, size_t bytes, int verify_payload,
                                    qjit__weights_view *view);

#endif
