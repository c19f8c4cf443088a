//! `Vec3x<L>`: a structure-of-arrays 3-vector whose components are [`Lanes`], so one value
//! holds `L::N` independent vectors (one per lane). Arithmetic mirrors glam's `Vec3`.

use crate::lanes::Lanes;
use core::ops::{Add, Mul, Neg, Sub};
use glam::Vec3;

/// `L::N` 3-vectors, one per lane, stored component-wise.
#[derive(Clone, Copy, Debug)]
pub struct Vec3x<L> {
    /// x components.
    pub x: L,
    /// y components.
    pub y: L,
    /// z components.
    pub z: L,
}

impl<L: Lanes> Vec3x<L> {
    /// Builds from three component lanes.
    #[inline(always)]
    pub fn new(x: L, y: L, z: L) -> Self {
        Self { x, y, z }
    }
    /// The same vector in every lane.
    #[inline(always)]
    pub fn splat(v: Vec3) -> Self {
        Self::new(L::splat(v.x), L::splat(v.y), L::splat(v.z))
    }
    /// Loads lanes `i..i + N` from three columns.
    #[inline(always)]
    pub fn load(x: &[f32], y: &[f32], z: &[f32], i: usize) -> Self {
        Self::new(L::load(&x[i..]), L::load(&y[i..]), L::load(&z[i..]))
    }
    /// Vector of lane `i`.
    #[inline(always)]
    pub fn lane(&self, i: usize) -> Vec3 {
        Vec3::new(self.x.lane(i), self.y.lane(i), self.z.lane(i))
    }
    /// Dot product (unfused: `x*x' + y*y' + z*z'`, left to right, like glam).
    #[inline(always)]
    pub fn dot(self, o: Self) -> L {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// Cross product (unfused, same operation order as glam).
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self::new(self.y * o.z - o.y * self.z, self.z * o.x - o.z * self.x, self.x * o.y - o.x * self.y)
    }
    /// Dot product in glam's order with fused multiply-adds where the target has them
    /// (`z z' + (y y' + x x')`, each step one rounding): two operations fewer than
    /// [`Vec3x::dot`], and the same bits as it where the target has no FMA.
    #[inline(always)]
    pub fn dot_fused(self, o: Self) -> L {
        self.z.mul_add(o.z, self.y.mul_add(o.y, self.x * o.x))
    }
    /// Cross product in glam's order with fused multiply-adds where the target has them
    /// (`y z' − z y'` as one product and one fused multiply-subtract, and so on): three
    /// operations fewer than [`Vec3x::cross`], and the same bits as it where the target has
    /// no FMA.
    #[inline(always)]
    pub fn cross_fused(self, o: Self) -> Self {
        Self::new(
            self.y.mul_add(o.z, -(o.y * self.z)),
            self.z.mul_add(o.x, -(o.z * self.x)),
            self.x.mul_add(o.y, -(o.x * self.y)),
        )
    }
    /// Squared length.
    #[inline(always)]
    pub fn length_squared(self) -> L {
        self.dot(self)
    }
    /// Component-wise min (NaN rule of [`Lanes::min`]).
    #[inline(always)]
    pub fn min(self, o: Self) -> Self {
        Self::new(self.x.min(o.x), self.y.min(o.y), self.z.min(o.z))
    }
    /// Component-wise max (NaN rule of [`Lanes::max`]).
    #[inline(always)]
    pub fn max(self, o: Self) -> Self {
        Self::new(self.x.max(o.x), self.y.max(o.y), self.z.max(o.z))
    }
    /// Component-wise absolute value.
    #[inline(always)]
    pub fn abs(self) -> Self {
        Self::new(self.x.abs(), self.y.abs(), self.z.abs())
    }
    /// Component-wise reciprocal (IEEE: `1/±0 = ±inf`).
    #[inline(always)]
    pub fn recip(self) -> Self {
        Self::new(self.x.recip(), self.y.recip(), self.z.recip())
    }
    /// `self * s` for a lane scalar.
    #[inline(always)]
    pub fn scale(self, s: L) -> Self {
        Self::new(self.x * s, self.y * s, self.z * s)
    }
    /// `self + d * t` (fused where available).
    #[inline(always)]
    pub fn mul_add(self, d: Self, t: L) -> Self {
        Self::new(d.x.mul_add(t, self.x), d.y.mul_add(t, self.y), d.z.mul_add(t, self.z))
    }
    /// Lane-wise select.
    #[inline(always)]
    pub fn select(m: L::Mask, a: Self, b: Self) -> Self {
        Self::new(L::select(m, a.x, b.x), L::select(m, a.y, b.y), L::select(m, a.z, b.z))
    }
    /// Lanes whose three components are all finite.
    #[inline(always)]
    pub fn is_finite(self) -> L::Mask {
        self.x.is_finite() & self.y.is_finite() & self.z.is_finite()
    }
}

/// Scalar twins of [`Vec3x::dot_fused`] and [`Vec3x::cross_fused`] (and of
/// [`Vec3x::mul_add`]): the same operations in the same order, fused exactly where the lane
/// types fuse ([`crate::lanes::mul_add_as_lanes`]), so a scalar kernel written with them
/// gets its lanes twin's bits on every build.
pub mod fused {
    use crate::lanes::mul_add_as_lanes as fma;
    use glam::Vec3;

    /// `a · b` as [`Vec3x::dot_fused`](super::Vec3x::dot_fused) computes it.
    #[inline(always)]
    pub fn dot(a: Vec3, b: Vec3) -> f32 {
        fma(a.z, b.z, fma(a.y, b.y, a.x * b.x))
    }
    /// `a × b` as [`Vec3x::cross_fused`](super::Vec3x::cross_fused) computes it.
    #[inline(always)]
    pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
        Vec3::new(fma(a.y, b.z, -(b.y * a.z)), fma(a.z, b.x, -(b.z * a.x)), fma(a.x, b.y, -(b.x * a.y)))
    }
    /// `o + d t` as [`Vec3x::mul_add`](super::Vec3x::mul_add) computes it.
    #[inline(always)]
    pub fn at(o: Vec3, d: Vec3, t: f32) -> Vec3 {
        Vec3::new(fma(d.x, t, o.x), fma(d.y, t, o.y), fma(d.z, t, o.z))
    }
}

impl<L: Lanes> Add for Vec3x<L> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl<L: Lanes> Sub for Vec3x<L> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl<L: Lanes> Neg for Vec3x<L> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(-self.x, -self.y, -self.z)
    }
}
impl<L: Lanes> Mul<L> for Vec3x<L> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, s: L) -> Self {
        self.scale(s)
    }
}
