//! Sphere sweeps (continuous collision): traversal of a wide or binary tree by a sphere of
//! radius `r` whose centre moves from `c` to `c + m` over `t ∈ [0, 1]`, earliest entry first,
//! pruned by the caller's current time of impact.
//!
//! The sphere can touch a primitive only where its centre is within `r` of it, so only when
//! the centre's segment enters the primitive's box grown by `r` on every side. A node's child
//! boxes are grown that way and tested all at once with a slab test along `m`
//! ([`SweptSphere::entry`]); children entered within the bound are visited earliest entry
//! first (ordered by [`child_order`](super::child_order)), and a popped subtree is skipped
//! when it is entered after the bound at that moment.
//!
//! **Conservative.** The boxes are grown by `r·(1 + 2⁻¹²) + S·2⁻¹⁸`, where `S` bounds the
//! magnitude of every coordinate involved (the tree's box, `c` and `c + m`), and a subtree is
//! kept while its entry time is at most the bound plus 2⁻¹⁶. Both margins are far above the
//! rounding of the growth, of the slab arithmetic and of the sweep kernels, so a primitive that
//! a brute-force scan with the same kernel reports is never culled. A motion component that is
//! zero (of either sign) gets the reciprocal `±f32::MAX` instead of `±inf`, so a centre lying
//! exactly on a grown box's face gives an entry time of 0 instead of NaN.

use super::{StackEntry, TraversalStack, child_order};
use crate::bvh::node::{Child, EMPTY_CHILD, LEAF_BIT, Node2, WideBvh, WideNode};
use crate::lanes::{Lanes, Mask, prefetch};
use crate::prim::Aabb;
use crate::vec3x::Vec3x;
use glam::Vec3;

/// Relative growth of the radius (see the module docs).
const RADIUS_MARGIN: f32 = 1.0 / 4096.0;
/// Growth relative to the coordinates' magnitude `S` (see the module docs).
const SCALE_MARGIN: f32 = 1.0 / 262_144.0;
/// Slack on the time bound, in fractions of the motion.
pub const TIME_SLACK: f32 = 1.0 / 65_536.0;

/// What a sweep traversal asks of its caller.
pub trait SweepLeafAction {
    /// The current time of impact bound in `[0, 1]`: subtrees entered after it (plus
    /// [`TIME_SLACK`]) are skipped. Start it at 1.
    fn bound(&self) -> f32;
    /// Tests primitives `first..first + count` (leaf order).
    fn leaf(&mut self, first: u32, count: u32);
}

/// A swept sphere prepared for box tests against one tree.
#[derive(Clone, Copy, Debug)]
pub struct SweptSphere {
    /// Start of the centre.
    pub center: Vec3,
    /// Reciprocal of the motion, `±f32::MAX` for a zero component.
    inv: Vec3,
    /// How much each box is grown.
    grow: f32,
}

impl SweptSphere {
    /// The sweep of the sphere (`center`, `radius`) by `motion` against boxes inside `bounds`
    /// (the tree's box); `None` for a non-finite number or a negative radius.
    #[must_use]
    pub fn new(center: Vec3, radius: f32, motion: Vec3, bounds: &Aabb) -> Option<Self> {
        if !center.is_finite() || !motion.is_finite() || !radius.is_finite() || radius < 0.0 {
            return None;
        }
        let end = center + motion;
        let mut scale = center.abs().max(end.abs()).max_element();
        for v in [bounds.min, bounds.max] {
            if v.is_finite() {
                scale = scale.max(v.abs().max_element());
            }
        }
        let grow = radius * (1.0 + RADIUS_MARGIN) + scale * SCALE_MARGIN;
        let recip = |m: f32| {
            let i = 1.0 / m;
            if i.is_finite() { i } else { f32::MAX.copysign(i) }
        };
        Some(Self { center, inv: Vec3::new(recip(motion.x), recip(motion.y), recip(motion.z)), grow })
    }

    /// Entry times of the centre's segment into `N` boxes grown by the radius (and the
    /// margin): `(hit, t)`, hit where the entry is in `[0, t_max]`. An empty box (`min =
    /// +inf, max = -inf`) is never hit. [`SweptSphere::entry_scalar`] is its one-box twin
    /// (the same operations, so the same bits).
    #[inline(always)]
    #[must_use]
    pub fn entry<L: Lanes>(&self, min: Vec3x<L>, max: Vec3x<L>, t_max: f32) -> (L::Mask, L) {
        let g = L::splat(self.grow);
        let axis = |lo: L, hi: L, c: f32, inv: f32| {
            // The near face along the motion first: no select on the values.
            let (near, far) = if inv >= 0.0 { (lo - g, hi + g) } else { (hi + g, lo - g) };
            let (c, inv) = (L::splat(c), L::splat(inv));
            ((near - c) * inv, (far - c) * inv)
        };
        let (nx, fx) = axis(min.x, max.x, self.center.x, self.inv.x);
        let (ny, fy) = axis(min.y, max.y, self.center.y, self.inv.y);
        let (nz, fz) = axis(min.z, max.z, self.center.z, self.inv.z);
        let tn = nx.max(ny).max(nz).max(L::splat(0.0));
        let tf = fx.min(fy).min(fz).min(L::splat(t_max));
        (tn.le(tf), tn)
    }

