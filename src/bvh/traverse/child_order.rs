//! Ordering the hit children of a wide BVH node for closest-hit traversal: the nearest child
//! is visited next, the others go on the traversal stack farthest first, so that the next
//! nearest is popped next.
//!
//! Each hit child gets a 32-bit sort key: the bits of its entry time (a non-negative `f32`
//! orders like its bits; negative times and `-0` count as 0) with the low 4 bits replaced by
//! `8 | lane`. Keys are distinct, so the order is total and both versions give the same one;
//! children whose entry times differ by less than 16 ulps are ordered by lane. The stack
//! entries keep the exact entry times (they decide culling, the keys only the order).
//!
//! The 8-lane version ([`order8`] on x86-64 with AVX2) sorts the keys with a bitonic network
//! (six compare-exchange steps across one 256-bit register) and finds the nearest child by a
//! separate three-step minimum, so the next node's address does not wait for the sort. It has
//! no data-dependent branch: the insertion sort it replaces mispredicted about twice per node
//! with three or more hit children on incoherent rays. [`order4`] (4-wide nodes, every
//! target) does the same with the optimal network of five scalar compare-exchanges (a maximum
//! and a minimum each, which compile to conditional moves). [`order_scalar`] is the twin of
//! both, a plain sort of the keys, and the 8-lane version without AVX2. [`order`] picks the
//! version for a node's width. [`order16`] (16-wide nodes, with AVX-512F) compresses the hit
//! keys into the low lanes and sorts them with the smallest bitonic network that holds them
//! (4, 8 or 16 lanes); [`order_scalar16`] is its twin.

use bytemuck::{Pod, Zeroable};

/// A traversal stack entry: a child reference and the ray's entry time into its box.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct StackEntry {
    /// Child reference (a node or a leaf, see [`crate::bvh::Child`]).
    pub child: u32,
    /// Entry time into the child's box.
    pub t: f32,
}

/// The sort key of a hit child in `lane` entered at `t` (see the module docs).
#[inline(always)]
pub fn key(t: f32, lane: usize) -> u32 {
    // `t > 0` is false for negative times, -0, +0 and NaN: all key as 0.
    let bits = if t > 0.0 { t.to_bits() } else { 0 };
    (bits & !15) | 8 | lane as u32
}

/// Orders the children in `hits` (a bitmask over lanes `0..t.len()`, not empty; `t` and
/// `children` have the same length, at most 8): writes them to `out[..k]` (`k` = number of
/// hits) by descending key, farthest first, and returns the nearest child, `out[k - 1].child`.
/// `out[k..]` is left unspecified.
pub fn order_scalar(t: &[f32], children: &[u32], hits: u32, out: &mut [StackEntry; 8]) -> u32 {
    debug_assert!(hits != 0 && t.len() == children.len() && t.len() <= 8);
    // Misses key as 0, below every hit (hit keys have bit 3 set): they sort last.
    sort_hits(t, children, hits, key, out)
}

/// The plain sort behind both twins ([`order_scalar`], [`order_scalar16`]): the hit lanes'
/// keys by `key` (whose low bits below `K` are the lane), sorted descending, each written to
/// `out` as its lane's entry; returns the nearest child.
#[inline(always)]
fn sort_hits<const K: usize>(
    t: &[f32],
    children: &[u32],
    hits: u32,
    key: fn(f32, usize) -> u32,
    out: &mut [StackEntry; K],
) -> u32 {
    let mut keys = [0u32; K];
    let mut k = 0;
    for (lane, (&t, key_slot)) in t.iter().zip(&mut keys).enumerate() {
        if hits >> lane & 1 != 0 {
            *key_slot = key(t, lane);
            k += 1;
        }
    }
    keys.sort_unstable_by(|a, b| b.cmp(a));
    for (e, &key) in out.iter_mut().zip(&keys[..k]) {
        let lane = (key & (K as u32 - 1)) as usize;
        *e = StackEntry { child: children[lane], t: t[lane] };
    }
    out[k - 1].child
}

/// [`order_scalar`] for the hit children of a node `children.len()` wide (`t` holds its entry
/// times in the first `children.len()` lanes): [`order8`] for 8 lanes, [`order4`] for 4, the
/// plain sort otherwise. The width is a constant where the traversal calls it, so the choice
/// costs nothing.
#[inline(always)]
pub fn order(t: &[f32; 8], children: &[u32], hits: u32, out: &mut [StackEntry; 8]) -> u32 {
    if let Ok(kids) = <&[u32; 8]>::try_from(children) {
        order8(t, kids, hits, out)
    } else if let Ok(kids) = <&[u32; 4]>::try_from(children) {
        order4(&[t[0], t[1], t[2], t[3]], kids, hits, out)
    } else {
        order_scalar(&t[..children.len().min(8)], children, hits, out)
    }
}

