//! Structural checks of a BVH ([`validate_bvh2`], [`validate_wide`]): parents contain their
//! children, every primitive is reachable exactly once, leaves are within size, and the depth
//! fits the traversal stack. Every tree a scene builds passes them (checked after each build
//! when `debug_assertions` are on, and by `Scene::validate`).

use super::node::{Bvh2, Child, MAX_BINARY_LEAF, MAX_WIDE_LEAF, STACK_DEPTH, WideBvh, WideNode};
use crate::prim::Aabb;

/// What a validation found wrong (the first problem met).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BvhError {
    /// The permutation does not have one entry per primitive.
    #[error("invalid BVH: the permutation has {entries} entries for {primitives} primitives")]
    PermutationLength {
        /// Entries in the permutation.
        entries: usize,
        /// Primitives.
        primitives: usize,
    },
    /// A permutation entry is out of range or repeated.
    #[error("invalid BVH: permutation entry {entry} is repeated or out of range")]
    PermutationEntry {
        /// The entry.
        entry: u32,
    },
    /// A tree over primitives has no nodes.
    #[error("invalid BVH: no nodes for {primitives} primitives")]
    NoNodes {
        /// Primitives.
        primitives: usize,
    },
    /// A node or child index points outside the node array.
    #[error("invalid BVH: node {node} is out of range")]
    NodeOutOfRange {
        /// The index.
        node: usize,
    },
    /// A leaf covers primitives past the end, or more than a leaf may hold.
    #[error("invalid BVH: a leaf covers {first}..{} of {primitives} primitives (at most {max} per leaf)", *first as u64 + *count as u64)]
    BadLeaf {
        /// First primitive.
        first: usize,
        /// Count.
        count: usize,
        /// Primitives in the tree.
        primitives: usize,
        /// Largest leaf allowed.
        max: usize,
    },
    /// A child box (or a leaf's primitive) sticks out of its parent's box.
    #[error("invalid BVH: node {node} does not contain its child {child}")]
    ChildNotContained {
        /// The parent node.
        node: usize,
        /// The child: a node index (binary), a slot (wide).
        child: usize,
    },
    /// A leaf's box does not contain one of its primitives (leaf order index).
    #[error("invalid BVH: primitive {primitive} is not inside its leaf's box")]
    PrimitiveNotContained {
        /// The primitive, in leaf order.
        primitive: usize,
    },
    /// An unused slot of a wide node has a non-empty box (traversal would enter it).
    #[error("invalid BVH: node {node} slot {slot} is empty but has a box")]
    EmptySlotWithBox {
        /// The node.
        node: usize,
        /// The slot.
        slot: usize,
    },
    /// A primitive is not reachable from the root.
    #[error("invalid BVH: primitive {primitive} is not reachable")]
    MissingPrimitive {
        /// The primitive, in leaf order.
        primitive: usize,
    },
    /// A primitive is reachable more than once.
    #[error("invalid BVH: primitive {primitive} is reachable {times} times")]
    DuplicatePrimitive {
        /// The primitive, in leaf order.
        primitive: usize,
        /// How often.
        times: u32,
    },
    /// The tree is deeper than the traversal stack allows.
    #[error("invalid BVH: depth {depth} exceeds the traversal stack ({max})")]
    TooDeep {
        /// The depth found (counted until it exceeded `max`).
        depth: usize,
        /// [`STACK_DEPTH`].
        max: usize,
    },
}

fn contains(outer: &Aabb, inner: &Aabb) -> bool {
    outer.min.cmple(inner.min).all() && inner.max.cmple(outer.max).all()
}

/// Every primitive reached exactly once.
fn check_coverage(covered: &[u32]) -> Result<(), BvhError> {
    match covered.iter().position(|&c| c != 1) {
        None => Ok(()),
        Some(k) if covered[k] == 0 => Err(BvhError::MissingPrimitive { primitive: k }),
        Some(k) => Err(BvhError::DuplicatePrimitive { primitive: k, times: covered[k] }),
    }
}

