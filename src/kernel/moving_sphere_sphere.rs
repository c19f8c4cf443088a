//! Moving sphere against moving sphere (Ericson 5.5.5): the time of first contact in
//! `[0, 1]` while `a` moves by `va` and `b` by `vb`. In `b`'s frame, `a`'s centre is a ray
//! with direction `va - vb` against a sphere of radius `ra + rb`.
//!
//! The discriminant `b² - ac` is evaluated as `a r² - |v × s|²` (no cancellation for small
//! spheres far apart). Touching or overlapping at `t = 0` gives `0`. Equal velocities (`a = |va - vb|² = 0`)
//! with no initial contact give no contact, without a division by zero.

use crate::lanes::Lanes;
use crate::prim::{Sphere, SphereLanes};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// First time in `[0, 1]` at which the spheres touch.
pub fn time_of_impact_scalar(a: &Sphere, va: Vec3, b: &Sphere, vb: Vec3) -> Option<f32> {
    if !a.is_valid() || !b.is_valid() || !va.is_finite() || !vb.is_finite() {
        return None;
    }
    let s = b.center - a.center; // separation
    let v = vb - va; // relative motion of b
    let r = a.radius + b.radius;
    let c = s.dot(s) - r * r;
    if c <= 0.0 {
        return Some(0.0); // already in contact
    }
    let qa = v.dot(v);
    if qa == 0.0 {
        return None; // equal velocities: the gap never changes
    }
    let qb = v.dot(s);
    if qb >= 0.0 {
        return None; // not approaching
    }
    let disc = qa * (r * r) - v.cross(s).length_squared(); // qb² - qa c, cancellation-free
    if disc < 0.0 {
        return None; // closest approach is still apart
    }
    let t = (-qb - disc.sqrt()) / qa;
    (t <= 1.0).then_some(t)
}

/// Lanes twin of [`time_of_impact_scalar`]: `(hit, t)`, `t = +inf` where there is no contact.
/// The root is taken as `c / (-b + sqrt(disc))`, free of cancellation.
#[inline(always)]
pub fn time_of_impact_lanes<L: Lanes>(
    a: &SphereLanes<L>,
    va: Vec3x<L>,
    b: &SphereLanes<L>,
    vb: Vec3x<L>,
) -> (L::Mask, L) {
    let zero = L::splat(0.0);
    let s = b.center - a.center;
    let v = vb - va;
    let r = a.radius + b.radius;
    let c = s.dot(s) - r * r;
    let qa = v.dot(v);
    let qb = v.dot(s);
    let vxs = v.cross(s);
    let disc = qa * (r * r) - vxs.dot(vxs);
    let t = c / (disc.sqrt() - qb);
    let touching = c.le(zero);
    let approaching = qa.gt(zero) & qb.lt(zero) & disc.ge(zero) & t.le(L::splat(1.0));
    let hit = va.is_finite() & vb.is_finite() & (touching | approaching);
    (hit, L::select(touching, zero, L::select(hit, t, L::splat(f32::INFINITY))))
}
