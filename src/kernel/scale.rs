//! Power-of-two normalisation for kernels whose arithmetic raises the sizes of a problem to
//! high powers (the capsule body's quadratic holds eighth powers, Ericson's closest point on
//! a triangle fourth powers), so that they neither overflow nor underflow f32. Used by the
//! segment–capsule and closest-point kernels and by the moving sphere–triangle sweep.
//!
//! A kernel takes the largest squared length `l2` among its (translated) inputs and
//! multiplies them by [`normaliser_sq`]: `1` when `l2` lies in [`SCALE_FREE_SQUARED`],
//! otherwise [`normaliser`] of their largest magnitude `m`, the power of two that brings `m`
//! into `[1, 2)` (itself `1` when `m` lies in [`SCALE_FREE`]). Multiplying by a power of two
//! is exact and commutes with rounding as long as nothing under- or overflows, so the answer
//! is the one the unscaled arithmetic would give wherever that one was representable, and a
//! problem scaled by `2^k` gives the same answer bit for bit. Both twins of a kernel use the
//! same rule per lane ([`normaliser_sq_lanes`] only walks the lanes when one of them needs a
//! factor).

use crate::lanes::{Lanes, Mask};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// The magnitudes a kernel computes with as they are: `[2⁻¹², 2¹²]`. With sizes in this
/// range, eighth powers stay within `[2⁻⁹⁶, 2⁹⁶]` times small constants.
pub const SCALE_FREE: std::ops::RangeInclusive<f32> = (1.0 / 4096.0)..=4096.0;

/// The factor for a problem whose largest magnitude is `m`: `1` inside [`SCALE_FREE`] and
/// for a non-finite `m` (invalid input, left to the kernel's own checks); otherwise the
/// power of two `s` with `m · s` in `[1, 2)` (for zero and subnormal `m`, `2¹²⁷`; for
/// `m ≥ 2¹²⁷`, `2⁻¹²⁶`).
#[inline]
#[must_use]
pub fn normaliser(m: f32) -> f32 {
    if SCALE_FREE.contains(&m) || !m.is_finite() {
        return 1.0;
    }
    // Biased exponent e of m (0 for zero and subnormals): m in [2^(e-127), 2^(e-126)),
    // and 2^(127-e) has the biased exponent 254 - e.
    let e = (m.to_bits() >> 23) & 0xff;
    f32::from_bits((254 - e).clamp(1, 254) << 23)
}

/// The factor for a problem whose largest squared length is `l2` and largest magnitude
/// `m()`: `1` when `l2` lies in [`SCALE_FREE_SQUARED`] or is NaN (invalid input), otherwise
/// [`normaliser`]`(m())`. The kernels have `l2` at hand (lengths they need anyway), so the
/// common case costs two comparisons; `m` is only worked out for the rare problem outside.
#[inline(always)]
#[must_use]
pub fn normaliser_sq(l2: f32, m: impl FnOnce() -> f32) -> f32 {
    if SCALE_FREE_SQUARED.contains(&l2) || l2.is_nan() { 1.0 } else { normaliser(m()) }
}

/// The squared lengths [`normaliser_sq`] leaves alone: `[2⁻²⁴, 2²⁴]` (so every component is
/// at most `2¹²`).
pub const SCALE_FREE_SQUARED: std::ops::RangeInclusive<f32> = (1.0 / 16_777_216.0)..=16_777_216.0;

/// Lanes twin of [`normaliser_sq`], lane by lane; `None` when every lane's factor is `1`
/// (NaN lanes, such as a block's padding, count as `1`).
#[inline(always)]
#[must_use]
pub fn normaliser_sq_lanes<L: Lanes>(l2: L, m: impl FnOnce() -> L) -> Option<L> {
    let free =
        (l2.ge(L::splat(*SCALE_FREE_SQUARED.start())) & l2.le(L::splat(*SCALE_FREE_SQUARED.end()))) | !l2.is_not_nan();
    if free.all() {
        return None;
    }
    Some(normalisers_cold(l2, m()))
}

#[cold]
#[inline(never)]
fn normalisers_cold<L: Lanes>(l2: L, m: L) -> L {
    let mut s = m;
    for (i, x) in s.lanes_mut().iter_mut().enumerate() {
        *x = normaliser_sq(l2.lane(i), || *x);
    }
    s
}

/// The largest magnitude of the components of `v`.
#[inline(always)]
#[must_use]
pub fn max_abs(v: &[Vec3]) -> f32 {
    v.iter().fold(0.0, |m, v| m.max(v.abs().max_element()))
}

/// Lanes twin of [`max_abs`]. A NaN component may be skipped (the lanes' `max`); the
/// kernels send NaN lanes to a miss of their own, whatever the factor.
#[inline(always)]
#[must_use]
pub fn max_abs_lanes<L: Lanes>(v: &[Vec3x<L>]) -> L {
    v.iter().fold(L::splat(0.0), |m, v| m.max(v.x.abs()).max(v.y.abs()).max(v.z.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{F32x4, F32x8};

    #[test]
    fn brings_every_magnitude_outside_the_free_range_into_one_two() {
        for m in [f32::MAX, 3e38, 1.75e38, 2f32.powi(127)] {
            assert_eq!(normaliser(m), 2f32.powi(-126), "{m}");
            assert!((2.0..4.0).contains(&(m * normaliser(m))), "{m}");
        }
        for m in [1.7e38, 1e20, 4096.5, 4097.0, 1.0 / 4097.0, 1e-20, f32::MIN_POSITIVE] {
            let s = normaliser(m);
            assert!((1.0..2.0).contains(&(m * s)), "{m}: {s}");
            assert_eq!(s.to_bits() & 0x007f_ffff, 0, "{m}: {s} not a power of two");
        }
        for m in [f32::MIN_POSITIVE / 8.0, f32::from_bits(1), 0.0] {
            assert_eq!(normaliser(m), 2f32.powi(127), "{m}");
        }
        for m in [1.0 / 4096.0, 0.3, 1.0, 4096.0, f32::INFINITY, f32::NAN] {
            assert_eq!(normaliser(m), 1.0, "{m}");
        }
    }

    #[test]
    fn lanes_twin_equals_the_scalar_in_every_lane() {
        let l2 = [1.0, 1e-30, 5e37, 0.0, f32::NAN, 1e9, f32::INFINITY, 1e-3];
        let ms = [1.0, 1e-15, 7e18, 0.0, 3.0, 4.5e4, 2e20, 0.03];
        assert!(normaliser_sq_lanes(F32x4::load(&[1.0, 2.0, 1.6e7, f32::NAN]), || unreachable!()).is_none());
        let s = normaliser_sq_lanes(F32x8::load(&l2), || F32x8::load(&ms)).unwrap();
        for i in 0..8 {
            assert_eq!(s.lane(i), normaliser_sq(l2[i], || ms[i]), "lane {i}");
        }
        assert_eq!(s.lane(4), 1.0);
        assert_eq!(s.lane(5), 2f32.powi(-15));
        let v = [Vec3x::<F32x8>::splat(Vec3::new(-3.0, 2.0, 1.0)), Vec3x::splat(Vec3::new(0.5, -7.0, 0.0))];
        assert_eq!(max_abs_lanes(&v).lane(5), max_abs(&[Vec3::new(-3.0, 2.0, 1.0), Vec3::new(0.5, -7.0, 0.0)]));
    }
}
