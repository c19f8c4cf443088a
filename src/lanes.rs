//! The one place that defines lane width: the [`Lanes`] trait over `f32` (1 lane),
//! `wide::f32x4` (4 lanes), `wide::f32x8` (8 lanes) and `wide::f32x16` (16 lanes: one AVX-512
//! register where the build targets it, two 8-lane halves elsewhere), and the matching
//! [`Mask`] types.
//!
//! Every SIMD kernel in lanecast is written once, generic over [`Lanes`]. This is the only
//! module that imports `wide`.
//!
//! # Semantics every implementation shares
//!
//! * `min(a, b)` is `if a < b { a } else { b }` and `max(a, b)` is `if a > b { a } else { b }`
//!   lane by lane: when either operand is NaN the **second** operand is returned. This is the
//!   x86 `minps`/`maxps` rule; kernels rely on it to drop NaN lanes into a known value.
//! * `mul_add(a, b, c)` is `a * b + c`, fused when the target has FMA (so results may differ
//!   from the unfused scalar reference by one rounding).
//! * Comparisons are ordered: any comparison involving NaN is false.
//! * `div` and `sqrt` are IEEE exact (no approximate reciprocals).

use core::fmt::Debug;
use core::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Sub};
use wide::{f32x4, f32x8, f32x16, u32x4, u32x8, u32x16};

mod sealed {
    /// Implemented by the crate's lane types only (see [`super::Lanes`]).
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for super::f32x4 {}
    impl Sealed for super::f32x8 {}
    impl Sealed for super::f32x16 {}
}

/// A lane mask: one boolean per lane.
pub trait Mask:
    Copy
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Send
    + Sync
    + 'static
{
    /// Number of lanes.
    const N: usize;
    /// All lanes set to `b`.
    fn splat(b: bool) -> Self;
    /// Lane `i` is set when bit `i` of `bits` is set (bits above `N` are ignored).
    fn from_bitmask(bits: u32) -> Self;
    /// Bit `i` is set when lane `i` is set.
    fn bitmask(self) -> u32;
    /// True when any lane is set.
    #[inline(always)]
    fn any(self) -> bool {
        self.bitmask() != 0
    }
    /// True when every lane is set.
    #[inline(always)]
    fn all(self) -> bool {
        self.bitmask() == (1u32 << Self::N) - 1
    }
    /// True when no lane is set.
    #[inline(always)]
    fn none(self) -> bool {
        !self.any()
    }
    /// `self & !other`.
    #[inline(always)]
    fn and_not(self, other: Self) -> Self {
        self & !other
    }
    /// Whether lane `i` is set.
    #[inline(always)]
    fn lane(self, i: usize) -> bool {
        (self.bitmask() >> i) & 1 == 1
    }
}

