//! The tree types every BVH concern shares: the binary [`Node2`] / [`Bvh2`], the wide nodes
//! [`Node4`] / [`Node8`] with child boxes stored SoA, [`WideBvh`], the encoding of a wide
//! child reference ([`Child`]), and the limits (leaf sizes, depth, primitive count).
//!
//! The builder, the reinsertion pass, the collapse, the validator and the traversal all
//! depend on this file and on nothing of each other, so the module graph has no cycles.
//!
//! Node types are `#[repr(C)]` + `bytemuck::Pod`, with their sizes asserted at compile time.

use crate::prim::Aabb;
use bytemuck::{Pod, Zeroable};
use glam::{Vec3, Vec3A};

/// Largest leaf of a binary tree (the builder's `max_leaf` is clamped to it).
pub const MAX_BINARY_LEAF: usize = 8;
/// Largest leaf of a wide tree: the collapse merges sibling binary leaves up to this many
/// primitives (one 16-lane block, two 8-lane blocks, four 4-lane blocks). It is what a leaf
/// reference can encode.
pub const MAX_WIDE_LEAF: u32 = 16;
/// The widest wide node ([`Node16`]).
pub const MAX_WIDTH: usize = 16;
/// Depth every tree is built to fit (checked by [`crate::bvh::validate`]); traversal stacks
/// are sized from it.
pub const STACK_DEPTH: usize = 128;
/// Most primitives one tree can index: a wide leaf reference holds the first primitive in 27
/// bits. [`crate::bvh::check_primitive_count`] turns a larger count into an error.
pub const MAX_PRIMITIVES: usize = 1 << COUNT_SHIFT;

// -----------------------------------------------------------------------------------------
// Binary tree.

/// A binary BVH node (32 bytes). `count == 0`: inner node whose children are nodes
/// `index` and `index + 1`. `count > 0`: leaf over permuted primitives `index..index+count`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct Node2 {
    /// Box minimum.
    pub min: [f32; 3],
    /// Number of primitives (0 for inner nodes).
    pub count: u32,
    /// Box maximum.
    pub max: [f32; 3],
    /// First child (inner) or first primitive (leaf).
    pub index: u32,
}

const _: () = assert!(core::mem::size_of::<Node2>() == 32);

impl Node2 {
    /// The node's box.
    #[must_use]
    pub fn aabb(&self) -> Aabb {
        Aabb::new(Vec3::from(self.min), Vec3::from(self.max))
    }
    /// True for leaves.
    #[must_use]
    pub fn is_leaf(&self) -> bool {
        self.count > 0
    }
}

/// A binary BVH: nodes (root at 0, children after their parent) and the permutation
/// (`perm[i]` = the caller's index of the `i`-th primitive in leaf order).
#[derive(Clone, Debug, Default)]
pub struct Bvh2 {
    /// Nodes, root first. Empty when there are no primitives.
    pub nodes: Vec<Node2>,
    /// Leaf-order permutation of the input indices.
    pub perm: Vec<u32>,
}

/// A box in SIMD registers: the builder's and the reinsertion pass's working form of `Aabb`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Box3 {
    pub(crate) min: Vec3A,
    pub(crate) max: Vec3A,
}

impl Box3 {
    pub(crate) const EMPTY: Box3 = Box3 { min: Vec3A::INFINITY, max: Vec3A::NEG_INFINITY };
    /// A node's box.
    pub(crate) fn of(n: &Node2) -> Box3 {
        Box3 { min: Vec3A::from(n.min), max: Vec3A::from(n.max) }
    }
    #[inline(always)]
    pub(crate) fn union(&self, o: &Box3) -> Box3 {
        Box3 { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
    /// Surface area (0 for an empty box).
    #[inline(always)]
    pub(crate) fn area(&self) -> f32 {
        let e = (self.max - self.min).max(Vec3A::ZERO);
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }
    pub(crate) fn aabb(&self) -> Aabb {
        Aabb::new(self.min.into(), self.max.into())
    }
}

// -----------------------------------------------------------------------------------------
// Wide trees.

/// An unused child slot (its box is empty and never hit).
pub const EMPTY_CHILD: u32 = u32::MAX;
/// Marks a leaf reference.
pub const LEAF_BIT: u32 = 1 << 31;
const COUNT_SHIFT: u32 = 27;
const FIRST_MASK: u32 = (1 << COUNT_SHIFT) - 1;

/// A decoded wide child reference.
///
/// A reference is a `u32`: [`EMPTY_CHILD`], a node index (top bit clear), or a leaf
/// `LEAF_BIT | (count - 1) << 27 | first` over permuted primitives `first..first + count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Child {
    /// An inner node: index into [`WideBvh::nodes`].
    Node(u32),
    /// A leaf over permuted primitives `first..first + count` (`1 <= count <=`
    /// [`MAX_WIDE_LEAF`]).
    Leaf {
        /// First primitive (leaf order).
        first: u32,
        /// Number of primitives.
        count: u32,
    },
    /// An unused slot.
    Empty,
}

impl Child {
    /// Decodes a reference.
    #[inline(always)]
    #[must_use]
    pub fn decode(r: u32) -> Child {
        if r == EMPTY_CHILD {
            Child::Empty
        } else if r & LEAF_BIT == 0 {
            Child::Node(r)
        } else {
            Child::Leaf { first: r & FIRST_MASK, count: ((r >> COUNT_SHIFT) & 15) + 1 }
        }
    }

