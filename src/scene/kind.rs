//! The primitive kinds a scene puts in BVHs (triangles, spheres, boxes), each with its leaf
//! kernels and normal, the rays as the leaf kernels take them ([`LeafRay`]), and
//! [`KindBvh`]: one kind's primitives in leaf order with their binary, 4-wide and 8-wide
//! trees.

use super::TriangleTest;
use crate::bvh::{self, BuildOptions, BvhError, Node2, Node4, Node8, Node16, WideBvh};
use crate::error::LimitError;
use crate::kernel::watertight::{self, ShearedLanes, ShearedRay};
use crate::kernel::{ray_aabb, ray_sphere, ray_triangle};
use crate::lanes::{F32x8, Lanes, Mask};
use crate::prim::{Aabb, Primitive, Soa, Sphere, Triangle, TriangleLanes};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;
use glam::Vec3;
use std::sync::OnceLock;

/// One valid ray prepared for every kind's leaf kernels: broadcast to all lanes, and set up
/// for the watertight triangle test.
#[derive(Clone, Copy, Debug)]
pub struct LeafRay<L: Lanes> {
    /// The ray in every lane.
    pub packet: RayPacket<L>,
    /// The ray's watertight set-up.
    pub sheared: ShearedRay,
    /// The ray's `t_min`.
    pub t_min: f32,
    /// The scene's triangle test.
    pub test: TriangleTest,
}

impl<L: Lanes> LeafRay<L> {
    /// Prepares a ray; `None` if it is invalid.
    pub fn new(ray: &Ray, test: TriangleTest) -> Option<Self> {
        ray.is_valid().then(|| Self::new_valid(ray, test))
    }
    /// Prepares a ray already known to be valid (the watertight set-up only when `test`
    /// uses it).
    #[inline(always)]
    pub fn new_valid(ray: &Ray, test: TriangleTest) -> Self {
        let sheared = match test {
            TriangleTest::Watertight => ShearedRay::of_valid(ray),
            TriangleTest::MollerTrumbore => {
                ShearedRay { origin: ray.origin, axes: [0, 1, 2], shear: glam::Vec3::ONE, origin_in_axes: ray.origin }
            }
        };
        Self { packet: RayPacket::splat_valid(ray), sheared, t_min: ray.t_min, test }
    }
}

/// `N` rays prepared for the leaf kernels of a packet traversal (one primitive against all
/// lanes at a time).
#[derive(Clone, Copy, Debug)]
pub struct LeafPacket<L: Lanes> {
    /// The rays with their watertight set-up (`rays.rays` is the packet).
    pub rays: ShearedLanes<L>,
    /// The scene's triangle test.
    pub test: TriangleTest,
}

/// A shape kind a scene puts in a BVH: [`Triangle`], [`Sphere`] and [`Aabb`] (sealed, as
/// [`Primitive`] is). To put your own primitives in a tree, use [`crate::bvh::build_trees`]
/// and [`crate::bvh::traverse`] directly.
pub trait Traceable: Primitive + Send + Sync + 'static {
    /// Which kind (used in hit bookkeeping).
    const KIND: u8;
    /// The exact bounding box (what [`super::Scene::bounds`] reports).
    fn exact_bounds(&self) -> Aabb;
    /// The box the BVH keeps: the exact one, widened where the kind's test can report a hit
    /// slightly outside it (triangles, [`watertight::traversal_bounds`]).
    fn bounds(&self) -> Aabb {
        self.exact_bounds()
    }
    /// Scalar reference hit of a valid ray (`sheared` is its set-up): `(t, u, v)`.
    fn hit_scalar(&self, ray: &Ray, sheared: &ShearedRay, test: TriangleTest) -> Option<(f32, f32, f32)>;
    /// One ray against primitives `i..i + N` of `prims` (lanes outside `active` miss), in
    /// `[ray.t_min, t_max]`: `(mask, t, u, v)`.
    fn hit_one<L: Lanes>(
        ray: &LeafRay<L>,
        t_max: f32,
        prims: &Soa<Self>,
        i: usize,
        active: L::Mask,
    ) -> (L::Mask, L, L, L);
    /// One ray against primitives `i..i + 8` of `prims` on 8 lanes (lanes outside the
    /// bitmask `active` miss), in `[ray.t_min, t_max]`: `(hit bits, t, u, v)`, as
    /// [`Traceable::hit_one`] on [`F32x8`]. `None` where the kind has no such test (then the
    /// caller tests the block on its own lanes). The 16-lane traversal tests leaves of at
    /// most 8 primitives with it: Zen 4 runs a 512-bit operation on both halves of its
    /// 256-bit units, so half the lanes take about half the time (ARCHITECTURE.md).
    #[inline(always)]
    fn hit_one_narrow<L: Lanes>(
        _ray: &LeafRay<L>,
        _t_max: f32,
        _prims: &Soa<Self>,
        _i: usize,
        _active: u32,
    ) -> Option<(u32, F32x8, F32x8, F32x8)> {
        None
    }
    /// `N` rays against one primitive in every lane: `(mask, t, u, v)`.
    fn hit_packet<L: Lanes>(rays: &LeafPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L);
    /// Unit geometric normal where `ray` meets the primitive at `t` (barycentrics `u, v` for
    /// triangles). Shapes whose normal depends on the point take it as their centre's offset
    /// `(origin − centre) + t·dir`, not from the rounded point `origin + t·dir`: that point
    /// rounds at the size of the coordinates, a large part of a small shape far from the
    /// world's origin.
    fn normal_at(&self, ray: &Ray, t: f32, u: f32, v: f32) -> Vec3;
}