/// A vector of `N` f32 lanes with the operations the kernels need.
///
/// Sealed: the crate's unchecked lane loads ([`Lanes::load_ptr`] behind one bounds check)
/// trust `N` as the number of values a load reads, so only the crate's own types (`f32`,
/// [`F32x4`], [`F32x8`], [`F32x16`]) implement it. A complete implementation outside the
/// crate does not compile:
///
/// ```compile_fail,E0277
/// use core::ops::{Add, Div, Mul, Neg, Sub};
/// use lanecast::Lanes;
///
/// #[derive(Clone, Copy, Debug)]
/// struct One(f32);
/// impl Add for One { type Output = One; fn add(self, b: One) -> One { One(self.0 + b.0) } }
/// impl Sub for One { type Output = One; fn sub(self, b: One) -> One { One(self.0 - b.0) } }
/// impl Mul for One { type Output = One; fn mul(self, b: One) -> One { One(self.0 * b.0) } }
/// impl Div for One { type Output = One; fn div(self, b: One) -> One { One(self.0 / b.0) } }
/// impl Neg for One { type Output = One; fn neg(self) -> One { One(-self.0) } }
///
/// impl Lanes for One {
///     const N: usize = 16; // but a load below reads one value
///     type Mask = bool;
///     const NAME: &'static str = "one";
///     type Ids = [u32; 1];
///     fn splat_ids(v: u32) -> [u32; 1] { [v] }
///     fn splat(v: f32) -> One { One(v) }
///     fn load(src: &[f32]) -> One { One(src[0]) }
///     unsafe fn load_ptr(src: *const f32) -> One { One(unsafe { *src }) }
///     fn store(self, dst: &mut [f32]) { dst[0] = self.0 }
///     fn lane(self, _i: usize) -> f32 { self.0 }
///     fn lanes_mut(&mut self) -> &mut [f32] { core::slice::from_mut(&mut self.0) }
///     fn min(self, b: One) -> One { One(self.0.min(b.0)) }
///     fn max(self, b: One) -> One { One(self.0.max(b.0)) }
///     fn abs(self) -> One { One(self.0.abs()) }
///     fn sqrt(self) -> One { One(self.0.sqrt()) }
///     fn mul_add(self, b: One, c: One) -> One { One(self.0 * b.0 + c.0) }
///     fn xor_sign(self, s: One) -> One { One(f32::from_bits(self.0.to_bits() ^ (s.0.to_bits() & 1 << 31))) }
///     fn lt(self, b: One) -> bool { self.0 < b.0 }
///     fn le(self, b: One) -> bool { self.0 <= b.0 }
///     fn gt(self, b: One) -> bool { self.0 > b.0 }
///     fn ge(self, b: One) -> bool { self.0 >= b.0 }
///     fn eq(self, b: One) -> bool { self.0 == b.0 }
///     fn select(m: bool, a: One, b: One) -> One { if m { a } else { b } }
/// }
/// ```
pub trait Lanes:
    sealed::Sealed
    + Copy
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + 'static
{
    /// Number of lanes.
    const N: usize;
    /// The mask type produced by comparisons.
    type Mask: Mask;
    /// Short name for reports: `"scalar"`, `"x4"`, `"x8"` or `"x16"`.
    const NAME: &'static str;
    /// One `u32` per lane (`[u32; N]`): per-lane ray masks and ids kept beside the lanes.
    type Ids: Copy
        + Debug
        + Send
        + Sync
        + AsRef<[u32]>
        + AsMut<[u32]>
        + core::ops::Index<usize, Output = u32>
        + core::ops::IndexMut<usize>;
    /// Every lane's id equal to `v`.
    fn splat_ids(v: u32) -> Self::Ids;

    /// All lanes equal to `v`.
    fn splat(v: f32) -> Self;
    /// Loads `N` values from `src[0..N]`. Panics if `src` is shorter than `N` (callers pad).
    fn load(src: &[f32]) -> Self;
    /// Loads `N` values starting at `src`, without a bounds check.
    ///
    /// # Safety
    /// `src` must be valid for reading `N` consecutive `f32` (no alignment needed).
    unsafe fn load_ptr(src: *const f32) -> Self;
    /// Stores the `N` lanes into `dst[0..N]`.
    fn store(self, dst: &mut [f32]);
    /// Value of lane `i`.
    fn lane(self, i: usize) -> f32;
    /// The `N` lanes in place, to write them one at a time: a later read of a lane is
    /// forwarded from its store, where a wide load of lanes written one by one (`store`,
    /// change, `load`) waits for the stores to reach the cache.
    fn lanes_mut(&mut self) -> &mut [f32];

    /// Lane-wise `if a < b { a } else { b }` (NaN gives `b`).
    fn min(self, b: Self) -> Self;
    /// Lane-wise `if a > b { a } else { b }` (NaN gives `b`).
    fn max(self, b: Self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// IEEE square root.
    fn sqrt(self) -> Self;
    /// `self * b + c`, fused where the target has FMA.
    fn mul_add(self, b: Self, c: Self) -> Self;
    /// `self` with its sign flipped in the lanes where `s` has its sign bit set.
    fn xor_sign(self, s: Self) -> Self;

    /// `self < b`.
    fn lt(self, b: Self) -> Self::Mask;
    /// `self <= b`.
    fn le(self, b: Self) -> Self::Mask;
    /// `self <= b` as lane bits (bit `i` for lane `i`): [`Lanes::le`] then
    /// [`Mask::bitmask`], in one compare into a mask register where the lanes have one
    /// (16 lanes on AVX-512).
    #[inline(always)]
    fn le_bits(self, b: Self) -> u32 {
        self.le(b).bitmask()
    }
    /// `self > b`.
    fn gt(self, b: Self) -> Self::Mask;
    /// `self >= b`.
    fn ge(self, b: Self) -> Self::Mask;
    /// `self == b` (ordered).
    fn eq(self, b: Self) -> Self::Mask;
    /// `self != b` (unordered: true when either is NaN).
    #[inline(always)]
    fn ne(self, b: Self) -> Self::Mask {
        !self.eq(b)
    }
    /// Lanes that are not NaN.
    #[inline(always)]
    fn is_not_nan(self) -> Self::Mask {
        self.eq(self)
    }
    /// Lanes that are finite (neither NaN nor ±inf).
    #[inline(always)]
    fn is_finite(self) -> Self::Mask {
        self.abs().lt(Self::splat(f32::INFINITY))
    }
    /// Lane-wise `if m { a } else { b }`.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    /// Reciprocal `1 / self` (exact division).
    #[inline(always)]
    fn recip(self) -> Self {
        Self::splat(1.0) / self
    }
    /// Clamp each lane to `[lo, hi]` (NaN gives `hi`; see [`Lanes::min`]).
    #[inline(always)]
    fn clamp(self, lo: Self, hi: Self) -> Self {
        self.max(lo).min(hi)
    }
}

// ---------------------------------------------------------------------------------------
// 1 lane: plain f32 / bool.

impl Mask for bool {
    const N: usize = 1;
    #[inline(always)]
    fn splat(b: bool) -> Self {
        b
    }
    #[inline(always)]
    fn from_bitmask(bits: u32) -> Self {
        bits & 1 == 1
    }
    #[inline(always)]
    fn bitmask(self) -> u32 {
        self as u32
    }
}

impl Lanes for f32 {
    const N: usize = 1;
    type Mask = bool;
    const NAME: &'static str = "x1";
    type Ids = [u32; 1];
    #[inline(always)]
    fn splat_ids(v: u32) -> [u32; 1] {
        [v]
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn load(src: &[f32]) -> Self {
        src[0]
    }
    #[inline(always)]
    unsafe fn load_ptr(src: *const f32) -> Self {
        // SAFETY: the caller guarantees `src` is readable for one f32.
        unsafe { src.read_unaligned() }
    }
    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        dst[0] = self;
    }
    #[inline(always)]
    fn lane(self, _i: usize) -> f32 {
        self
    }
    #[inline(always)]
    fn lanes_mut(&mut self) -> &mut [f32] {
        core::slice::from_mut(self)
    }
    #[inline(always)]
    fn min(self, b: Self) -> Self {
        if self < b { self } else { b }
    }
    #[inline(always)]
    fn max(self, b: Self) -> Self {
        if self > b { self } else { b }
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::abs(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        mul_add_as_lanes(self, b, c)
    }
    #[inline(always)]
    fn xor_sign(self, s: Self) -> Self {
        f32::from_bits(self.to_bits() ^ (s.to_bits() & 0x8000_0000))
    }
    #[inline(always)]
    fn lt(self, b: Self) -> bool {
        self < b
    }
    #[inline(always)]
    fn le(self, b: Self) -> bool {
        self <= b
    }
    #[inline(always)]
    fn gt(self, b: Self) -> bool {
        self > b
    }
    #[inline(always)]
    fn ge(self, b: Self) -> bool {
        self >= b
    }
    #[inline(always)]
    fn eq(self, b: Self) -> bool {
        self == b
    }
    #[inline(always)]
    fn select(m: bool, a: Self, b: Self) -> Self {
        if m { a } else { b }
    }
}

// ---------------------------------------------------------------------------------------
// 4 and 8 lanes: wide.

macro_rules! wide_lanes {
    ($float:ident, $uint:ident, $mask:ident, $n:literal, $name:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug)]
        #[repr(transparent)]
        pub struct $mask($float);

        impl BitAnd for $mask {
            type Output = Self;
            #[inline(always)]
            fn bitand(self, o: Self) -> Self {
                Self(self.0 & o.0)
            }
        }
        impl BitOr for $mask {
            type Output = Self;
            #[inline(always)]
            fn bitor(self, o: Self) -> Self {
                Self(self.0 | o.0)
            }
        }
        impl BitXor for $mask {
            type Output = Self;
            #[inline(always)]
            fn bitxor(self, o: Self) -> Self {
                Self(self.0 ^ o.0)
            }
        }
        impl Not for $mask {
            type Output = Self;
            #[inline(always)]
            fn not(self) -> Self {
                Self(!self.0)
            }
        }

        impl Mask for $mask {
            const N: usize = $n;
            #[inline(always)]
            fn splat(b: bool) -> Self {
                Self($float::splat(f32::from_bits(if b { u32::MAX } else { 0 })))
            }
            #[inline(always)]
            fn from_bitmask(bits: u32) -> Self {
                // Lane i keeps bit i: (bits & (1 << i)) == (1 << i), as an all-ones/zeros mask.
                let lane_bits = $uint::new(core::array::from_fn(|i| 1u32 << i));
                let set = ($uint::splat(bits) & lane_bits).simd_eq(lane_bits);
                Self(bytemuck::cast(set))
            }
            #[inline(always)]
            fn bitmask(self) -> u32 {
                self.0.to_bitmask()
            }
            #[inline(always)]
            fn any(self) -> bool {
                self.0.any()
            }
            #[inline(always)]
            fn all(self) -> bool {
                self.0.all()
            }
        }

        impl Lanes for $float {
            const N: usize = $n;
            type Mask = $mask;
            const NAME: &'static str = $name;
            type Ids = [u32; $n];
            #[inline(always)]
            fn splat_ids(v: u32) -> [u32; $n] {
                [v; $n]
            }
            #[inline(always)]
            fn splat(v: f32) -> Self {
                $float::splat(v)
            }
            #[inline(always)]
            fn load(src: &[f32]) -> Self {
                let a: [f32; $n] = src[..$n].try_into().expect("slice has N lanes");
                $float::new(a)
            }
            #[inline(always)]
            unsafe fn load_ptr(src: *const f32) -> Self {
                // SAFETY: the caller guarantees `N` readable f32 at `src`; read_unaligned
                // needs no alignment, and every bit pattern is a valid f32.
                $float::new(unsafe { src.cast::<[f32; $n]>().read_unaligned() })
            }
            #[inline(always)]
            fn store(self, dst: &mut [f32]) {
                dst[..$n].copy_from_slice(&self.to_array());
            }
            #[inline(always)]
            fn lane(self, i: usize) -> f32 {
                self.as_array()[i]
            }
            #[inline(always)]
            fn lanes_mut(&mut self) -> &mut [f32] {
                self.as_mut_array()
            }
            #[inline(always)]
            fn min(self, b: Self) -> Self {
                self.fast_min(b)
            }
            #[inline(always)]
            fn max(self, b: Self) -> Self {
                self.fast_max(b)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $float::abs(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $float::sqrt(self)
            }
            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                $float::mul_add(self, b, c)
            }
            #[inline(always)]
            fn xor_sign(self, s: Self) -> Self {
                self ^ (s & $float::splat(-0.0))
            }
            #[inline(always)]
            fn lt(self, b: Self) -> $mask {
                $mask(self.simd_lt(b))
            }
            #[inline(always)]
            fn le(self, b: Self) -> $mask {
                $mask(self.simd_le(b))
            }
            #[inline(always)]
            fn le_bits(self, b: Self) -> u32 {
                LeBits::le_bits(self, b)
            }
            #[inline(always)]
            fn gt(self, b: Self) -> $mask {
                $mask(self.simd_gt(b))
            }
            #[inline(always)]
            fn ge(self, b: Self) -> $mask {
                $mask(self.simd_ge(b))
            }
            #[inline(always)]
            fn eq(self, b: Self) -> $mask {
                $mask(self.simd_eq(b))
            }
            #[inline(always)]
            fn select(m: $mask, a: Self, b: Self) -> Self {
                m.0.select(a, b)
            }
        }
    };
}

