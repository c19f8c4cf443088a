//! Structural checks of a BVH: parents contain their children, every primitive is reachable
//! exactly once, leaves are within size, and the depth fits the traversal stack.

use super::STACK_DEPTH;
use super::build::Bvh2;
use super::wide::{EMPTY_CHILD, WideBvh, WideNode, decode};
use crate::prim::Aabb;

/// What `validate` found wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BvhError(pub String);

impl core::fmt::Display for BvhError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "invalid BVH: {}", self.0)
    }
}

impl std::error::Error for BvhError {}

fn contains(outer: &Aabb, inner: &Aabb) -> bool {
    outer.min.cmple(inner.min).all() && inner.max.cmple(outer.max).all()
}

fn err<T>(msg: String) -> Result<T, BvhError> {
    Err(BvhError(msg))
}

/// Checks a binary BVH against the primitive boxes it was built from (in input order).
pub fn validate_bvh2(b: &Bvh2, boxes: &[Aabb]) -> Result<usize, BvhError> {
    if b.perm.len() != boxes.len() {
        return err(format!("permutation has {} entries for {} primitives", b.perm.len(), boxes.len()));
    }
    let mut seen = vec![false; boxes.len()];
    for &p in &b.perm {
        if p as usize >= boxes.len() || std::mem::replace(&mut seen[p as usize], true) {
            return err(format!("permutation entry {p} repeated or out of range"));
        }
    }
    if b.nodes.is_empty() {
        return if boxes.is_empty() { Ok(0) } else { err("no nodes for a non-empty set".into()) };
    }
    let mut covered = vec![0u32; boxes.len()];
    let mut stack = vec![(0usize, 1usize)];
    let mut max_depth = 0;
    while let Some((i, depth)) = stack.pop() {
        max_depth = max_depth.max(depth);
        let n = b.nodes.get(i).ok_or_else(|| BvhError(format!("node {i} out of range")))?;
        if n.is_leaf() {
            let (s, c) = (n.index as usize, n.count as usize);
            if s + c > boxes.len() || c > super::MAX_LEAF.max(1) * 2 {
                return err(format!("leaf {i} covers {s}..{} of {}", s + c, boxes.len()));
            }
            for k in s..s + c {
                covered[k] += 1;
                if !contains(&n.aabb(), &boxes[b.perm[k] as usize]) {
                    return err(format!("leaf {i} does not contain primitive {}", b.perm[k]));
                }
            }
        } else {
            for c in [n.index as usize, n.index as usize + 1] {
                let child = b.nodes.get(c).ok_or_else(|| BvhError(format!("child {c} of node {i} out of range")))?;
                if !contains(&n.aabb(), &child.aabb()) {
                    return err(format!("node {i} does not contain child {c}"));
                }
                stack.push((c, depth + 1));
            }
        }
    }
    if let Some(k) = covered.iter().position(|&c| c != 1) {
        return err(format!("permuted primitive {k} is reachable {} times", covered[k]));
    }
    if max_depth > STACK_DEPTH {
        return err(format!("depth {max_depth} exceeds the traversal stack ({STACK_DEPTH})"));
    }
    Ok(max_depth)
}

/// Checks a wide BVH against the permuted primitive boxes (`boxes[k]` is the box of the
/// `k`-th primitive in leaf order). Returns the depth.
pub fn validate_wide<N: WideNode>(b: &WideBvh<N>, boxes: &[Aabb]) -> Result<usize, BvhError> {
    let mut covered = vec![0u32; boxes.len()];
    let mut max_depth = 0;
    if b.root != EMPTY_CHILD {
        let mut stack = vec![(b.root, b.bounds, 1usize)];
        while let Some((r, parent, depth)) = stack.pop() {
            max_depth = max_depth.max(depth);
            match decode(r) {
                Err((s, c)) => {
                    let (s, c) = (s as usize, c as usize);
                    if s + c > boxes.len() {
                        return err(format!("leaf {s}+{c} past {} primitives", boxes.len()));
                    }
                    for k in s..s + c {
                        covered[k] += 1;
                        if !contains(&parent, &boxes[k]) {
                            return err(format!("leaf box does not contain primitive {k}"));
                        }
                    }
                }
                Ok(i) => {
                    let n = b.nodes.get(i as usize).ok_or_else(|| BvhError(format!("node {i} out of range")))?;
                    for (slot, &c) in n.children().iter().enumerate() {
                        let cb = n.child_aabb(slot);
                        if c == EMPTY_CHILD {
                            if cb.min.x <= cb.max.x {
                                return err(format!("node {i} slot {slot} is empty but has a box"));
                            }
                            continue;
                        }
                        if !contains(&parent, &cb) {
                            return err(format!("node {i} slot {slot} sticks out of its parent"));
                        }
                        stack.push((c, cb, depth + 1));
                    }
                }
            }
        }
    }
    if let Some(k) = covered.iter().position(|&c| c != 1) {
        return err(format!("primitive {k} is reachable {} times", covered[k]));
    }
    if max_depth > STACK_DEPTH {
        return err(format!("depth {max_depth} exceeds the traversal stack ({STACK_DEPTH})"));
    }
    Ok(max_depth)
}