/// [`order_scalar`] for 8 lanes, with the AVX2 sorting network where the target has it.
#[inline(always)]
pub fn order8(t: &[f32; 8], children: &[u32; 8], hits: u32, out: &mut [StackEntry; 8]) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // SAFETY: this build enables AVX2 for all code (`target_feature = "avx2"` is set at
        // compile time), so any CPU that runs it has AVX2.
        unsafe { avx2::order8(t, children, hits, out) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        // A portable network of 19 scalar compare-exchanges measured slower than the sort
        // on coherent rays (portable build, sponza primary rays 1.09x the time).
        order_scalar(t, children, hits, out)
    }
}

/// Which implementation [`order8`] compiled to.
pub const ORDER8_IMPL: &str =
    if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) { "avx2 sorting network" } else { "scalar" };

/// [`order_scalar`] for 4-wide nodes: the keys sorted descending by the optimal network of
/// five compare-exchanges (a maximum and a minimum each, no branch), the nearest child by a
/// minimum apart from the sort. `out[..k]` and the result equal [`order_scalar`]'s for every
/// input (`out[k..4]` holds other entries, `out[4..]` is not written).
#[inline(always)]
pub fn order4(t: &[f32; 4], children: &[u32; 4], hits: u32, out: &mut [StackEntry; 8]) -> u32 {
    debug_assert!(hits != 0 && hits < 16);
    // Misses key as 0 (below every hit key) in the sort and as `u32::MAX` in the minimum.
    let (mut k, mut nearest) = ([0u32; 4], u32::MAX);
    for lane in 0..4 {
        let (hit, key) = (hits >> lane & 1 != 0, key(t[lane], lane));
        k[lane] = if hit { key } else { 0 };
        nearest = nearest.min(if hit { key } else { u32::MAX });
    }
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        (k[i], k[j]) = (k[i].max(k[j]), k[i].min(k[j]));
    }
    for (e, &key) in out.iter_mut().zip(&k) {
        let lane = (key & 3) as usize;
        *e = StackEntry { child: children[lane], t: t[lane] };
    }
    children[(nearest & 3) as usize]
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod avx2 {
    //! The AVX2 network. Its functions carry `#[target_feature(enable = "avx2")]`, which
    //! makes the register intrinsics safe to call inside them; memory goes through
    //! `bytemuck` casts (no raw pointers).
    use super::StackEntry;
    use core::arch::x86_64::*;

    /// Lanes taking the larger key at the bitonic step comparing lanes `i` and `i ^ j` within
    /// blocks of `k` lanes; blocks alternate descending/ascending until the last stage
    /// (`k = 8`), which sorts all lanes descending.
    const fn takes_max(k: usize, j: usize) -> i32 {
        let mut mask = 0;
        let mut i = 0;
        while i < 8 {
            let first = i & j == 0;
            let descending = k == 8 || i & k == 0;
            if first == descending {
                mask |= 1 << i;
            }
            i += 1;
        }
        mask
    }
    const M21: i32 = takes_max(2, 1);
    const M42: i32 = takes_max(4, 2);
    const M41: i32 = takes_max(4, 1);
    const M84: i32 = takes_max(8, 4);
    const M82: i32 = takes_max(8, 2);
    const M81: i32 = takes_max(8, 1);

    /// One compare-exchange step against the partner lanes `p`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn step<const MAX_LANES: i32>(v: __m256i, p: __m256i) -> __m256i {
        _mm256_blend_epi32::<MAX_LANES>(_mm256_min_epu32(v, p), _mm256_max_epu32(v, p))
    }
    /// Swaps neighbouring lanes (`i ^ 1`).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn x1(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b10_11_00_01>(v)
    }
    /// Swaps neighbouring pairs (`i ^ 2`).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn x2(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b01_00_11_10>(v)
    }
    /// Swaps the 128-bit halves (`i ^ 4`).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn x4(v: __m256i) -> __m256i {
        _mm256_permute2x128_si256::<0x01>(v, v)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn order8(t: &[f32; 8], children: &[u32; 8], hits: u32, out: &mut [StackEntry; 8]) -> u32 {
        let tv: __m256 = bytemuck::cast(*t);
        let kids: __m256i = bytemuck::cast(*children);
        let lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        let hit = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(hits as i32), lane_bits), lane_bits);
        // key(): max(t, +0) maps negatives, -0 and NaN to +0 (maxps returns its second
        // operand for those), then the low 4 bits become 8 | lane.
        let tpos = _mm256_castps_si256(_mm256_max_ps(tv, _mm256_setzero_ps()));
        let lane_tag = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
        let keys = _mm256_or_si256(_mm256_and_si256(tpos, _mm256_set1_epi32(!15)), lane_tag);
        // The nearest: minimum key over the hits (misses as all ones).
        let m = _mm256_or_si256(keys, _mm256_andnot_si256(hit, _mm256_set1_epi32(-1)));
        let m = _mm256_min_epu32(m, x1(m));
        let m = _mm256_min_epu32(m, x2(m));
        let m = _mm256_min_epu32(m, x4(m));
        let nearest = children[(_mm256_cvtsi256_si32(m) & 7) as usize];
        // The sort, descending (misses as 0, last).
        let v = sort8(_mm256_and_si256(keys, hit));
        let lane = _mm256_and_si256(v, _mm256_set1_epi32(7));
        let child = _mm256_permutevar8x32_epi32(kids, lane);
        let time = _mm256_permutevar8x32_epi32(_mm256_castps_si256(tv), lane);
        write_entries8(child, time, out);
        nearest
    }

    /// The bitonic network: `v`'s eight keys sorted descending (also the 16-wide order's
    /// network for at most eight hits). Forced inline, so not a `#[target_feature]`
    /// function (with one, LLVM kept it out of line: a call at every node).
    #[inline(always)]
    pub(super) fn sort8(v: __m256i) -> __m256i {
        // SAFETY: this module is compiled only where the whole build enables AVX2.
        unsafe {
            let v = step::<M21>(v, x1(v));
            let v = step::<M42>(v, x2(v));
            let v = step::<M41>(v, x1(v));
            let v = step::<M84>(v, x4(v));
            let v = step::<M82>(v, x2(v));
            step::<M81>(v, x1(v))
        }
    }

    /// Writes `(child[i], time[i])` to `out[i]` for the eight lanes (inline, as `sort8`).
    #[inline(always)]
    pub(super) fn write_entries8(child: __m256i, time: __m256i, out: &mut [StackEntry]) {
        // SAFETY: this module is compiled only where the whole build enables AVX2.
        unsafe {
            // Interleave into (child, t) pairs: entries 0, 1, 4, 5 | 2, 3, 6, 7, then regroup.
            let lo = _mm256_unpacklo_epi32(child, time);
            let hi = _mm256_unpackhi_epi32(child, time);
            let first: [StackEntry; 4] = bytemuck::cast(_mm256_permute2x128_si256::<0x20>(lo, hi));
            let second: [StackEntry; 4] = bytemuck::cast(_mm256_permute2x128_si256::<0x31>(lo, hi));
            out[..4].copy_from_slice(&first);
            out[4..8].copy_from_slice(&second);
        }
    }
}

