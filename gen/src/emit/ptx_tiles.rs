//! The kernels of the unbounded plane's tiles held on the GPU (the runtime's
//! `gpu::tiles`): windows gathered from a pool of tiles into the rows a stream kernel steps,
//! and stepped tiles cut out of them into the pool, with what changed.
//!
//! A tile is `side` rows of `side / 32` 32-bit words a bit-plane, its planes one after another;
//! tile `s` of the pool starts at word `s * tile_words`. Halos and margins are whole 32-bit
//! words across (a multiple of 32 cells), so every word of a window is one word of one tile.

use crate::emit::ptx_edges::ptx_module;

/// Threads a block of either kernel (a multiple of 32).
pub const TILE_THREADS: u32 = 256;

/// The gather kernel's entry name.
pub const GATHER_ENTRY: &str = "lifegen_tiles_gather";

/// The cut-out kernel's entry name.
pub const CUT_ENTRY: &str = "lifegen_tiles_cut";

/// A window's description, 32-bit words in this order: its first row and first word in the
/// stepped rows, the tiles across it, its words a row, its rows, and where its table of tiles
/// starts (`(rows of tiles + 2) * (tiles across + 2)` slots, row by row from the one above and
/// left of its first tile: a pool slot, or `u32::MAX` for a tile not held).
pub const WINDOW_FIELDS: usize = 6;

/// A stepped tile's description, 32-bit words in this order: its first row and first word in
/// the stepped rows, the slot it was read from (`u32::MAX` if none) and the slot it is written
/// to.
pub const CUT_FIELDS: usize = 4;

/// Bit of a cut-out tile's flags set when any of its cells is alive; bits 0..9 are the tiles
/// around it (offsets (-1,-1), (0,-1), (1,-1), (-1,0), (0,0), (1,0), (-1,1), (0,1), (1,1)) whose
/// windows read a cell that changed.
pub const ALIVE_FLAG: u32 = 1 << 9;

/// Words of a window one thread of the gather kernel writes, [`TILE_THREADS`] apart.
pub const GATHER_WORDS: u32 = 4;