    /// `(first, count)` of a reference known to be a leaf (no check for an empty slot: the
    /// traversal's hot path, which only meets references of hit slots).
    #[inline(always)]
    pub(crate) fn leaf_range(r: u32) -> (u32, u32) {
        (r & FIRST_MASK, ((r >> COUNT_SHIFT) & 15) + 1)
    }

    /// Encodes a leaf reference.
    ///
    /// # Panics
    /// If `count` is not in `1..=MAX_WIDE_LEAF` or `first + count` exceeds
    /// [`MAX_PRIMITIVES`]: the builder checks the primitive count first
    /// ([`crate::bvh::check_primitive_count`]), so this never fires for a built tree.
    #[must_use]
    pub fn leaf(first: u32, count: u32) -> u32 {
        assert!(
            (1..=MAX_WIDE_LEAF).contains(&count) && first as usize + count as usize <= MAX_PRIMITIVES,
            "leaf {first}+{count} cannot be encoded"
        );
        LEAF_BIT | ((count - 1) << COUNT_SHIFT) | first
    }
}

/// A node of a wide BVH. Implemented by [`Node4`] and [`Node8`] only (sealed: traversal
/// reads `WIDTH` values from every column).
pub trait WideNode: Pod + Send + Sync + sealed::Sealed + 'static {
    /// Children per node.
    const WIDTH: usize;
    /// A node with every slot empty.
    fn empty() -> Self;
    /// Sets slot `i` to `child` with box `b`.
    fn set(&mut self, i: usize, b: &Aabb, child: u32);
    /// Child references.
    fn children(&self) -> &[u32];
    /// Bit `i` set when child reference `i` has [`LEAF_BIT`] set (a leaf, or an empty slot):
    /// the references' top bits gathered in one SIMD instruction (a movemask) instead of a
    /// loop over the slots.
    fn leaf_bits(&self) -> u32;
    /// Box of slot `i`.
    fn child_aabb(&self, i: usize) -> Aabb;
    /// The six box columns `[min_x, min_y, min_z, max_x, max_y, max_z]`, `WIDTH` values each.
    fn columns(&self) -> [&[f32]; 6];
    /// The same six columns back to back (`6 · WIDTH` values; column `k` starts at
    /// `k · WIDTH`): what [`crate::bvh::traverse::TraversalRay::test_node`] reads.
    fn box_columns(&self) -> &[f32];
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Node4 {}
    impl Sealed for super::Node8 {}
    impl Sealed for super::Node16 {}
}

macro_rules! wide_node {
    ($name:ident, $w:literal, $lanes:ty, $bytes:literal, $align:literal, $doc:literal) => {
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
            /// Child references (see [`Child`]).
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
            #[inline(always)]
            fn leaf_bits(&self) -> u32 {
                // `LEAF_BIT` is the sign bit of the reference read as a float.
                const _: () = assert!(LEAF_BIT == 1 << 31);
                <$lanes>::new(bytemuck::cast(self.child)).to_bitmask()
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
            #[inline(always)]
            fn box_columns(&self) -> &[f32] {
                // `repr(C)` arrays of 4-byte values: the columns are contiguous, in order.
                &bytemuck::cast_slice::<Self, f32>(core::slice::from_ref(self))[..6 * $w]
            }
        }
    };
}

