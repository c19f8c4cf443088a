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
    ($name:ident, $w:literal, $bytes:literal, $doc:literal) => {
        #[doc = $doc]
        #[repr(C)]
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

wide_node!(Node4, 4, 112, "A node with 4 children (112 bytes).");
wide_node!(Node8, 8, 224, "A node with 8 children (224 bytes).");

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
    /// Collapses a binary BVH: each wide node takes its binary node's two children and keeps
    /// opening the inner child of largest surface area until it has `WIDTH` children.
    pub fn collapse(b2: &Bvh2) -> Self {
        let Some(root) = b2.nodes.first() else {
            return Self { nodes: Vec::new(), root: EMPTY_CHILD, bounds: Aabb::EMPTY };
        };
        let bounds = root.aabb();
        if root.is_leaf() {
            return Self { nodes: Vec::new(), root: leaf_ref(root.index, root.count), bounds };
        }
        let mut nodes = Vec::with_capacity(b2.nodes.len() / (N::WIDTH - 1) + 1);
        nodes.push(N::empty());
        fill(b2, 0, 0, &mut nodes);
        Self { nodes, root: 0, bounds }
    }

    /// Bytes of node data.
    pub fn bytes(&self) -> usize {
        self.nodes.len() * core::mem::size_of::<N>()
    }
}

fn fill<N: WideNode>(b2: &Bvh2, src: usize, at: usize, nodes: &mut Vec<N>) {
    let first = b2.nodes[src].index as usize;
    let mut kids = [0usize; 8];
    kids[0] = first;
    kids[1] = first + 1;
    let mut n = 2;
    while n < N::WIDTH {
        let open = (0..n).filter(|&k| !b2.nodes[kids[k]].is_leaf()).max_by(|&a, &b| {
            b2.nodes[kids[a]].aabb().surface_area().total_cmp(&b2.nodes[kids[b]].aabb().surface_area())
        });
        let Some(k) = open else { break };
        let c = b2.nodes[kids[k]].index as usize;
        kids[k] = c;
        kids[n] = c + 1;
        n += 1;
    }
    for (slot, &k) in kids[..n].iter().enumerate() {
        let node = &b2.nodes[k];
        let r = if node.is_leaf() {
            leaf_ref(node.index, node.count)
        } else {
            let idx = nodes.len();
            nodes.push(N::empty());
            fill(b2, k, idx, nodes);
            idx as u32
        };
        nodes[at].set(slot, &node.aabb(), r);
    }
}