/// The sort key of a hit child of a 16-wide node ([`order16`]): as [`key`], with the low 5
/// bits `16 | lane`, so that the 16 lanes' keys are distinct and every hit key is above the
/// misses' 0.
#[inline(always)]
pub fn key16(t: f32, lane: usize) -> u32 {
    let bits = if t > 0.0 { t.to_bits() } else { 0 };
    (bits & !31) | 16 | lane as u32
}

/// The twin of [`order16`]: a plain sort of the [`key16`] keys of the hit children, written
/// to `out[..k]` farthest first; returns the nearest child, `out[k - 1].child` (`hits` must
/// not be empty). `out[k..]` is left unspecified.
pub fn order_scalar16(t: &[f32; 16], children: &[u32; 16], hits: u32, out: &mut [StackEntry; 16]) -> u32 {
    debug_assert!(hits != 0 && hits >> 16 == 0);
    sort_hits(t, children, hits, key16, out)
}

/// [`order_scalar16`] for the 16 children of a 16-wide node, with AVX-512 sorting networks
/// where the target has it: the hit keys compressed into the low lanes, then three
/// compare-exchange steps in a 128-bit register for at most 4 hits, six in a 256-bit one for
/// at most 8, ten in a 512-bit one otherwise; the nearest by a separate minimum, as in
/// [`order8`]. `out[..k]` and the result equal [`order_scalar16`]'s for every input
/// (`out[k..]` is left unspecified, and only the first 4 or 8 entries are written when
/// `k` is at most 4 or 8).
#[inline(always)]
pub fn order16(t: &[f32; 16], children: &[u32; 16], hits: u32, out: &mut [StackEntry; 16]) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    {
        avx512::order16(t, children, hits, out)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    {
        order_scalar16(t, children, hits, out)
    }
}

