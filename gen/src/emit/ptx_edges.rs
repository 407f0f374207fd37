//! The edges of a universe on the GPU: the kernel that refreshes each row's padding before a
//! stream kernel ([`crate::emit::ptx_stream`]) runs.
//!
//! On the device a row of `width` cells is `words = ceil(width / 32)` words, with `ghost` words
//! before it and `stride - ghost - words` after it. Padded word `d` holds the 32 cells from
//! cell `32 (d - ghost)` on: on a torus the row's own cells, wrapped as often as needed (a row
//! narrower than a word holds several copies of itself); on a bounded plane nothing (the cells
//! past the edges are dead). The bits of the last word past the width are part of the padding.
//! A stream kernel writes only the words of the row, so the padding is refreshed before each
//! launch; one that reads a straight run of cells from it is then right at any width, for every
//! generation it chains (the padding is as wide as the kernel's halo).
//!
//! Parameters, in order: `buf` (`u64` device pointer), `width` (cells), `words`, `stride`,
//! `ghost`, `rows`, `plane` (0: torus, else a bounded plane). One thread a row: launch
//! `ceil(rows / EDGE_THREADS)` blocks of [`EDGE_THREADS`] threads.

use crate::emit::ptx_stream::{PTX_TARGET, PTX_VERSION};

/// The kernel's entry name.
pub const EDGE_ENTRY: &str = "lifegen_edges";

/// Threads a block of the edge kernel.
pub const EDGE_THREADS: u32 = 128;

