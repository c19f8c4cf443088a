//! Wide BVHs: the binary tree collapsed into nodes of 4 or 8 children whose boxes are
//! stored component-wise (`min_x[8]`, `min_y[8]`, …), so one ray tests every child with one
//! lanes slab test.
//!
//! A child reference is a `u32`: [`EMPTY_CHILD`] for an unused slot (its box is empty and
//! never hit), a node index, or a leaf `LEAF_BIT | (count - 1) << 27 | first` over permuted
//! primitives `first..first + count`.

use super::build::Bvh2;
use crate::prim::Aabb;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// An unused child slot.
pub const EMPTY_CHILD: u32 = u32::MAX;
/// Marks a leaf reference.
pub const LEAF_BIT: u32 = 1 << 31;
const COUNT_SHIFT: u32 = 27;
/// Largest first-primitive index a leaf reference can hold.
pub const MAX_LEAF_START: u32 = (1 << COUNT_SHIFT) - 1;

/// A leaf reference for primitives `first..first + count` (`1 <= count <= 16`).
pub fn leaf_ref(first: u32, count: u32) -> u32 {
    debug_assert!((1..=16).contains(&count) && first <= MAX_LEAF_START);
    LEAF_BIT | ((count - 1) << COUNT_SHIFT) | first
}

/// Decodes a child reference: `Ok(node)` or `Err((first, count))` for a leaf.
#[inline(always)]
pub fn decode(r: u32) -> Result<u32, (u32, u32)> {
    if r & LEAF_BIT == 0 { Ok(r) } else { Err((r & MAX_LEAF_START, ((r >> COUNT_SHIFT) & 15) + 1)) }
}

/// A node of a wide BVH.
pub trait WideNode: Pod + Send + Sync + 'static {
    /// Children per node.
    const WIDTH: usize;
    /// A node with every slot empty.
    fn empty() -> Self;
    /// Sets slot `i` to `child` with box `b`.
    fn set(&mut self, i: usize, b: &Aabb, child: u32);
    /// Child references.
    fn children(&self) -> &[u32];
    /// Box of slot `i`.
    fn child_aabb(&self, i: usize) -> Aabb;
    /// The six box columns `[min_x, min_y, min_z, max_x, max_y, max_z]`.
    fn columns(&self) -> [&[f32]; 6];
}

macro_rules! wide_node {
    ($name:ident, $w:literal, $bytes:literal, $align:literal, $doc:literal) => {
        #[doc = $doc]
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Pod, Zeroable)]
        pub struct $name {
            /// Child box minimum x.
            pub min_x: [f32; $w],
            /// Child box minimum y.
            pub min_y: [f32; $w],
            /// Child box minimum z.
            pub min_z: [f32; $w],
            /// Child box maximum x.
            pub max_x: [f32; $w],
            /// Child box maximum y.
            pub max_y: [f32; $w],
            /// Child box maximum z.
            pub max_z: [f32; $w],
            /// Child references (see the module docs).
            pub child: [u32; $w],
        }

        const _: () = assert!(core::mem::size_of::<$name>() == $bytes);
        const _: () = assert!(core::mem::align_of::<$name>() == $align);

        impl WideNode for $name {
            const WIDTH: usize = $w;
            fn empty() -> Self {
                Self {
                    min_x: [f32::INFINITY; $w],
                    min_y: [f32::INFINITY; $w],
                    min_z: [f32::INFINITY; $w],
                    max_x: [f32::NEG_INFINITY; $w],
                    max_y: [f32::NEG_INFINITY; $w],
                    max_z: [f32::NEG_INFINITY; $w],
                    child: [EMPTY_CHILD; $w],
                }
            }
            fn set(&mut self, i: usize, b: &Aabb, child: u32) {
                self.min_x[i] = b.min.x;
                self.min_y[i] = b.min.y;
                self.min_z[i] = b.min.z;
                self.max_x[i] = b.max.x;
                self.max_y[i] = b.max.y;
                self.max_z[i] = b.max.z;
                self.child[i] = child;
            }
            #[inline(always)]
            fn children(&self) -> &[u32] {
                &self.child
            }
            fn child_aabb(&self, i: usize) -> Aabb {
                Aabb::new(
                    Vec3::new(self.min_x[i], self.min_y[i], self.min_z[i]),
                    Vec3::new(self.max_x[i], self.max_y[i], self.max_z[i]),
                )
            }
            #[inline(always)]
            fn columns(&self) -> [&[f32]; 6] {
                [&self.min_x, &self.min_y, &self.min_z, &self.max_x, &self.max_y, &self.max_z]
            }
        }
    };
}

