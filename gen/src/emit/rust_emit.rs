//! Rust emission: complete multi-generation CPU tile kernels from a verified
//! [`RowSharedKernel`], one function per instruction set, through `quote` and `prettyplease`.
//!
//! A tile is a strip of `words` 64-cell words (a multiple of 8, at most [`TILE_WORDS`]) streamed
//! row by row through `levels.len()` generation levels. Each level keeps the sums and carries of
//! its last two rows and the west/centre/east words of the middle row; a row passes through every
//! level before the next row is read, so a tile's state (3 KiB per level) stays in L1 while it
//! advances several generations. West and east neighbours cross vector lanes in registers (`valignq` + funnel
//! shifts on AVX-512, permutes and blends on AVX2). Input row `k` is torus row `y0 - gens + k`;
//! output row `k - 2 gens` (for `k >= 2 gens`) is torus row `y0 + k - 2 gens`, advanced `gens`
//! generations; its first and last word are wrong (their neighbours lie outside the tile).
//!
//! The emitted functions use the types `Row` (64-byte-aligned `[u64; TILE_WORDS]`) and
//! `LevelState` (`sum: [Row; 2], carry: [Row; 2], input: [Row; 2]`), which the including module
//! provides. A level's input slots hold the rows the level below emitted (the first level reads
//! `rows_in`); the middle row is the older slot, its shifts recomputed (storing them was slower:
//! 1.30e11 against 1.50e11 cell updates/s on one Zen 5 core).

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

use crate::kernel::row_shared::{
    LOWER_CARRY, LOWER_SUM, MIDDLE_CENTRE, MIDDLE_EAST, MIDDLE_WEST, ROW_CARRY, ROW_SUM,
    RowSharedKernel, UPPER_CARRY, UPPER_SUM,
};
use crate::lowering::{Basis, Table, decompose_smallest};
use crate::network::{Gate, LUT3_A, LUT3_B, Network, NetworkBuilder, Wire, eval_table2};

/// Words per tile row, the largest tile.
pub const TILE_WORDS: usize = 64;

/// The instruction sets a kernel is emitted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuIsa {
    /// 512-bit vectors; every gate one `vpternlogq`; needs AVX-512F and VBMI2 (funnel shifts).
    Avx512,
    /// 256-bit vectors; the 2-input network.
    Avx2,
    /// One `u64` at a time; the 2-input network.
    Portable,
}

impl CpuIsa {
    pub const ALL: [CpuIsa; 3] = [CpuIsa::Avx512, CpuIsa::Avx2, CpuIsa::Portable];

    pub fn name(&self) -> &'static str {
        match self {
            CpuIsa::Avx512 => "avx512",
            CpuIsa::Avx2 => "avx2",
            CpuIsa::Portable => "portable",
        }
    }

    /// 64-bit words per vector register.
    pub fn lanes(&self) -> usize {
        match self {
            CpuIsa::Avx512 => 8,
            CpuIsa::Avx2 => 4,
            CpuIsa::Portable => 1,
        }
    }

    pub fn function_name(&self) -> String {
        format!("advance_tile_{}", self.name())
    }
}

/// The combine network the 2-input paths run: each LUT3 of `kernel`'s network replaced by its
/// smallest 2-input decomposition, verified by [`RowSharedKernel::new`].
pub fn gate2_kernel(kernel: &RowSharedKernel) -> RowSharedKernel {
    let network = kernel.combine();
    let mut b = NetworkBuilder::new(network.input_names().to_vec());
    let mut wires: Vec<Wire> = b.inputs();
    for gate in network.gates() {
        let w = |x: Wire| wires[x as usize];
        let wire = match *gate {
            // Variable 0 is `c`, 2 is `a`: a decomposition's row `4a + 2b + c` is the LUT row.
            Gate::Lut3 { table, a, b: m, c } => {
                decompose_smallest(&mut b, Basis::Gate2, &[w(c), w(m), w(a)], table as Table)
            }
            other => b.push(other.map_wires(w)),
        };
        wires.push(wire);
    }
    let output = wires[network.outputs()[0] as usize];
    let lowered = b.finish(format!("{}-as-gate2", network.name()), vec![output]);
    RowSharedKernel::new(
        *kernel.rule(),
        lowered,
        format!(
            "{}, each LUT3 lowered to 2-input gates",
            kernel.provenance()
        ),
    )
    .expect("a per-gate lowering computes the same function")
}