/// `a <= b` as lane bits for each `wide` type ([`Lanes::le_bits`]).
trait LeBits {
    fn le_bits(self, b: Self) -> u32;
}

impl LeBits for f32x4 {
    #[inline(always)]
    fn le_bits(self, b: Self) -> u32 {
        self.simd_le(b).to_bitmask()
    }
}

impl LeBits for f32x8 {
    #[inline(always)]
    fn le_bits(self, b: Self) -> u32 {
        self.simd_le(b).to_bitmask()
    }
}

impl LeBits for f32x16 {
    /// With AVX-512, `vcmpps` straight into a mask register and `kmov` out of it: `wide`'s
    /// compare makes a vector of the mask (`vpternlogd`, a masked move) that its bitmask
    /// then turns back into a mask (`vpmovd2m`), three more steps on the path from a node's
    /// test to the choice of the next node. The same predicate (`<=`, ordered, so NaN is
    /// false), as `simd_le`.
    #[inline(always)]
    fn le_bits(self, b: Self) -> u32 {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        {
            use core::arch::x86_64::{__m512, _CMP_LE_OQ, _mm512_cmp_ps_mask};
            let (a, b): (__m512, __m512) = (bytemuck::cast(self), bytemuck::cast(b));
            // SAFETY: this code is compiled only where the whole build enables AVX-512F.
            u32::from(unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b) })
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
        {
            self.simd_le(b).to_bitmask()
        }
    }
}

