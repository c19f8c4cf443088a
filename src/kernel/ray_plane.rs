//! Ray (or segment, via [`Ray::segment`]) against the infinite plane `n · x = d`:
//! `t = (d - n·o) / (n·dir)` when that lies in `[t_min, t_max]`. A ray parallel to the plane
//! (`n·dir = 0`) misses, even when it lies in the plane.

use crate::lanes::Lanes;
use crate::prim::{Plane, PlaneLanes};
use crate::ray::{Ray, RayPacket};
use glam::Vec3;

/// `t` where the ray crosses the plane within its interval.
pub fn intersect_scalar(ray: &Ray, p: &Plane) -> Option<f32> {
    if !ray.is_valid() || !p.is_valid() {
        return None;
    }
    intersect_checked(ray.origin, ray.dir, ray.t_min, ray.t_max, p)
}

/// [`intersect_scalar`] for a ray (`origin`, `dir`, `[t_min, t_max]`) and a plane the caller
/// has already checked to be valid: the same arithmetic without the checks (a scene tests
/// its planes with it, after validating the ray once and the planes when they were added).
#[inline(always)]
pub fn intersect_checked(origin: Vec3, dir: Vec3, t_min: f32, t_max: f32, p: &Plane) -> Option<f32> {
    let denom = p.normal.dot(dir);
    if denom == 0.0 {
        return None;
    }
    let t = (p.d - p.normal.dot(origin)) / denom;
    (t >= t_min && t <= t_max && t.is_finite()).then_some(t)
}

/// Lanes twin of [`intersect_scalar`]: `(hit, t)`, `t = +inf` where there is no hit.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(rays: &RayPacket<L>, p: &PlaneLanes<L>) -> (L::Mask, L) {
    let denom = p.normal.dot(rays.dir);
    let t = (p.d - p.normal.dot(rays.origin)) / denom;
    let hit =
        rays.active() & denom.ne(L::splat(0.0)) & t.ge(rays.t_min) & t.le(rays.t_max) & t.lt(L::splat(f32::INFINITY));
    (hit, L::select(hit, t, L::splat(f32::INFINITY)))
}