/// The kernel module's source for `kernel`: all three instruction sets, formatted.
pub fn emit(kernel: &RowSharedKernel) -> String {
    let gate2 = gate2_kernel(kernel);
    let functions: Vec<TokenStream> = CpuIsa::ALL
        .iter()
        .map(|isa| {
            let logic = if *isa == CpuIsa::Avx512 {
                kernel
            } else {
                &gate2
            };
            tile_function(*isa, logic)
        })
        .collect();
    let file: syn::File = syn::parse2(quote! { #(#functions)* }).expect("emitted tokens parse");
    let header = format!(
        "// lifegen CPU kernel (written by `lifegen regen`; do not edit)\n\
         // rule: {}\n\
         // avx512: {} vpternlogq per 512 cells and generation ({} combine, {})\n\
         // avx2, portable: {} two-input ops per word and generation ({} combine gates)\n",
        kernel.rule(),
        kernel.logic_ops_per_word(),
        kernel.combine().gates().len(),
        kernel.provenance(),
        gate2.combine().gates().len() + 5,
        gate2.combine().gates().len(),
    );
    header + &prettyplease::unparse(&file)
}

/// The text of `isa`'s function in a module [`emit`] wrote.
pub fn function_source(source: &str, isa: CpuIsa) -> &str {
    let start = source
        .find(&format!("fn {}(", isa.function_name()))
        .unwrap_or(0);
    let end = source[start + 1..]
        .find("pub unsafe fn")
        .map_or(source.len(), |e| e + start + 1);
    &source[start..end]
}

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// Expressions of one instruction set.
struct Ops {
    isa: CpuIsa,
}

impl Ops {
    fn load(&self, row: TokenStream, at: TokenStream) -> TokenStream {
        match self.isa {
            CpuIsa::Avx512 => quote! { _mm512_load_si512(#row.0.as_ptr().add(#at).cast()) },
            CpuIsa::Avx2 => quote! { _mm256_load_si256(#row.0.as_ptr().add(#at).cast()) },
            CpuIsa::Portable => quote! { *#row.0.get_unchecked(#at) },
        }
    }

    fn store(&self, row: TokenStream, at: TokenStream, value: &Ident) -> TokenStream {
        match self.isa {
            CpuIsa::Avx512 => {
                quote! { _mm512_store_si512(#row.0.as_mut_ptr().add(#at).cast(), #value); }
            }
            CpuIsa::Avx2 => {
                quote! { _mm256_store_si256(#row.0.as_mut_ptr().add(#at).cast(), #value); }
            }
            CpuIsa::Portable => quote! { *#row.0.get_unchecked_mut(#at) = #value; },
        }
    }

    fn zero(&self) -> TokenStream {
        match self.isa {
            CpuIsa::Avx512 => quote! { _mm512_setzero_si512() },
            CpuIsa::Avx2 => quote! { _mm256_setzero_si256() },
            CpuIsa::Portable => quote! { 0u64 },
        }
    }

    /// Each cell's west neighbour: `x << 1`, the low bit from the previous word.
    fn west(&self, x: &Ident, prev: &Ident) -> TokenStream {
        match self.isa {
            CpuIsa::Avx512 => quote! {
                _mm512_shldi_epi64::<1>(#x, _mm512_alignr_epi64::<7>(#x, #prev))
            },
            // [prev[3], x[0], x[1], x[2]]: the 128-bit halves (prev high, x low), then each
            // lane's pair shifted by one word.
            CpuIsa::Avx2 => quote! {
                _mm256_or_si256(
                    _mm256_slli_epi64::<1>(#x),
                    _mm256_srli_epi64::<63>(_mm256_alignr_epi8::<8>(
                        #x,
                        _mm256_permute2x128_si256::<0x03>(#x, #prev),
                    )),
                )
            },
            CpuIsa::Portable => quote! { #x << 1 | #prev >> 63 },
        }
    }

    /// Each cell's east neighbour: `x >> 1`, the high bit from the next word.
    fn east(&self, x: &Ident, next: &Ident) -> TokenStream {
        match self.isa {
            CpuIsa::Avx512 => quote! {
                _mm512_shrdi_epi64::<1>(#x, _mm512_alignr_epi64::<1>(#next, #x))
            },
            // [x[1], x[2], x[3], next[0]]: the 128-bit halves (x high, next low), then each
            // lane's pair shifted by one word.
            CpuIsa::Avx2 => quote! {
                _mm256_or_si256(
                    _mm256_srli_epi64::<1>(#x),
                    _mm256_slli_epi64::<63>(_mm256_alignr_epi8::<8>(
                        _mm256_permute2x128_si256::<0x21>(#x, #next),
                        #x,
                    )),
                )
            },
            CpuIsa::Portable => quote! { #x >> 1 | #next << 63 },
        }
    }

    fn lut3(&self, table: u8, a: &Ident, b: &Ident, c: &Ident) -> TokenStream {
        assert_eq!(self.isa, CpuIsa::Avx512, "only AVX-512 has 3-input logic");
        let imm: Literal = format!("0x{table:02X}").parse().expect("a hex literal");
        quote! { _mm512_ternarylogic_epi64::<#imm>(#a, #b, #c) }
    }

    fn not(&self, a: TokenStream) -> TokenStream {
        match self.isa {
            CpuIsa::Avx512 => quote! { _mm512_ternarylogic_epi64::<0x0F>(#a, #a, #a) },
            CpuIsa::Avx2 => quote! { _mm256_xor_si256(#a, ones) },
            // `!a` for a name, `!(a & b)` for an operation.
            CpuIsa::Portable if a.clone().into_iter().count() == 1 => quote! { !#a },
            CpuIsa::Portable => quote! { !(#a) },
        }
    }

    /// A 2-input table (bit `2a + b`) from AND, OR, XOR, ANDNOT and NOT.
    fn gate2(&self, table: u8, a: &Ident, b: &Ident) -> TokenStream {
        if self.isa == CpuIsa::Avx512 {
            let imm = eval_table2(table, LUT3_A.into(), LUT3_B.into()) as u8;
            return self.lut3(imm, a, b, a);
        }
        let (a, b) = (quote! { #a }, quote! { #b });
        let op = |name: &str, x: &TokenStream, y: &TokenStream| match self.isa {
            CpuIsa::Avx2 => {
                let f = ident(&format!("_mm256_{name}_si256"));
                quote! { #f(#x, #y) }
            }
            _ => match name {
                "and" => quote! { #x & #y },
                "or" => quote! { #x | #y },
                "xor" => quote! { #x ^ #y },
                _ => quote! { !#x & #y },
            },
        };
        match table {
            0b1000 => op("and", &a, &b),
            0b1110 => op("or", &a, &b),
            0b0110 => op("xor", &a, &b),
            0b0100 => op("andnot", &b, &a),
            0b0010 => op("andnot", &a, &b),
            0b0001 => self.not(op("or", &a, &b)),
            0b0111 => self.not(op("and", &a, &b)),
            0b1001 => self.not(op("xor", &a, &b)),
            0b1101 => self.not(op("andnot", &a, &b)),
            0b1011 => self.not(op("andnot", &b, &a)),
            0b1100 => a,
            0b1010 => b,
            0b0011 => self.not(a),
            0b0101 => self.not(b),
            0b0000 => self.zero(),
            _ => self.not(self.zero()),
        }
    }

    /// The row's full adder of `(l, x, r)` as `let` statements binding `sum` and `carry`.
    fn full_adder(&self, [l, x, r]: [&Ident; 3], sum: &Ident, carry: &Ident) -> TokenStream {
        if self.isa == CpuIsa::Avx512 {
            let (s, c) = (self.lut3(ROW_SUM, l, x, r), self.lut3(ROW_CARRY, l, x, r));
            return quote! { let #sum = #s; let #carry = #c; };
        }
        let lx = ident("lx");
        let xor_lx = self.gate2(0b0110, l, x);
        let s = self.gate2(0b0110, &lx, r);
        let (and_lx, and_r) = (ident("and_lx"), ident("and_r"));
        let and_lx_value = self.gate2(0b1000, l, x);
        let and_r_value = self.gate2(0b1000, &lx, r);
        let c = self.gate2(0b1110, &and_lx, &and_r);
        quote! {
            let #lx = #xor_lx;
            let #sum = #s;
            let #and_lx = #and_lx_value;
            let #and_r = #and_r_value;
            let #carry = #c;
        }
    }
}

/// The combine network as `let` statements; returns them and the output's name.
fn combine(ops: &Ops, network: &Network, inputs: &[Ident]) -> (TokenStream, Ident) {
    let n = network.num_inputs();
    let name = |w: Wire| -> Ident {
        let w = w as usize;
        if w < n {
            inputs[w].clone()
        } else {
            ident(&format!("t{}", w - n))
        }
    };
    let mut body = TokenStream::new();
    for (k, gate) in network.gates().iter().enumerate() {
        let dest = ident(&format!("t{k}"));
        let value = match *gate {
            Gate::Not(a) => {
                let a = name(a);
                ops.not(quote! { #a })
            }
            Gate::Gate2 { table, a, b } => ops.gate2(table, &name(a), &name(b)),
            Gate::Lut3 { table, a, b, c } => ops.lut3(table, &name(a), &name(b), &name(c)),
        };
        body.extend(quote! { let #dest = #value; });
    }
    (body, name(network.outputs()[0]))
}

/// The whole tile function for one instruction set.
fn tile_function(isa: CpuIsa, kernel: &RowSharedKernel) -> TokenStream {
    let ops = Ops { isa };
    let lanes = isa.lanes();
    let name = ident(&isa.function_name());
    let (x, prev, next, l, r) = (
        ident("x"),
        ident("prev"),
        ident("next"),
        ident("l"),
        ident("r"),
    );
    let zero = ops.zero();
    let west = ops.west(&x, &prev);
    let east = ops.east(&x, &next);
    let mut names = vec![ident("_"); 7];
    names[UPPER_SUM] = ident("upper_sum");
    names[UPPER_CARRY] = ident("upper_carry");
    names[LOWER_SUM] = ident("lower_sum");
    names[LOWER_CARRY] = ident("lower_carry");
    names[MIDDLE_WEST] = ident("middle_west");
    names[MIDDLE_CENTRE] = ident("middle_centre");
    names[MIDDLE_EAST] = ident("middle_east");
    let [
        upper_sum,
        upper_carry,
        lower_sum,
        lower_carry,
        middle_west,
        middle_centre,
        middle_east,
    ] = [
        UPPER_SUM,
        UPPER_CARRY,
        LOWER_SUM,
        LOWER_CARRY,
        MIDDLE_WEST,
        MIDDLE_CENTRE,
        MIDDLE_EAST,
    ]
    .map(|i| names[i].clone());
    let adder = ops.full_adder([&l, &x, &r], &lower_sum, &lower_carry);
    let (logic, out) = combine(&ops, kernel.combine(), &names);
    let load = |row: TokenStream, at: TokenStream| ops.load(row, at);
    let load_x = load(quote! { (*input) }, quote! { 0 });
    let load_next = load(quote! { (*input) }, quote! { v + #lanes });
    let load_upper_sum = load(quote! { level.sum[slot] }, quote! { v });
    let load_upper_carry = load(quote! { level.carry[slot] }, quote! { v });
    let (mprev, mx, mnext) = (ident("mprev"), ident("mx"), ident("mnext"));
    let load_middle_first = load(quote! { (*middle) }, quote! { 0 });
    let load_middle_next = load(quote! { (*middle) }, quote! { v + #lanes });
    let middle_west_value = ops.west(&mx, &mprev);
    let middle_east_value = ops.east(&mx, &mnext);
    // State the combine network never reads is not kept.
    let network = kernel.combine();
    let used = |input: usize| {
        network.outputs().contains(&(input as Wire))
            || network
                .gates()
                .iter()
                .any(|g| g.fan_in().any(|w| w as usize == input))
    };
    let store_if = |input: usize, row: TokenStream, value: &Ident| {
        if used(input) {
            ops.store(row, quote! { v }, value)
        } else {
            TokenStream::new()
        }
    };
    let store_sum = store_if(UPPER_SUM, quote! { level.sum[slot] }, &lower_sum);
    let store_carry = store_if(UPPER_CARRY, quote! { level.carry[slot] }, &lower_carry);
    let store_out = ops.store(quote! { (*output) }, quote! { v }, &out);
    let (attribute, safety, ones) = match isa {
        CpuIsa::Avx512 => (
            quote! { #[target_feature(enable = "avx512f,avx512vbmi2")] },
            quote! { unsafe },
            quote! {},
        ),
        CpuIsa::Avx2 => (
            quote! { #[target_feature(enable = "avx2")] },
            quote! { unsafe },
            quote! { let ones = _mm256_set1_epi64x(-1); },
        ),
        CpuIsa::Portable => (quote! {}, quote! { unsafe }, quote! {}),
    };
    let step = |next_value: TokenStream, middle_next_value: TokenStream| {
        quote! {
            let #next = #next_value;
            let #l = #west;
            let #r = #east;
            #adder
            let #upper_sum = #load_upper_sum;
            let #upper_carry = #load_upper_carry;
            // The middle row's shifts are recomputed: cheaper than storing them.
            let #mnext = #middle_next_value;
            let #middle_west = #middle_west_value;
            let #middle_centre = #mx;
            let #middle_east = #middle_east_value;
            #logic
            #store_sum
            #store_carry
            #store_out
            #prev = #x;
            #mprev = #mx;
            #mx = #mnext;
            #x = #next;
            v += #lanes;
        }
    };
    let step_inner = step(load_next.clone(), load_middle_next.clone());
    let step_checked = step(
        quote! { if v + #lanes < words { #load_next } else { #zero } },
        quote! { if v + #lanes < words { #load_middle_next } else { #zero } },
    );
    let step_last = step(zero.clone(), zero.clone());
    let docs = [
        format!(
            " Advances a tile `levels.len()` generations ({}).",
            isa.name()
        ),
        format!(" `words`: a multiple of 8, at most {TILE_WORDS}."),
        " `rows_in.len() == rows_out.len() + 2 * levels.len()`.".to_string(),
        " # Safety: the CPU must have the instruction set.".to_string(),
    ];
    quote! {
        #(#[doc = #docs])*
        #[allow(unused_variables, unused_assignments)]
        #attribute
        pub #safety fn #name(
            rows_in: &[Row],
            rows_out: &mut [Row],
            levels: &mut [LevelState],
            words: usize,
        ) {
            assert!(words % 8 == 0 && words <= #TILE_WORDS && words > 0);
            assert_eq!(rows_in.len(), rows_out.len() + 2 * levels.len());
            // SAFETY: every index stays below `words <= TILE_WORDS` (checked above), vector
            // accesses are at multiples of the lane count into 64-byte-aligned rows, and the
            // caller vouches for the instruction set.
            unsafe {
            let gens = levels.len();
            let levels = levels.as_mut_ptr();
            let mut discard = Row::ZERO;
            #ones
            for k in 0..rows_in.len() {
                // Row k's sums and carries go where row k - 2's were; level g + 1 reads level
                // g's rows from its own two input slots, the newest and the middle row.
                let slot = k & 1;
                for g in 0..gens {
                    let level = &mut *levels.add(g);
                    let (input, middle): (*const Row, *const Row) = if g == 0 {
                        (&rows_in[k], &rows_in[k.saturating_sub(1)])
                    } else {
                        (&level.input[slot], &level.input[slot ^ 1])
                    };
                    let output: *mut Row = if g + 1 < gens {
                        &mut (*levels.add(g + 1)).input[slot]
                    } else if k >= 2 * gens {
                        &mut rows_out[k - 2 * gens]
                    } else {
                        &mut discard
                    };
                    let mut #prev = #zero;
                    let mut #x = #load_x;
                    let mut #mprev = #zero;
                    let mut #mx = #load_middle_first;
                    let mut v = 0;
                    // Two vectors per trip (the rotation of x, prev and next then costs no
                    // moves), and a last single vector when the count is odd.
                    while v + 2 * #lanes <= words {
                        #step_inner
                        #step_checked
                    }
                    if v < words {
                        #step_last
                    }
                }
            }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::LifeLike;

    #[test]
    fn each_isa_gets_its_own_logic_and_shifts() {
        let kernel = RowSharedKernel::lowered(LifeLike::CONWAY);
        let source = emit(&kernel);
        assert_eq!(source, emit(&kernel), "deterministic");
        let avx512 = function_source(&source, CpuIsa::Avx512);
        // The vector step appears three times: twice in the unrolled loop, once for an odd end.
        let steps = avx512.matches("v += ").count();
        assert_eq!(steps, 3);
        assert_eq!(
            avx512.matches("_mm512_ternarylogic_epi64").count(),
            steps * kernel.logic_ops_per_word()
        );
        assert_eq!(avx512.matches("_mm512_shldi_epi64").count(), steps * 2);
        let gate2 = gate2_kernel(&kernel);
        assert!(gate2.combine().op_counts().lut3 == 0);
        let avx2 = function_source(&source, CpuIsa::Avx2);
        assert_eq!(avx2.matches("_mm256_permute2x128_si256").count(), steps * 4);
        assert_eq!(avx2.matches("_mm256_alignr_epi8").count(), steps * 4);
        assert!(!function_source(&source, CpuIsa::Portable).contains("_mm"));
    }
}
