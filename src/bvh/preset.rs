//! Build settings: [`BuildOptions`], and the quality presets ([`Quality`]), each defined in
//! one place ([`BuildOptions::with_quality`]).

use super::node::MAX_BINARY_LEAF;

/// Build quality presets. Bin counts are per axis for large nodes: a node of `n` primitives
/// bins on at most `4 + n / 8` (see [`BuildOptions::bins`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Quality {
    /// 8 bins on the widest centroid axis, no reinsertion: the quickest build.
    Fast,
    /// 32 bins on all three axes, reinsertion of 10 % of the nodes in three rounds.
    #[default]
    Medium,
    /// 48 bins on all three axes, a costlier leaf (smaller leaves), reinsertion of 25 % of
    /// the nodes in eight rounds.
    High,
}

/// Builder settings. Start from a preset ([`BuildOptions::with_quality`]) and change fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildOptions {
    /// The preset these options started from.
    pub quality: Quality,
    /// Bins per axis of the binned SAH (at most 48). A node of `n` primitives bins on at
    /// most `4 + n / 8` (small nodes need fewer).
    pub bins: usize,
    /// Bin all three axes (else only the widest centroid axis).
    pub all_axes: bool,
    /// SAH price of a leaf per started pair of primitives, relative to a node visit.
    pub leaf_pair_cost: f32,
    /// Largest binary leaf (clamped to `1..=`[`MAX_BINARY_LEAF`]).
    pub max_leaf: usize,
    /// Subtrees with at least this many primitives are built in parallel with rayon, and
    /// nodes with at least twice as many (and at least 2,048) bin their two halves in
    /// parallel. The tree is the same for any number of threads, and for boxes without NaN
    /// whatever this value.
    pub parallel_threshold: usize,
    /// Reinsertion after the top-down build ([`crate::bvh::reinsert`]): the fraction of
    /// nodes, the largest first, that are cut out and put back where the tree's surface area
    /// drops most. 0 turns it off.
    pub reinsertion: f32,
    /// Reinsertion rounds (each takes a smaller share of the nodes).
    pub reinsertion_rounds: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self::with_quality(Quality::Medium)
    }
}

impl BuildOptions {
    /// The settings of a preset: the only place presets are defined.
    #[must_use]
    pub fn with_quality(quality: Quality) -> Self {
        let base = Self {
            quality,
            bins: 32,
            all_axes: true,
            leaf_pair_cost: 1.0,
            max_leaf: MAX_BINARY_LEAF,
            parallel_threshold: 4096,
            reinsertion: 0.1,
            reinsertion_rounds: 3,
        };
        match quality {
            Quality::Fast => Self { bins: 8, all_axes: false, reinsertion: 0.0, reinsertion_rounds: 0, ..base },
            Quality::Medium => base,
            Quality::High => Self { bins: 48, leaf_pair_cost: 1.25, reinsertion: 0.25, reinsertion_rounds: 8, ..base },
        }
    }
}
