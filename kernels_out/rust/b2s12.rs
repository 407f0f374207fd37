// lifegen CPU kernel (written by `lifegen regen`; do not edit)
// rule: B2/S12
// avx512: 9 vpternlogq per 512 cells and generation (7 combine, SAT search, not proven optimal)
// avx2, portable: 32 two-input ops per word and generation (27 combine gates)
/// Advances a tile `levels.len()` generations (avx512).
/// `words`: a multiple of 8, at most 64.
/// `rows_in.len() == rows_out.len() + 2 * levels.len()`.
/// # Safety: the CPU must have the instruction set.
#[allow(unused_variables, unused_assignments)]
#[target_feature(enable = "avx512f,avx512vbmi2")]
pub unsafe fn advance_tile_avx512(
    rows_in: &[Row],
    rows_out: &mut [Row],
    levels: &mut [LevelState],
    words: usize,
) {
    assert!(words % 8 == 0 && words <= 64usize && words > 0);
    assert_eq!(rows_in.len(), rows_out.len() + 2 * levels.len());
    unsafe {
        let gens = levels.len();
        let levels = levels.as_mut_ptr();
        let mut discard = Row::ZERO;
        for k in 0..rows_in.len() {
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
                let mut prev = _mm512_setzero_si512();
                let mut x = _mm512_load_si512((*input).0.as_ptr().add(0).cast());
                let mut mprev = _mm512_setzero_si512();
                let mut mx = _mm512_load_si512((*middle).0.as_ptr().add(0).cast());
                let mut v = 0;
                while v + 2 * 8usize <= words {
                    let next = _mm512_load_si512(
                        (*input).0.as_ptr().add(v + 8usize).cast(),
                    );
                    let l = _mm512_shldi_epi64::<
                        1,
                    >(x, _mm512_alignr_epi64::<7>(x, prev));
                    let r = _mm512_shrdi_epi64::<
                        1,
                    >(x, _mm512_alignr_epi64::<1>(next, x));
                    let lower_sum = _mm512_ternarylogic_epi64::<0x96>(l, x, r);
                    let lower_carry = _mm512_ternarylogic_epi64::<0xE8>(l, x, r);
                    let upper_sum = _mm512_load_si512(
                        level.sum[slot].0.as_ptr().add(v).cast(),
                    );
                    let upper_carry = _mm512_load_si512(
                        level.carry[slot].0.as_ptr().add(v).cast(),
                    );
                    let mnext = _mm512_load_si512(
                        (*middle).0.as_ptr().add(v + 8usize).cast(),
                    );
                    let middle_west = _mm512_shldi_epi64::<
                        1,
                    >(mx, _mm512_alignr_epi64::<7>(mx, mprev));
                    let middle_centre = mx;
                    let middle_east = _mm512_shrdi_epi64::<
                        1,
                    >(mx, _mm512_alignr_epi64::<1>(mnext, mx));
                    let t0 = _mm512_ternarylogic_epi64::<
                        0x96,
                    >(upper_sum, lower_sum, middle_west);
                    let t1 = _mm512_ternarylogic_epi64::<
                        0xE8,
                    >(upper_sum, lower_sum, middle_west);
                    let t2 = _mm512_ternarylogic_epi64::<
                        0xFE,
                    >(t1, upper_carry, lower_carry);
                    let t3 = _mm512_ternarylogic_epi64::<
                        0x16,
                    >(t1, upper_carry, lower_carry);
                    let t4 = _mm512_ternarylogic_epi64::<
                        0xE8,
                    >(t0, middle_east, middle_centre);
                    let t5 = _mm512_ternarylogic_epi64::<0xC2>(t0, middle_east, t3);
                    let t6 = _mm512_ternarylogic_epi64::<0x2C>(t2, t4, t5);
                    _mm512_store_si512(
                        level.sum[slot].0.as_mut_ptr().add(v).cast(),
                        lower_sum,
                    );
                    _mm512_store_si512(
                        level.carry[slot].0.as_mut_ptr().add(v).cast(),
                        lower_carry,
                    );
                    _mm512_store_si512((*output).0.as_mut_ptr().add(v).cast(), t6);
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 8usize;
                    let next = if v + 8usize < words {
                        _mm512_load_si512((*input).0.as_ptr().add(v + 8usize).cast())
                    } else {
                        _mm512_setzero_si512()
                    };
                    let l = _mm512_shldi_epi64::<
                        1,
                    >(x, _mm512_alignr_epi64::<7>(x, prev));
                    let r = _mm512_shrdi_epi64::<
                        1,
                    >(x, _mm512_alignr_epi64::<1>(next, x));
                    let lower_sum = _mm512_ternarylogic_epi64::<0x96>(l, x, r);
                    let lower_carry = _mm512_ternarylogic_epi64::<0xE8>(l, x, r);
                    let upper_sum = _mm512_load_si512(
                        level.sum[slot].0.as_ptr().add(v).cast(),
                    );
                    let upper_carry = _mm512_load_si512(
                        level.carry[slot].0.as_ptr().add(v).cast(),
                    );
                    let mnext = if v + 8usize < words {
                        _mm512_load_si512((*middle).0.as_ptr().add(v + 8usize).cast())
                    } else {
                        _mm512_setzero_si512()
                    };
                    let middle_west = _mm512_shldi_epi64::<
                        1,
                    >(mx, _mm512_alignr_epi64::<7>(mx, mprev));
                    let middle_centre = mx;
                    let middle_east = _mm512_shrdi_epi64::<
                        1,
                    >(mx, _mm512_alignr_epi64::<1>(mnext, mx));
                    let t0 = _mm512_ternarylogic_epi64::<
                        0x96,
                    >(upper_sum, lower_sum, middle_west);
                    let t1 = _mm512_ternarylogic_epi64::<
                        0xE8,
                    >(upper_sum, lower_sum, middle_west);
                    let t2 = _mm512_ternarylogic_epi64::<
                        0xFE,
                    >(t1, upper_carry, lower_carry);
                    let t3 = _mm512_ternarylogic_epi64::<
                        0x16,
                    >(t1, upper_carry, lower_carry);
                    let t4 = _mm512_ternarylogic_epi64::<
                        0xE8,
                    >(t0, middle_east, middle_centre);
                    let t5 = _mm512_ternarylogic_epi64::<0xC2>(t0, middle_east, t3);
                    let t6 = _mm512_ternarylogic_epi64::<0x2C>(t2, t4, t5);
                    _mm512_store_si512(
                        level.sum[slot].0.as_mut_ptr().add(v).cast(),
                        lower_sum,
                    );
                    _mm512_store_si512(
                        level.carry[slot].0.as_mut_ptr().add(v).cast(),
                        lower_carry,
                    );
                    _mm512_store_si512((*output).0.as_mut_ptr().add(v).cast(), t6);
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 8usize;
                }
                if v < words {
                    let next = _mm512_setzero_si512();
                    let l = _mm512_shldi_epi64::<
                        1,
                    >(x, _mm512_alignr_epi64::<7>(x, prev));
                    let r = _mm512_shrdi_epi64::<
                        1,
                    >(x, _mm512_alignr_epi64::<1>(next, x));
                    let lower_sum = _mm512_ternarylogic_epi64::<0x96>(l, x, r);
                    let lower_carry = _mm512_ternarylogic_epi64::<0xE8>(l, x, r);
                    let upper_sum = _mm512_load_si512(
                        level.sum[slot].0.as_ptr().add(v).cast(),
                    );
                    let upper_carry = _mm512_load_si512(
                        level.carry[slot].0.as_ptr().add(v).cast(),
                    );
                    let mnext = _mm512_setzero_si512();
                    let middle_west = _mm512_shldi_epi64::<
                        1,
                    >(mx, _mm512_alignr_epi64::<7>(mx, mprev));
                    let middle_centre = mx;
                    let middle_east = _mm512_shrdi_epi64::<
                        1,
                    >(mx, _mm512_alignr_epi64::<1>(mnext, mx));
                    let t0 = _mm512_ternarylogic_epi64::<
                        0x96,
                    >(upper_sum, lower_sum, middle_west);
                    let t1 = _mm512_ternarylogic_epi64::<
                        0xE8,
                    >(upper_sum, lower_sum, middle_west);
                    let t2 = _mm512_ternarylogic_epi64::<
                        0xFE,
                    >(t1, upper_carry, lower_carry);
                    let t3 = _mm512_ternarylogic_epi64::<
                        0x16,
                    >(t1, upper_carry, lower_carry);
                    let t4 = _mm512_ternarylogic_epi64::<
                        0xE8,
                    >(t0, middle_east, middle_centre);
                    let t5 = _mm512_ternarylogic_epi64::<0xC2>(t0, middle_east, t3);
                    let t6 = _mm512_ternarylogic_epi64::<0x2C>(t2, t4, t5);
                    _mm512_store_si512(
                        level.sum[slot].0.as_mut_ptr().add(v).cast(),
                        lower_sum,
                    );
                    _mm512_store_si512(
                        level.carry[slot].0.as_mut_ptr().add(v).cast(),
                        lower_carry,
                    );
                    _mm512_store_si512((*output).0.as_mut_ptr().add(v).cast(), t6);
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 8usize;
                }
            }
        }
    }
}
/// Advances a tile `levels.len()` generations (avx2).
/// `words`: a multiple of 8, at most 64.
/// `rows_in.len() == rows_out.len() + 2 * levels.len()`.
/// # Safety: the CPU must have the instruction set.
#[allow(unused_variables, unused_assignments)]
#[target_feature(enable = "avx2")]
pub unsafe fn advance_tile_avx2(
    rows_in: &[Row],
    rows_out: &mut [Row],
    levels: &mut [LevelState],
    words: usize,
) {
    assert!(words % 8 == 0 && words <= 64usize && words > 0);
    assert_eq!(rows_in.len(), rows_out.len() + 2 * levels.len());
    unsafe {
        let gens = levels.len();
        let levels = levels.as_mut_ptr();
        let mut discard = Row::ZERO;
        let ones = _mm256_set1_epi64x(-1);
        for k in 0..rows_in.len() {
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
                let mut prev = _mm256_setzero_si256();
                let mut x = _mm256_load_si256((*input).0.as_ptr().add(0).cast());
                let mut mprev = _mm256_setzero_si256();
                let mut mx = _mm256_load_si256((*middle).0.as_ptr().add(0).cast());
                let mut v = 0;
                while v + 2 * 4usize <= words {
                    let next = _mm256_load_si256(
                        (*input).0.as_ptr().add(v + 4usize).cast(),
                    );
                    let l = _mm256_or_si256(
                        _mm256_slli_epi64::<1>(x),
                        _mm256_srli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(x, _mm256_permute2x128_si256::<0x03>(x, prev)),
                        ),
                    );
                    let r = _mm256_or_si256(
                        _mm256_srli_epi64::<1>(x),
                        _mm256_slli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(_mm256_permute2x128_si256::<0x21>(x, next), x),
                        ),
                    );
                    let lx = _mm256_xor_si256(l, x);
                    let lower_sum = _mm256_xor_si256(lx, r);
                    let and_lx = _mm256_and_si256(l, x);
                    let and_r = _mm256_and_si256(lx, r);
                    let lower_carry = _mm256_or_si256(and_lx, and_r);
                    let upper_sum = _mm256_load_si256(
                        level.sum[slot].0.as_ptr().add(v).cast(),
                    );
                    let upper_carry = _mm256_load_si256(
                        level.carry[slot].0.as_ptr().add(v).cast(),
                    );
                    let mnext = _mm256_load_si256(
                        (*middle).0.as_ptr().add(v + 4usize).cast(),
                    );
                    let middle_west = _mm256_or_si256(
                        _mm256_slli_epi64::<1>(mx),
                        _mm256_srli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(mx, _mm256_permute2x128_si256::<0x03>(mx, mprev)),
                        ),
                    );
                    let middle_centre = mx;
                    let middle_east = _mm256_or_si256(
                        _mm256_srli_epi64::<1>(mx),
                        _mm256_slli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(_mm256_permute2x128_si256::<0x21>(mx, mnext), mx),
                        ),
                    );
                    let t0 = _mm256_xor_si256(lower_sum, middle_west);
                    let t1 = _mm256_xor_si256(upper_sum, t0);
                    let t2 = _mm256_or_si256(lower_sum, middle_west);
                    let t3 = _mm256_and_si256(lower_sum, middle_west);
                    let t4 = _mm256_and_si256(upper_sum, t2);
                    let t5 = _mm256_andnot_si256(upper_sum, t3);
                    let t6 = _mm256_or_si256(t4, t5);
                    let t7 = _mm256_or_si256(upper_carry, lower_carry);
                    let t8 = _mm256_or_si256(t6, t7);
                    let t9 = _mm256_xor_si256(
                        _mm256_or_si256(upper_carry, lower_carry),
                        ones,
                    );
                    let t10 = _mm256_xor_si256(upper_carry, lower_carry);
                    let t11 = _mm256_and_si256(t6, t9);
                    let t12 = _mm256_andnot_si256(t6, t10);
                    let t13 = _mm256_or_si256(t11, t12);
                    let t14 = _mm256_or_si256(middle_east, middle_centre);
                    let t15 = _mm256_and_si256(middle_east, middle_centre);
                    let t16 = _mm256_and_si256(t1, t14);
                    let t17 = _mm256_andnot_si256(t1, t15);
                    let t18 = _mm256_or_si256(t16, t17);
                    let t19 = _mm256_andnot_si256(middle_east, t13);
                    let t20 = _mm256_and_si256(t1, middle_east);
                    let t21 = _mm256_andnot_si256(t1, t19);
                    let t22 = _mm256_or_si256(t20, t21);
                    let t23 = _mm256_andnot_si256(t18, t22);
                    let t24 = _mm256_and_si256(t8, t23);
                    let t25 = _mm256_andnot_si256(t8, t18);
                    let t26 = _mm256_or_si256(t24, t25);
                    _mm256_store_si256(
                        level.sum[slot].0.as_mut_ptr().add(v).cast(),
                        lower_sum,
                    );
                    _mm256_store_si256(
                        level.carry[slot].0.as_mut_ptr().add(v).cast(),
                        lower_carry,
                    );
                    _mm256_store_si256((*output).0.as_mut_ptr().add(v).cast(), t26);
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 4usize;
                    let next = if v + 4usize < words {
                        _mm256_load_si256((*input).0.as_ptr().add(v + 4usize).cast())
                    } else {
                        _mm256_setzero_si256()
                    };
                    let l = _mm256_or_si256(
                        _mm256_slli_epi64::<1>(x),
                        _mm256_srli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(x, _mm256_permute2x128_si256::<0x03>(x, prev)),
                        ),
                    );
                    let r = _mm256_or_si256(
                        _mm256_srli_epi64::<1>(x),
                        _mm256_slli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(_mm256_permute2x128_si256::<0x21>(x, next), x),
                        ),
                    );
                    let lx = _mm256_xor_si256(l, x);
                    let lower_sum = _mm256_xor_si256(lx, r);
                    let and_lx = _mm256_and_si256(l, x);
                    let and_r = _mm256_and_si256(lx, r);
                    let lower_carry = _mm256_or_si256(and_lx, and_r);
                    let upper_sum = _mm256_load_si256(
                        level.sum[slot].0.as_ptr().add(v).cast(),
                    );
                    let upper_carry = _mm256_load_si256(
                        level.carry[slot].0.as_ptr().add(v).cast(),
                    );
                    let mnext = if v + 4usize < words {
                        _mm256_load_si256((*middle).0.as_ptr().add(v + 4usize).cast())
                    } else {
                        _mm256_setzero_si256()
                    };
                    let middle_west = _mm256_or_si256(
                        _mm256_slli_epi64::<1>(mx),
                        _mm256_srli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(mx, _mm256_permute2x128_si256::<0x03>(mx, mprev)),
                        ),
                    );
                    let middle_centre = mx;
                    let middle_east = _mm256_or_si256(
                        _mm256_srli_epi64::<1>(mx),
                        _mm256_slli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(_mm256_permute2x128_si256::<0x21>(mx, mnext), mx),
                        ),
                    );
                    let t0 = _mm256_xor_si256(lower_sum, middle_west);
                    let t1 = _mm256_xor_si256(upper_sum, t0);
                    let t2 = _mm256_or_si256(lower_sum, middle_west);
                    let t3 = _mm256_and_si256(lower_sum, middle_west);
                    let t4 = _mm256_and_si256(upper_sum, t2);
                    let t5 = _mm256_andnot_si256(upper_sum, t3);
                    let t6 = _mm256_or_si256(t4, t5);
                    let t7 = _mm256_or_si256(upper_carry, lower_carry);
                    let t8 = _mm256_or_si256(t6, t7);
                    let t9 = _mm256_xor_si256(
                        _mm256_or_si256(upper_carry, lower_carry),
                        ones,
                    );
                    let t10 = _mm256_xor_si256(upper_carry, lower_carry);
                    let t11 = _mm256_and_si256(t6, t9);
                    let t12 = _mm256_andnot_si256(t6, t10);
                    let t13 = _mm256_or_si256(t11, t12);
                    let t14 = _mm256_or_si256(middle_east, middle_centre);
                    let t15 = _mm256_and_si256(middle_east, middle_centre);
                    let t16 = _mm256_and_si256(t1, t14);
                    let t17 = _mm256_andnot_si256(t1, t15);
                    let t18 = _mm256_or_si256(t16, t17);
                    let t19 = _mm256_andnot_si256(middle_east, t13);
                    let t20 = _mm256_and_si256(t1, middle_east);
                    let t21 = _mm256_andnot_si256(t1, t19);
                    let t22 = _mm256_or_si256(t20, t21);
                    let t23 = _mm256_andnot_si256(t18, t22);
                    let t24 = _mm256_and_si256(t8, t23);
                    let t25 = _mm256_andnot_si256(t8, t18);
                    let t26 = _mm256_or_si256(t24, t25);
                    _mm256_store_si256(
                        level.sum[slot].0.as_mut_ptr().add(v).cast(),
                        lower_sum,
                    );
                    _mm256_store_si256(
                        level.carry[slot].0.as_mut_ptr().add(v).cast(),
                        lower_carry,
                    );
                    _mm256_store_si256((*output).0.as_mut_ptr().add(v).cast(), t26);
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 4usize;
                }
                if v < words {
                    let next = _mm256_setzero_si256();
                    let l = _mm256_or_si256(
                        _mm256_slli_epi64::<1>(x),
                        _mm256_srli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(x, _mm256_permute2x128_si256::<0x03>(x, prev)),
                        ),
                    );
                    let r = _mm256_or_si256(
                        _mm256_srli_epi64::<1>(x),
                        _mm256_slli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(_mm256_permute2x128_si256::<0x21>(x, next), x),
                        ),
                    );
                    let lx = _mm256_xor_si256(l, x);
                    let lower_sum = _mm256_xor_si256(lx, r);
                    let and_lx = _mm256_and_si256(l, x);
                    let and_r = _mm256_and_si256(lx, r);
                    let lower_carry = _mm256_or_si256(and_lx, and_r);
                    let upper_sum = _mm256_load_si256(
                        level.sum[slot].0.as_ptr().add(v).cast(),
                    );
                    let upper_carry = _mm256_load_si256(
                        level.carry[slot].0.as_ptr().add(v).cast(),
                    );
                    let mnext = _mm256_setzero_si256();
                    let middle_west = _mm256_or_si256(
                        _mm256_slli_epi64::<1>(mx),
                        _mm256_srli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(mx, _mm256_permute2x128_si256::<0x03>(mx, mprev)),
                        ),
                    );
                    let middle_centre = mx;
                    let middle_east = _mm256_or_si256(
                        _mm256_srli_epi64::<1>(mx),
                        _mm256_slli_epi64::<
                            63,
                        >(
                            _mm256_alignr_epi8::<
                                8,
                            >(_mm256_permute2x128_si256::<0x21>(mx, mnext), mx),
                        ),
                    );
                    let t0 = _mm256_xor_si256(lower_sum, middle_west);
                    let t1 = _mm256_xor_si256(upper_sum, t0);
                    let t2 = _mm256_or_si256(lower_sum, middle_west);
                    let t3 = _mm256_and_si256(lower_sum, middle_west);
                    let t4 = _mm256_and_si256(upper_sum, t2);
                    let t5 = _mm256_andnot_si256(upper_sum, t3);
                    let t6 = _mm256_or_si256(t4, t5);
                    let t7 = _mm256_or_si256(upper_carry, lower_carry);
                    let t8 = _mm256_or_si256(t6, t7);
                    let t9 = _mm256_xor_si256(
                        _mm256_or_si256(upper_carry, lower_carry),
                        ones,
                    );
                    let t10 = _mm256_xor_si256(upper_carry, lower_carry);
                    let t11 = _mm256_and_si256(t6, t9);
                    let t12 = _mm256_andnot_si256(t6, t10);
                    let t13 = _mm256_or_si256(t11, t12);
                    let t14 = _mm256_or_si256(middle_east, middle_centre);
                    let t15 = _mm256_and_si256(middle_east, middle_centre);
                    let t16 = _mm256_and_si256(t1, t14);
                    let t17 = _mm256_andnot_si256(t1, t15);
                    let t18 = _mm256_or_si256(t16, t17);
                    let t19 = _mm256_andnot_si256(middle_east, t13);
                    let t20 = _mm256_and_si256(t1, middle_east);
                    let t21 = _mm256_andnot_si256(t1, t19);
                    let t22 = _mm256_or_si256(t20, t21);
                    let t23 = _mm256_andnot_si256(t18, t22);
                    let t24 = _mm256_and_si256(t8, t23);
                    let t25 = _mm256_andnot_si256(t8, t18);
                    let t26 = _mm256_or_si256(t24, t25);
                    _mm256_store_si256(
                        level.sum[slot].0.as_mut_ptr().add(v).cast(),
                        lower_sum,
                    );
                    _mm256_store_si256(
                        level.carry[slot].0.as_mut_ptr().add(v).cast(),
                        lower_carry,
                    );
                    _mm256_store_si256((*output).0.as_mut_ptr().add(v).cast(), t26);
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 4usize;
                }
            }
        }
    }
}
/// Advances a tile `levels.len()` generations (portable).
/// `words`: a multiple of 8, at most 64.
/// `rows_in.len() == rows_out.len() + 2 * levels.len()`.
/// # Safety: the CPU must have the instruction set.
#[allow(unused_variables, unused_assignments)]
pub unsafe fn advance_tile_portable(
    rows_in: &[Row],
    rows_out: &mut [Row],
    levels: &mut [LevelState],
    words: usize,
) {
    assert!(words % 8 == 0 && words <= 64usize && words > 0);
    assert_eq!(rows_in.len(), rows_out.len() + 2 * levels.len());
    unsafe {
        let gens = levels.len();
        let levels = levels.as_mut_ptr();
        let mut discard = Row::ZERO;
        for k in 0..rows_in.len() {
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
                let mut prev = 0u64;
                let mut x = *(*input).0.get_unchecked(0);
                let mut mprev = 0u64;
                let mut mx = *(*middle).0.get_unchecked(0);
                let mut v = 0;
                while v + 2 * 1usize <= words {
                    let next = *(*input).0.get_unchecked(v + 1usize);
                    let l = x << 1 | prev >> 63;
                    let r = x >> 1 | next << 63;
                    let lx = l ^ x;
                    let lower_sum = lx ^ r;
                    let and_lx = l & x;
                    let and_r = lx & r;
                    let lower_carry = and_lx | and_r;
                    let upper_sum = *level.sum[slot].0.get_unchecked(v);
                    let upper_carry = *level.carry[slot].0.get_unchecked(v);
                    let mnext = *(*middle).0.get_unchecked(v + 1usize);
                    let middle_west = mx << 1 | mprev >> 63;
                    let middle_centre = mx;
                    let middle_east = mx >> 1 | mnext << 63;
                    let t0 = lower_sum ^ middle_west;
                    let t1 = upper_sum ^ t0;
                    let t2 = lower_sum | middle_west;
                    let t3 = lower_sum & middle_west;
                    let t4 = upper_sum & t2;
                    let t5 = !upper_sum & t3;
                    let t6 = t4 | t5;
                    let t7 = upper_carry | lower_carry;
                    let t8 = t6 | t7;
                    let t9 = !(upper_carry | lower_carry);
                    let t10 = upper_carry ^ lower_carry;
                    let t11 = t6 & t9;
                    let t12 = !t6 & t10;
                    let t13 = t11 | t12;
                    let t14 = middle_east | middle_centre;
                    let t15 = middle_east & middle_centre;
                    let t16 = t1 & t14;
                    let t17 = !t1 & t15;
                    let t18 = t16 | t17;
                    let t19 = !middle_east & t13;
                    let t20 = t1 & middle_east;
                    let t21 = !t1 & t19;
                    let t22 = t20 | t21;
                    let t23 = !t18 & t22;
                    let t24 = t8 & t23;
                    let t25 = !t8 & t18;
                    let t26 = t24 | t25;
                    *level.sum[slot].0.get_unchecked_mut(v) = lower_sum;
                    *level.carry[slot].0.get_unchecked_mut(v) = lower_carry;
                    *(*output).0.get_unchecked_mut(v) = t26;
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 1usize;
                    let next = if v + 1usize < words {
                        *(*input).0.get_unchecked(v + 1usize)
                    } else {
                        0u64
                    };
                    let l = x << 1 | prev >> 63;
                    let r = x >> 1 | next << 63;
                    let lx = l ^ x;
                    let lower_sum = lx ^ r;
                    let and_lx = l & x;
                    let and_r = lx & r;
                    let lower_carry = and_lx | and_r;
                    let upper_sum = *level.sum[slot].0.get_unchecked(v);
                    let upper_carry = *level.carry[slot].0.get_unchecked(v);
                    let mnext = if v + 1usize < words {
                        *(*middle).0.get_unchecked(v + 1usize)
                    } else {
                        0u64
                    };
                    let middle_west = mx << 1 | mprev >> 63;
                    let middle_centre = mx;
                    let middle_east = mx >> 1 | mnext << 63;
                    let t0 = lower_sum ^ middle_west;
                    let t1 = upper_sum ^ t0;
                    let t2 = lower_sum | middle_west;
                    let t3 = lower_sum & middle_west;
                    let t4 = upper_sum & t2;
                    let t5 = !upper_sum & t3;
                    let t6 = t4 | t5;
                    let t7 = upper_carry | lower_carry;
                    let t8 = t6 | t7;
                    let t9 = !(upper_carry | lower_carry);
                    let t10 = upper_carry ^ lower_carry;
                    let t11 = t6 & t9;
                    let t12 = !t6 & t10;
                    let t13 = t11 | t12;
                    let t14 = middle_east | middle_centre;
                    let t15 = middle_east & middle_centre;
                    let t16 = t1 & t14;
                    let t17 = !t1 & t15;
                    let t18 = t16 | t17;
                    let t19 = !middle_east & t13;
                    let t20 = t1 & middle_east;
                    let t21 = !t1 & t19;
                    let t22 = t20 | t21;
                    let t23 = !t18 & t22;
                    let t24 = t8 & t23;
                    let t25 = !t8 & t18;
                    let t26 = t24 | t25;
                    *level.sum[slot].0.get_unchecked_mut(v) = lower_sum;
                    *level.carry[slot].0.get_unchecked_mut(v) = lower_carry;
                    *(*output).0.get_unchecked_mut(v) = t26;
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 1usize;
                }
                if v < words {
                    let next = 0u64;
                    let l = x << 1 | prev >> 63;
                    let r = x >> 1 | next << 63;
                    let lx = l ^ x;
                    let lower_sum = lx ^ r;
                    let and_lx = l & x;
                    let and_r = lx & r;
                    let lower_carry = and_lx | and_r;
                    let upper_sum = *level.sum[slot].0.get_unchecked(v);
                    let upper_carry = *level.carry[slot].0.get_unchecked(v);
                    let mnext = 0u64;
                    let middle_west = mx << 1 | mprev >> 63;
                    let middle_centre = mx;
                    let middle_east = mx >> 1 | mnext << 63;
                    let t0 = lower_sum ^ middle_west;
                    let t1 = upper_sum ^ t0;
                    let t2 = lower_sum | middle_west;
                    let t3 = lower_sum & middle_west;
                    let t4 = upper_sum & t2;
                    let t5 = !upper_sum & t3;
                    let t6 = t4 | t5;
                    let t7 = upper_carry | lower_carry;
                    let t8 = t6 | t7;
                    let t9 = !(upper_carry | lower_carry);
                    let t10 = upper_carry ^ lower_carry;
                    let t11 = t6 & t9;
                    let t12 = !t6 & t10;
                    let t13 = t11 | t12;
                    let t14 = middle_east | middle_centre;
                    let t15 = middle_east & middle_centre;
                    let t16 = t1 & t14;
                    let t17 = !t1 & t15;
                    let t18 = t16 | t17;
                    let t19 = !middle_east & t13;
                    let t20 = t1 & middle_east;
                    let t21 = !t1 & t19;
                    let t22 = t20 | t21;
                    let t23 = !t18 & t22;
                    let t24 = t8 & t23;
                    let t25 = !t8 & t18;
                    let t26 = t24 | t25;
                    *level.sum[slot].0.get_unchecked_mut(v) = lower_sum;
                    *level.carry[slot].0.get_unchecked_mut(v) = lower_carry;
                    *(*output).0.get_unchecked_mut(v) = t26;
                    prev = x;
                    mprev = mx;
                    mx = mnext;
                    x = next;
                    v += 1usize;
                }
            }
        }
    }
}