wide_node!(Node4, 4, 112, 16, "A node with 4 children (112 bytes, 16-byte aligned: within 2 cache lines).");
wide_node!(Node8, 8, 224, 32, "A node with 8 children (224 bytes, 32-byte aligned: within 4 cache lines).");

/// A wide BVH: `root` is a child reference (a node, a leaf, or empty for no primitives).
#[derive(Clone, Debug)]
pub struct WideBvh<N: WideNode> {
    /// Nodes (the root, if it is a node, is `nodes[0]`).
    pub nodes: Vec<N>,
    /// Root reference.
    pub root: u32,
    /// Box of the whole tree.
    pub bounds: Aabb,
}

impl<N: WideNode> WideBvh<N> {
    /// Collapses a binary BVH into a wide one by the surface area heuristic: for every binary
    /// node a small dynamic program (after Ylitie, Karras and Laine 2017) finds the cheapest way
    /// to spend up to `WIDTH` child slots on its subtree, where a slot is a wide node, or a
    /// leaf that may merge sibling binary leaves (up to [`MAX_WIDE_LEAF`] primitives, priced per
    /// started block of `WIDTH` lanes). The leaves keep contiguous primitive ranges, so the
    /// binary tree's permutation is unchanged.
    pub fn collapse(b2: &Bvh2) -> Self {
        let Some(root) = b2.nodes.first() else {
            return Self { nodes: Vec::new(), root: EMPTY_CHILD, bounds: Aabb::EMPTY };
        };
        let bounds = root.aabb();
        let plans = plan(b2, N::WIDTH);
        let mut nodes = Vec::with_capacity(b2.nodes.len() / (N::WIDTH - 1) + 1);
        let root = if plans[0].leaf {
            leaf_ref(plans[0].first, plans[0].count)
        } else {
            nodes.push(N::empty());
            emit(b2, &plans, 0, 0, &mut nodes);
            0
        };
        Self { nodes, root, bounds }
    }

    /// Bytes of node data.
    pub fn bytes(&self) -> usize {
        self.nodes.len() * core::mem::size_of::<N>()
    }
}

/// Largest leaf of a wide tree (two 8-lane blocks, four 4-lane blocks).
pub const MAX_WIDE_LEAF: u32 = 16;
/// SAH price of visiting a wide node (testing all its child boxes), per unit of area.
const NODE_COST: f32 = 1.0;
/// SAH price of one block of `WIDTH` primitive tests, per unit of area.
const BLOCK_COST: f32 = 1.0;

/// The collapse plan of one binary node.
#[derive(Clone, Copy)]
struct Plan {
    /// The subtree's primitives: `first..first + count` of the permutation.
    first: u32,
    count: u32,
    /// As one slot, the subtree is a leaf (else a wide node).
    leaf: bool,
    /// `cost[k]`: cheapest cost of the subtree given `k` slots (`k = 1..=WIDTH`).
    cost: [f32; 9],
    /// `split[k]`: slots given to the left child when the subtree is spread over `k` slots
    /// (0: it takes one slot itself).
    split: [u8; 9],
    /// `spread[k]`: the best left share when the node's children are spread over `k` slots
    /// (what a wide node made of this binary node uses, with `k = WIDTH`).
    spread: [u8; 9],
}

fn plan(b2: &Bvh2, width: usize) -> Vec<Plan> {
    let empty = Plan { first: 0, count: 0, leaf: true, cost: [0.0; 9], split: [0; 9], spread: [0; 9] };
    let mut plans = vec![empty; b2.nodes.len()];
    let leaf_cost = |area: f32, count: u32| area * BLOCK_COST * count.div_ceil(width as u32) as f32;
    // Children come after their parent in `b2.nodes`, so a reverse sweep is bottom-up.
    for i in (0..b2.nodes.len()).rev() {
        let n = &b2.nodes[i];
        let area = n.aabb().surface_area();
        let area = if area.is_finite() { area } else { f32::MAX };
        let mut p = empty;
        if n.is_leaf() {
            p.first = n.index;
            p.count = n.count;
            p.cost = [leaf_cost(area, n.count); 9];
            plans[i] = p;
            continue;
        }
        let (l, r) = (&plans[n.index as usize], &plans[n.index as usize + 1]);
        p.first = l.first;
        p.count = l.count + r.count;
        // dist[k]: the children spread over k slots (left share in spread[k]).
        let mut dist = [f32::INFINITY; 9];
        for (k, (d, share)) in dist.iter_mut().zip(p.spread.iter_mut()).enumerate().take(width + 1).skip(2) {
            let mut best = (l.cost[1] + r.cost[k - 1], 1);
            for kl in 2..k {
                let c = l.cost[kl] + r.cost[k - kl];
                if c < best.0 {
                    best = (c, kl);
                }
            }
            (*d, *share) = (best.0, best.1 as u8);
        }
        let inner = area * NODE_COST + dist[width];
        let leaf = if p.count <= MAX_WIDE_LEAF { leaf_cost(area, p.count) } else { f32::INFINITY };
        p.leaf = leaf <= inner;
        let one = if p.leaf { leaf } else { inner };
        p.cost[1] = one;
        for (k, &d) in dist.iter().enumerate().take(width + 1).skip(2) {
            (p.cost[k], p.split[k]) = if d < one { (d, p.spread[k]) } else { (one, 0) };
        }
        plans[i] = p;
    }
    plans
}

