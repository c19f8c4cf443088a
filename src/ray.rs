//! Rays: the scalar [`Ray`] (glam), the lane packet [`RayPacket`] and the column buffer
//! [`RaySoa`], plus the single definition of what makes a ray valid.
//!
//! A point on a ray is `origin + t * dir` with `t` in `[t_min, t_max]`, in units of `dir`
//! (which need not be unit length). A ray is **valid** when
//!
//! * every component of `origin` and `dir` is finite,
//! * `0 < dir·dir < +inf` in f32 (so `|dir|` between roughly `1e-19` and `1e19`),
//! * `t_min` is finite, `t_max` is not NaN (it may be `+inf`), and `t_min <= t_max`.
//!
//! An invalid ray is a defined miss in every kernel, backend and lane; [`Ray::try_new`]
//! reports why a ray is invalid for callers who want an error instead.
//!
//! Every ray also carries a **mask** (as in Embree; default [`ALL_BITS`]): a scene query tests
//! a primitive only when the ray's mask and its geometry's mask share a bit
//! ([`crate::SceneBuilder::set_mask`]). The kernels ignore it.

use crate::lanes::{Lanes, MAX_LANES, MAX_PACKET_LANES, Mask};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// The default ray and geometry mask: every bit set.
pub const ALL_BITS: u32 = u32::MAX;

/// Lane multiple every column buffer is padded to (the widest lanes, [`F32x16`](crate::F32x16)).
pub const PAD: usize = crate::lanes::MAX_LANES;

/// Rounds `n` up to a multiple of [`PAD`].
///
/// # Panics
/// If that overflows `usize` (`n` within `PAD` of `usize::MAX`).
#[inline]
pub const fn padded_len(n: usize) -> usize {
    match n.checked_next_multiple_of(PAD) {
        Some(p) => p,
        None => panic!("length overflows usize when padded to a lane multiple"),
    }
}

/// A ray `origin + t * dir`, `t ∈ [t_min, t_max]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Origin.
    pub origin: Vec3,
    /// Direction; need not be unit length (`t` is in units of `dir`).
    pub dir: Vec3,
    /// Start of the interval (default 0).
    pub t_min: f32,
    /// End of the interval (default `+inf`).
    pub t_max: f32,
    /// Mask (default [`ALL_BITS`]): the ray sees only geometries whose mask shares a bit
    /// with it (0 sees nothing).
    pub mask: u32,
}

/// Why a ray is invalid (see the module docs for the rule), or why rays do not fit a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RayError {
    /// A component of the origin is NaN or infinite.
    #[error("ray origin has a NaN or infinite component")]
    NonFiniteOrigin,
    /// A component of the direction is NaN or infinite.
    #[error("ray direction has a NaN or infinite component")]
    NonFiniteDirection,
    /// `dir·dir` is zero (or underflows to zero) or overflows to infinity.
    #[error("ray direction has zero length (or its squared length is not a finite f32)")]
    DegenerateDirection,
    /// `t_min` is not finite or `t_max` is NaN.
    #[error("ray t_min must be finite and t_max must not be NaN")]
    BadInterval,
    /// `t_min > t_max`.
    #[error("ray t_min is greater than t_max")]
    EmptyInterval,
    /// More rays than a packet has lanes ([`RayPacket::from_rays`]).
    #[error("{given} rays do not fit a packet of {lanes} lanes")]
    TooManyRays {
        /// Rays given.
        given: usize,
        /// Lanes of the packet.
        lanes: usize,
    },
}

