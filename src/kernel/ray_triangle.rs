//! Ray against triangle, two-sided, returning `(t, u, v)` with the hit point
//! `(1-u-v) v0 + u v1 + v v2`. Degenerate (zero-area) triangles are never hit; neither are
//! rays parallel to the triangle's plane.
//!
//! The scalar reference is Möller–Trumbore as published (`p = d × e2`, `det = e1 · p`,
//! early exits after `u` and `v`). The lanes version evaluates the same expressions for all
//! lanes and combines the tests into one mask, dividing once. Both apply the degeneracy test
//! of [`Triangle::is_degenerate`] with the same operations, so they agree exactly on which
//! triangles are degenerate (slivers whose barycentrics f32 cannot resolve).

use crate::lanes::{Lanes, Mask};
use crate::prim::{Triangle, TriangleLanes};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;

/// A ray–triangle hit: parameter and barycentrics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriHit {
    /// Ray parameter.
    pub t: f32,
    /// Barycentric weight of `v1`.
    pub u: f32,
    /// Barycentric weight of `v2`.
    pub v: f32,
}

/// Möller–Trumbore (1997), two-sided.
pub fn intersect_scalar(ray: &Ray, tri: &Triangle) -> Option<TriHit> {
    if !ray.is_valid() || tri.is_degenerate() {
        return None;
    }
    let [v0, v1, v2] = tri.v;
    let e1 = v1 - v0;
    let e2 = v2 - v0;
    let p = ray.dir.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None; // parallel to the plane
    }
    let inv_det = 1.0 / det;
    let s = ray.origin - v0;
    let u = s.dot(p) * inv_det;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = ray.dir.dot(q) * inv_det;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv_det;
    (t >= ray.t_min && t <= ray.t_max && t.is_finite()).then_some(TriHit { t, u, v })
}

/// Lanes twin of [`intersect_scalar`]: `(hit, t, u, v)`; misses are `(+inf, 0, 0)`.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(rays: &RayPacket<L>, tri: &TriangleLanes<L>) -> (L::Mask, L, L, L) {
    let inf = L::splat(f32::INFINITY);
    let e1 = tri.v1 - tri.v0;
    let e2 = tri.v2 - tri.v0;
    // Degeneracy, exactly as Triangle::is_degenerate.
    let n2 = e1.cross(e2).length_squared();
    let bound = L::splat(Triangle::SLIVER * Triangle::SLIVER) * (e1.length_squared() * e2.length_squared());
    let solid = n2.gt(bound) & n2.lt(inf) & bound.lt(inf);
    moller_trumbore(rays, tri, e1, e2, solid)
}

/// [`intersect_lanes`] for triangles already known to be non-degenerate (a scene's BVH
/// leaves: degenerate triangles are kept out of them). On a degenerate triangle the result
/// is unspecified (but never NaN and never a panic).
#[inline(always)]
pub fn intersect_lanes_solid<L: Lanes>(rays: &RayPacket<L>, tri: &TriangleLanes<L>) -> (L::Mask, L, L, L) {
    let e1 = tri.v1 - tri.v0;
    let e2 = tri.v2 - tri.v0;
    moller_trumbore(rays, tri, e1, e2, L::Mask::splat(true))
}

/// Möller–Trumbore on lanes, all tests combined into one mask (`solid`: non-degenerate).
#[inline(always)]
fn moller_trumbore<L: Lanes>(
    rays: &RayPacket<L>,
    tri: &TriangleLanes<L>,
    e1: Vec3x<L>,
    e2: Vec3x<L>,
    solid: L::Mask,
) -> (L::Mask, L, L, L) {
    let zero = L::splat(0.0);
    let one = L::splat(1.0);
    let inf = L::splat(f32::INFINITY);
    let p = rays.dir.cross(e2);
    let det = e1.dot(p);
    let inv_det = one / det;
    let s = rays.origin - tri.v0;
    let u = s.dot(p) * inv_det;
    let q = s.cross(e1);
    let v = rays.dir.dot(q) * inv_det;
    let t = e2.dot(q) * inv_det;
    let hit = rays.active()
        & solid
        & det.ne(zero)
        & u.ge(zero)
        & u.le(one)
        & v.ge(zero)
        & (u + v).le(one)
        & t.ge(rays.t_min)
        & t.le(rays.t_max)
        & t.lt(inf);
    (hit, L::select(hit, t, inf), L::select(hit, u, zero), L::select(hit, v, zero))
}