/// Which implementation [`order16`] compiled to.
pub const ORDER16_IMPL: &str =
    if cfg!(all(target_arch = "x86_64", target_feature = "avx512f")) { "avx512 sorting network" } else { "scalar" };

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod avx512 {
    //! The AVX-512 networks. Their functions are forced inline into the traversal: with
    //! `#[target_feature]` (which may not be combined with `#[inline(always)]`) LLVM kept
    //! `order16` out of line, a call at every node with three or more hit children. The
    //! intrinsics are therefore called in `unsafe` blocks, sound because this module is
    //! compiled only where the whole build enables AVX-512F (which implies AVX2 and SSE4.1:
    //! the 8-lane case calls the AVX2 module's network, the 4-lane one uses 128-bit
    //! operations). Memory goes through `bytemuck` casts (no raw pointers).
    //!
    //! Most nodes have few hit children, so the hit keys are first compressed into the low
    //! lanes (`vpcompressd`) and sorted by the smallest network that holds them: 4 lanes
    //! (three steps, 128 bits), 8 lanes (six steps, 256 bits), or all 16 (ten steps, 512
    //! bits). On Zen 4 a 512-bit operation occupies both halves of the 256-bit units, so the
    //! narrower networks cost a fraction of the full one.
    use super::StackEntry;
    use core::arch::x86_64::*;

    /// Lanes (of `n`) taking the larger key at the bitonic step comparing lanes `i` and
    /// `i ^ j` within blocks of `k` lanes; blocks alternate descending/ascending until the
    /// last stage (`k = n`), which sorts all lanes descending.
    const fn takes_max(n: usize, k: usize, j: usize) -> u16 {
        let mut mask = 0u16;
        let mut i = 0;
        while i < n {
            let first = i & j == 0;
            let descending = k == n || i & k == 0;
            if first == descending {
                mask |= 1 << i;
            }
            i += 1;
        }
        mask
    }

    /// One compare-exchange step of the 16-lane network: each lane against lane `i ^ J`,
    /// the lanes of `max` taking the larger key.
    #[inline(always)]
    fn step16<const J: i32>(v: __m512i, max: u16) -> __m512i {
        // SAFETY: this module is compiled only where AVX-512F is enabled for the whole build.
        unsafe {
            let partner = _mm512_xor_si512(
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm512_set1_epi32(J),
            );
            let p = _mm512_permutexvar_epi32(partner, v);
            _mm512_mask_blend_epi32(max, _mm512_min_epu32(v, p), _mm512_max_epu32(v, p))
        }
    }

    /// One compare-exchange step of the 4-lane network: each lane against its partner
    /// `p`, the lanes of `MAX` taking the larger key.
    #[inline(always)]
    fn step4<const MAX: i32>(v: __m128i, p: __m128i) -> __m128i {
        // SAFETY: as `step16` (AVX-512F implies SSE4.1 and AVX2, which `_mm_blend_epi32` needs).
        unsafe { _mm_blend_epi32::<MAX>(_mm_min_epu32(v, p), _mm_max_epu32(v, p)) }
    }

    /// The children and entry times of the lanes named in the low 4 bits of `keys`' lanes,
    /// in those lanes.
    #[inline(always)]
    fn entries_of(keys: __m512i, kids: __m512i, tv: __m512) -> (__m512i, __m512i) {
        // SAFETY: as `step16`.
        unsafe {
            let lanes = _mm512_and_si512(keys, _mm512_set1_epi32(15));
            (_mm512_permutexvar_epi32(lanes, kids), _mm512_permutexvar_epi32(lanes, _mm512_castps_si512(tv)))
        }
    }

    #[inline(always)]
    pub(super) fn order16(t: &[f32; 16], children: &[u32; 16], hits: u32, out: &mut [StackEntry; 16]) -> u32 {
        // SAFETY: this module is compiled only where AVX-512F is enabled for the whole build.
        unsafe {
            let tv: __m512 = bytemuck::cast(*t);
            let kids: __m512i = bytemuck::cast(*children);
            let hit = hits as u16;
            // key16(): max(t, +0) maps negatives, -0 and NaN to +0 (maxps returns its second
            // operand for those), then the low 5 bits become 16 | lane.
            let tpos = _mm512_castps_si512(_mm512_max_ps(tv, _mm512_setzero_ps()));
            let tag = _mm512_setr_epi32(16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
            let keys = _mm512_or_si512(_mm512_and_si512(tpos, _mm512_set1_epi32(!31)), tag);
            // The nearest: minimum key over the hits (misses as all ones).
            let nearest = _mm512_reduce_min_epu32(_mm512_mask_mov_epi32(_mm512_set1_epi32(-1), hit, keys)) as u32;
            let nearest = children[(nearest & 15) as usize];
            // The hits' keys in the low lanes (zeros above, which sort last), sorted
            // descending by the smallest network that holds them.
            let packed = _mm512_maskz_compress_epi32(hit, keys);
            match hits.count_ones() {
                0..=4 => {
                    let v = _mm512_castsi512_si128(packed);
                    let v = step4::<{ takes_max(4, 2, 1) as i32 }>(v, _mm_shuffle_epi32::<0b10_11_00_01>(v));
                    let v = step4::<{ takes_max(4, 4, 2) as i32 }>(v, _mm_shuffle_epi32::<0b01_00_11_10>(v));
                    let v = step4::<{ takes_max(4, 4, 1) as i32 }>(v, _mm_shuffle_epi32::<0b10_11_00_01>(v));
                    let (c, tt) = entries_of(_mm512_castsi128_si512(v), kids, tv);
                    let (c, tt) = (_mm512_castsi512_si128(c), _mm512_castsi512_si128(tt));
                    let pairs: [[StackEntry; 2]; 2] =
                        bytemuck::cast([_mm_unpacklo_epi32(c, tt), _mm_unpackhi_epi32(c, tt)]);
                    out[..2].copy_from_slice(&pairs[0]);
                    out[2..4].copy_from_slice(&pairs[1]);
                }
                5..=8 => {
                    // The 8-wide order's network and write-out (AVX-512F implies AVX2).
                    let v = super::avx2::sort8(_mm512_castsi512_si256(packed));
                    let (c, tt) = entries_of(_mm512_castsi256_si512(v), kids, tv);
                    super::avx2::write_entries8(_mm512_castsi512_si256(c), _mm512_castsi512_si256(tt), out);
                }
                _ => {
                    let mut v = packed;
                    v = step16::<1>(v, const { takes_max(16, 2, 1) });
                    v = step16::<2>(v, const { takes_max(16, 4, 2) });
                    v = step16::<1>(v, const { takes_max(16, 4, 1) });
                    v = step16::<4>(v, const { takes_max(16, 8, 4) });
                    v = step16::<2>(v, const { takes_max(16, 8, 2) });
                    v = step16::<1>(v, const { takes_max(16, 8, 1) });
                    v = step16::<8>(v, const { takes_max(16, 16, 8) });
                    v = step16::<4>(v, const { takes_max(16, 16, 4) });
                    v = step16::<2>(v, const { takes_max(16, 16, 2) });
                    v = step16::<1>(v, const { takes_max(16, 16, 1) });
                    // Entry `i` is (child, t) of the lane in key `i`'s low bits, interleaved,
                    // and the 128-bit blocks put back in order.
                    let (c, tt) = entries_of(v, kids, tv);
                    let (lo, hi) = (_mm512_unpacklo_epi32(c, tt), _mm512_unpackhi_epi32(c, tt));
                    let first = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi);
                    let second = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi);
                    *out = bytemuck::cast([first, second]);
                }
            }
            nearest
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_by_time_then_lane() {
        assert!(key(1.0, 7) < key(2.0, 0));
        assert!(key(1.0, 0) < key(1.0, 1));
        assert_eq!(key(-3.0, 2), key(0.0, 2));
        assert_eq!(key(-0.0, 2), key(f32::NAN, 2));
        assert!(key(0.0, 7) < key(f32::MIN_POSITIVE * 64.0, 0));
    }

    #[test]
    fn scalar_order_puts_the_nearest_last() {
        let t = [5.0, 1.0, 3.0, 9.0];
        let kids = [10, 11, 12, 13];
        let mut out = [StackEntry::default(); 8];
        let near = order_scalar(&t, &kids, 0b0111, &mut out);
        assert_eq!(near, 11);
        assert_eq!(
            &out[..3],
            &[StackEntry { child: 10, t: 5.0 }, StackEntry { child: 12, t: 3.0 }, StackEntry { child: 11, t: 1.0 }]
        );
    }
}