impl Ray {
    /// A ray over `[0, +inf)`. Not validated: an invalid ray is a defined miss.
    #[inline]
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Self { origin, dir, t_min: 0.0, t_max: f32::INFINITY, mask: ALL_BITS }
    }
    /// A ray over `[t_min, t_max]`. Not validated: an invalid ray is a defined miss.
    #[inline]
    pub fn with_interval(origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> Self {
        Self { origin, dir, t_min, t_max, mask: ALL_BITS }
    }
    /// The same ray with mask `mask`.
    #[inline]
    #[must_use]
    pub fn with_mask(self, mask: u32) -> Self {
        Self { mask, ..self }
    }
    /// The segment `a → b` as a ray: `origin = a`, `dir = b - a`, `t ∈ [0, 1]`.
    #[inline]
    pub fn segment(a: Vec3, b: Vec3) -> Self {
        Self { origin: a, dir: b - a, t_min: 0.0, t_max: 1.0, mask: ALL_BITS }
    }
    /// Validating constructor: returns the reason when the ray would be a defined miss.
    pub fn try_new(origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> Result<Self, RayError> {
        let r = Self::with_interval(origin, dir, t_min, t_max);
        r.check()?;
        Ok(r)
    }
    /// Checks the validity rule of the module docs.
    pub fn check(&self) -> Result<(), RayError> {
        if !self.origin.is_finite() {
            return Err(RayError::NonFiniteOrigin);
        }
        if !self.dir.is_finite() {
            return Err(RayError::NonFiniteDirection);
        }
        let dd = self.dir.length_squared();
        if !(dd > 0.0 && dd < f32::INFINITY) {
            return Err(RayError::DegenerateDirection);
        }
        if !self.t_min.is_finite() || self.t_max.is_nan() {
            return Err(RayError::BadInterval);
        }
        if self.t_min > self.t_max {
            return Err(RayError::EmptyInterval);
        }
        Ok(())
    }
    /// True when the ray is valid (see the module docs): the rule of [`Ray::check`] in one
    /// branch-free expression (`x * 0` is 0 for finite `x` and NaN otherwise), since every
    /// query starts with it.
    #[inline]
    pub fn is_valid(&self) -> bool {
        let (o, d) = (self.origin * 0.0, self.dir * 0.0);
        let finite = (o.x + o.y + o.z) + (d.x + d.y + d.z) + self.t_min * 0.0 == 0.0;
        let dd = self.dir.length_squared();
        finite & (dd > 0.0) & (dd < f32::INFINITY) & (self.t_min <= self.t_max)
    }
    /// The point at parameter `t`.
    #[inline]
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + self.dir * t
    }
}

/// `L::N` rays, one per lane, with the packet's one mask: the lanes the caller *requested*
/// (lanes past the rays given, or dropped with [`RayPacket::restrict`], are not). The
/// *active* lanes are the requested lanes whose ray is valid: kernels and traversals test
/// only those, and scene queries answer every requested lane (a miss for an invalid ray).
#[derive(Clone, Copy, Debug)]
pub struct RayPacket<L: Lanes> {
    /// Origins.
    pub origin: Vec3x<L>,
    /// Directions.
    pub dir: Vec3x<L>,
    /// Interval starts.
    pub t_min: L,
    /// Interval ends.
    pub t_max: L,
    /// Each lane's ray mask (default [`ALL_BITS`]).
    pub mask: L::Ids,
    requested: L::Mask,
    active: L::Mask,
}