/// The broadcast ray of `ray` with interval end `t_max` and lanes `active`.
#[inline(always)]
fn one_ray_packet<L: Lanes>(ray: &LeafRay<L>, t_max: f32, active: L::Mask) -> RayPacket<L> {
    let mut p = ray.packet;
    p.t_max = L::splat(t_max);
    p.restrict(active);
    p
}

impl Traceable for Triangle {
    const KIND: u8 = 0;
    fn exact_bounds(&self) -> Aabb {
        self.aabb()
    }
    /// Widened for the watertight test's rounding ([`watertight::traversal_bounds`]); used
    /// for Möller–Trumbore scenes too, so both tests build the same trees.
    fn bounds(&self) -> Aabb {
        watertight::traversal_bounds(self)
    }
    #[inline(always)]
    fn hit_scalar(&self, ray: &Ray, sheared: &ShearedRay, test: TriangleTest) -> Option<(f32, f32, f32)> {
        match test {
            TriangleTest::Watertight => watertight::intersect_sheared(sheared, ray.t_min, ray.t_max, self),
            TriangleTest::MollerTrumbore => ray_triangle::intersect_scalar(ray, self),
        }
        .map(|h| (h.t, h.u, h.v))
    }
    /// The watertight test on 8 lanes (Möller–Trumbore scenes keep their own lanes).
    #[inline(always)]
    fn hit_one_narrow<L: Lanes>(
        ray: &LeafRay<L>,
        t_max: f32,
        prims: &Soa<Self>,
        i: usize,
        active: u32,
    ) -> Option<(u32, F32x8, F32x8, F32x8)> {
        if ray.test != TriangleTest::Watertight {
            return None;
        }
        let tri = prims.triangle_lanes_in::<F32x8>(i, ray.sheared.axes);
        let active = <F32x8 as Lanes>::Mask::from_bitmask(active);
        let (m, t, u, v) = watertight::intersect_lanes_one_ray(&ray.sheared, ray.t_min, t_max, &tri, active);
        Some((m.bitmask(), t, u, v))
    }
    /// With Möller–Trumbore, scenes keep degenerate triangles out of their BVHs, so the
    /// degeneracy test is skipped here.
    #[inline(always)]
    fn hit_one<L: Lanes>(
        ray: &LeafRay<L>,
        t_max: f32,
        prims: &Soa<Self>,
        i: usize,
        active: L::Mask,
    ) -> (L::Mask, L, L, L) {
        match ray.test {
            TriangleTest::Watertight => {
                let tri = prims.triangle_lanes_in::<L>(i, ray.sheared.axes);
                watertight::intersect_lanes_one_ray(&ray.sheared, ray.t_min, t_max, &tri, active)
            }
            TriangleTest::MollerTrumbore => {
                ray_triangle::intersect_lanes_solid(&one_ray_packet(ray, t_max, active), &prims.lanes::<L>(i))
            }
        }
    }
    #[inline(always)]
    fn hit_packet<L: Lanes>(rays: &LeafPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L) {
        match rays.test {
            TriangleTest::Watertight => watertight::intersect_lanes(&rays.rays, p),
            TriangleTest::MollerTrumbore => ray_triangle::intersect_lanes_solid(&rays.rays.rays, p),
        }
    }
    /// [`Triangle::normal`].
    #[inline]
    fn normal_at(&self, _ray: &Ray, _t: f32, _u: f32, _v: f32) -> Vec3 {
        self.normal()
    }
}

