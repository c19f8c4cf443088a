//! Box against triangle overlap by the separating-axis test (Akenine-Möller 2001; Ericson
//! 5.2.9): 9 axes `box axis × triangle edge`, the 3 box face normals, the triangle normal.
//! The box and triangle are closed: touching counts as overlap.
//!
//! Degenerate triangles (segments, points) are tested correctly: their zero axes project
//! everything to 0 with radius 0, and `0 > 0` is not a separation. A NaN anywhere means
//! "no overlap": the lanes version computes "not separated" with ordered `<=` comparisons
//! and ANDs them.

use crate::lanes::Lanes;
use crate::prim::{Aabb, AabbLanes, Triangle, TriangleLanes};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// Reference: every axis projected with all three vertices, early exit on the first
/// separating axis.
pub fn overlap_scalar(b: &Aabb, tri: &Triangle) -> bool {
    if !b.is_valid() || !tri.is_valid() {
        return false;
    }
    let c = b.center();
    let e = b.half_extents();
    let v = tri.v.map(|p| p - c);
    let f = [v[1] - v[0], v[2] - v[1], v[0] - v[2]];
    let separated_on = |a: Vec3, r: f32| {
        let p = v.map(|x| x.dot(a));
        let (lo, hi) = (p[0].min(p[1]).min(p[2]), p[0].max(p[1]).max(p[2]));
        lo > r || hi < -r
    };
    // 9 edge axes
    for fj in f {
        for u in [Vec3::X, Vec3::Y, Vec3::Z] {
            let a = u.cross(fj);
            let r = e.x * a.x.abs() + e.y * a.y.abs() + e.z * a.z.abs();
            if separated_on(a, r) {
                return false;
            }
        }
    }
    // 3 box face normals
    for i in 0..3 {
        let lo = v[0][i].min(v[1][i]).min(v[2][i]);
        let hi = v[0][i].max(v[1][i]).max(v[2][i]);
        if lo > e[i] || hi < -e[i] {
            return false;
        }
    }
    // triangle plane: n·x = n·v0, box centred at the origin
    let n = f[0].cross(f[1]);
    let dist = n.dot(v[0]);
    let r = e.x * n.x.abs() + e.y * n.y.abs() + e.z * n.z.abs();
    dist.abs() <= r
}

/// Lanes twin of [`overlap_scalar`], branchless: for the edge axes only the two distinct
/// projections are formed and tested as `max(-max(p0, p2), min(p0, p2)) <= r`.
#[inline(always)]
pub fn overlap_lanes<L: Lanes>(b: &AabbLanes<L>, tri: &TriangleLanes<L>) -> L::Mask {
    let half = L::splat(0.5);
    let c = (b.min + b.max).scale(half);
    let e = (b.max - b.min).scale(half);
    let v0 = tri.v0 - c;
    let v1 = tri.v1 - c;
    let v2 = tri.v2 - c;
    let f0 = v1 - v0;
    let f1 = v2 - v1;
    let f2 = v0 - v2;
    let keep = |pa: L, pb: L, r: L| (-pa.max(pb)).max(pa.min(pb)).le(r);
    // Edge f, on-edge vertex a, opposite vertex b (the third projection equals a's).
    let edge = |f: Vec3x<L>, a: Vec3x<L>, b: Vec3x<L>| {
        let (fx, fy, fz) = (f.x.abs(), f.y.abs(), f.z.abs());
        // X × f = (0, -fz, fy)
        let kx = keep(a.z * f.y - a.y * f.z, b.z * f.y - b.y * f.z, e.y * fz + e.z * fy);
        // Y × f = (fz, 0, -fx)
        let ky = keep(a.x * f.z - a.z * f.x, b.x * f.z - b.z * f.x, e.x * fz + e.z * fx);
        // Z × f = (-fy, fx, 0)
        let kz = keep(a.y * f.x - a.x * f.y, b.y * f.x - b.x * f.y, e.x * fy + e.y * fx);
        kx & ky & kz
    };
    let edges = edge(f0, v0, v2) & edge(f1, v1, v0) & edge(f2, v2, v1);
    let face = |a: L, b: L, c: L, e: L| a.max(b).max(c).ge(-e) & a.min(b).min(c).le(e);
    let faces = face(v0.x, v1.x, v2.x, e.x) & face(v0.y, v1.y, v2.y, e.y) & face(v0.z, v1.z, v2.z, e.z);
    let n = f0.cross(f1);
    let r = e.dot(n.abs());
    let plane = n.dot(v0).abs().le(r);
    edges & faces & plane
}