/// The edge kernel's PTX. Each row's thread writes the padding words one by one: on a torus each
/// is gathered from the row's cells in runs up to the row's end (a funnel shift of two words,
/// masked to the run), at most two runs a word unless the row is narrower than a word; on a
/// plane each is zero but the last word, which keeps its cells.
pub fn edges_ptx() -> String {
    let body = r#"
.visible .entry lifegen_edges(
	.param .u64 p_buf,
	.param .u32 p_width,
	.param .u32 p_words,
	.param .u32 p_stride,
	.param .u32 p_ghost,
	.param .u32 p_rows,
	.param .u32 p_plane
)
{
	.reg .pred %p<8>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<16>;
	ld.param.u64 %rd1, [p_buf];
	ld.param.u32 %r2, [p_width];
	ld.param.u32 %r3, [p_words];
	ld.param.u32 %r4, [p_stride];
	ld.param.u32 %r5, [p_ghost];
	ld.param.u32 %r6, [p_rows];
	ld.param.u32 %r7, [p_plane];
	mov.u32 %r10, %ctaid.x;
	mov.u32 %r11, %ntid.x;
	mov.u32 %r12, %tid.x;
	mad.lo.u32 %r13, %r10, %r11, %r12;
	setp.ge.u32 %p1, %r13, %r6;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd1, %rd1;
	// %rd3: the row's padded word 0; %rd5: its word 0.
	mul.wide.u32 %rd2, %r13, %r4;
	shl.b64 %rd2, %rd2, 2;
	add.s64 %rd3, %rd1, %rd2;
	mul.wide.u32 %rd4, %r5, 4;
	add.s64 %rd5, %rd3, %rd4;
	// %r14: cells in the last word when it is partial (else 0); %r16: the first padded word
	// after the ghost words that is refreshed (the last word when partial).
	and.b32 %r14, %r2, 31;
	setp.ne.u32 %p2, %r14, 0;
	selp.u32 %r15, 1, 0, %p2;
	sub.u32 %r16, %r3, %r15;
	add.u32 %r16, %r16, %r5;
	cvt.u64.u32 %rd7, %r2;
	mov.u32 %r17, 0;
WORD:
	// %r17: the padded word; the words from ghost to %r16 are the row's own and stay.
	setp.eq.u32 %p3, %r17, %r5;
	@%p3 mov.u32 %r17, %r16;
	setp.ge.u32 %p3, %r17, %r4;
	@%p3 bra DONE;
	setp.ne.u32 %p4, %r7, 0;
	@%p4 bra PLANE;
	// Torus: %r19 = 32 (d - ghost) mod width, the first cell; %r20 gathers, %r21 cells so far.
	sub.s32 %r18, %r17, %r5;
	mul.wide.s32 %rd6, %r18, 32;
	rem.s64 %rd8, %rd6, %rd7;
	setp.lt.s64 %p5, %rd8, 0;
	@%p5 add.s64 %rd8, %rd8, %rd7;
	cvt.u32.u64 %r19, %rd8;
	mov.u32 %r20, 0;
	mov.u32 %r21, 0;
GATHER:
	// A run of %r22 cells from cell %r19: as far as the word or the row ends.
	sub.u32 %r22, 32, %r21;
	sub.u32 %r23, %r2, %r19;
	min.u32 %r22, %r22, %r23;
	shr.u32 %r24, %r19, 5;
	and.b32 %r25, %r19, 31;
	mul.wide.u32 %rd9, %r24, 4;
	add.s64 %rd10, %rd5, %rd9;
	ld.global.b32 %r26, [%rd10];
	add.u32 %r27, %r24, 1;
	mov.u32 %r28, 0;
	setp.lt.u32 %p6, %r27, %r3;
	@%p6 ld.global.b32 %r28, [%rd10+4];
	shf.r.wrap.b32 %r29, %r26, %r28, %r25;
	// A shift by 32 gives 0, so a run of 32 keeps every bit.
	shl.b32 %r30, 1, %r22;
	sub.u32 %r30, %r30, 1;
	and.b32 %r29, %r29, %r30;
	shl.b32 %r29, %r29, %r21;
	or.b32 %r20, %r20, %r29;
	add.u32 %r21, %r21, %r22;
	add.u32 %r19, %r19, %r22;
	setp.eq.u32 %p6, %r19, %r2;
	@%p6 mov.u32 %r19, 0;
	setp.lt.u32 %p6, %r21, 32;
	@%p6 bra GATHER;
	bra STORE;
PLANE:
	// Plane: the last word keeps its cells, every other padded word is dead.
	mov.u32 %r20, 0;
	add.u32 %r31, %r5, %r3;
	sub.u32 %r31, %r31, 1;
	setp.eq.u32 %p5, %r17, %r31;
	and.pred %p5, %p5, %p2;
	mul.wide.u32 %rd11, %r17, 4;
	add.s64 %rd12, %rd3, %rd11;
	@%p5 ld.global.b32 %r20, [%rd12];
	shl.b32 %r30, 1, %r14;
	sub.u32 %r30, %r30, 1;
	@%p5 and.b32 %r20, %r20, %r30;
STORE:
	mul.wide.u32 %rd11, %r17, 4;
	add.s64 %rd12, %rd3, %rd11;
	st.global.b32 [%rd12], %r20;
	add.u32 %r17, %r17, 1;
	bra WORD;
DONE:
	ret;
}
"#;
    module("the padding of each row", body)
}

/// A PTX module of one kernel of this file: the header, then `body`; `what` names it in its
/// first line.
fn module(what: &str, body: &str) -> String {
    ptx_module(what, module_path!(), body)
}

/// A PTX module of one hand-written kernel: the header, then `body`; its first line names it
/// (`what`) and the Rust module that wrote it (`source`).
pub(crate) fn ptx_module(what: &str, source: &str, body: &str) -> String {
    format!(
        "// {what} ({source})\n.version {PTX_VERSION}\n.target {PTX_TARGET}\n.address_size 64\n{body}"
    )
}

/// The gather kernel's entry name.
pub const GATHER_ENTRY: &str = "lifegen_gather";

/// Threads a block of the gather kernel (a multiple of 32: a warp writes one word).
pub const GATHER_THREADS: u32 = 256;

