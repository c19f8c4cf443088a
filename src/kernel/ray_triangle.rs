//! Ray against triangle, two-sided, returning `(t, u, v)` with the hit point
//! `(1-u-v) v0 + u v1 + v v2`. Degenerate (zero-area) triangles are never hit; neither are
//! rays parallel to the triangle's plane.
//!
//! The scalar reference is Möller–Trumbore as published (`p = d × e2`, `det = e1 · p`, one
//! division). The lanes version is the division-free form used by Embree: with the scaled
//! normal `n = e1 × e2`, `den = -d·n`, `R = s × d` (`s = o - v0`), it accepts when
//! `U = R·e2`, `V = -R·e1` and `T = s·n` (sign-flipped by `den`) satisfy `U, V >= 0`,
//! `U + V <= |den|`, `|den| t_min <= T <= |den| t_max`, and divides only for the result.
//! Both compute the degeneracy test `|e1 × e2|² > 0` with the same operations, so they
//! agree exactly on which triangles are degenerate.

use crate::lanes::Lanes;
use crate::prim::{Triangle, TriangleLanes};
use crate::ray::{Ray, RayPacket};

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
    (t >= ray.t_min && t <= ray.t_max).then_some(TriHit { t, u, v })
}

/// Lanes twin of [`intersect_scalar`]: `(hit, t, u, v)`; misses are `(+inf, 0, 0)`.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(
    rays: &RayPacket<L>,
    tri: &TriangleLanes<L>,
) -> (L::Mask, L, L, L) {
    let zero = L::splat(0.0);
    let e1 = tri.v1 - tri.v0;
    let e2 = tri.v2 - tri.v0;
    let n = e1.cross(e2);
    let n2 = n.dot(n);
    let s = rays.origin - tri.v0;
    let den = -n.dot(rays.dir);
    let r = s.cross(rays.dir);
    let u = r.dot(e2).xor_sign(den);
    let v = (-r.dot(e1)).xor_sign(den);
    let t = s.dot(n).xor_sign(den);
    let abs_den = den.abs();
    let hit = rays.active()
        & n2.gt(zero)
        & n2.lt(L::splat(f32::INFINITY))
        & abs_den.gt(zero)
        & u.ge(zero)
        & v.ge(zero)
        & (u + v).le(abs_den)
        & t.ge(abs_den * rays.t_min)
        & t.le(abs_den * rays.t_max);
    let rcp = L::splat(1.0) / abs_den;
    (
        hit,
        L::select(
            hit,
            (t * rcp).max(rays.t_min).min(rays.t_max),
            L::splat(f32::INFINITY),
        ),
        L::select(hit, u * rcp, zero),
        L::select(hit, v * rcp, zero),
    )
}