wide_lanes!(f32x4, u32x4, M4, 4, "x4", "Mask of 4 lanes (all-ones / all-zeros per lane).");
wide_lanes!(f32x8, u32x8, M8, 8, "x8", "Mask of 8 lanes (all-ones / all-zeros per lane).");
wide_lanes!(f32x16, u32x16, M16, 16, "x16", "Mask of 16 lanes (all-ones / all-zeros per lane).");

/// `f32` values per 64-byte cache line (the unit of the column prefetches and of the leaf
/// blocks, `Soa::blocks`).
pub(crate) const F32_PER_LINE: usize = 64 / core::mem::size_of::<f32>();

/// Hints the CPU to start loading the cache line holding `p` (a no-op on other
/// architectures).
#[inline(always)]
pub(crate) fn prefetch_at(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults or changes memory, whatever the
    // address, and SSE (which provides it) is part of the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hints the CPU to start loading the cache line holding `x` (a no-op on other
/// architectures).
#[inline(always)]
pub fn prefetch_line<T>(x: &T) {
    prefetch_at((x as *const T).cast());
}

/// Hints the CPU to start loading the 256 bytes at `x` into the cache (a no-op on other
/// architectures). Used by BVH traversal for the nodes it is about to visit.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    let p: *const i8 = (x as *const T).cast();
    for line in 0..4 {
        // Addresses past `x` are only hinted at, never read.
        prefetch_at(p.wrapping_add(64 * line));
    }
}