/// The gather kernel's PTX: the padding of a universe whose cells past the edges come from
/// anywhere in it (a Klein bottle, a cross-surface, a sphere: `lifegen_gen::Topology::source`),
/// read through a table made on the host. Warp `w` writes padded word `dests[w]` (a word
/// index from the start of a bit-plane's rows); its lane `i` reads bit `i` of it from bit
/// `sources[32 w + i]` (a bit index, `32 word + bit`, from the same start) and the warp joins
/// the 32 bits with a ballot. Every source lies in the universe's own cells; a word written
/// that holds cells of the universe too (a partial last word) has them as its own sources, so
/// they stay as they are.
///
/// Parameters, in order: `buf` (`u64` device pointer), `sources` (`u64` pointer to `u64`),
/// `dests` (`u64` pointer to `u64`), `count` (words written, `u32`), `plane_words` (`u64`, words
/// from one bit-plane to the next). Launch `ceil(32 count / GATHER_THREADS)` x `planes` blocks
/// of [`GATHER_THREADS`] threads.
pub fn gather_ptx() -> String {
    let body = r#"
.visible .entry lifegen_gather(
	.param .u64 p_buf,
	.param .u64 p_sources,
	.param .u64 p_dests,
	.param .u32 p_count,
	.param .u64 p_plane_words
)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<16>;
	ld.param.u64 %rd1, [p_buf];
	ld.param.u64 %rd2, [p_sources];
	ld.param.u64 %rd3, [p_dests];
	ld.param.u32 %r1, [p_count];
	ld.param.u64 %rd4, [p_plane_words];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd3, %rd3;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.u32 %r5, %r2, %r3, %r4;
	// %r6: the word this thread's warp writes; whole warps leave together.
	shr.u32 %r6, %r5, 5;
	setp.ge.u32 %p1, %r6, %r1;
	@%p1 bra DONE;
	// %rd5: the plane's first word, as an address.
	mov.u32 %r7, %ctaid.y;
	cvt.u64.u32 %rd5, %r7;
	mul.lo.u64 %rd5, %rd5, %rd4;
	shl.b64 %rd5, %rd5, 2;
	add.s64 %rd5, %rd1, %rd5;
	// The source bit.
	mul.wide.u32 %rd6, %r5, 8;
	add.s64 %rd6, %rd2, %rd6;
	ld.global.nc.u64 %rd7, [%rd6];
	shr.u64 %rd8, %rd7, 5;
	shl.b64 %rd8, %rd8, 2;
	add.s64 %rd8, %rd5, %rd8;
	ld.global.b32 %r8, [%rd8];
	cvt.u32.u64 %r9, %rd7;
	and.b32 %r9, %r9, 31;
	shr.u32 %r8, %r8, %r9;
	and.b32 %r8, %r8, 1;
	setp.ne.u32 %p2, %r8, 0;
	vote.sync.ballot.b32 %r10, %p2, 0xffffffff;
	and.b32 %r11, %r4, 31;
	setp.ne.u32 %p3, %r11, 0;
	@%p3 bra DONE;
	mul.wide.u32 %rd9, %r6, 8;
	add.s64 %rd9, %rd3, %rd9;
	ld.global.nc.u64 %rd10, [%rd9];
	shl.b64 %rd10, %rd10, 2;
	add.s64 %rd10, %rd5, %rd10;
	st.global.b32 [%rd10], %r10;
DONE:
	ret;
}
"#;
    module("the padding gathered through a table", body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_is_well_formed_text() {
        let ptx = edges_ptx();
        assert!(ptx.contains(&format!(".entry {EDGE_ENTRY}(")));
        assert_eq!(ptx.matches('{').count(), ptx.matches('}').count());
        let gather = gather_ptx();
        assert!(gather.contains(&format!(".entry {GATHER_ENTRY}(")));
        assert_eq!(gather.matches('{').count(), gather.matches('}').count());
    }
}