/// The gather kernel: block `(w, k, p)` writes words `256 * GATHER_WORDS * k ..` of plane `p`
/// of window `w`, a thread's words [`TILE_THREADS`] apart (its row and word, and the tile row
/// and the row in it, divided out once and then stepped). The window's row `y`, word `x` is
/// word `(x * 32 + side - halo) % side / 32` of row `(y + side - margin) % side` of the tile the
/// table names there, complemented by `flip`.
pub fn gather_ptx() -> String {
    let body = r#"
.visible .entry lifegen_tiles_gather(
	.param .u64 p_pool,
	.param .u64 p_dest,
	.param .u32 p_stride,
	.param .u64 p_plane_dest,
	.param .u64 p_windows,
	.param .u64 p_table,
	.param .u32 p_side,
	.param .u32 p_row_words,
	.param .u32 p_tile_words,
	.param .u32 p_plane_tile,
	.param .u32 p_halo,
	.param .u32 p_margin,
	.param .u32 p_flip
)
{
	.reg .pred %p<8>;
	.reg .b32 %r<48>;
	.reg .b64 %rd<24>;
	ld.param.u64 %rd1, [p_pool];
	ld.param.u64 %rd2, [p_dest];
	ld.param.u32 %r30, [p_stride];
	ld.param.u64 %rd3, [p_plane_dest];
	ld.param.u64 %rd4, [p_windows];
	ld.param.u64 %rd5, [p_table];
	ld.param.u32 %r31, [p_side];
	ld.param.u32 %r32, [p_row_words];
	ld.param.u32 %r33, [p_tile_words];
	ld.param.u32 %r34, [p_plane_tile];
	ld.param.u32 %r35, [p_halo];
	ld.param.u32 %r36, [p_margin];
	ld.param.u32 %r37, [p_flip];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd4, %rd4;
	cvta.to.global.u64 %rd5, %rd5;
	// The window's description.
	mov.u32 %r20, %ctaid.x;
	mul.wide.u32 %rd6, %r20, 24;
	add.s64 %rd6, %rd4, %rd6;
	ld.global.nc.u32 %r21, [%rd6];
	ld.global.nc.u32 %r22, [%rd6+4];
	ld.global.nc.u32 %r23, [%rd6+8];
	ld.global.nc.u32 %r24, [%rd6+12];
	ld.global.nc.u32 %r25, [%rd6+16];
	ld.global.nc.u32 %r26, [%rd6+20];
	mov.u32 %r17, %ctaid.z;
	// %r4: this thread's first word of the window, %r5 the window's words.
	mov.u32 %r1, %ctaid.y;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mul.lo.u32 %r38, %r2, GATHER_WORDS;
	mad.lo.u32 %r4, %r1, %r38, %r3;
	mul.lo.u32 %r5, %r24, %r25;
	setp.ge.u32 %p1, %r4, %r5;
	@%p1 bra DONE;
	// %r6, %r7: its row and word; %r41 rows and %r42 words from one word to the thread's next.
	div.u32 %r6, %r4, %r24;
	mul.lo.u32 %r7, %r6, %r24;
	sub.u32 %r7, %r4, %r7;
	div.u32 %r41, %r2, %r24;
	mul.lo.u32 %r42, %r41, %r24;
	sub.u32 %r42, %r2, %r42;
	// %r12: the tile down (from the one above the first), %r13 the row in it.
	add.u32 %r11, %r6, %r31;
	sub.u32 %r11, %r11, %r36;
	div.u32 %r12, %r11, %r31;
	mul.lo.u32 %r13, %r12, %r31;
	sub.u32 %r13, %r11, %r13;
	// %r39: the words left.
	mov.u32 %r39, GATHER_WORDS;
WORD:
	// %r9: the tile across (from the one left of the first), %r10 the word in it.
	shl.b32 %r8, %r7, 5;
	add.u32 %r8, %r8, %r31;
	sub.u32 %r8, %r8, %r35;
	div.u32 %r9, %r8, %r31;
	mul.lo.u32 %r10, %r9, %r31;
	sub.u32 %r10, %r8, %r10;
	shr.u32 %r10, %r10, 5;
	// %r15: the tile's slot.
	add.u32 %r14, %r23, 2;
	mad.lo.u32 %r14, %r12, %r14, %r9;
	add.u32 %r14, %r14, %r26;
	mul.wide.u32 %rd7, %r14, 4;
	add.s64 %rd7, %rd5, %rd7;
	ld.global.nc.u32 %r15, [%rd7];
	mov.u32 %r16, 0;
	setp.eq.u32 %p2, %r15, 0xffffffff;
	@%p2 bra STORE;
	mul.wide.u32 %rd8, %r15, %r33;
	mul.lo.u32 %r18, %r17, %r34;
	mad.lo.u32 %r18, %r13, %r32, %r18;
	add.u32 %r18, %r18, %r10;
	cvt.u64.u32 %rd9, %r18;
	add.s64 %rd8, %rd8, %rd9;
	shl.b64 %rd8, %rd8, 2;
	add.s64 %rd8, %rd1, %rd8;
	ld.global.nc.u32 %r16, [%rd8];
STORE:
	xor.b32 %r16, %r16, %r37;
	add.u32 %r19, %r21, %r6;
	mul.wide.u32 %rd10, %r19, %r30;
	add.u32 %r27, %r22, %r7;
	cvt.u64.u32 %rd11, %r27;
	add.s64 %rd10, %rd10, %rd11;
	cvt.u64.u32 %rd12, %r17;
	mul.lo.u64 %rd12, %rd12, %rd3;
	add.s64 %rd10, %rd10, %rd12;
	shl.b64 %rd10, %rd10, 2;
	add.s64 %rd10, %rd2, %rd10;
	st.global.u32 [%rd10], %r16;
	// The thread's next word: the row and word on, the tile row and its row with them.
	add.u32 %r4, %r4, %r2;
	add.u32 %r7, %r7, %r42;
	add.u32 %r6, %r6, %r41;
	add.u32 %r13, %r13, %r41;
	setp.ge.u32 %p3, %r7, %r24;
	@%p3 sub.u32 %r7, %r7, %r24;
	@%p3 add.u32 %r6, %r6, 1;
	@%p3 add.u32 %r13, %r13, 1;
DOWN:
	setp.ge.u32 %p4, %r13, %r31;
	@%p4 sub.u32 %r13, %r13, %r31;
	@%p4 add.u32 %r12, %r12, 1;
	@%p4 bra DOWN;
	sub.u32 %r39, %r39, 1;
	setp.ne.u32 %p5, %r39, 0;
	setp.lt.and.u32 %p5, %r4, %r5, %p5;
	@%p5 bra WORD;
DONE:
	ret;
}
"#;
    module(
        "windows gathered from the tiles",
        &body.replace("GATHER_WORDS", &GATHER_WORDS.to_string()),
    )
}

/// Words of a stepped tile one thread of the cut-out kernel cuts, [`TILE_THREADS`] apart.
pub const CUT_WORDS: u32 = 4;