impl<L: Lanes> RayPacket<L> {
    /// Builds a packet of the lanes in `requested`; the active lanes are those whose ray is
    /// valid.
    #[inline(always)]
    pub fn new(origin: Vec3x<L>, dir: Vec3x<L>, t_min: L, t_max: L, requested: L::Mask) -> Self {
        // x * 0 is ±0 for finite x and NaN for ±inf or NaN, so one sum of such products
        // tests four numbers for finiteness (and cannot overflow). The direction needs no
        // such test: `0 < |d|² < inf` fails for any infinite or NaN component.
        let zero = L::splat(0.0);
        let finite = origin.x * zero + origin.y * zero + origin.z * zero + t_min * zero;
        let dd = dir.length_squared();
        let valid = finite.eq(zero) & dd.gt(zero) & dd.lt(L::splat(f32::INFINITY)) & t_min.le(t_max);
        Self { origin, dir, t_min, t_max, mask: L::splat_ids(ALL_BITS), requested, active: requested & valid }
    }
    /// The same ray in every lane (for "one ray against `N` primitives").
    #[inline(always)]
    pub fn splat(r: &Ray) -> Self {
        let mut p = Self::new(
            Vec3x::splat(r.origin),
            Vec3x::splat(r.dir),
            L::splat(r.t_min),
            L::splat(r.t_max),
            L::Mask::splat(true),
        );
        p.mask = L::splat_ids(r.mask);
        p
    }
    /// [`RayPacket::splat`] of a ray already known to be valid ([`Ray::is_valid`]): every
    /// lane requested and active, without testing the ray again (the single-ray traversal
    /// has checked it once).
    #[inline(always)]
    pub(crate) fn splat_valid(r: &Ray) -> Self {
        debug_assert!(r.is_valid());
        let all = L::Mask::splat(true);
        Self {
            origin: Vec3x::splat(r.origin),
            dir: Vec3x::splat(r.dir),
            t_min: L::splat(r.t_min),
            t_max: L::splat(r.t_max),
            mask: L::splat_ids(r.mask),
            requested: all,
            active: all,
        }
    }
    /// Up to `N` rays in lanes `0..rays.len()`; the lanes past them are not requested.
    ///
    /// # Errors
    /// [`RayError::TooManyRays`] when `rays` has more than `N` rays. Invalid rays are not an
    /// error: their lanes are requested but inactive (a miss).
    pub fn from_rays(rays: &[Ray]) -> Result<Self, RayError> {
        if rays.len() > L::N {
            return Err(RayError::TooManyRays { given: rays.len(), lanes: L::N });
        }
        let mut cols = [[0.0f32; MAX_LANES]; 8];
        let n = rays.len();
        for (i, r) in rays.iter().enumerate() {
            let v = [r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max];
            for (c, x) in cols.iter_mut().zip(v) {
                c[i] = x;
            }
        }
        let l = |c: usize| L::load(&cols[c]);
        let mut p = Self::new(
            Vec3x::new(l(0), l(1), l(2)),
            Vec3x::new(l(3), l(4), l(5)),
            l(6),
            l(7),
            L::Mask::from_bitmask(((1u64 << n) - 1) as u32),
        );
        for (m, r) in p.mask.as_mut().iter_mut().zip(rays) {
            *m = r.mask;
        }
        Ok(p)
    }
    /// The lanes the caller asked for (whether or not their ray is valid).
    #[inline(always)]
    pub fn requested(&self) -> L::Mask {
        self.requested
    }
    /// The lanes that are requested and hold a valid ray: the ones kernels test.
    #[inline(always)]
    pub fn active(&self) -> L::Mask {
        self.active
    }
    /// Narrows the packet to the lanes in `keep` (both the requested and the active mask):
    /// e.g. to drop rays that already found a hit.
    #[inline(always)]
    pub fn restrict(&mut self, keep: L::Mask) {
        self.requested = self.requested & keep;
        self.active = self.active & keep;
    }
    /// The packet narrowed to the lanes in `keep` (see [`RayPacket::restrict`]).
    #[inline(always)]
    #[must_use]
    pub fn with_mask(mut self, keep: L::Mask) -> Self {
        self.restrict(keep);
        self
    }
    /// The scalar ray of lane `i`.
    ///
    /// # Panics
    /// If `i >= N`.
    #[must_use]
    pub fn ray(&self, i: usize) -> Ray {
        assert!(i < L::N, "lane {i} of a {}-lane packet", L::N);
        Ray::with_interval(self.origin.lane(i), self.dir.lane(i), self.t_min.lane(i), self.t_max.lane(i))
            .with_mask(self.mask[i])
    }