/// The most lanes of any [`Lanes`] type (those of [`F32x16`]).
pub const MAX_LANES: usize = 16;
/// The most lanes a scene packet query takes ([`crate::Scene::intersect_packet`],
/// [`crate::HitPacket`]): 8. Wider lanes are for the kernels; a scene packet query on them
/// does not compile:
///
/// ```compile_fail
/// use lanecast::{F32x16, HitPacket};
/// let _ = HitPacket::<F32x16>::default();
/// ```
///
/// ```
/// use lanecast::{F32x8, HitPacket};
/// let _ = HitPacket::<F32x8>::default();
/// ```
pub const MAX_PACKET_LANES: usize = 8;

/// 4 lanes of f32 (`wide::f32x4`).
pub type F32x4 = f32x4;
/// 8 lanes of f32 (`wide::f32x8`).
pub type F32x8 = f32x8;
/// 16 lanes of f32 (`wide::f32x16`): one `zmm` register with AVX-512, two 8-lane halves
/// without.
pub type F32x16 = f32x16;

/// Whether the lane types' `mul_add` is fused on this build: on x86 where the build enables
/// FMA, and on aarch64 with NEON (`wide`'s rule; without either it multiplies, then adds).
pub const FUSED_MUL_ADD: bool =
    cfg!(any(target_feature = "fma", all(target_arch = "aarch64", target_feature = "neon")));