    /// [`SweptSphere::entry`] for one box: the entry time if it is in `[0, t_max]`.
    #[must_use]
    pub fn entry_scalar(&self, b: &Aabb, t_max: f32) -> Option<f32> {
        let (hit, t) = self.entry::<f32>(Vec3x::splat(b.min), Vec3x::splat(b.max), t_max);
        hit.then_some(t)
    }
}

/// Earliest-entry-first sweep of a 4- or 8-wide tree: calls `action.leaf` for every leaf whose box,
/// grown by the radius, the centre's segment enters by `action.bound()` (plus
/// [`TIME_SLACK`]). `L::N` must equal the node width. `stack` is empty on return.
#[inline(always)]
pub fn sweep_wide<L: Lanes, N: WideNode>(
    bvh: &WideBvh<N>,
    sphere: &SweptSphere,
    action: &mut impl SweepLeafAction,
    stack: &mut TraversalStack,
) {
    const { assert!(L::N == N::WIDTH, "the lanes must be as wide as the nodes") };
    const { assert!(N::WIDTH <= 8, "4- and 8-wide trees only") };
    if bvh.root == EMPTY_CHILD || sphere.entry_scalar(&bvh.bounds, action.bound() + TIME_SLACK).is_none() {
        return;
    }
    let mut cur = bvh.root;
    loop {
        if cur & LEAF_BIT == 0 {
            let idx = cur;
            let node = &bvh.nodes[idx as usize];
            let [mnx, mny, mnz, mxx, mxy, mxz] = node.columns();
            let min = Vec3x::new(L::load(mnx), L::load(mny), L::load(mnz));
            let max = Vec3x::new(L::load(mxx), L::load(mxy), L::load(mxz));
            let (hit, tn) = sphere.entry(min, max, action.bound() + TIME_SLACK);
            let kids = node.children();
            let mut used = 0u32;
            for (i, &c) in kids.iter().enumerate() {
                used |= u32::from(c != EMPTY_CHILD) << i;
            }
            let bits = hit.bitmask() & used;
            if bits != 0 {
                if bits & (bits - 1) == 0 {
                    cur = kids[bits.trailing_zeros() as usize];
                    continue;
                }
                let mut t = [0f32; 8];
                tn.store(&mut t[..L::N]);
                let mut entries = [StackEntry::default(); 8];
                cur = child_order::order(&t, kids, bits, &mut entries);
                stack.push_block(&entries, bits.count_ones() as usize - 1);
                let mut b = bits;
                while b != 0 {
                    let i = b.trailing_zeros() as usize;
                    b &= b - 1;
                    if kids[i] & LEAF_BIT == 0 {
                        prefetch(&bvh.nodes[kids[i] as usize]);
                    }
                }
                continue;
            }
        } else {
            let (first, count) = Child::leaf_range(cur);
            action.leaf(first, count);
        }
        loop {
            let Some(e) = stack.pop() else {
                return;
            };
            if e.t <= action.bound() + TIME_SLACK {
                cur = e.child;
                break;
            }
        }
    }
}

