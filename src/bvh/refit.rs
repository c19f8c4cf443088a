//! Refitting: every box of a built tree recomputed bottom-up from new primitive boxes, with the
//! tree's shape (and so the primitives' leaf order) kept. What scenes use when geometry moves
//! ([`crate::Scene::update_triangles`] and friends): linear in the tree's size, many times
//! faster than a build, at the price of boxes that fit the moved primitives less well the
//! farther they moved (a rebuild gives the full quality back).

use super::node::{Child, EMPTY_CHILD, MAX_WIDTH, Node2, WideBvh, WideNode};
use crate::prim::Aabb;

/// Recomputes the boxes of the binary tree `nodes` from `boxes` (the primitives' boxes in leaf
/// order): a leaf gets the union of its primitives' boxes, an inner node the union of its two
/// children's.
///
/// # Panics
/// If a leaf's range lies outside `boxes` (a tree that does not belong to them).
pub fn refit_bvh2(nodes: &mut [Node2], boxes: &[Aabb]) {
    fn go(nodes: &mut [Node2], i: usize, boxes: &[Aabb]) -> Aabb {
        let n = nodes[i];
        let b = if n.is_leaf() {
            let (first, count) = (n.index as usize, n.count as usize);
            boxes[first..first + count].iter().fold(Aabb::EMPTY, |a, b| a.union(b))
        } else {
            let l = go(nodes, n.index as usize, boxes);
            let r = go(nodes, n.index as usize + 1, boxes);
            l.union(&r)
        };
        nodes[i].min = b.min.to_array();
        nodes[i].max = b.max.to_array();
        b
    }
    if !nodes.is_empty() {
        go(nodes, 0, boxes);
    }
}

/// Recomputes the child boxes of every node of the wide tree `bvh`, and its `bounds`, from
/// `boxes` (the primitives' boxes in leaf order).
///
/// # Panics
/// If a leaf's range lies outside `boxes`.
pub fn refit_wide<N: WideNode>(bvh: &mut WideBvh<N>, boxes: &[Aabb]) {
    fn go<N: WideNode>(nodes: &mut [N], r: u32, boxes: &[Aabb]) -> Aabb {
        match Child::decode(r) {
            Child::Empty => Aabb::EMPTY,
            Child::Leaf { first, count } => {
                boxes[first as usize..(first + count) as usize].iter().fold(Aabb::EMPTY, |a, b| a.union(b))
            }
            Child::Node(i) => {
                let i = i as usize;
                let mut kids = [EMPTY_CHILD; MAX_WIDTH];
                kids[..N::WIDTH].copy_from_slice(nodes[i].children());
                let mut all = Aabb::EMPTY;
                for (slot, &kid) in kids[..N::WIDTH].iter().enumerate() {
                    if kid == EMPTY_CHILD {
                        continue;
                    }
                    let b = go(nodes, kid, boxes);
                    nodes[i].set(slot, &b, kid);
                    all = all.union(&b);
                }
                all
            }
        }
    }
    bvh.bounds = go(&mut bvh.nodes, bvh.root, boxes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::{BuildOptions, build_trees, validate};
    use crate::rng::Rng;
    use glam::Vec3;

    fn random_boxes(rng: &mut Rng, n: usize) -> Vec<Aabb> {
        (0..n)
            .map(|_| {
                let c = rng.vec3(-10.0, 10.0);
                Aabb::new(c, c + rng.vec3(0.0, 1.0))
            })
            .collect()
    }

    #[test]
    fn refitted_trees_hold_the_moved_boxes_exactly() {
        let mut rng = Rng::new(3);
        for n in [1usize, 2, 7, 100, 3000] {
            let boxes = random_boxes(&mut rng, n);
            let mut trees = build_trees(&boxes, &BuildOptions::default()).unwrap();
            // Move every primitive somewhere else entirely (leaf order is kept).
            let leaf: Vec<Aabb> = trees.perm.iter().map(|&i| boxes[i as usize]).collect();
            let moved: Vec<Aabb> =
                leaf.iter().map(|b| Aabb::new(b.min * -2.0 - Vec3::X, b.max * -2.0 + Vec3::ONE)).collect();
            let moved: Vec<Aabb> = moved.iter().map(|b| Aabb::new(b.min.min(b.max), b.min.max(b.max))).collect();
            let identity: Vec<u32> = (0..n as u32).collect();
            // Before the refit the old boxes no longer contain the moved ones.
            let stale = crate::bvh::Bvh2 { nodes: trees.bvh2.clone(), perm: identity.clone() };
            assert!(n < 2 || validate::validate_bvh2(&stale, &moved).is_err());
            refit_bvh2(&mut trees.bvh2, &moved);
            refit_wide(&mut trees.bvh4, &moved);
            refit_wide(&mut trees.bvh8, &moved);
            let b2 = crate::bvh::Bvh2 { nodes: trees.bvh2.clone(), perm: identity };
            validate::validate_bvh2(&b2, &moved).unwrap();
            validate::validate_wide(&trees.bvh4, &moved).unwrap();
            validate::validate_wide(&trees.bvh8, &moved).unwrap();
            // Tight: the root is exactly the union.
            let all = moved.iter().fold(Aabb::EMPTY, |a, b| a.union(b));
            assert_eq!(trees.bvh2[0].aabb(), all);
            assert_eq!((trees.bvh4.bounds, trees.bvh8.bounds), (all, all));
        }
    }
}