/// Writes wide node `at` for binary inner node `src`, spreading its children over the slots.
fn emit<N: WideNode>(b2: &Bvh2, plans: &[Plan], src: usize, at: usize, nodes: &mut Vec<N>) {
    let mut slots = [0usize; 8];
    let mut n = 0;
    let kl = plans[src].spread[N::WIDTH] as usize;
    let first = b2.nodes[src].index as usize;
    gather(b2, plans, first, kl, &mut slots, &mut n);
    gather(b2, plans, first + 1, N::WIDTH - kl, &mut slots, &mut n);
    for (slot, &k) in slots[..n].iter().enumerate() {
        let p = &plans[k];
        let r = if p.leaf {
            leaf_ref(p.first, p.count)
        } else {
            let idx = nodes.len();
            nodes.push(N::empty());
            emit(b2, plans, k, idx, nodes);
            idx as u32
        };
        nodes[at].set(slot, &b2.nodes[k].aabb(), r);
    }
}

/// The binary nodes that take the `k` slots planned for subtree `src`.
fn gather(b2: &Bvh2, plans: &[Plan], src: usize, k: usize, slots: &mut [usize; 8], n: &mut usize) {
    let kl = plans[src].split[k] as usize;
    if kl == 0 {
        slots[*n] = src;
        *n += 1;
    } else {
        let first = b2.nodes[src].index as usize;
        gather(b2, plans, first, kl, slots, n);
        gather(b2, plans, first + 1, k - kl, slots, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::{BuildOptions, build, validate::validate_wide};
    use glam::Vec3;

    fn row(n: usize, gap: f32) -> Vec<Aabb> {
        (0..n)
            .map(|i| Aabb::new(Vec3::new(i as f32 * gap, 0.0, 0.0), Vec3::new(i as f32 * gap + 1.0, 1.0, 1.0)))
            .collect()
    }

    fn permuted(b2: &Bvh2, boxes: &[Aabb]) -> Vec<Aabb> {
        b2.perm.iter().map(|&i| boxes[i as usize]).collect()
    }

    #[test]
    fn one_primitive_leaves_merge_into_full_blocks() {
        // Eight touching boxes built down to one primitive per leaf: one 8-lane block costs
        // less than a node over eight leaves, so the 8-wide tree is a single leaf.
        let boxes = row(8, 1.0);
        let b2 = build(&boxes, &BuildOptions { max_leaf: 1, ..BuildOptions::default() });
        assert!(b2.nodes.len() > 1);
        let w8 = WideBvh::<Node8>::collapse(&b2);
        assert_eq!(decode(w8.root), Err((0, 8)));
        assert!(w8.nodes.is_empty());
        validate_wide(&w8, &permuted(&b2, &boxes)).unwrap();
    }

    #[test]
    fn far_apart_clusters_fill_the_slots() {
        // 64 boxes far apart: no merging pays, so the nodes use their slots instead of
        // nesting, and leaves never exceed the largest wide leaf.
        let boxes = row(64, 100.0);
        let b2 = build(&boxes, &BuildOptions { max_leaf: 1, ..BuildOptions::default() });
        let w8 = WideBvh::<Node8>::collapse(&b2);
        validate_wide(&w8, &permuted(&b2, &boxes)).unwrap();
        let used: usize = w8.nodes.iter().map(|n| n.children().iter().filter(|&&c| c != EMPTY_CHILD).count()).sum();
        assert!(used as f32 / w8.nodes.len() as f32 > 6.0, "{used} slots over {} nodes", w8.nodes.len());
        let w4 = WideBvh::<Node4>::collapse(&b2);
        validate_wide(&w4, &permuted(&b2, &boxes)).unwrap();
        for n in &w4.nodes {
            for &c in n.children() {
                if let Err((_, count)) = decode(c) {
                    assert!(count <= MAX_WIDE_LEAF);
                }
            }
        }
    }
}
