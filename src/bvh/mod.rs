//! Bounding volume hierarchies: a binned-SAH builder that sees only primitive boxes and
//! returns a binary tree plus a permutation ([`build()`]), its collapse into wide trees of 4
//! and 8 children with child boxes stored SoA ([`wide`]), and a validator ([`validate`]).
//!
//! Node and leaf types are `#[repr(C)]` + `bytemuck::Pod`, with their sizes asserted at
//! compile time.

pub mod build;
pub mod reinsert;
pub mod validate;
pub mod wide;

pub use build::{BuildOptions, Bvh2, Node2, Quality, build};
pub use wide::{EMPTY_CHILD, Node4, Node8, WideBvh, WideNode};

/// Largest number of primitives in one leaf (one 8-lane block).
pub const MAX_LEAF: usize = 8;
/// Traversal stack depth every tree is built to fit (checked by `validate`).
pub const STACK_DEPTH: usize = 128;
