//! Static overlap tests: sphere–box (squared distance from the centre to the box, Ericson
//! 5.2.5) and box–box (interval overlap on the three axes). Closed shapes: touching counts.

use crate::lanes::Lanes;
use crate::prim::{Aabb, AabbLanes, Sphere, SphereLanes};

/// Squared distance from `p` to the box (0 inside), Ericson's per-axis form.
pub fn sq_dist_point_aabb(p: glam::Vec3, b: &Aabb) -> f32 {
    let mut d2 = 0.0;
    for i in 0..3 {
        let v = p[i];
        if v < b.min[i] {
            d2 += (b.min[i] - v) * (b.min[i] - v);
        }
        if v > b.max[i] {
            d2 += (v - b.max[i]) * (v - b.max[i]);
        }
    }
    d2
}

/// Whether the sphere and the box share a point.
pub fn sphere_aabb_scalar(s: &Sphere, b: &Aabb) -> bool {
    s.is_valid() && b.is_valid() && sq_dist_point_aabb(s.center, b) <= s.radius * s.radius
}

/// Lanes twin of [`sphere_aabb_scalar`] (clamp the centre into the box, compare distances).
#[inline(always)]
pub fn sphere_aabb_lanes<L: Lanes>(s: &SphereLanes<L>, b: &AabbLanes<L>) -> L::Mask {
    let q = s.center.max(b.min).min(b.max);
    let d = s.center - q;
    d.dot(d).le(s.radius * s.radius)
}

/// Whether two boxes share a point.
pub fn aabb_aabb_scalar(a: &Aabb, b: &Aabb) -> bool {
    if !a.is_valid() || !b.is_valid() {
        return false;
    }
    for i in 0..3 {
        if a.max[i] < b.min[i] || a.min[i] > b.max[i] {
            return false;
        }
    }
    true
}

/// Lanes twin of [`aabb_aabb_scalar`].
#[inline(always)]
pub fn aabb_aabb_lanes<L: Lanes>(a: &AabbLanes<L>, b: &AabbLanes<L>) -> L::Mask {
    a.max.x.ge(b.min.x)
        & a.min.x.le(b.max.x)
        & a.max.y.ge(b.min.y)
        & a.min.y.le(b.max.y)
        & a.max.z.ge(b.min.z)
        & a.min.z.le(b.max.z)
}