    /// The packet's columns stored once into plain arrays, for reading several of its rays
    /// one by one (reading a lane of a vector by a variable index stores the whole vector
    /// each time).
    #[inline(always)]
    pub(crate) fn columns(&self) -> PacketColumns {
        const { assert!(L::N <= MAX_PACKET_LANES, "scene packets hold at most 8 rays") };
        let mut c = [[0.0f32; MAX_PACKET_LANES]; 8];
        for (col, v) in c.iter_mut().zip([
            &self.origin.x,
            &self.origin.y,
            &self.origin.z,
            &self.dir.x,
            &self.dir.y,
            &self.dir.z,
            &self.t_min,
            &self.t_max,
        ]) {
            v.store(&mut col[..L::N]);
        }
        let mut mask = [0u32; MAX_PACKET_LANES];
        mask[..L::N].copy_from_slice(&self.mask.as_ref()[..L::N]);
        PacketColumns { c, mask }
    }
}

/// A packet's rays as plain arrays ([`RayPacket::columns`]).
pub(crate) struct PacketColumns {
    c: [[f32; MAX_PACKET_LANES]; 8],
    mask: [u32; MAX_PACKET_LANES],
}

impl PacketColumns {
    /// `t_max` of lane `i`.
    #[inline(always)]
    pub(crate) fn t_max(&self, i: usize) -> f32 {
        self.c[7][i]
    }
    /// The ray mask of lane `i`.
    #[inline(always)]
    pub(crate) fn mask(&self, i: usize) -> u32 {
        self.mask[i]
    }
    /// The ray of lane `i` (equal to [`RayPacket::ray`]).
    #[inline(always)]
    pub(crate) fn ray(&self, i: usize) -> Ray {
        let c = |k: usize| self.c[k][i];
        Ray {
            origin: Vec3::new(c(0), c(1), c(2)),
            dir: Vec3::new(c(3), c(4), c(5)),
            t_min: c(6),
            t_max: c(7),
            mask: self.mask[i],
        }
    }
}

/// Column names of a [`RaySoa`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RayColumn {
    /// origin x
    Ox,
    /// origin y
    Oy,
    /// origin z
    Oz,
    /// direction x
    Dx,
    /// direction y
    Dy,
    /// direction z
    Dz,
    /// interval start
    TMin,
    /// interval end
    TMax,
}

/// Rays stored as eight f32 columns, padded to a multiple of [`PAD`] with invalid rays.
///
/// Fill it from your own memory without an array-of-structs detour:
///
/// ```
/// use lanecast::ray::{RaySoa, RayColumn};
/// let xs: Vec<f32> = vec![0.0, 1.0, 2.0];
/// let mut soa = RaySoa::with_len(3);
/// soa.column_mut(RayColumn::Ox).copy_from_slice(bytemuck::cast_slice(&xs));
/// soa.column_mut(RayColumn::Dz).fill(-1.0);
/// assert_eq!(soa.ray(2).origin.x, 2.0);
/// assert!(soa.ray(2).is_valid());
/// ```
#[derive(Clone, Debug, Default)]
pub struct RaySoa {
    cols: [Vec<f32>; 8],
    /// Ray masks; empty while every ray has [`ALL_BITS`] (the common case costs nothing).
    masks: Vec<u32>,
    len: usize,
}