/// Earliest-entry-first sweep of a binary tree (the scalar backend): the contract of
/// [`sweep_wide`], two child boxes per node with [`SweptSphere::entry_scalar`].
pub fn sweep_binary(
    nodes: &[Node2],
    sphere: &SweptSphere,
    action: &mut impl SweepLeafAction,
    stack: &mut TraversalStack,
) {
    let enter = |i: usize, bound: f32| sphere.entry_scalar(&nodes[i].aabb(), bound + TIME_SLACK);
    if nodes.is_empty() || enter(0, action.bound()).is_none() {
        return;
    }
    let mut cur = 0usize;
    loop {
        let n = &nodes[cur];
        if n.is_leaf() {
            action.leaf(n.index, n.count);
        } else {
            let (l, r) = (n.index as usize, n.index as usize + 1);
            let bound = action.bound();
            match (enter(l, bound), enter(r, bound)) {
                (Some(a), Some(b)) => {
                    let (near, far, tf) = if a <= b { (l, r, b) } else { (r, l, a) };
                    stack.push(StackEntry { child: far as u32, t: tf });
                    cur = near;
                    continue;
                }
                (Some(_), None) => {
                    cur = l;
                    continue;
                }
                (None, Some(_)) => {
                    cur = r;
                    continue;
                }
                (None, None) => {}
            }
        }
        loop {
            let Some(e) = stack.pop() else {
                return;
            };
            if e.t <= action.bound() + TIME_SLACK {
                cur = e.child as usize;
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_box() -> Aabb {
        Aabb::new(Vec3::ZERO, Vec3::ONE)
    }

    #[test]
    fn entry_is_where_the_centre_reaches_the_grown_box() {
        let b = unit_box();
        let s = SweptSphere::new(Vec3::new(-3.0, 0.5, 0.5), 1.0, Vec3::new(4.0, 0.0, 0.0), &b).unwrap();
        // The grown box starts at x = -1 (less the margin): the centre gets there halfway.
        let t = s.entry_scalar(&b, 1.0).unwrap();
        assert!((t - 0.5).abs() < 1e-3, "{t}");
        // Entered after the bound: culled.
        assert!(s.entry_scalar(&b, 0.4).is_none());
        // Beside the box by more than the radius: never entered.
        let far = SweptSphere::new(Vec3::new(-3.0, 2.5, 0.5), 1.0, Vec3::new(4.0, 0.0, 0.0), &b).unwrap();
        assert!(far.entry_scalar(&b, 1.0).is_none());
    }

    #[test]
    fn zero_motion_tests_overlap_at_the_start() {
        let b = unit_box();
        for m in [Vec3::ZERO, Vec3::new(-0.0, 0.0, -0.0)] {
            let touching = SweptSphere::new(Vec3::new(2.0, 0.5, 0.5), 1.0, m, &b).unwrap();
            assert_eq!(touching.entry_scalar(&b, 1.0), Some(0.0));
            let apart = SweptSphere::new(Vec3::new(2.1, 0.5, 0.5), 1.0, m, &b).unwrap();
            assert_eq!(apart.entry_scalar(&b, 1.0), None);
        }
    }

    #[test]
    fn empty_boxes_and_invalid_spheres() {
        let empty = Aabb::new(Vec3::INFINITY, Vec3::NEG_INFINITY);
        for m in [Vec3::X, -Vec3::ONE, Vec3::ZERO] {
            let s = SweptSphere::new(Vec3::ZERO, 1.0, m, &unit_box()).unwrap();
            assert_eq!(s.entry_scalar(&empty, 1.0), None);
        }
        assert!(SweptSphere::new(Vec3::NAN, 1.0, Vec3::X, &unit_box()).is_none());
        assert!(SweptSphere::new(Vec3::ZERO, -1.0, Vec3::X, &unit_box()).is_none());
        assert!(SweptSphere::new(Vec3::ZERO, f32::INFINITY, Vec3::X, &unit_box()).is_none());
        assert!(SweptSphere::new(Vec3::ZERO, 1.0, Vec3::new(0.0, f32::NAN, 0.0), &unit_box()).is_none());
    }

    #[test]
    fn lanes_equal_the_scalar_twin() {
        let mut rng = crate::rng::Rng::new(17);
        for _ in 0..2000 {
            let s =
                SweptSphere::new(rng.vec3(-4.0, 4.0), rng.range(0.0, 1.0), rng.vec3(-6.0, 6.0), &unit_box()).unwrap();
            let boxes: Vec<Aabb> = (0..8)
                .map(|_| {
                    let a = rng.vec3(-3.0, 3.0);
                    Aabb::new(a, a + rng.vec3(0.0, 2.0))
                })
                .collect();
            let col = |f: &dyn Fn(&Aabb) -> f32| {
                let v: Vec<f32> = boxes.iter().map(f).collect();
                crate::lanes::F32x8::load(&v)
            };
            let min = Vec3x::new(col(&|b| b.min.x), col(&|b| b.min.y), col(&|b| b.min.z));
            let max = Vec3x::new(col(&|b| b.max.x), col(&|b| b.max.y), col(&|b| b.max.z));
            let (hit, t) = s.entry::<crate::lanes::F32x8>(min, max, 0.7);
            for (k, b) in boxes.iter().enumerate() {
                let want = s.entry_scalar(b, 0.7);
                assert_eq!(hit.lane(k).then(|| t.lane(k).to_bits()), want.map(f32::to_bits));
            }
        }
    }
}
