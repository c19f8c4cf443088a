//! Bounding volume hierarchies, independent of scenes: a tree over boxes, built from boxes
//! only, and traversed through a caller's leaf callback.
//!
//! | file | owns |
//! |---|---|
//! | [`node`] | the shared types: binary and wide nodes, trees, child references, limits |
//! | [`preset`] | build settings and the quality presets |
//! | [`build`](mod@build) | binned SAH, top-down (Wald 2007) |
//! | [`reinsert`] | the reinsertion pass (Bittner et al. 2013, Meister & Bittner 2018) |
//! | [`collapse`] | binary → 4- or 8-wide by a SAH dynamic program (Ylitie et al. 2017) |
//! | [`validate`] | structural checks |
//! | [`traverse`] | traversal: slab tests, child order, stacks, single rays and packets |
//!
//! [`build_trees`] is the whole pipeline: binned SAH → reinsertion → collapse. The builder
//! sees only boxes and returns a permutation; the caller reorders its own primitives by it.

pub mod build;
pub mod collapse;
pub mod node;
pub mod preset;
pub mod refit;
pub mod reinsert;
pub mod traverse;
pub mod validate;

pub use node::{
    Bvh2, Child, EMPTY_CHILD, MAX_BINARY_LEAF, MAX_PRIMITIVES, MAX_WIDE_LEAF, Node2, Node4, Node8, Node16, STACK_DEPTH,
    WideBvh, WideNode,
};
pub use preset::{BuildOptions, Quality};
pub use validate::BvhError;

use crate::error::LimitError;
use crate::prim::Aabb;

/// A binary tree over `boxes`: binned SAH, then reinsertion as `opts` asks. The binary half
/// of [`build_trees`]; `boxes.len()` must be at most [`MAX_PRIMITIVES`] for the wide
/// collapse (see [`check_primitive_count`]).
#[must_use]
pub fn build(boxes: &[Aabb], opts: &BuildOptions) -> Bvh2 {
    let mut bvh = build::binned_sah(boxes, opts);
    if opts.reinsertion > 0.0 {
        reinsert::optimize(&mut bvh, opts.reinsertion, opts.reinsertion_rounds, STACK_DEPTH);
    }
    bvh
}

/// Every tree a query backend traverses, over one set of primitives.
#[derive(Clone, Debug)]
pub struct Trees {
    /// Leaf-order permutation: `perm[i]` is the input index of the `i`-th primitive.
    pub perm: Vec<u32>,
    /// The binary tree (scalar backend).
    pub bvh2: Vec<Node2>,
    /// The 4-wide tree (x4 backend).
    pub bvh4: WideBvh<Node4>,
    /// The 8-wide tree (x8 backend).
    pub bvh8: WideBvh<Node8>,
}

/// The build pipeline: binned SAH → reinsertion → collapse into 4- and 8-wide trees.
///
/// # Errors
/// [`LimitError::TooManyPrimitives`] above [`MAX_PRIMITIVES`] boxes.
pub fn build_trees(boxes: &[Aabb], opts: &BuildOptions) -> Result<Trees, LimitError> {
    check_primitive_count(boxes.len())?;
    let b2 = build(boxes, opts);
    let (bvh4, bvh8) = rayon::join(|| WideBvh::collapse(&b2), || WideBvh::collapse(&b2));
    Ok(Trees { perm: b2.perm, bvh2: b2.nodes, bvh4, bvh8 })
}

/// Fails when `n` primitives are more than one tree can index ([`MAX_PRIMITIVES`]).
///
/// # Errors
/// [`LimitError::TooManyPrimitives`].
pub fn check_primitive_count(n: usize) -> Result<(), LimitError> {
    if n > MAX_PRIMITIVES {
        return Err(LimitError::TooManyPrimitives { count: n, max: MAX_PRIMITIVES });
    }
    Ok(())
}