/// [`Triangle::normal`] of `N` triangles at once, lane for lane the same values (the same
/// operations in the same order: `s = e1 × e2`, `|s|²`, `s · (1 / √|s|²)`), in the lanes of
/// the returned mask: those where `f32::MIN_POSITIVE ≤ |s|² < ∞`. The other lanes (whose
/// normal `Triangle::normal` works out in f64) must take the scalar path.
#[inline(always)]
pub(crate) fn unit_normals<L: Lanes>(tri: &TriangleLanes<L>) -> (Vec3x<L>, L::Mask) {
    let s = (tri.v1 - tri.v0).cross(tri.v2 - tri.v0);
    let l2 = s.dot(s);
    let usable = L::splat(f32::MIN_POSITIVE).le(l2) & l2.lt(L::splat(f32::INFINITY));
    (s.scale(L::splat(1.0) / l2.sqrt()), usable)
}

impl Traceable for Sphere {
    const KIND: u8 = 1;
    fn exact_bounds(&self) -> Aabb {
        self.aabb()
    }
    #[inline(always)]
    fn hit_scalar(&self, ray: &Ray, _: &ShearedRay, _: TriangleTest) -> Option<(f32, f32, f32)> {
        ray_sphere::intersect_scalar(ray, self).map(|t| (t, 0.0, 0.0))
    }
    #[inline(always)]
    fn hit_one<L: Lanes>(
        ray: &LeafRay<L>,
        t_max: f32,
        prims: &Soa<Self>,
        i: usize,
        active: L::Mask,
    ) -> (L::Mask, L, L, L) {
        let (m, t) = ray_sphere::intersect_lanes(&one_ray_packet(ray, t_max, active), &prims.lanes::<L>(i));
        (m, t, L::splat(0.0), L::splat(0.0))
    }
    #[inline(always)]
    fn hit_packet<L: Lanes>(rays: &LeafPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L) {
        let (m, t) = ray_sphere::intersect_lanes(&rays.rays.rays, p);
        (m, t, L::splat(0.0), L::splat(0.0))
    }
    fn normal_at(&self, ray: &Ray, t: f32, _u: f32, _v: f32) -> Vec3 {
        ((ray.origin - self.center) + ray.dir * t).normalize_or_zero()
    }
}

impl Traceable for Aabb {
    const KIND: u8 = 2;
    fn exact_bounds(&self) -> Aabb {
        *self
    }
    #[inline(always)]
    fn hit_scalar(&self, ray: &Ray, _: &ShearedRay, _: TriangleTest) -> Option<(f32, f32, f32)> {
        ray_aabb::intersect_scalar(ray, self).map(|(t, _)| (t, 0.0, 0.0))
    }
    #[inline(always)]
    fn hit_one<L: Lanes>(
        ray: &LeafRay<L>,
        t_max: f32,
        prims: &Soa<Self>,
        i: usize,
        active: L::Mask,
    ) -> (L::Mask, L, L, L) {
        let (m, t, _) = ray_aabb::intersect_lanes(&one_ray_packet(ray, t_max, active), &prims.lanes::<L>(i));
        (m, t, L::splat(0.0), L::splat(0.0))
    }
    #[inline(always)]
    fn hit_packet<L: Lanes>(rays: &LeafPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L) {
        let (m, t, _) = ray_aabb::intersect_lanes(&rays.rays.rays, p);
        (m, t, L::splat(0.0), L::splat(0.0))
    }
    /// The normal of the face the point lies on (the axis where the point is farthest out
    /// relative to the half extent).
    fn normal_at(&self, ray: &Ray, t: f32, _u: f32, _v: f32) -> Vec3 {
        let d = (ray.origin - self.center()) + ray.dir * t;
        let h = self.half_extents();
        let mut best = (0usize, f32::NEG_INFINITY);
        for i in 0..3 {
            let r = if h[i] > 0.0 { d[i].abs() / h[i] } else { f32::INFINITY };
            if r > best.1 {
                best = (i, r);
            }
        }
        let mut n = Vec3::ZERO;
        n[best.0] = if d[best.0] < 0.0 { -1.0 } else { 1.0 };
        n
    }
}