wide_node!(
    Node4,
    4,
    wide::f32x4,
    112,
    16,
    "A node with 4 children (112 bytes, 16-byte aligned: within 2 cache lines)."
);
wide_node!(
    Node8,
    8,
    wide::f32x8,
    224,
    32,
    "A node with 8 children (224 bytes, 32-byte aligned: within 4 cache lines)."
);

wide_node!(Node16, 16, wide::f32x16, 448, 64, "A node with 16 children (448 bytes, 64-byte aligned: 7 cache lines).");

/// A wide BVH: `root` is a child reference (a node, a leaf, or [`EMPTY_CHILD`] for no
/// primitives). Built by [`WideBvh::collapse`](crate::bvh::collapse).
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
    /// A tree over nothing.
    #[must_use]
    pub fn empty() -> Self {
        Self { nodes: Vec::new(), root: EMPTY_CHILD, bounds: Aabb::EMPTY }
    }
    /// Bytes of node data.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.nodes.len() * core::mem::size_of::<N>()
    }
    /// The level of the deepest node (the root node at 1; 0 when the root is a leaf or the
    /// tree is empty).
    #[must_use]
    pub fn node_depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self.root, 1usize)];
        while let Some((r, d)) = stack.pop() {
            if let Child::Node(i) = Child::decode(r) {
                deepest = deepest.max(d);
                if let Some(n) = self.nodes.get(i as usize) {
                    stack.extend(n.children().iter().map(|&c| (c, d + 1)));
                }
            }
        }
        deepest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar twin of `leaf_bits`: the slots whose reference has the top bit.
    fn leaf_bits_scalar<N: WideNode>(n: &N) -> u32 {
        n.children().iter().enumerate().map(|(i, &c)| u32::from(c & LEAF_BIT != 0) << i).sum()
    }

    fn leaf_bits_match_the_scalar_loop<N: WideNode>() {
        let mut rng = crate::rng::Rng::new(0x1eaf_b175);
        // Node indices, leaves at both ends of their range, the empty slot, and references
        // that read as NaN, infinity, zero and -0 when taken for floats.
        let special = [
            0,
            1,
            7,
            LEAF_BIT - 1,
            Child::leaf(0, 1),
            Child::leaf(5, 16),
            EMPTY_CHILD,
            0x7fc0_0000,
            0xff80_0000,
            0x8000_0000,
        ];
        let (mut leaves, mut nodes) = (0, 0);
        for round in 0..4000 {
            let mut n = N::empty();
            for i in 0..N::WIDTH {
                let r = if round % 2 == 0 {
                    special[rng.below(special.len() as u64) as usize]
                } else {
                    rng.next_u64() as u32
                };
                n.set(i, &Aabb::EMPTY, r);
            }
            let bits = n.leaf_bits();
            assert_eq!(bits, leaf_bits_scalar(&n), "children {:?}", n.children());
            leaves += bits.count_ones();
            nodes += N::WIDTH as u32 - bits.count_ones();
        }
        // Both kinds were met often (a no-op returning 0 or all ones fails above).
        assert!(leaves > 1000 && nodes > 1000, "{leaves} leaves, {nodes} nodes");
    }

    #[test]
    fn a_nodes_leaf_bits_are_its_references_top_bits() {
        leaf_bits_match_the_scalar_loop::<Node4>();
        leaf_bits_match_the_scalar_loop::<Node8>();
        let mut n = Node8::empty();
        n.set(2, &Aabb::EMPTY, Child::leaf(3, 4));
        n.set(5, &Aabb::EMPTY, 9);
        // Empty slots carry the bit too; the traversal masks them off with the hit bits.
        assert_eq!(n.leaf_bits(), 0b1101_1111);
    }

    #[test]
    fn child_references_round_trip_and_refuse_what_they_cannot_hold() {
        for (first, count) in [(0, 1), (5, 16), ((MAX_PRIMITIVES - 16) as u32, 16), ((MAX_PRIMITIVES - 1) as u32, 1)] {
            assert_eq!(Child::decode(Child::leaf(first, count)), Child::Leaf { first, count });
        }
        assert_eq!(Child::decode(7), Child::Node(7));
        assert_eq!(Child::decode(EMPTY_CHILD), Child::Empty);
        for (first, count) in [(0, 0), (0, 17), ((MAX_PRIMITIVES - 1) as u32, 2), (u32::MAX, 1)] {
            assert!(std::panic::catch_unwind(|| Child::leaf(first, count)).is_err(), "{first}+{count}");
        }
    }
}
