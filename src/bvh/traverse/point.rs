//! Point queries (closest point, distance): nearest-first traversal of a wide or binary tree
//! around a query point, pruned by the caller's current best squared distance.
//!
//! The child boxes of a node are tested all at once ([`point_box_distance_squared`], a lanes
//! point–box squared distance over the node's `N` children); children within the bound are
//! visited nearest first (the nearest next, the others on the stack farthest first, ordered
//! by [`child_order`](super::child_order)), and a popped subtree is skipped when its box is
//! farther than the bound at that moment.
//!
//! **Conservative.** A box is kept when its squared distance is `<=` the bound (ties are
//! visited, so the tie rule of the caller sees every equally near primitive). The box distance
//! is computed as `gx² + gy² + gz²` (unfused, left to right) from the per-axis gaps
//! `max(min - p, p - max, 0)`; a primitive whose closest point `q` lies inside the box has
//! `|q_i - p_i| >= gap_i` on every axis, and IEEE rounding is monotone, so its squared
//! distance computed the same way (as [`crate::kernel::closest_point`] does, with `q` clamped
//! to the primitive's box) is never below the box's. Pruning therefore never drops a
//! primitive that a brute-force scan with the same kernel would report.

use super::{StackEntry, TraversalStack, child_order};
use crate::bvh::node::{Child, EMPTY_CHILD, LEAF_BIT, Node2, WideBvh, WideNode};
use crate::lanes::{Lanes, Mask, prefetch};
use crate::prim::Aabb;
use crate::vec3x::Vec3x;
use glam::Vec3;

/// What a point traversal asks of its caller.
pub trait PointLeafAction {
    /// The current bound on the squared distance: boxes farther than it are skipped (boxes
    /// exactly at it are visited). A closest-point action lowers it as it finds primitives;
    /// start it at the squared search radius (or `f32::MAX`, or `+inf`).
    fn bound(&self) -> f32;
    /// Tests primitives `first..first + count` (leaf order).
    fn leaf(&mut self, first: u32, count: u32);
}

/// Squared distance from `p` to each of `N` boxes (`min`, `max` per lane): `gx² + gy² + gz²`
/// with `g = max(min - p, p - max, 0)` per axis, unfused. 0 inside or on a box; `+inf` for
/// an empty box (`min = +inf, max = -inf`).
#[inline(always)]
#[must_use]
pub fn point_box_distance_squared<L: Lanes>(p: Vec3x<L>, min: Vec3x<L>, max: Vec3x<L>) -> L {
    let zero = L::splat(0.0);
    let gap = |p: L, lo: L, hi: L| (lo - p).max(p - hi).max(zero);
    let (gx, gy, gz) = (gap(p.x, min.x, max.x), gap(p.y, min.y, max.y), gap(p.z, min.z, max.z));
    gx * gx + gy * gy + gz * gz
}

/// Scalar twin of [`point_box_distance_squared`] for one box (the same operations, so the
/// same bits).
#[inline(always)]
#[must_use]
pub fn point_aabb_distance_squared(p: Vec3, b: &Aabb) -> f32 {
    point_box_distance_squared::<f32>(Vec3x::splat(p), Vec3x::splat(b.min), Vec3x::splat(b.max))
}

/// Nearest-first point traversal of a 4- or 8-wide tree: calls `action.leaf` for every leaf whose box
/// is within `action.bound()` (squared distance, `<=`) of `p` when it is reached. `L::N` must
/// equal the node width (checked at compile time). `stack` is empty on return.
#[inline(always)]
pub fn point_wide<L: Lanes, N: WideNode>(
    bvh: &WideBvh<N>,
    p: Vec3,
    action: &mut impl PointLeafAction,
    stack: &mut TraversalStack,
) {
    const { assert!(L::N == N::WIDTH, "the lanes must be as wide as the nodes") };
    const { assert!(N::WIDTH <= 8, "4- and 8-wide trees only") };
    if bvh.root == EMPTY_CHILD || point_aabb_distance_squared(p, &bvh.bounds) > action.bound() {
        return;
    }
    let pl = Vec3x::<L>::splat(p);
    let mut cur = bvh.root;
    loop {
        if cur & LEAF_BIT == 0 {
            let idx = cur;
            let node = &bvh.nodes[idx as usize];
            let [mnx, mny, mnz, mxx, mxy, mxz] = node.columns();
            let min = Vec3x::new(L::load(mnx), L::load(mny), L::load(mnz));
            let max = Vec3x::new(L::load(mxx), L::load(mxy), L::load(mxz));
            let d2 = point_box_distance_squared(pl, min, max);
            let kids = node.children();
            // Empty slots have an empty box: +inf, kept only by an infinite bound, so they
            // are masked out by their reference.
            let mut used = 0u32;
            for (i, &c) in kids.iter().enumerate() {
                used |= u32::from(c != EMPTY_CHILD) << i;
            }
            let bits = d2.le(L::splat(action.bound())).bitmask() & used;
            if bits != 0 {
                if bits & (bits - 1) == 0 {
                    cur = kids[bits.trailing_zeros() as usize];
                    continue;
                }
                let mut t = [0f32; 8];
                d2.store(&mut t[..L::N]);
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
            if e.t <= action.bound() {
                cur = e.child;
                break;
            }
        }
    }
}

/// Nearest-first point traversal of a binary tree (the scalar backend): the same contract as
/// [`point_wide`], two child boxes per node with [`point_aabb_distance_squared`].
pub fn point_binary(nodes: &[Node2], p: Vec3, action: &mut impl PointLeafAction, stack: &mut TraversalStack) {
    let dist = |i: usize| point_aabb_distance_squared(p, &nodes[i].aabb());
    if nodes.is_empty() || dist(0) > action.bound() {
        return;
    }
    let mut cur = 0usize;
    loop {
        let n = &nodes[cur];
        if n.is_leaf() {
            action.leaf(n.index, n.count);
        } else {
            let (l, r) = (n.index as usize, n.index as usize + 1);
            let (dl, dr) = (dist(l), dist(r));
            let bound = action.bound();
            match (dl <= bound, dr <= bound) {
                (true, true) => {
                    let (near, far, df) = if dl <= dr { (l, r, dr) } else { (r, l, dl) };
                    stack.push(StackEntry { child: far as u32, t: df });
                    cur = near;
                    continue;
                }
                (true, false) => {
                    cur = l;
                    continue;
                }
                (false, true) => {
                    cur = r;
                    continue;
                }
                (false, false) => {}
            }
        }
        loop {
            let Some(e) = stack.pop() else {
                return;
            };
            if e.t <= action.bound() {
                cur = e.child as usize;
                break;
            }
        }
    }
}
