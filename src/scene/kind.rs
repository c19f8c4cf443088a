//! The primitive kinds a scene puts in BVHs (triangles, spheres, boxes), each with its leaf
//! kernels and normal, and [`KindBvh`]: one kind's primitives in leaf order with their
//! binary, 4-wide and 8-wide trees.

use crate::bvh::{self, BuildOptions, BvhError, Node2, Node4, Node8, WideBvh};
use crate::error::LimitError;
use crate::kernel::{ray_aabb, ray_sphere, ray_triangle};
use crate::lanes::Lanes;
use crate::prim::{Aabb, Primitive, Soa, Sphere, Triangle};
use crate::ray::{Ray, RayPacket};
use glam::Vec3;

/// A shape kind a scene puts in a BVH: [`Triangle`], [`Sphere`] and [`Aabb`] (sealed, as
/// [`Primitive`] is). To put your own primitives in a tree, use [`crate::bvh::build_trees`]
/// and [`crate::bvh::traverse`] directly.
pub trait Traceable: Primitive + Send + Sync + 'static {
    /// Which kind (used in hit bookkeeping).
    const KIND: u8;
    /// Bounding box.
    fn bounds(&self) -> Aabb;
    /// Scalar reference hit: `(t, u, v)`.
    fn hit_scalar(&self, ray: &Ray) -> Option<(f32, f32, f32)>;
    /// Lanes hit: `(mask, t, u, v)`.
    fn hit_lanes<L: Lanes>(rays: &RayPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L);
    /// Unit geometric normal at the hit point `p` (barycentrics `u, v` for triangles).
    fn normal_at(&self, p: Vec3, u: f32, v: f32) -> Vec3;
}

impl Traceable for Triangle {
    const KIND: u8 = 0;
    fn bounds(&self) -> Aabb {
        self.aabb()
    }
    #[inline(always)]
    fn hit_scalar(&self, ray: &Ray) -> Option<(f32, f32, f32)> {
        ray_triangle::intersect_scalar(ray, self).map(|h| (h.t, h.u, h.v))
    }
    /// Scenes keep degenerate triangles out of their BVHs, so the degeneracy test is
    /// skipped here.
    #[inline(always)]
    fn hit_lanes<L: Lanes>(rays: &RayPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L) {
        ray_triangle::intersect_lanes_solid(rays, p)
    }
    fn normal_at(&self, _p: Vec3, _u: f32, _v: f32) -> Vec3 {
        self.normal()
    }
}

impl Traceable for Sphere {
    const KIND: u8 = 1;
    fn bounds(&self) -> Aabb {
        self.aabb()
    }
    #[inline(always)]
    fn hit_scalar(&self, ray: &Ray) -> Option<(f32, f32, f32)> {
        ray_sphere::intersect_scalar(ray, self).map(|t| (t, 0.0, 0.0))
    }
    #[inline(always)]
    fn hit_lanes<L: Lanes>(rays: &RayPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L) {
        let (m, t) = ray_sphere::intersect_lanes(rays, p);
        (m, t, L::splat(0.0), L::splat(0.0))
    }
    fn normal_at(&self, p: Vec3, _u: f32, _v: f32) -> Vec3 {
        (p - self.center).normalize_or_zero()
    }
}

impl Traceable for Aabb {
    const KIND: u8 = 2;
    fn bounds(&self) -> Aabb {
        *self
    }
    #[inline(always)]
    fn hit_scalar(&self, ray: &Ray) -> Option<(f32, f32, f32)> {
        ray_aabb::intersect_scalar(ray, self).map(|(t, _)| (t, 0.0, 0.0))
    }
    #[inline(always)]
    fn hit_lanes<L: Lanes>(rays: &RayPacket<L>, p: &Self::Lanes<L>) -> (L::Mask, L, L, L) {
        let (m, t, _) = ray_aabb::intersect_lanes(rays, p);
        (m, t, L::splat(0.0), L::splat(0.0))
    }
    /// The normal of the face the point lies on (the axis where the point is farthest out
    /// relative to the half extent).
    fn normal_at(&self, p: Vec3, _u: f32, _v: f32) -> Vec3 {
        let d = p - self.center();
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

/// One kind's primitives in BVH leaf order, their ids, and the three trees over them.
#[derive(Clone, Debug)]
pub struct KindBvh<P: Traceable> {
    /// Primitives in leaf order.
    pub prims: Soa<P>,
    /// `[geom, prim]` of each primitive in leaf order.
    pub ids: Vec<[u32; 2]>,
    /// Binary tree (used by the scalar backend and by packets).
    pub bvh2: Vec<Node2>,
    /// 4-wide tree (x4 backend).
    pub bvh4: WideBvh<Node4>,
    /// 8-wide tree (x8 backend).
    pub bvh8: WideBvh<Node8>,
}

impl<P: Traceable> Default for KindBvh<P> {
    fn default() -> Self {
        Self {
            prims: Soa::default(),
            ids: Vec::new(),
            bvh2: Vec::new(),
            bvh4: WideBvh::empty(),
            bvh8: WideBvh::empty(),
        }
    }
}

impl<P: Traceable> KindBvh<P> {
    /// Builds the trees over `prims` with ids `ids` (the same length). The primitives must
    /// be valid and, for triangles, non-degenerate (as [`super::SceneBuilder`] ensures).
    ///
    /// # Errors
    /// [`LimitError::TooManyPrimitives`] past [`bvh::MAX_PRIMITIVES`].
    ///
    /// # Panics
    /// If `prims` and `ids` differ in length.
    pub fn build(prims: Vec<P>, ids: Vec<[u32; 2]>, opts: &BuildOptions) -> Result<Self, LimitError> {
        assert_eq!(prims.len(), ids.len(), "one id pair per primitive");
        let boxes: Vec<Aabb> = prims.iter().map(|p| p.bounds()).collect();
        let trees = bvh::build_trees(&boxes, opts)?;
        let soa = Soa::from_slice(&trees.perm.iter().map(|&i| prims[i as usize]).collect::<Vec<_>>());
        let ids = trees.perm.iter().map(|&i| ids[i as usize]).collect();
        let kb = Self { prims: soa, ids, bvh2: trees.bvh2, bvh4: trees.bvh4, bvh8: trees.bvh8 };
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
    /// Checks all three trees (see [`crate::bvh::validate`]); returns the binary depth.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<usize, BvhError> {
        let boxes = self.leaf_boxes();
        let b2 = bvh::Bvh2 { nodes: self.bvh2.clone(), perm: (0..self.len() as u32).collect() };
        let d = bvh::validate::validate_bvh2(&b2, &boxes)?;
        bvh::validate::validate_wide(&self.bvh4, &boxes)?;
        bvh::validate::validate_wide(&self.bvh8, &boxes)?;
        Ok(d)
    }
    /// Bytes used by the 8-wide traversal: nodes, primitives and ids.
    pub fn bytes_x8(&self) -> usize {
        self.bvh8.bytes() + self.prims.padded_len() * P::COLUMNS * 4 + self.ids.len() * 8
    }
    /// Bytes of everything kept (all three trees, primitives, ids).
    pub fn bytes_total(&self) -> usize {
        self.bvh2.len() * core::mem::size_of::<Node2>()
            + self.bvh4.bytes()
            + self.bvh8.bytes()
            + self.prims.padded_len() * P::COLUMNS * 4
            + self.ids.len() * 8
    }
}