/// One kind's primitives in BVH leaf order, their ids, and the trees over them: the binary
/// tree and the wide tree the default backend walks from the build (16-wide where
/// `Backend::Auto` resolves to `X16`, on AVX-512 builds; 8-wide otherwise), and the other
/// wide trees made from the binary one the first time they are asked for
/// ([`KindBvh::bvh4`], [`KindBvh::bvh8`], [`KindBvh::bvh16`]).
#[derive(Clone, Debug)]
pub struct KindBvh<P: Traceable> {
    /// Primitives in leaf order.
    pub prims: Soa<P>,
    /// `[geom, prim]` of each primitive in leaf order.
    pub ids: Vec<[u32; 2]>,
    /// Binary tree (used by the scalar backend).
    pub bvh2: Vec<Node2>,
    /// 4-wide tree (x4 backend), made on first use.
    bvh4: OnceLock<WideBvh<Node4>>,
    /// 8-wide tree (x8 backend, and packets, closest points and sweeps on x16), made by the
    /// build where `Auto` resolves to `X8` or `X4`, else on first use.
    bvh8: OnceLock<WideBvh<Node8>>,
    /// 16-wide tree (x16 backend), made by the build where `Auto` resolves to `X16`, else on
    /// first use; `None` when it is too deep for a traversal stack
    /// ([`bvh::traverse::fits_stack`]).
    bvh16: OnceLock<Option<WideBvh<Node16>>>,
    /// Exact box of the primitives ([`Traceable::exact_bounds`]; the trees' boxes may be
    /// wider).
    pub bounds: Aabb,
}

impl<P: Traceable> Default for KindBvh<P> {
    fn default() -> Self {
        Self {
            prims: Soa::default(),
            ids: Vec::new(),
            bvh2: Vec::new(),
            bvh4: OnceLock::new(),
            bvh8: OnceLock::new(),
            bvh16: OnceLock::new(),
            bounds: Aabb::EMPTY,
        }
    }
}