/// `a * b + c` on one `f32`, fused exactly where the lane types fuse theirs
/// ([`FUSED_MUL_ADD`]), so that a scalar twin written with it computes its lanes twin's bits.
/// The `f32` implementation of [`Lanes::mul_add`] is this function.
#[inline(always)]
pub fn mul_add_as_lanes(a: f32, b: f32, c: f32) -> f32 {
    if FUSED_MUL_ADD { a.mul_add(b, c) } else { a * b + c }
}

/// The instruction set the lanes were compiled for, e.g. `"avx2+fma"`, `"avx"`, `"sse4.1"`,
/// `"sse2"`, or `"portable"` on non-x86 targets.
pub fn instruction_set() -> &'static str {
    if cfg!(all(target_feature = "avx512f", target_feature = "fma")) {
        "avx512f+avx2+fma (x8 in ymm, x16 in zmm registers)"
    } else if cfg!(all(target_feature = "avx2", target_feature = "fma")) {
        "avx2+fma"
    } else if cfg!(target_feature = "avx") {
        "avx"
    } else if cfg!(target_feature = "sse4.1") {
        "sse4.1"
    } else if cfg!(target_feature = "sse2") {
        "sse2"
    } else {
        "portable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mul_add_as_lanes` (and the `f32` lanes) fuse exactly when every lane type does, and
    /// `FUSED_MUL_ADD` says which: `(1 + e)² − (1 + 2e)` is `e²` fused and 0 unfused (the
    /// product rounds to `1 + 2e`).
    #[test]
    fn scalar_mul_add_fuses_exactly_where_the_lanes_do() {
        let e = 2f32.powi(-12);
        let (a, b, c) = (1.0 + e, 1.0 + e, -(1.0 + 2.0 * e));
        assert_eq!((a * b + c).to_bits(), 0f32.to_bits(), "the unfused value");
        let want = if FUSED_MUL_ADD { e * e } else { 0.0 };
        assert_eq!(mul_add_as_lanes(a, b, c).to_bits(), want.to_bits());
        assert_eq!(Lanes::mul_add(a, b, c).to_bits(), want.to_bits());
        fn lanes<L: Lanes>(a: f32, b: f32, c: f32) -> f32 {
            L::splat(a).mul_add(L::splat(b), L::splat(c)).lane(L::N - 1)
        }
        for (name, got) in
            [("x4", lanes::<F32x4>(a, b, c)), ("x8", lanes::<F32x8>(a, b, c)), ("x16", lanes::<F32x16>(a, b, c))]
        {
            assert_eq!(got.to_bits(), want.to_bits(), "{name}: FUSED_MUL_ADD is {FUSED_MUL_ADD}");
        }
    }

    /// `lanes_mut` is the `N` lanes in place: a write to one lane changes that lane only.
    fn check_lanes_mut<L: Lanes>() {
        let src: Vec<f32> = (0..L::N).map(|i| i as f32).collect();
        for i in 0..L::N {
            let mut x = L::load(&src);
            assert_eq!(x.lanes_mut().len(), L::N);
            x.lanes_mut()[i] = -7.5;
            for k in 0..L::N {
                assert_eq!(x.lane(k), if k == i { -7.5 } else { k as f32 }, "{} lane {k} after writing {i}", L::NAME);
            }
        }
    }

    #[test]
    fn lanes_mut_writes_one_lane_in_place() {
        check_lanes_mut::<f32>();
        check_lanes_mut::<F32x4>();
        check_lanes_mut::<F32x8>();
        check_lanes_mut::<F32x16>();
    }

    fn check_min_max<L: Lanes>() {
        let a = L::splat(f32::NAN);
        let b = L::splat(2.0);
        assert_eq!(a.min(b).lane(0), 2.0);
        assert!(b.min(a).lane(0).is_nan());
        assert_eq!(a.max(b).lane(0), 2.0);
        assert!(b.max(a).lane(0).is_nan());
        assert_eq!(L::splat(1.0).min(b).lane(L::N - 1), 1.0);
        assert_eq!(L::splat(3.0).xor_sign(L::splat(-0.0)).lane(0), -3.0);
        assert_eq!(L::splat(3.0).xor_sign(L::splat(5.0)).lane(0), 3.0);
        assert!(L::splat(f32::NAN).is_not_nan().none());
        assert!(L::splat(f32::INFINITY).is_finite().none());
        let m = <L::Mask as Mask>::from_bitmask(0b1);
        assert_eq!(m.bitmask(), 1);
        assert!(<L::Mask as Mask>::splat(true).all());
    }

    /// `le_bits` (on AVX-512 builds a compare into a mask register for 16 lanes) against
    /// `<=` lane by lane: every pair of special and ordinary values, NaN (always false),
    /// ±0 (equal), ±inf and the extremes, in every lane position.
    fn check_le_bits<L: Lanes>() {
        let vals = [
            f32::NAN,
            -f32::NAN,
            f32::NEG_INFINITY,
            -f32::MAX,
            -1.0,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        let pairs: Vec<(f32, f32)> = vals.iter().flat_map(|&a| vals.iter().map(move |&b| (a, b))).collect();
        for chunk in pairs.chunks(L::N) {
            let mut a = vec![0.0; L::N];
            let mut b = vec![0.0; L::N];
            for (i, &(x, y)) in chunk.iter().enumerate() {
                (a[i], b[i]) = (x, y);
            }
            let want = (0..L::N).fold(0u32, |m, i| m | u32::from(a[i] <= b[i]) << i);
            let (la, lb) = (L::load(&a), L::load(&b));
            assert_eq!(la.le_bits(lb), want, "{}: {a:?} <= {b:?}", L::NAME);
            assert_eq!(la.le(lb).bitmask(), want, "{}", L::NAME);
        }
    }

    #[test]
    fn le_bits_is_le_lane_by_lane() {
        check_le_bits::<f32>();
        check_le_bits::<F32x4>();
        check_le_bits::<F32x8>();
        check_le_bits::<F32x16>();
    }

    #[test]
    fn min_max_nan_rule_is_shared() {
        check_min_max::<f32>();
        check_min_max::<f32x4>();
        check_min_max::<f32x8>();
        check_min_max::<f32x16>();
    }

    #[test]
    fn masks_round_trip_bitmasks() {
        for bits in 0..256u32 {
            assert_eq!(M8::from_bitmask(bits).bitmask(), bits);
            assert_eq!(M4::from_bitmask(bits).bitmask(), bits & 15);
        }
        for bits in [0u32, 1, 0x8000, 0xA5C3, 0xFFFF, 0x1_FFFF, u32::MAX] {
            assert_eq!(M16::from_bitmask(bits).bitmask(), bits & 0xFFFF);
        }
    }
}
