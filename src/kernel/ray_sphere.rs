//! Ray (or segment) against sphere: a boolean **test** without square root and an
//! **intersect** returning the first `t` in `[t_min, t_max]`.
//!
//! With `m = o - c`, the points of the ray satisfy `a t² + 2 b t + c = 0` for
//! `a = d·d`, `b = m·d`, `c = m·m - r²` (the unnormalised-direction form; `t` is in units of
//! `d`). Both kernels measure from the start of the interval (`o + t_min d`), so Ericson's
//! early-out applies: outside (`c > 0`) and pointing away (`b > 0`) is a miss before any
//! square root. A ray starting inside (or on) the sphere hits at `t_min`.
//!
//! The discriminant `b² - ac` is computed as `a r² - |m × d|²` (the same quantity, since
//! `|m × d|² = a |m|² - b²`; cf. Ray Tracing Gems ch. 7), which stays accurate for spheres far
//! from the ray origin where `b² - ac` cancels catastrophically. It needs no division.

use crate::lanes::{Lanes, mul_add_as_lanes};
use crate::prim::{Sphere, SphereLanes};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::{Vec3x, fused};

/// Whether the ray touches the sphere within `[t_min, t_max]` (no square root).
pub fn test_scalar(ray: &Ray, s: &Sphere) -> bool {
    if !ray.is_valid() || !s.is_valid() {
        return false;
    }
    // The lanes twin's operations in its order, fused exactly where its lanes are
    // (`vec3x::fused`), so that both give the same answer on every build.
    let d = ray.dir;
    let m = fused::at(ray.origin, d, ray.t_min) - s.center;
    let r2 = s.radius * s.radius;
    let c = fused::dot(m, m) - r2;
    if c <= 0.0 {
        return true; // starts inside or on the surface
    }
    let b = fused::dot(m, d);
    if b > 0.0 {
        return false; // outside and pointing away
    }
    let a = d.dot(d);
    let len = ray.t_max - ray.t_min;
    if -b <= a * len {
        // closest approach inside the interval: the line must reach the sphere
        let mxd = fused::cross(m, d);
        (0.0..f32::INFINITY).contains(&mul_add_as_lanes(a, r2, -fused::dot(mxd, mxd)))
    } else {
        // closest approach beyond t_max: the end point must be inside
        mul_add_as_lanes(mul_add_as_lanes(a, len, b + b), len, c) <= 0.0
    }
}

/// Lanes twin of [`test_scalar`]: lane `i` tests ray `i` against sphere `i`.
#[inline(always)]
pub fn test_lanes<L: Lanes>(rays: &RayPacket<L>, s: &SphereLanes<L>) -> L::Mask {
    let d = rays.dir;
    let m = rays.origin.mul_add(d, rays.t_min) - s.center;
    // Fused products as in `first_root` (`a` unfused: the packet's validity computes it).
    let r2 = s.radius * s.radius;
    let c = m.dot_fused(m) - r2;
    let b = m.dot_fused(d);
    let a = d.dot(d);
    let len = rays.t_max - rays.t_min;
    let zero = L::splat(0.0);
    let vertex_inside = (-b).le(a * len);
    let mxd = m.cross_fused(d);
    let disc = a.mul_add(r2, -mxd.dot_fused(mxd));
    let line_hits = disc.ge(zero) & disc.lt(L::splat(f32::INFINITY));
    let end_inside = a.mul_add(len, b + b).mul_add(len, c).le(zero);
    let approach = b.le(zero) & ((vertex_inside & line_hits) | (!vertex_inside & end_inside));
    rays.active() & (c.le(zero) | approach)
}

/// First `t` in `[t_min, t_max]` where the ray touches the sphere; `t_min` when the ray
/// starts inside or on it.
pub fn intersect_scalar(ray: &Ray, s: &Sphere) -> Option<f32> {
    if !ray.is_valid() || !s.is_valid() {
        return None;
    }
    // The lanes twin's operations in its order, fused exactly where its lanes are
    // (`vec3x::fused`), so that every backend reports the same bits of `t`.
    let d = ray.dir;
    let m = fused::at(ray.origin, d, ray.t_min) - s.center;
    let r2 = s.radius * s.radius;
    let c = fused::dot(m, m) - r2;
    if c <= 0.0 {
        // Inside: clamp to the start, as `t_min + 0` (as the lanes form it: a start at −0
        // reports +0).
        return Some(ray.t_min + 0.0);
    }
    let b = fused::dot(m, d);
    if b > 0.0 {
        return None; // outside and pointing away
    }
    let a = d.dot(d);
    let mxd = fused::cross(m, d);
    let disc = mul_add_as_lanes(a, r2, -fused::dot(mxd, mxd)); // b² - ac, without cancellation
    if !(0.0..f32::INFINITY).contains(&disc) {
        return None; // the line misses (or the input overflows f32)
    }
    let h = disc.sqrt();
    let t = ray.t_min + c / (h - b); // smaller root, c / q form (no cancellation for b <= 0)
    (t <= ray.t_max && t.is_finite()).then_some(t)
}

/// Shared lane core: first root of the ray `o + t d`, `t ∈ [t_min, t_max]`, against the
/// sphere, assuming `o` is already the interval start. Returns (hit, t - t_min, inside).
#[inline(always)]
pub(crate) fn first_root<L: Lanes>(o: Vec3x<L>, d: Vec3x<L>, center: Vec3x<L>, radius: L) -> (L::Mask, L, L::Mask) {
    let zero = L::splat(0.0);
    let m = o - center;
    let r2 = radius * radius;
    // Fused where the lanes have FMA, in glam's order: ten operations fewer per block. The
    // scalar twin computes the same operations (`vec3x::fused`), so both give the same bits
    // on every build. `a` stays unfused: the packet's validity test computes it.
    let c = m.dot_fused(m) - r2;
    let b = m.dot_fused(d);
    let a = d.dot(d);
    let mxd = m.cross_fused(d);
    let disc = a.mul_add(r2, -mxd.dot_fused(mxd));
    let s = c / (disc.sqrt() - b);
    let inside = c.le(zero);
    let outside_hit = b.le(zero) & disc.ge(zero) & disc.lt(L::splat(f32::INFINITY)) & s.ge(zero);
    (inside | outside_hit, L::select(inside, zero, s), inside)
}

/// Lanes twin of [`intersect_scalar`]: `(hit, t)`, `t = +inf` where there is no hit.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(rays: &RayPacket<L>, s: &SphereLanes<L>) -> (L::Mask, L) {
    let o = rays.origin.mul_add(rays.dir, rays.t_min);
    let (hit, ds, _) = first_root(o, rays.dir, s.center, s.radius);
    let t = rays.t_min + ds;
    let hit = rays.active() & hit & t.le(rays.t_max) & t.lt(L::splat(f32::INFINITY));
    (hit, L::select(hit, t, L::splat(f32::INFINITY)))
}

/// Convenience: one ray against every sphere of a block, writing `t` (or `+inf`) per sphere.
/// `out.len()` must be at least `spheres.padded_len()`.
pub fn intersect_block<L: Lanes>(ray: &Ray, spheres: &crate::prim::SphereSoa, out: &mut [f32]) {
    let packet = RayPacket::<L>::splat(ray);
    for i in (0..spheres.padded_len()).step_by(L::N) {
        let (_, t) = intersect_lanes(&packet, &spheres.lanes::<L>(i));
        t.store(&mut out[i..]);
    }
}