impl<P: Traceable> KindBvh<P> {
    /// Builds the trees over `prims` with ids `ids` (the same length). The primitives must
    /// be valid (as [`super::SceneBuilder`] ensures); with Möller–Trumbore, triangles must also
    /// be non-degenerate.
    ///
    /// # Errors
    /// [`LimitError::TooManyPrimitives`] past [`bvh::MAX_PRIMITIVES`].
    ///
    /// # Panics
    /// If `prims` and `ids` differ in length.
    pub fn build(prims: Vec<P>, ids: Vec<[u32; 2]>, opts: &BuildOptions) -> Result<Self, LimitError> {
        assert_eq!(prims.len(), ids.len(), "one id pair per primitive");
        bvh::check_primitive_count(prims.len())?;
        // In tasks of the builder's parallel threshold, as the builder splits its own work.
        let boxes: Vec<Aabb> = {
            use rayon::prelude::*;
            prims.par_iter().with_min_len(opts.parallel_threshold.max(1)).map(|p| p.bounds()).collect()
        };
        let exact = || prims.iter().fold(Aabb::EMPTY, |b, p| b.union(&p.exact_bounds()));
        let (b2, bounds) = rayon::join(|| bvh::build(&boxes, opts), exact);
        drop(boxes);
        let reorder = || {
            let mut soa = Soa::default();
            soa.reserve(prims.len());
            // The gather through the permutation misses the cache at every step: hinting
            // 16 steps ahead halves its share of a one-thread sponza build (perf samples,
            // 7.9-8.7 % -> 4.2-4.3 %).
            let perm = &b2.perm;
            let ahead = |j: usize| {
                if let Some(&k) = perm.get(j + 16) {
                    crate::lanes::prefetch_line(&prims[k as usize]);
                    crate::lanes::prefetch_line(&ids[k as usize]);
                }
            };
            soa.extend(perm.iter().enumerate().map(|(j, &i)| {
                ahead(j);
                prims[i as usize]
            }));
            (soa, perm.iter().map(|&i| ids[i as usize]).collect())
        };
        // The wide tree the default backend walks (`Auto` resolves to `X16` on AVX-512
        // builds); the other is made when a query first needs it.
        let wide = || {
            if crate::Backend::Auto.resolve() == crate::Backend::X16 {
                (OnceLock::new(), OnceLock::from(Self::fitting16(&b2.nodes)))
            } else {
                (OnceLock::from(WideBvh::collapse(&b2)), OnceLock::new())
            }
        };
        let ((bvh8, bvh16), (soa, ids)) = rayon::join(wide, reorder);
        let kb = Self { prims: soa, ids, bvh2: b2.nodes, bvh4: OnceLock::new(), bvh8, bvh16, bounds };
        #[cfg(debug_assertions)]
        if let Err(e) = kb.validate() {
            panic!("a freshly built BVH failed validation: {e}");
        }
        Ok(kb)
    }
    /// Number of primitives.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// Boxes of the primitives in leaf order.
    pub fn leaf_boxes(&self) -> Vec<Aabb> {
        (0..self.len()).map(|i| self.prims.get(i).bounds()).collect()
    }
    /// Checks the binary and 8-wide trees, and the 4-wide tree once it has been made (checking
    /// does not make it; see [`crate::bvh::validate`]); returns the binary depth.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<usize, BvhError> {
        let boxes = self.leaf_boxes();
        let b2 = bvh::Bvh2 { nodes: self.bvh2.clone(), perm: (0..self.len() as u32).collect() };
        let d = bvh::validate::validate_bvh2(&b2, &boxes)?;
        if let Some(bvh4) = self.bvh4.get() {
            bvh::validate::validate_wide(bvh4, &boxes)?;
        }
        if let Some(bvh8) = self.bvh8.get() {
            bvh::validate::validate_wide(bvh8, &boxes)?;
        }
        if let Some(Some(bvh16)) = self.bvh16.get() {
            bvh::validate::validate_wide(bvh16, &boxes)?;
        }
        Ok(d)
    }
    /// The 8-wide tree, made by the build or collapsed from the binary tree on the first call.
    pub fn bvh8(&self) -> &WideBvh<Node8> {
        self.bvh8.get_or_init(|| WideBvh::collapse_nodes(&self.bvh2))
    }
    /// 8-wide nodes once the 8-wide tree has been made (0 before).
    pub fn nodes8(&self) -> usize {
        self.bvh8.get().map_or(0, |t| t.nodes.len())
    }
    /// The 8-wide tree when it has been made, for refitting it in place.
    pub(crate) fn bvh8_mut(&mut self) -> Option<&mut WideBvh<Node8>> {
        self.bvh8.get_mut()
    }
    /// The 4-wide tree, collapsed from the binary tree on the first call.
    pub fn bvh4(&self) -> &WideBvh<Node4> {
        self.bvh4.get_or_init(|| WideBvh::collapse_nodes(&self.bvh2))
    }
    /// The 16-wide tree, made by the build or collapsed from the binary tree on the first
    /// call; `None` when its nodes lie too deep for a traversal stack
    /// ([`bvh::traverse::fits_stack`]), which the x16 backend then answers with the 8-wide
    /// tree.
    pub fn bvh16(&self) -> Option<&WideBvh<Node16>> {
        self.bvh16.get_or_init(|| Self::fitting16(&self.bvh2)).as_ref()
    }
    /// The 16-wide collapse of `bvh2`, if it fits a traversal stack.
    fn fitting16(bvh2: &[Node2]) -> Option<WideBvh<Node16>> {
        let tree = WideBvh::collapse_nodes(bvh2);
        bvh::traverse::fits_stack(16, tree.node_depth()).then_some(tree)
    }
    /// The 4-wide tree when it has been made, for refitting it in place.
    pub(crate) fn bvh4_mut(&mut self) -> Option<&mut WideBvh<Node4>> {
        self.bvh4.get_mut()
    }
    /// The 16-wide tree when it has been made, for refitting it in place.
    pub(crate) fn bvh16_mut(&mut self) -> Option<&mut WideBvh<Node16>> {
        self.bvh16.get_mut().and_then(Option::as_mut)
    }
    /// Bytes used by the 16-wide traversal once its tree has been made (when it falls back
    /// to the 8-wide tree, that tree's once made): nodes, primitives and ids; `None` before.
    pub fn bytes_x16(&self) -> Option<usize> {
        let tree = match self.bvh16.get()? {
            Some(t) => t.bytes(),
            None => self.bvh8.get()?.bytes(),
        };
        Some(tree + self.leaf_bytes())
    }
    /// Bytes used by the 8-wide traversal once its tree has been made: nodes, primitives and
    /// ids; `None` before.
    pub fn bytes_x8(&self) -> Option<usize> {
        Some(self.bvh8.get()?.bytes() + self.leaf_bytes())
    }
    /// Bytes of everything kept (the trees made so far, primitives, ids).
    pub fn bytes_total(&self) -> usize {
        self.bvh2.len() * core::mem::size_of::<Node2>()
            + self.bvh4.get().map_or(0, WideBvh::bytes)
            + self.bvh8.get().map_or(0, WideBvh::bytes)
            + self.bvh16.get().and_then(Option::as_ref).map_or(0, WideBvh::bytes)
            + self.leaf_bytes()
    }
    /// Bytes of what every traversal reads besides its tree: the primitives' columns and ids.
    fn leaf_bytes(&self) -> usize {
        self.prims.padded_len() * P::COLUMNS * 4 + self.ids.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replaces `kb`'s binary tree by a chain as deep as it has primitives (inner node `k`:
    /// leaf `k` on the left, the rest on the right), and forgets its 16-wide tree.
    fn make_chain(kb: &mut KindBvh<Aabb>) {
        let leaf = kb.leaf_boxes();
        let n = leaf.len();
        let span = |k: usize| leaf[k..].iter().fold(Aabb::EMPTY, |a, b| a.union(b));
        let node = |b: Aabb, count: u32, index: usize| Node2 {
            min: b.min.into(),
            count,
            max: b.max.into(),
            index: index as u32,
        };
        let mut nodes = vec![node(Aabb::EMPTY, 1, 0); 2 * n - 1];
        let mut at = 0;
        for k in 0..n - 1 {
            nodes[at] = node(span(k), 0, 2 * k + 1);
            nodes[2 * k + 1] = node(leaf[k], 1, k);
            at = 2 * k + 2;
        }
        nodes[at] = node(leaf[n - 1], 1, n - 1);
        kb.bvh2 = nodes;
        kb.bvh16 = OnceLock::new();
    }

    /// A 16-wide tree too deep for a traversal stack is not kept, and the x16 backend answers
    /// with the 8-wide tree instead: boxes on a line (no area, so every collapse choice costs
    /// the same) under a binary chain 100 levels deep, which the collapse keeps nearly as deep.
    #[test]
    fn a_16_wide_tree_too_deep_for_a_stack_is_not_kept() {
        use crate::bvh::traverse::fits_stack;
        use crate::{Backend, Ray};
        assert!(fits_stack(16, 68) && !fits_stack(16, 69));
        assert!(fits_stack(8, crate::bvh::STACK_DEPTH) && fits_stack(16, 0) && fits_stack(16, 1));
        let n = 100;
        let boxes: Vec<Aabb> =
            (0..n).map(|i| Aabb::new(Vec3::new(i as f32, 0.0, 0.0), Vec3::new(i as f32, 0.0, 0.0))).collect();
        let mut kb = KindBvh::build(boxes.clone(), (0..n).map(|i| [0, i]).collect(), &BuildOptions::default()).unwrap();
        assert!(fits_stack(16, kb.bvh16().expect("the built tree fits").node_depth()));
        make_chain(&mut kb);
        assert_eq!(kb.validate().unwrap(), n as usize, "a valid binary chain");
        let deep = WideBvh::<Node16>::collapse_nodes(&kb.bvh2);
        assert!(deep.node_depth() > 68, "the collapse kept the chain deep: {}", deep.node_depth());
        assert!(kb.bvh16().is_none());
        kb.bvh8();
        assert_eq!(kb.bytes_x16(), kb.bytes_x8(), "counted as the 8-wide tree it falls back to");
        // A scene with such a tree: x16 queries give x8's answers (they run on its trees).
        let mut b = crate::scene::SceneBuilder::new();
        b.add_boxes(&boxes).unwrap();
        let mut scene = b.build().unwrap();
        make_chain(&mut scene.boxes);
        assert!(!scene.has_x16_trees());
        let mut hits = 0;
        for i in 0..n {
            let ray = Ray::new(Vec3::new(i as f32, 1.0, 0.0), -Vec3::Y);
            let (a, b) = (scene.intersect_with(&ray, Backend::X16), scene.intersect_with(&ray, Backend::X8));
            assert_eq!(a, b);
            hits += usize::from(a.is_some_and(|h| h.prim == i));
        }
        assert_eq!(hits, n as usize);
        let line = Ray::new(Vec3::new(-1.0, 0.0, 0.0), Vec3::X);
        assert!(scene.occluded_with(&line, Backend::X16));
    }

    /// The x16 backend walks the 16-wide trees: with the triangles' 16-wide tree replaced by an
    /// empty one, x16 misses what x8 hits (on any build, whether the build made the tree or
    /// the first query did).
    #[test]
    fn x16_queries_walk_the_16_wide_trees() {
        use crate::{Backend, Ray};
        let mut b = crate::scene::SceneBuilder::new();
        let tris: Vec<Triangle> = (0..64)
            .map(|i| {
                let x = i as f32;
                Triangle::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0))
            })
            .collect();
        b.add_triangles(&tris).unwrap();
        let mut scene = b.build().unwrap();
        let ray = Ray::new(Vec3::new(10.2, 0.2, 1.0), -Vec3::Z);
        assert!(scene.intersect_with(&ray, Backend::X16).is_some());
        scene.tris.bvh16 = OnceLock::from(Some(WideBvh::empty()));
        assert!(scene.intersect_with(&ray, Backend::X16).is_none());
        assert!(!scene.occluded_with(&ray, Backend::X16));
        assert!(scene.intersect_with(&ray, Backend::X8).is_some());
    }

    #[test]
    fn the_4_wide_tree_is_made_on_first_use_from_the_binary_tree() {
        let tris: Vec<Triangle> = (0..300)
            .map(|i| {
                let x = i as f32;
                Triangle::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.5))
            })
            .collect();
        let ids = (0..300).map(|i| [0, i]).collect();
        let kb = KindBvh::build(tris, ids, &BuildOptions::default()).unwrap();
        let before = kb.bytes_total();
        assert!(kb.bvh4.get().is_none());
        kb.validate().unwrap();
        assert!(kb.bvh4.get().is_none(), "validating does not make the 4-wide tree");
        let w4 = kb.bvh4().clone();
        assert_eq!(kb.bytes_total(), before + w4.bytes());
        let want = WideBvh::<Node4>::collapse_nodes(&kb.bvh2);
        assert_eq!((w4.nodes.len(), w4.root, w4.bounds), (want.nodes.len(), want.root, want.bounds));
        kb.validate().unwrap();
    }

    /// `unit_normals` is the lanes twin of `Triangle::normal` (the hit records' normal):
    /// in every lane it calls usable, the same bits, and it calls a lane usable exactly when
    /// the f32 `|e1 × e2|²` is a normal number. And `Triangle::normal` is unit length (within 1e-6) for every triangle
    /// whose vertices are not collinear (`|e1 × e2|² > 0` in f64, where it cannot round to
    /// 0), zero for the others (collinear or not finite). Seeded random triangles at scales from 1e-25 to 1e25
    /// (squared lengths that are subnormal, underflow to 0 or overflow to ∞ in f32), slivers,
    /// collinear and repeated vertices, axis-aligned and negative-zero coordinates.
    #[test]
    fn unit_normals_equal_normal_at_lane_for_lane() {
        use crate::lanes::{F32x4, F32x8, Mask};
        fn check<L: Lanes>(tris: &[Triangle]) -> usize {
            let mut usable_lanes = 0;
            for chunk in tris.chunks(L::N) {
                let mut c = [[0.0f32; 8]; 9];
                for (k, t) in chunk.iter().enumerate() {
                    for (j, v) in t.v.iter().enumerate() {
                        (c[3 * j][k], c[3 * j + 1][k], c[3 * j + 2][k]) = (v.x, v.y, v.z);
                    }
                }
                let v = |j: usize| Vec3x::new(L::load(&c[j]), L::load(&c[j + 1]), L::load(&c[j + 2]));
                let (n, usable) = unit_normals(&TriangleLanes { v0: v(0), v1: v(3), v2: v(6) });
                let bits = usable.bitmask();
                for (k, t) in chunk.iter().enumerate() {
                    let s = t.scaled_normal();
                    let l2 = s.dot(s);
                    let normal_f32 = (f32::MIN_POSITIVE..f32::INFINITY).contains(&l2);
                    assert_eq!(bits >> k & 1 == 1, normal_f32, "{t:?}: usable, |s|² = {l2:e}");
                    let want = t.normal();
                    if normal_f32 {
                        usable_lanes += 1;
                        let got = n.lane(k);
                        assert_eq!(got.to_array().map(f32::to_bits), want.to_array().map(f32::to_bits), "{t:?}");
                    }
                    let [a, b, c] = t.v.map(|p| p.as_dvec3());
                    if (b - a).cross(c - a).length_squared() > 0.0 {
                        assert!((want.length() - 1.0).abs() < 1e-6, "{t:?}: {want:?} not unit");
                    } else {
                        assert_eq!(want, Vec3::ZERO, "{t:?}: collinear");
                    }
                }
            }
            usable_lanes
        }
        let mut rng = crate::rng::Rng::new(0x0e0a);
        let mut tris = Vec::new();
        for _ in 0..20_000 {
            let scale = 10f32.powf(rng.range(-25.0, 25.0));
            let o = rng.vec3(-1.0, 1.0) * scale * rng.range(0.0, 100.0);
            let t = Triangle::new(
                o + rng.vec3(-1.0, 1.0) * scale,
                o + rng.vec3(-1.0, 1.0) * scale,
                o + rng.vec3(-1.0, 1.0) * scale,
            );
            tris.push(t);
            // A sliver of it: the third vertex near the first edge.
            let w = rng.f32();
            let off = rng.vec3(-1.0, 1.0) * scale * 10f32.powf(rng.range(-9.0, -3.0));
            tris.push(Triangle::new(t.v[0], t.v[1], t.v[0].lerp(t.v[1], w) + off));
        }
        let (a, b, c) = (Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0));
        tris.extend([
            Triangle::new(a, b, c),
            Triangle::new(a, c, b),
            Triangle::new(Vec3::new(-0.0, -0.0, 0.0), b, c),
            Triangle::new(a, a, b),                         // repeated vertex
            Triangle::new(a, b, b * 2.0),                   // collinear
            Triangle::new(a * 1e-30, b * 1e-30, c * 1e-30), // |s|² underflows to 0
            Triangle::new(a, b * 1e30, c * 1e30),           // |s|² overflows
            Triangle::new(a, b * 3e19, c * 3e19),           // just below the overflow
            Triangle::new(a, b * f32::INFINITY, c),         // not finite: zero
            Triangle::new(a, b, Vec3::new(f32::NAN, 0.0, 1.0)),
        ]);
        for check_lanes in [check::<F32x4>, check::<F32x8>] {
            let usable = check_lanes(&tris);
            // Both branches are exercised (|s|² is a normal f32 for scales of about 1e-9 to
            // 1e9, a third of the random ones).
            assert!(usable > tris.len() / 4 && usable < tris.len() / 2, "{usable} of {}", tris.len());
        }
    }

    /// The 8-lane leaf test equals the 16-lane one on the same 8 triangles, lane for lane
    /// (bit for bit: the same watertight kernel on narrower registers), for seeded random
    /// triangles and rays, some through shared vertices and edges; Möller–Trumbore scenes
    /// have no narrow test.
    #[test]
    fn the_narrow_leaf_test_equals_the_wide_one() {
        use crate::lanes::F32x16;
        use crate::rng::Rng;
        let mut rng = Rng::new(0x8a11);
        let mut p = || Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
        // Fans around one vertex, so that rays through it and the shared edges are tried.
        let hub = p();
        let tris: Vec<Triangle> = (0..64).map(|_| Triangle::new(hub, p(), p())).collect();
        let prims = Soa::from_slice(&tris);
        let (mut hits, mut lanes_seen) = (0, 0);
        for r in 0..400 {
            let origin = p() * 3.0;
            let target = if r % 4 == 0 { hub } else { tris[r % 64].v[1] * 0.5 + p() * 0.25 };
            let ray = Ray::new(origin, target - origin);
            for i in (0..56).step_by(7) {
                let active = if r % 3 == 0 { 0xff } else { (r as u32 * 37) & 0xff };
                let wide = LeafRay::<F32x16>::new_valid(&ray, TriangleTest::Watertight);
                let (m, t, u, v) =
                    Triangle::hit_one(&wide, ray.t_max, &prims, i, <F32x16 as Lanes>::Mask::from_bitmask(active));
                let (bits, tn, un, vn) =
                    Triangle::hit_one_narrow(&wide, ray.t_max, &prims, i, active).expect("watertight has it");
                assert_eq!(bits, m.bitmask() & 0xff, "ray {r} block {i}");
                for k in 0..8 {
                    let wide_lane = (t.lane(k).to_bits(), u.lane(k).to_bits(), v.lane(k).to_bits());
                    assert_eq!((tn.lane(k).to_bits(), un.lane(k).to_bits(), vn.lane(k).to_bits()), wide_lane);
                }
                hits += bits.count_ones();
                lanes_seen += active.count_ones();
            }
        }
        assert!(hits > 100 && lanes_seen > 10_000, "{hits} hits in {lanes_seen} lanes");
        let mt = LeafRay::<F32x16>::new_valid(&Ray::new(Vec3::ZERO, Vec3::X), TriangleTest::MollerTrumbore);
        assert!(Triangle::hit_one_narrow(&mt, 1.0, &prims, 0, 0xff).is_none());
    }
}
