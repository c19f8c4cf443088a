//! Moving box against moving box (Ericson 5.5.8): the interval `[t_first, t_last]` of
//! `[0, 1]` during which the boxes overlap while `a` moves by `va` and `b` by `vb`. Boxes are
//! closed (touching counts). Already overlapping gives `t_first = 0`.
//!
//! Ericson's listing lets an axis with zero relative velocity and no overlap through; here
//! that axis is a miss, as it must be.

use crate::lanes::Lanes;
use crate::prim::{Aabb, AabbLanes};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// `(t_first, t_last)` within `[0, 1]`, if the boxes overlap at some time in it.
pub fn time_of_impact_scalar(a: &Aabb, va: Vec3, b: &Aabb, vb: Vec3) -> Option<(f32, f32)> {
    if !a.is_valid() || !b.is_valid() || !va.is_finite() || !vb.is_finite() {
        return None;
    }
    let v = vb - va; // b's motion relative to a
    let (mut t_first, mut t_last) = (0.0f32, 1.0f32);
    for i in 0..3 {
        if v[i] < 0.0 {
            if b.max[i] < a.min[i] {
                return None; // moving apart
            }
            if a.max[i] < b.min[i] {
                t_first = t_first.max((a.max[i] - b.min[i]) / v[i]);
            }
            if b.max[i] > a.min[i] {
                t_last = t_last.min((a.min[i] - b.max[i]) / v[i]);
            }
        } else if v[i] > 0.0 {
            if b.min[i] > a.max[i] {
                return None; // moving apart
            }
            if b.max[i] < a.min[i] {
                t_first = t_first.max((a.min[i] - b.max[i]) / v[i]);
            }
            if a.max[i] > b.min[i] {
                t_last = t_last.min((a.max[i] - b.min[i]) / v[i]);
            }
        } else if b.max[i] < a.min[i] || b.min[i] > a.max[i] {
            return None; // no relative motion on a separated axis
        }
        if t_first > t_last {
            return None;
        }
    }
    Some((t_first, t_last))
}

/// Lanes twin of [`time_of_impact_scalar`]: `(hit, t_first, t_last)`; misses are
/// `(+inf, -inf)`. Each axis is a slab test of `b`'s offset against `a` widened by `b`'s
/// size, with IEEE infinities for zero relative velocity.
#[inline(always)]
pub fn time_of_impact_lanes<L: Lanes>(
    a: &AabbLanes<L>,
    va: Vec3x<L>,
    b: &AabbLanes<L>,
    vb: Vec3x<L>,
) -> (L::Mask, L, L) {
    let zero = L::splat(0.0);
    let v = vb - va;
    // Overlap on an axis while  a.min - b.max <= v t <= a.max - b.min.
    let lo = a.min - b.max;
    let hi = a.max - b.min;
    let inv = v.recip();
    let axis = |lo: L, hi: L, inv: L| {
        let neg = inv.lt(zero);
        ((L::select(neg, hi, lo)) * inv, (L::select(neg, lo, hi)) * inv)
    };
    let (nx, fx) = axis(lo.x, hi.x, inv.x);
    let (ny, fy) = axis(lo.y, hi.y, inv.y);
    let (nz, fz) = axis(lo.z, hi.z, inv.z);
    let t0 = nz.max(ny.max(nx.max(zero)));
    let t1 = fz.min(fy.min(fx.min(L::splat(1.0))));
    let hit = va.is_finite() & vb.is_finite() & t0.le(t1);
    (hit, L::select(hit, t0, L::splat(f32::INFINITY)), L::select(hit, t1, L::splat(f32::NEG_INFINITY)))
}