impl RaySoa {
    /// `n` rays with origin 0, direction 0 (invalid), `t ∈ [0, +inf)`; fill the columns after.
    pub fn with_len(n: usize) -> Self {
        let mut s = Self { cols: Default::default(), masks: Vec::new(), len: 0 };
        s.resize(n);
        s
    }
    fn resize(&mut self, n: usize) {
        let p = padded_len(n);
        for (c, col) in self.cols.iter_mut().enumerate() {
            col.truncate(self.len);
            let fill = if c == RayColumn::TMax as usize { f32::INFINITY } else { 0.0 };
            col.resize(n, fill);
            // Padding rays: zero direction and t_min > t_max, so they are never valid.
            let pad = if c == RayColumn::TMin as usize { 1.0 } else { 0.0 };
            col.resize(p, pad);
        }
        if !self.masks.is_empty() {
            // Padded like the columns, so that a packet copies its lanes' masks at once.
            self.masks.truncate(self.len);
            self.masks.resize(p, ALL_BITS);
        }
        self.len = n;
    }
    /// From scalar rays.
    pub fn from_rays(rays: &[Ray]) -> Self {
        let mut s = Self::with_len(rays.len());
        for (i, r) in rays.iter().enumerate() {
            s.set(i, r);
        }
        s
    }
    /// From separate columns (all the same length); `t` columns default to `[0, +inf)`.
    ///
    /// Returns `None` when the lengths differ.
    pub fn from_columns(origin: [&[f32]; 3], dir: [&[f32]; 3], t: Option<[&[f32]; 2]>) -> Option<Self> {
        let n = origin[0].len();
        let all = origin.iter().chain(dir.iter()).chain(t.iter().flatten());
        if all.clone().any(|c| c.len() != n) {
            return None;
        }
        let mut s = Self::with_len(n);
        for (c, src) in all.enumerate() {
            s.cols[c][..n].copy_from_slice(src);
        }
        Some(s)
    }
    /// From interleaved records of 6 (`ox oy oz dx dy dz`) or 8 (`… tmin tmax`) f32 each,
    /// e.g. a byte buffer cast with `bytemuck::cast_slice`. Returns `None` when the length
    /// is not a whole number of records or `stride` is not 6 or 8.
    pub fn from_interleaved(data: &[f32], stride: usize) -> Option<Self> {
        if !(stride == 6 || stride == 8) || !data.len().is_multiple_of(stride) {
            return None;
        }
        let n = data.len() / stride;
        let mut s = Self::with_len(n);
        for (i, rec) in data.chunks_exact(stride).enumerate() {
            for (c, &v) in rec.iter().enumerate() {
                s.cols[c][i] = v;
            }
        }
        Some(s)
    }
    /// Appends a ray.
    pub fn push(&mut self, r: Ray) {
        let n = self.len;
        self.resize(n + 1);
        self.set(n, &r);
    }
    /// Overwrites ray `i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    pub fn set(&mut self, i: usize, r: &Ray) {
        assert!(i < self.len, "ray index {i} out of range for {} rays", self.len);
        let v = [r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max];
        for (col, x) in self.cols.iter_mut().zip(v) {
            col[i] = x;
        }
        self.set_mask(i, r.mask);
    }
    /// Sets the mask of ray `i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    pub fn set_mask(&mut self, i: usize, mask: u32) {
        assert!(i < self.len, "ray index {i} out of range for {} rays", self.len);
        if self.masks.is_empty() {
            if mask == ALL_BITS {
                return;
            }
            self.masks = vec![ALL_BITS; padded_len(self.len)];
        }
        self.masks[i] = mask;
    }
    /// The mask of ray `i` ([`ALL_BITS`] unless set).
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline]
    #[must_use]
    pub fn mask(&self, i: usize) -> u32 {
        assert!(i < self.len, "ray index {i} out of range for {} rays", self.len);
        self.masks.get(i).copied().unwrap_or(ALL_BITS)
    }
    /// Number of rays (without padding).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when there are no rays.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Column `c`, `len()` values.
    #[inline]
    pub fn column(&self, c: RayColumn) -> &[f32] {
        &self.cols[c as usize][..self.len]
    }
    /// Column `c` for writing, `len()` values (the padding stays invalid).
    #[inline]
    pub fn column_mut(&mut self, c: RayColumn) -> &mut [f32] {
        &mut self.cols[c as usize][..self.len]
    }
    /// The scalar ray `i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[must_use]
    pub fn ray(&self, i: usize) -> Ray {
        assert!(i < self.len, "ray index {i} out of range for {} rays", self.len);
        // SAFETY: every column holds `padded_len(len) >= len > i` values (`resize` keeps
        // them equal), so one check covers all eight reads.
        let c = |k: usize| unsafe { *self.cols[k].get_unchecked(i) };
        let mask = self.masks.get(i).copied().unwrap_or(ALL_BITS);
        Ray { origin: Vec3::new(c(0), c(1), c(2)), dir: Vec3::new(c(3), c(4), c(5)), t_min: c(6), t_max: c(7), mask }
    }
    /// The hint a loop over the rays in order gives at ray `i`: once per cache line of rays
    /// (when `i` is a multiple of 16), it asks the CPU to fetch the rays 64 further on, in
    /// each of the eight columns. Never reads (any `i` is fine) and does nothing on other
    /// architectures. For loops whose body is long, such as scene queries: incoherent rays
    /// take 100–250 ns each, and the hardware's own prefetch, with eight ray columns and
    /// the scene's nodes and primitives in flight, did not keep the next rays in the cache
    /// (8-ray packets waited on the column loads for 4–9 % of their time; the batch queries,
    /// which call this, answer incoherent rays 6–19 % faster with it). A loop that only runs
    /// kernels over the columns streams them, which the hardware prefetches well on its own;
    /// [`RaySoa::packet`] and [`RaySoa::ray`] do not hint.
    #[inline(always)]
    pub fn prefetch_ahead(&self, i: usize) {
        /// Rays per cache line of a column.
        const LINE: usize = crate::lanes::F32_PER_LINE;
        /// How far ahead, in rays.
        const AHEAD: usize = 4 * LINE;
        if i.is_multiple_of(LINE) {
            for c in &self.cols {
                crate::lanes::prefetch_at(c.as_ptr().wrapping_add(i.wrapping_add(AHEAD)).cast());
            }
        }
    }
    /// The packet of rays `i..i + N`; lanes past `len()` are not requested. Any `i` up to
    /// the padded length minus `N` works (a multiple of `N` keeps packets disjoint). It only
    /// loads: a loop whose packets take long between loads can hint the rays it will need
    /// next with [`RaySoa::prefetch_ahead`].
    ///
    /// # Panics
    /// If `i + N` is past the padded length.
    #[inline(always)]
    #[must_use]
    pub fn packet<L: Lanes>(&self, i: usize) -> RayPacket<L> {
        // One check for all eight columns: they all have the same (padded) length. Written
        // so that it cannot overflow (`i + N` could wrap for `i` near `usize::MAX`).
        let storage = self.cols[0].len();
        assert!(
            storage.checked_sub(L::N).is_some_and(|last| i <= last),
            "rays {i}..{i}+{} past the padded length {storage}",
            L::N
        );
        // SAFETY: every column has `padded_len(len)` values (`resize` keeps them equal), so
        // `N` values are readable from `i` in each.
        let col = |k: usize| unsafe { L::load_ptr(self.cols[k].as_ptr().add(i)) };
        let live = self.len.saturating_sub(i);
        let wanted = if live >= L::N { L::Mask::splat(true) } else { L::Mask::from_bitmask((1u32 << live) - 1) };
        let mut p = RayPacket::new(
            Vec3x::new(col(0), col(1), col(2)),
            Vec3x::new(col(3), col(4), col(5)),
            col(6),
            col(7),
            wanted,
        );
        if !self.masks.is_empty() {
            // The masks are padded like the columns (`resize`, `set_mask`), and the padding
            // lanes are not requested, so `N` masks from `i` are all readable.
            p.mask.as_mut().copy_from_slice(&self.masks[i..i + L::N]);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::{F32x8, F32x16};

    #[test]
    fn a_valid_ray_splats_alike_with_and_without_the_check() {
        let mut rng = crate::rng::Rng::new(0x5_91a7);
        for _ in 0..200 {
            let r = Ray::with_interval(rng.vec3(-1e3, 1e3), rng.unit_vec3() * rng.range(1e-3, 1e3), -1.0, 5.0)
                .with_mask(rng.below(1 << 20) as u32);
            assert!(r.is_valid());
            let (a, b) = (RayPacket::<F32x8>::splat(&r), RayPacket::<F32x8>::splat_valid(&r));
            assert_eq!((a.requested().bitmask(), a.active().bitmask()), (0xff, 0xff));
            assert_eq!((b.requested().bitmask(), b.active().bitmask()), (0xff, 0xff));
            for i in 0..8 {
                assert_eq!(a.ray(i), r);
                assert_eq!(b.ray(i), r);
            }
        }
    }

    #[test]
    fn packets_validate_each_lane_and_stop_past_the_storage() {
        let mut rays = vec![Ray::new(Vec3::ZERO, Vec3::X); 5];
        rays[1].dir = Vec3::ZERO;
        rays[2].origin.y = f32::INFINITY;
        rays[3].t_min = 2.0;
        rays[3].t_max = 1.0;
        rays[4].dir.z = f32::NAN;
        let soa = RaySoa::from_rays(&rays);
        assert_eq!(soa.packet::<F32x8>(0).active().bitmask(), 0b1);
        assert_eq!(soa.packet::<f32>(4).active().bitmask(), 0);
        // Five rays pad to one block of `PAD` (16) lanes.
        assert_eq!(soa.packet::<F32x16>(0).requested().bitmask(), 0b1_1111);
        assert_eq!(soa.packet::<F32x8>(8).requested().bitmask(), 0);
        assert!(std::panic::catch_unwind(|| soa.packet::<F32x8>(9)).is_err());
        assert!(std::panic::catch_unwind(|| soa.packet::<F32x16>(1)).is_err());
        let big = Ray::new(Vec3::splat(3e38), Vec3::splat(3e38 / 1e30));
        assert_eq!(RayPacket::<F32x8>::splat(&big).active().bitmask(), 0xff, "no overflow in the finiteness test");
    }

    #[test]
    fn is_valid_is_check_ok_in_lanes_too() {
        let vals = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1e-30,
            1e30,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let mut seen = [0usize; 2];
        for &a in &vals {
            for &b in &vals {
                for &c in &vals {
                    let rays = [
                        Ray::with_interval(Vec3::new(a, 1.0, b), Vec3::new(c, 0.0, 0.0), 0.0, f32::INFINITY),
                        Ray::with_interval(Vec3::ZERO, Vec3::new(a, b, c), 0.0, 1.0),
                        Ray::with_interval(Vec3::splat(c), Vec3::X, a, b),
                        Ray::with_interval(Vec3::ONE, Vec3::new(1.0, a, 0.0), b, c),
                    ];
                    for r in rays {
                        assert_eq!(r.is_valid(), r.check().is_ok(), "{r:?}: {:?}", r.check());
                        // The lanes' validity test (packets, kernels) agrees lane by lane.
                        let lanes = RayPacket::<F32x8>::splat(&r).active().bitmask();
                        assert_eq!(lanes, if r.is_valid() { 0xff } else { 0 }, "{r:?}");
                        seen[r.is_valid() as usize] += 1;
                    }
                }
            }
        }
        assert!(seen[0] > 100 && seen[1] > 100, "{seen:?}");
    }

    #[test]
    fn soa_rays_read_back_and_stop_at_len() {
        let mut soa = RaySoa::default();
        for k in 0..13 {
            let f = k as f32;
            soa.push(Ray::with_interval(Vec3::new(f, -f, 2.0 * f), Vec3::new(1.0, f, -f), 0.5 * f, 10.0 + f));
        }
        for k in 0..13 {
            let f = k as f32;
            let r = soa.ray(k);
            assert_eq!(
                (r.origin, r.dir, r.t_min, r.t_max),
                (Vec3::new(f, -f, 2.0 * f), Vec3::new(1.0, f, -f), 0.5 * f, 10.0 + f)
            );
        }
        // Index 13 is inside the padded storage but past len: still refused.
        assert!(std::panic::catch_unwind(|| soa.ray(13)).is_err());
    }
}