/// Marks a leaf's primitives as reached and checks they lie in `bounds`.
fn visit_leaf(
    first: usize,
    count: usize,
    max: usize,
    bounds: &Aabb,
    boxes: &[Aabb],
    order: impl Fn(usize) -> usize,
    covered: &mut [u32],
) -> Result<(), BvhError> {
    let primitives = boxes.len();
    if count > max || first.checked_add(count).is_none_or(|end| end > primitives) {
        return Err(BvhError::BadLeaf { first, count, primitives, max });
    }
    for k in first..first + count {
        covered[k] += 1;
        if !contains(bounds, &boxes[order(k)]) {
            return Err(BvhError::PrimitiveNotContained { primitive: k });
        }
    }
    Ok(())
}

/// Checks a binary BVH against the primitive boxes it was built from (in input order).
/// Returns the depth.
pub fn validate_bvh2(b: &Bvh2, boxes: &[Aabb]) -> Result<usize, BvhError> {
    if b.perm.len() != boxes.len() {
        return Err(BvhError::PermutationLength { entries: b.perm.len(), primitives: boxes.len() });
    }
    let mut seen = vec![false; boxes.len()];
    for &p in &b.perm {
        if p as usize >= boxes.len() || std::mem::replace(&mut seen[p as usize], true) {
            return Err(BvhError::PermutationEntry { entry: p });
        }
    }
    if b.nodes.is_empty() {
        return if boxes.is_empty() { Ok(0) } else { Err(BvhError::NoNodes { primitives: boxes.len() }) };
    }
    let mut covered = vec![0u32; boxes.len()];
    let mut stack = vec![(0usize, 1usize)];
    let mut max_depth = 0;
    while let Some((i, depth)) = stack.pop() {
        max_depth = max_depth.max(depth);
        if max_depth > STACK_DEPTH {
            // Also stops a cycle of child links from running forever.
            return Err(BvhError::TooDeep { depth: max_depth, max: STACK_DEPTH });
        }
        let n = b.nodes.get(i).ok_or(BvhError::NodeOutOfRange { node: i })?;
        if n.is_leaf() {
            let (s, c) = (n.index as usize, n.count as usize);
            visit_leaf(s, c, MAX_BINARY_LEAF, &n.aabb(), boxes, |k| b.perm[k] as usize, &mut covered)?;
        } else {
            for c in [n.index as usize, n.index as usize + 1] {
                let child = b.nodes.get(c).ok_or(BvhError::NodeOutOfRange { node: c })?;
                if !contains(&n.aabb(), &child.aabb()) {
                    return Err(BvhError::ChildNotContained { node: i, child: c });
                }
                stack.push((c, depth + 1));
            }
        }
    }
    check_coverage(&covered)?;
    Ok(max_depth)
}

/// Checks a wide BVH against the permuted primitive boxes (`boxes[k]` is the box of the
/// `k`-th primitive in leaf order). Returns the depth.
pub fn validate_wide<N: WideNode>(b: &WideBvh<N>, boxes: &[Aabb]) -> Result<usize, BvhError> {
    let mut covered = vec![0u32; boxes.len()];
    let mut max_depth = 0;
    let mut stack = vec![(b.root, b.bounds, 1usize)];
    while let Some((r, parent_box, depth)) = stack.pop() {
        match Child::decode(r) {
            Child::Empty => continue,
            Child::Leaf { first, count } => {
                let max = MAX_WIDE_LEAF as usize;
                visit_leaf(first as usize, count as usize, max, &parent_box, boxes, |k| k, &mut covered)?;
            }
            Child::Node(i) => {
                let n = b.nodes.get(i as usize).ok_or(BvhError::NodeOutOfRange { node: i as usize })?;
                for (slot, &c) in n.children().iter().enumerate() {
                    let cb = n.child_aabb(slot);
                    if c == crate::bvh::node::EMPTY_CHILD {
                        if cb.min.x <= cb.max.x {
                            return Err(BvhError::EmptySlotWithBox { node: i as usize, slot });
                        }
                        continue;
                    }
                    if !contains(&parent_box, &cb) {
                        return Err(BvhError::ChildNotContained { node: i as usize, child: slot });
                    }
                    stack.push((c, cb, depth + 1));
                }
            }
        }
        max_depth = max_depth.max(depth);
        if max_depth > STACK_DEPTH {
            return Err(BvhError::TooDeep { depth: max_depth, max: STACK_DEPTH });
        }
    }
    if b.root == crate::bvh::node::EMPTY_CHILD {
        max_depth = 0;
    }
    check_coverage(&covered)?;
    Ok(max_depth)
}