/// The cut-out kernel: block `(t, k)` cuts words `256 * CUT_WORDS * k ..` (across every
/// plane) of stepped tile `t` out of the stepped rows, complemented by `flip`, into its new
/// slot, and ORs into its flags [`ALIVE_FLAG`] and the tiles around it whose windows see a
/// change against its old slot: a change in the `reach` rows at its top or bottom or the `halo`
/// columns at its left or right edge is seen by the tiles on those sides. A thread's words lie
/// [`TILE_THREADS`] apart: its plane, row and word are divided out once and then stepped, and
/// its flags are ORed over its words before the warp's. A tile's words are a multiple of 32,
/// so a warp's words are one tile's.
pub fn cut_ptx() -> String {
    let body = r#"
.visible .entry lifegen_tiles_cut(
	.param .u64 p_pool,
	.param .u64 p_src,
	.param .u32 p_stride,
	.param .u64 p_plane_src,
	.param .u64 p_cuts,
	.param .u64 p_flags,
	.param .u32 p_side,
	.param .u32 p_row_words,
	.param .u32 p_tile_words,
	.param .u32 p_plane_tile,
	.param .u32 p_halo,
	.param .u32 p_reach,
	.param .u32 p_flip
)
{
	.reg .pred %p<12>;
	.reg .b32 %r<52>;
	.reg .b64 %rd<24>;
	ld.param.u64 %rd1, [p_pool];
	ld.param.u64 %rd2, [p_src];
	ld.param.u32 %r30, [p_stride];
	ld.param.u64 %rd3, [p_plane_src];
	ld.param.u64 %rd4, [p_cuts];
	ld.param.u64 %rd5, [p_flags];
	ld.param.u32 %r31, [p_side];
	ld.param.u32 %r32, [p_row_words];
	ld.param.u32 %r33, [p_tile_words];
	ld.param.u32 %r34, [p_plane_tile];
	ld.param.u32 %r35, [p_halo];
	ld.param.u32 %r36, [p_reach];
	ld.param.u32 %r37, [p_flip];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd4, %rd4;
	cvta.to.global.u64 %rd5, %rd5;
	// %r4: this thread's first word of the tile; whole warps leave together.
	mov.u32 %r1, %ctaid.y;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mul.lo.u32 %r38, %r2, CUT_WORDS;
	mad.lo.u32 %r4, %r1, %r38, %r3;
	setp.ge.u32 %p1, %r4, %r33;
	@%p1 bra DONE;
	// The stepped tile's description.
	mov.u32 %r20, %ctaid.x;
	mul.wide.u32 %rd6, %r20, 16;
	add.s64 %rd6, %rd4, %rd6;
	ld.global.nc.u32 %r21, [%rd6];
	ld.global.nc.u32 %r22, [%rd6+4];
	ld.global.nc.u32 %r23, [%rd6+8];
	ld.global.nc.u32 %r24, [%rd6+12];
	// %r5 plane, %r7 row, %r8 word; %r41 rows and %r42 words from one word to the thread's next.
	div.u32 %r5, %r4, %r34;
	mul.lo.u32 %r6, %r5, %r34;
	sub.u32 %r6, %r4, %r6;
	div.u32 %r7, %r6, %r32;
	mul.lo.u32 %r8, %r7, %r32;
	sub.u32 %r8, %r6, %r8;
	div.u32 %r41, %r2, %r32;
	mul.lo.u32 %r42, %r41, %r32;
	sub.u32 %r42, %r2, %r42;
	// %r40: the flags of the thread's words; %r39 the words left.
	mov.u32 %r40, 0;
	mov.u32 %r39, CUT_WORDS;
WORD:
	// %r10: the cells, from the stepped rows.
	add.u32 %r9, %r21, %r7;
	mul.wide.u32 %rd7, %r9, %r30;
	add.u32 %r9, %r22, %r8;
	cvt.u64.u32 %rd8, %r9;
	add.s64 %rd7, %rd7, %rd8;
	cvt.u64.u32 %rd8, %r5;
	mul.lo.u64 %rd8, %rd8, %rd3;
	add.s64 %rd7, %rd7, %rd8;
	shl.b64 %rd7, %rd7, 2;
	add.s64 %rd7, %rd2, %rd7;
	ld.global.u32 %r10, [%rd7];
	xor.b32 %r10, %r10, %r37;
	// %r11: the cells before, from the old slot.
	mov.u32 %r11, 0;
	cvt.u64.u32 %rd9, %r4;
	setp.eq.u32 %p2, %r23, 0xffffffff;
	@%p2 bra WRITE;
	mul.wide.u32 %rd10, %r23, %r33;
	add.s64 %rd10, %rd10, %rd9;
	shl.b64 %rd10, %rd10, 2;
	add.s64 %rd10, %rd1, %rd10;
	ld.global.u32 %r11, [%rd10];
WRITE:
	mul.wide.u32 %rd11, %r24, %r33;
	add.s64 %rd11, %rd11, %rd9;
	shl.b64 %rd11, %rd11, 2;
	add.s64 %rd11, %rd1, %rd11;
	st.global.u32 [%rd11], %r10;
	// The flags: the sides a change is near, and whether a cell lives.
	xor.b32 %r12, %r10, %r11;
	setp.ne.u32 %p3, %r12, 0;
	shl.b32 %r13, %r8, 5;
	setp.lt.u32 %p4, %r13, %r35;
	add.u32 %r14, %r13, 32;
	sub.u32 %r15, %r31, %r35;
	setp.gt.u32 %p5, %r14, %r15;
	setp.lt.u32 %p6, %r7, %r36;
	sub.u32 %r16, %r31, %r36;
	setp.ge.u32 %p7, %r7, %r16;
	// %r17: the rows' bits (above, level, below), %r18 the columns' (left, middle, right).
	selp.b32 %r17, 2, 0, %p6;
	or.b32 %r17, %r17, 16;
	selp.b32 %r19, 128, 0, %p7;
	or.b32 %r17, %r17, %r19;
	// Columns: the left side shifts a row's bit right by one, the right side left by one.
	mov.u32 %r18, %r17;
	shr.b32 %r25, %r17, 1;
	selp.b32 %r25, %r25, 0, %p4;
	or.b32 %r18, %r18, %r25;
	shl.b32 %r26, %r17, 1;
	selp.b32 %r26, %r26, 0, %p5;
	or.b32 %r18, %r18, %r26;
	selp.b32 %r18, %r18, 0, %p3;
	setp.ne.u32 %p8, %r10, 0;
	selp.b32 %r27, 512, 0, %p8;
	or.b32 %r18, %r18, %r27;
	or.b32 %r40, %r40, %r18;
	// The thread's next word: a block's threads further on, in the same tile (warp-wide).
	add.u32 %r4, %r4, %r2;
	add.u32 %r8, %r8, %r42;
	add.u32 %r7, %r7, %r41;
	setp.ge.u32 %p10, %r8, %r32;
	@%p10 sub.u32 %r8, %r8, %r32;
	@%p10 add.u32 %r7, %r7, 1;
PLANE:
	setp.ge.u32 %p11, %r7, %r31;
	@%p11 sub.u32 %r7, %r7, %r31;
	@%p11 add.u32 %r5, %r5, 1;
	@%p11 bra PLANE;
	sub.u32 %r39, %r39, 1;
	setp.ne.u32 %p10, %r39, 0;
	setp.lt.and.u32 %p10, %r4, %r33, %p10;
	@%p10 bra WORD;
	// The warp's OR (a butterfly of shuffles: the kernels target sm_70, before `redux`).
	shfl.sync.bfly.b32 %r28, %r40, 16, 31, 0xffffffff;
	or.b32 %r40, %r40, %r28;
	shfl.sync.bfly.b32 %r28, %r40, 8, 31, 0xffffffff;
	or.b32 %r40, %r40, %r28;
	shfl.sync.bfly.b32 %r28, %r40, 4, 31, 0xffffffff;
	or.b32 %r40, %r40, %r28;
	shfl.sync.bfly.b32 %r28, %r40, 2, 31, 0xffffffff;
	or.b32 %r40, %r40, %r28;
	shfl.sync.bfly.b32 %r28, %r40, 1, 31, 0xffffffff;
	or.b32 %r28, %r40, %r28;
	and.b32 %r29, %r3, 31;
	setp.ne.u32 %p9, %r29, 0;
	setp.eq.or.u32 %p9, %r28, 0, %p9;
	@%p9 bra DONE;
	mul.wide.u32 %rd12, %r20, 4;
	add.s64 %rd12, %rd5, %rd12;
	red.global.or.b32 [%rd12], %r28;
DONE:
	ret;
}
"#;
    module(
        "tiles cut out of their windows",
        &body.replace("CUT_WORDS", &CUT_WORDS.to_string()),
    )
}

/// A PTX module of one kernel of this file.
fn module(what: &str, body: &str) -> String {
    ptx_module(what, module_path!(), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_are_well_formed_text() {
        for (ptx, entry) in [(gather_ptx(), GATHER_ENTRY), (cut_ptx(), CUT_ENTRY)] {
            assert!(ptx.contains(&format!(".entry {entry}(")));
            assert_eq!(ptx.matches('{').count(), ptx.matches('}').count());
        }
    }
}
