//! Ray against axis-aligned box: the slab test, returning `(t_enter, t_exit)`, the part of
//! `[t_min, t_max]` inside the closed box.
//!
//! The lanes version is branchless. Direction components of `±0` give `1/d = ±inf`; the sign
//! of `1/d` picks each axis' near and far plane, so the only NaN a slab can produce is
//! `0 · inf`, which happens exactly when the ray lies *in* a face plane (parallel to the
//! slab, origin on its boundary). The running interval is folded with
//! `t_enter = max(slab, t_enter)` / `t_exit = min(slab, t_exit)` whose NaN rule returns the
//! running value, so such a slab constrains nothing — the closed-box answer — and no NaN
//! reaches a lane result.

use crate::lanes::Lanes;
use crate::prim::{Aabb, AabbLanes};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// Slab test without validity checks (Ericson 5.3.3): `o + t d` for `t ∈ [t_min, t_max]`
/// against `b`. Used by the sweep kernels, where `d` may be zero.
pub(crate) fn slab_scalar(o: Vec3, d: Vec3, t_min: f32, t_max: f32, b: &Aabb) -> Option<(f32, f32)> {
    let (mut t0, mut t1) = (t_min, t_max);
    for i in 0..3 {
        let ood = 1.0 / d[i];
        if ood.is_infinite() {
            // Parallel to the slab (|d| too small to invert): inside it or a miss.
            if o[i] < b.min[i] || o[i] > b.max[i] {
                return None;
            }
        } else {
            let mut near = (b.min[i] - o[i]) * ood;
            let mut far = (b.max[i] - o[i]) * ood;
            if near > far {
                core::mem::swap(&mut near, &mut far);
            }
            t0 = t0.max(near);
            t1 = t1.min(far);
            if t0 > t1 {
                return None;
            }
        }
    }
    // An entry at +inf (only possible through overflow) is not a hit.
    (t0 < f32::INFINITY).then_some((t0, t1))
}

/// The part `(t_enter, t_exit)` of the ray's interval inside the box, if any.
pub fn intersect_scalar(ray: &Ray, b: &Aabb) -> Option<(f32, f32)> {
    if !ray.is_valid() || !b.is_valid() {
        return None;
    }
    slab_scalar(ray.origin, ray.dir, ray.t_min, ray.t_max, b)
}

/// Branchless lane core: `(t_enter, t_exit)` with the NaN rule of the module docs; the box
/// is hit where `t_enter <= t_exit` and `t_enter < +inf` (a slab "entered" at `+inf` only
/// arises from overflow with `t_max = +inf`). `inv_d` is `1 / d` per component.
#[inline(always)]
pub fn slab_lanes<L: Lanes>(
    o: Vec3x<L>,
    inv_d: Vec3x<L>,
    t_min: L,
    t_max: L,
    bmin: Vec3x<L>,
    bmax: Vec3x<L>,
) -> (L, L) {
    let zero = L::splat(0.0);
    let axis = |o: L, inv: L, lo: L, hi: L| {
        let neg = inv.lt(zero);
        let near = (L::select(neg, hi, lo) - o) * inv;
        let far = (L::select(neg, lo, hi) - o) * inv;
        (near, far)
    };
    let (nx, fx) = axis(o.x, inv_d.x, bmin.x, bmax.x);
    let (ny, fy) = axis(o.y, inv_d.y, bmin.y, bmax.y);
    let (nz, fz) = axis(o.z, inv_d.z, bmin.z, bmax.z);
    let t_enter = nz.max(ny.max(nx.max(t_min)));
    let t_exit = fz.min(fy.min(fx.min(t_max)));
    (t_enter, t_exit)
}

/// Lanes twin of [`intersect_scalar`]: `(hit, t_enter, t_exit)`; misses are `(+inf, -inf)`.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(rays: &RayPacket<L>, b: &AabbLanes<L>) -> (L::Mask, L, L) {
    let (t0, t1) = slab_lanes(rays.origin, rays.dir.recip(), rays.t_min, rays.t_max, b.min, b.max);
    let hit = rays.active() & t0.le(t1) & t0.lt(L::splat(f32::INFINITY));
    (hit, L::select(hit, t0, L::splat(f32::INFINITY)), L::select(hit, t1, L::splat(f32::NEG_INFINITY)))
}
