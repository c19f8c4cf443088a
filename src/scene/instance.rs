//! Instances: a geometry placed any number of times with an affine transform, as Bullet's
//! collision objects and Embree's instances are. Two levels: a top-level tree over the
//! instances' world boxes, and each placed geometry's own trees (a scene of that geometry
//! alone, built once however often it is placed).
//!
//! **Rays** are carried into the instance's frame (`origin` and `dir` through the inverse
//! transform; the direction is not renormalised, so `t` stays in world units), tested with the
//! placed geometry's own query in the chosen backend, and the hit is carried back: the normal
//! through the inverse transpose (turned for a triangle of a mirroring transform, so that it
//! stays `normalize(cross(p1 - p0, p2 - p0))` of the world triangle), `u`, `v` unchanged.
//!
//! **Point queries and sweeps** are not invariant under a general affine map (a distance or a
//! sphere changes shape), so they walk the placed geometry's binary tree in its own frame with
//! a conservative bound (the world search ball mapped into the frame fits in a ball of radius
//! `|A⁻¹|_F` times larger), and test each primitive of a reached leaf after carrying it into
//! the world, with the world kernels: they answer exactly as the flattened scene would.
//! That is why a sphere set can only be placed by a similarity (it must stay a sphere) and a
//! box set only by a map that keeps boxes axis-aligned (a signed permutation of the axes
//! with scales): [`check_transform`].
//!
//! A geometry that is placed by an instance is a *prototype*: it is not also placed by
//! itself (add an instance with the identity for that). Instances do not nest.

use super::kind::{KindBvh, Traceable};
use super::sweep::Sweepable;
use super::{Backend, GeomKind, Scene, SceneError};
use crate::bvh::traverse::{
    self, AnyHit, Closest, LeafAction, PointLeafAction, SweepLeafAction, TraversalRay, TraversalStack,
};
use crate::bvh::{BuildOptions, BvhError, Node4, Node8, Node16};
use crate::error::LimitError;
use crate::hit::{Hit, HitKind};
use crate::kernel::closest_point as cp;
use crate::lanes::{F32x4, F32x8, F32x16};
use crate::prim::{Aabb, Sphere, Triangle};
use crate::ray::{ALL_BITS, Ray};
use glam::{Affine3A, Mat3A, Vec3};

/// One placed copy of a geometry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// The geometry placed (a prototype: see the module docs).
    pub geom: u32,
    /// Local → world.
    pub transform: Affine3A,
    /// Mask: rays see the instance only when their mask shares a bit with it (and, inside,
    /// with the geometry's own mask). Default [`ALL_BITS`].
    pub mask: u32,
}

/// Most instances a scene can hold: ids are u32 and `u32::MAX` means "not instanced".
pub const MAX_INSTANCES: usize = u32::MAX as usize;

/// Relative tolerance of the shape checks of [`check_transform`].
const SHAPE_TOLERANCE: f32 = 1e-5;

/// Checks that `m` may place a geometry of `kind`: finite, invertible (the columns' triple
/// product at least 10⁻⁹ of the product of their lengths), and for sphere sets a similarity
/// (columns orthogonal and of equal length within 10⁻⁵), for box sets a signed permutation
/// of the axes with scales (one non-zero entry per column and per row). Planes cannot be
/// placed.
///
/// # Errors
/// What is wrong, in words.
pub fn check_transform(kind: GeomKind, m: &Affine3A) -> Result<(), String> {
    let c = [Vec3::from(m.matrix3.x_axis), Vec3::from(m.matrix3.y_axis), Vec3::from(m.matrix3.z_axis)];
    if !c.iter().all(|v| v.is_finite()) || !m.translation.is_finite() {
        return Err(format!("the transform has a non-finite entry: {m:?}"));
    }
    let len = c.map(Vec3::length);
    let det = m.matrix3.determinant();
    let volume = len[0] * len[1] * len[2];
    if !(volume.is_finite() && volume > 0.0 && det.abs() >= 1e-9 * volume && m.inverse().is_finite()) {
        return Err(format!("the transform is singular or nearly so (determinant {det}): {m:?}"));
    }
    match kind {
        GeomKind::Plane => Err("a plane cannot be instanced (it is infinite): add another plane".into()),
        GeomKind::Mesh => Ok(()),
        GeomKind::Spheres => {
            let same = len.iter().all(|&l| (l - len[0]).abs() <= SHAPE_TOLERANCE * len[0]);
            let square = [(0, 1), (0, 2), (1, 2)]
                .iter()
                .all(|&(i, j)| c[i].dot(c[j]).abs() <= SHAPE_TOLERANCE * len[i] * len[j]);
            if same && square {
                Ok(())
            } else {
                Err(format!(
                    "a sphere set can only be placed by a similarity (rotation, mirror, uniform scale, \
                     translation), or its spheres would not stay spheres: {m:?}"
                ))
            }
        }
        GeomKind::Boxes => {
            let ones = |v: [f32; 3]| v.iter().filter(|&&x| x != 0.0).count() == 1;
            let rows = (0..3).all(|r| ones([c[0][r], c[1][r], c[2][r]]));
            if c.iter().all(|v| ones(v.to_array())) && rows {
                Ok(())
            } else {
                Err(format!(
                    "a box set can only be placed by a map that keeps boxes axis-aligned (axes permuted, \
                     mirrored and scaled, translation); place a box mesh to rotate boxes: {m:?}"
                ))
            }
        }
    }
}

/// An instance as the queries use it.
#[derive(Clone, Debug)]
pub(crate) struct Placed {
    pub(crate) info: Instance,
    /// Index of the prototype in [`Instances::protos`].
    proto: usize,
    to_local: Affine3A,
    /// Inverse transpose of the linear part (normals).
    normal: Mat3A,
    /// The transform mirrors (negative determinant).
    mirror: bool,
    /// Frobenius norm of the inverse's linear part: at least its largest singular value, so a
    /// world ball of radius `r` maps into a local ball of radius `r · inv_norm`.
    inv_norm: f32,
    /// Sphere radius factor (the mean column length; the columns of a similarity are equal).
    scale: f32,
    /// World box (empty for an empty prototype).
    pub(crate) bounds: Aabb,
}

impl Placed {
    /// `cut`: boxes of the placed geometry that hold every point a query can report
    /// ([`Scene::local_cut`]).
    fn new(info: Instance, proto: usize, cut: &[Aabb]) -> Self {
        let m = info.transform;
        let to_local = m.inverse();
        let inv = to_local.matrix3;
        let inv_norm = (inv.x_axis.length_squared() + inv.y_axis.length_squared() + inv.z_axis.length_squared()).sqrt();
        let scale = (m.matrix3.x_axis.length() + m.matrix3.y_axis.length() + m.matrix3.z_axis.length()) / 3.0;
        let mut p = Self {
            info,
            proto,
            to_local,
            normal: inv.transpose(),
            mirror: m.matrix3.determinant() < 0.0,
            inv_norm,
            scale,
            bounds: Aabb::EMPTY,
        };
        p.bounds = p.world_bounds(cut);
        p
    }

    /// The world box of the union of `cut`: each box carried over on its own, so a turned
    /// instance's box stays close to its geometry (a box of the whole geometry, turned, can
    /// be up to 2.8 times as large).
    fn world_bounds(&self, cut: &[Aabb]) -> Aabb {
        cut.iter().fold(Aabb::EMPTY, |w, b| w.union(&self.world_box(b)))
    }

    /// The world box of a local box: its eight corners carried over, widened by 2⁻¹⁶ of its
    /// size and position, which covers the rounding of the carried rays and points.
    fn world_box(&self, b: &Aabb) -> Aabb {
        if !(b.min.cmple(b.max).all()) {
            return Aabb::EMPTY;
        }
        let mut w = Aabb::EMPTY;
        for k in 0..8 {
            let c = Vec3::new(
                if k & 1 == 0 { b.min.x } else { b.max.x },
                if k & 2 == 0 { b.min.y } else { b.max.y },
                if k & 4 == 0 { b.min.z } else { b.max.z },
            );
            let p = self.info.transform.transform_point3(c);
            w = w.union(&Aabb::new(p, p));
        }
        let pad = ((w.max - w.min).max_element() + w.min.abs().max(w.max.abs()).max_element()) * (1.0 / 65536.0);
        Aabb::new(w.min - Vec3::splat(pad), w.max + Vec3::splat(pad))
    }

    /// `ray` in the instance's frame, with interval end `t_max`.
    #[inline]
    fn local_ray(&self, ray: &Ray, t_max: f32) -> Ray {
        Ray {
            origin: self.to_local.transform_point3(ray.origin),
            dir: self.to_local.transform_vector3(ray.dir),
            t_min: ray.t_min,
            t_max,
            mask: ray.mask,
        }
    }

    /// A local hit of prototype geometry `geom` carried back to the world as instance `inst`.
    fn world_hit(&self, h: Hit, geom: u32, inst: u32) -> Hit {
        let mut n = (self.normal * h.normal).normalize_or_zero();
        if self.mirror && h.kind == HitKind::Triangle {
            n = -n;
        }
        Hit { geom, inst, normal: n, ..h }
    }
}

/// A primitive carried into the world by an instance's transform (the flattened primitive).
pub(super) trait Place: Sized {
    fn place(&self, p: &Placed) -> Self;
}

impl Place for Triangle {
    fn place(&self, p: &Placed) -> Self {
        let m = &p.info.transform;
        Triangle::new(m.transform_point3(self.v[0]), m.transform_point3(self.v[1]), m.transform_point3(self.v[2]))
    }
}

impl Place for Sphere {
    fn place(&self, p: &Placed) -> Self {
        Sphere::new(p.info.transform.transform_point3(self.center), self.radius * p.scale)
    }
}

impl Place for Aabb {
    fn place(&self, p: &Placed) -> Self {
        let (a, b) = (p.info.transform.transform_point3(self.min), p.info.transform.transform_point3(self.max));
        Aabb::new(a.min(b), a.max(b))
    }
}

/// A scene's instances: the placed copies, the prototypes' own scenes and the top-level
/// tree.
#[derive(Clone, Debug)]
pub(crate) struct Instances {
    pub(crate) placed: Vec<Placed>,
    /// `(geometry id, scene of that geometry alone)` per prototype.
    pub(crate) protos: Vec<(u32, Scene)>,
    /// Tree over the world boxes of the instances of non-empty prototypes; ids `[inst, 0]`.
    top: KindBvh<Aabb>,
    pub(crate) bounds: Aabb,
}

impl Default for Instances {
    fn default() -> Self {
        Self { placed: Vec::new(), protos: Vec::new(), top: KindBvh::default(), bounds: Aabb::EMPTY }
    }
}

impl Instances {
    /// The instances `list` of the prototypes `protos` (in that order), with the top tree.
    pub(crate) fn new(list: &[Instance], protos: Vec<(u32, Scene)>, opts: &BuildOptions) -> Result<Self, SceneError> {
        let cuts: Vec<Vec<Aabb>> = protos.iter().map(|(_, s)| s.local_cut()).collect();
        let placed = list
            .iter()
            .map(|i| {
                let k = protos.iter().position(|(g, _)| *g == i.geom).expect("every placed geometry has a prototype");
                Placed::new(*i, k, &cuts[k])
            })
            .collect();
        let mut s = Self { placed, protos, top: KindBvh::default(), bounds: Aabb::EMPTY };
        s.rebuild_top(opts)?;
        Ok(s)
    }

    /// True when there are no instances.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.placed.is_empty()
    }

    /// Rebuilds the top-level tree from the instances' world boxes.
    pub(crate) fn rebuild_top(&mut self, opts: &BuildOptions) -> Result<(), SceneError> {
        let (boxes, ids): (Vec<Aabb>, Vec<[u32; 2]>) = self
            .placed
            .iter()
            .enumerate()
            .filter(|(_, p)| p.bounds.min.cmple(p.bounds.max).all())
            .map(|(i, p)| (p.bounds, [i as u32, 0]))
            .unzip();
        self.bounds = boxes.iter().fold(Aabb::EMPTY, |a, b| a.union(b));
        // One instance per leaf: a leaf's box is then its instance's box, so a ray enters only
        // the instances whose own box it enters.
        let opts = BuildOptions { max_leaf: 1, ..*opts };
        self.top =
            KindBvh::build(boxes, ids, &opts).map_err(|source| SceneError::Limit { what: "instances", source })?;
        Ok(())
    }

    /// The prototype slot of geometry `geom`, if it is one.
    pub(crate) fn proto_of(&self, geom: u32) -> Option<usize> {
        self.protos.iter().position(|(g, _)| *g == geom)
    }

    /// Recomputes the world boxes of the instances of prototype `k` and the top tree.
    pub(crate) fn refresh_proto(&mut self, k: usize, opts: &BuildOptions) -> Result<(), SceneError> {
        let cut = self.protos[k].1.local_cut();
        for p in self.placed.iter_mut().filter(|p| p.proto == k) {
            p.bounds = p.world_bounds(&cut);
        }
        self.rebuild_top(opts)
    }

    /// Moves instance `inst`.
    pub(crate) fn set_transform(&mut self, inst: u32, m: Affine3A, opts: &BuildOptions) -> Result<(), SceneError> {
        let n = self.placed.len();
        let p = self.placed.get(inst as usize).ok_or_else(|| bad_instance(inst, format!("no such instance ({n})")))?;
        let k = p.proto;
        let proto = &self.protos[k].1;
        check_transform(proto.geoms()[0].kind, &m).map_err(|w| bad_instance(inst, w))?;
        let info = Instance { transform: m, ..p.info };
        self.placed[inst as usize] = Placed::new(info, k, &proto.local_cut());
        self.rebuild_top(opts)
    }

    /// Checks the top tree and every prototype's trees.
    pub(crate) fn validate(&self) -> Result<(), BvhError> {
        self.top.validate()?;
        self.protos.iter().try_for_each(|(_, s)| s.validate())
    }
}

/// The error of a bad instance id or transform.
pub(crate) fn bad_instance(inst: u32, what: String) -> SceneError {
    SceneError::InvalidInstance { inst, what }
}

/// Checks that one more instance fits the id space; returns its id.
pub(crate) fn next_instance_id(count: usize) -> Result<u32, SceneError> {
    if count >= MAX_INSTANCES {
        return Err(SceneError::Limit {
            what: "instance",
            source: LimitError::TooManyInstances { count: count.saturating_add(1), max: MAX_INSTANCES },
        });
    }
    Ok(count as u32)
}

/// The slab test of `ray` (with `inv` its direction's reciprocal) against `b` in `[t_min,
/// t_max]`. An axis whose distances are NaN (`0 · inf`: the ray lies in a face plane) is
/// dropped by `min` / `max`, which keeps the box; instance boxes are padded for rounding.
#[inline]
fn enters(ray: &Ray, inv: Vec3, t_max: f32, b: &Aabb) -> bool {
    let t1 = (b.min - ray.origin) * inv;
    let t2 = (b.max - ray.origin) * inv;
    let (near, far) = (t1.min(t2), t1.max(t2));
    let tn = near.x.max(near.y).max(near.z).max(ray.t_min);
    let tf = far.x.min(far.y).min(far.z).min(t_max);
    tn <= tf
}

/// `a` beats `b`: a smaller key, or an equal key and smaller `(geom, prim, inst)`.
#[inline]
fn beats(key: f32, ids: (u32, u32, u32), best: Option<(f32, (u32, u32, u32))>) -> bool {
    best.is_none_or(|(k, i)| key < k || (key == k && ids < i))
}

fn hit_ids(h: &Hit) -> (u32, u32, u32) {
    (h.geom, h.prim, h.inst)
}

// ---------------------------------------------------------------------------------------
// Rays.

/// The top-level leaf of a closest-hit ray query: each instance's own closest hit.
struct ClosestLeaf<'a> {
    inst: &'a Instances,
    ray: &'a Ray,
    inv: Vec3,
    backend: Backend,
    best: Option<Hit>,
}

impl LeafAction for ClosestLeaf<'_> {
    fn t_max(&self) -> f32 {
        self.best.map_or(self.ray.t_max, |h| h.t)
    }
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        for k in first..first + count {
            let Some((i, p)) = self.inst.entered(k, count, self.ray, self.inv, self.t_max()) else { continue };
            let (geom, proto) = &self.inst.protos[p.proto];
            let local = p.local_ray(self.ray, self.t_max());
            if let Some(h) = proto.intersect_with(&local, self.backend) {
                let h = p.world_hit(h, *geom, i);
                if beats(h.t, hit_ids(&h), self.best.map(|b| (b.t, hit_ids(&b)))) {
                    self.best = Some(h);
                }
            }
        }
        false
    }
}

/// The top-level leaf of an any-hit ray query.
struct AnyLeaf<'a> {
    inst: &'a Instances,
    ray: &'a Ray,
    inv: Vec3,
    backend: Backend,
}

impl LeafAction for AnyLeaf<'_> {
    fn t_max(&self) -> f32 {
        self.ray.t_max
    }
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        (first..first + count).any(|k| {
            self.inst.entered(k, count, self.ray, self.inv, self.ray.t_max).is_some_and(|(_, p)| {
                self.inst.protos[p.proto].1.occluded_with(&p.local_ray(self.ray, self.ray.t_max), self.backend)
            })
        })
    }
}

/// The top-level leaf of the queries that see every hit: `each(instance id, placed,
/// prototype geometry, prototype scene, local ray)` for every instance the ray enters.
struct EveryLeaf<'a, F: FnMut(u32, &Placed, u32, &Scene, &Ray)> {
    inst: &'a Instances,
    ray: &'a Ray,
    inv: Vec3,
    each: F,
}

impl<F: FnMut(u32, &Placed, u32, &Scene, &Ray)> LeafAction for EveryLeaf<'_, F> {
    fn t_max(&self) -> f32 {
        self.ray.t_max
    }
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        for k in first..first + count {
            if let Some((i, p)) = self.inst.entered(k, count, self.ray, self.inv, self.ray.t_max) {
                let (geom, proto) = &self.inst.protos[p.proto];
                (self.each)(i, p, *geom, proto, &p.local_ray(self.ray, self.ray.t_max));
            }
        }
        false
    }
}

impl Instances {
    /// Walks the top-level tree for `ray` (valid) in `M`'s order: the binary tree for
    /// [`Backend::Scalar`], the backend's wide tree otherwise. Returns whether the action
    /// ended the walk.
    fn walk_top<M: traverse::Mode>(&self, ray: &Ray, backend: Backend, action: &mut impl LeafAction) -> bool {
        let mut stack = TraversalStack::new();
        let backend = backend.resolve();
        // The x16 backend walks the 16-wide tree when it fits a stack, else the 8-wide one.
        let top16 = if backend == Backend::X16 { self.top.bvh16() } else { None };
        match (backend, top16) {
            (_, Some(top)) => {
                traverse::ray_wide::<M, F32x16, Node16>(top, &TraversalRay::<F32x16>::new(ray), action, &mut stack)
            }
            (Backend::Scalar, _) => traverse::ray_binary::<M>(&self.top.bvh2, ray, action, &mut stack),
            (Backend::X4, _) => traverse::ray_wide::<M, F32x4, Node4>(
                self.top.bvh4(),
                &TraversalRay::<F32x4>::new(ray),
                action,
                &mut stack,
            ),
            _ => traverse::ray_wide::<M, F32x8, Node8>(
                self.top.bvh8(),
                &TraversalRay::<F32x8>::new(ray),
                action,
                &mut stack,
            ),
        }
    }

    /// Instance `k` of the top tree's leaf order, if `ray` (with interval end `t_max`) may see
    /// it: its mask admits the ray, and the ray enters its box (tested only in leaves of more
    /// than one instance, which the wide trees can have; a leaf's box is its instance's box
    /// otherwise).
    #[inline]
    fn entered(&self, k: u32, count: u32, ray: &Ray, inv: Vec3, t_max: f32) -> Option<(u32, &Placed)> {
        let i = self.top.ids[k as usize][0];
        let p = &self.placed[i as usize];
        let seen = p.info.mask & ray.mask != 0 && (count == 1 || enters(ray, inv, t_max, &p.bounds));
        seen.then_some((i, p))
    }

    /// The closest hit through the instances, if it beats `found` (ties by `(geom, prim,
    /// inst)`).
    pub(crate) fn closest(&self, ray: &Ray, backend: Backend, found: Option<Hit>) -> Option<Hit> {
        if self.top.is_empty() || !ray.is_valid() {
            return found;
        }
        let mut leaf = ClosestLeaf { inst: self, ray, inv: ray.dir.recip(), backend, best: found };
        self.walk_top::<Closest>(ray, backend, &mut leaf);
        leaf.best
    }

    /// [`Instances::closest`] without trees: every instance, each by
    /// [`Scene::intersect_brute_force_with`] (the reference of the tests).
    pub(crate) fn closest_brute_force(&self, ray: &Ray, backend: Backend, mut best: Option<Hit>) -> Option<Hit> {
        if !ray.is_valid() {
            return best;
        }
        for (i, p) in self.placed.iter().enumerate() {
            if p.info.mask & ray.mask == 0 {
                continue;
            }
            let (geom, proto) = &self.protos[p.proto];
            let local = p.local_ray(ray, best.map_or(ray.t_max, |h| h.t));
            if let Some(h) = proto.intersect_brute_force_with(&local, backend) {
                let h = p.world_hit(h, *geom, i as u32);
                if beats(h.t, hit_ids(&h), best.map(|b| (b.t, hit_ids(&b)))) {
                    best = Some(h);
                }
            }
        }
        best
    }

    /// Whether any instance is hit.
    pub(crate) fn any(&self, ray: &Ray, backend: Backend) -> bool {
        if self.top.is_empty() || !ray.is_valid() {
            return false;
        }
        let mut leaf = AnyLeaf { inst: self, ray, inv: ray.dir.recip(), backend };
        self.walk_top::<AnyHit>(ray, backend, &mut leaf)
    }

    /// Calls `each` for every instance the valid `ray` enters.
    pub(crate) fn every(&self, ray: &Ray, backend: Backend, each: impl FnMut(u32, &Placed, u32, &Scene, &Ray)) {
        if self.top.is_empty() || !ray.is_valid() {
            return;
        }
        let mut leaf = EveryLeaf { inst: self, ray, inv: ray.dir.recip(), each };
        self.walk_top::<Closest>(ray, backend, &mut leaf);
    }

    /// Appends every hit of `ray` through the instances to `out` (unsorted).
    pub(crate) fn all(&self, ray: &Ray, backend: Backend, out: &mut Vec<Hit>) {
        self.every(ray, backend, |i, p, geom, proto, local| {
            out.extend(proto.intersect_all_with(local, backend).into_iter().map(|h| p.world_hit(h, geom, i)));
        });
    }
}

// ---------------------------------------------------------------------------------------
// Point queries and sweeps: the prototype's binary tree in its own frame, primitives carried
// into the world.

/// The best candidate of a point query or a sweep through the instances: key, ids, and the
/// record.
type Cand<R> = Option<(f32, (u32, u32, u32), R)>;

/// A kind's world kernels for point queries and sweeps through instances.
/// (Sweeps use the kind's world sweep kernels, [`Sweepable`].)
pub(super) trait Carried: Traceable + Place + Sweepable {
    const HIT_KIND: HitKind;
    /// Closest point to `p`: `(q, u, v, normal)`.
    fn nearest(&self, p: Vec3) -> (Vec3, f32, f32, Vec3);
}

/// A prototype's kind walked for a point query.
struct PointWalk<'a, 'b, P: Carried> {
    kb: &'a KindBvh<P>,
    placed: &'a Placed,
    geom: u32,
    inst: u32,
    p: Vec3,
    /// Absolute slack of the local bound (rounding of the carried point).
    eps: f32,
    best: &'b mut Cand<super::ClosestPoint>,
    limit: f32,
}

impl<P: Carried> PointWalk<'_, '_, P> {
    fn world_bound(&self) -> f32 {
        self.best.as_ref().map_or(self.limit, |b| b.0)
    }
}

impl<P: Carried> PointLeafAction for PointWalk<'_, '_, P> {
    fn bound(&self) -> f32 {
        let r = self.world_bound().sqrt() * self.placed.inv_norm * (1.0 + 1.0 / 4096.0) + self.eps;
        r * r
    }
    fn leaf(&mut self, first: u32, count: u32) {
        for k in first as usize..(first + count) as usize {
            let w = self.kb.prims.get(k).place(self.placed);
            let (q, u, v, normal) = w.nearest(self.p);
            let d2 = cp::distance_squared_scalar(self.p, q);
            let ids = (self.geom, self.kb.ids[k][1], self.inst);
            if d2 <= self.limit && beats(d2, ids, self.best.as_ref().map(|b| (b.0, b.1))) {
                let rec = super::ClosestPoint {
                    point: q,
                    distance: d2.sqrt(),
                    geom: ids.0,
                    prim: ids.1,
                    u,
                    v,
                    normal,
                    kind: P::HIT_KIND,
                    inst: ids.2,
                };
                *self.best = Some((d2, ids, rec));
            }
        }
    }
}

/// A prototype's kind walked for a sweep.
struct SweepWalk<'a, 'b, P: Carried> {
    kb: &'a KindBvh<P>,
    placed: &'a Placed,
    geom: u32,
    inst: u32,
    s: &'a super::SphereSweep,
    best: &'b mut Cand<super::SweepHit>,
}

impl<P: Carried> SweepLeafAction for SweepWalk<'_, '_, P> {
    fn bound(&self) -> f32 {
        self.best.as_ref().map_or(1.0, |b| b.0)
    }
    fn leaf(&mut self, first: u32, count: u32) {
        for k in first as usize..(first + count) as usize {
            let w = self.kb.prims.get(k).place(self.placed);
            let Some(t) = w.toi_scalar(self.s) else { continue };
            let ids = (self.geom, self.kb.ids[k][1], self.inst);
            if beats(t, ids, self.best.as_ref().map(|b| (b.0, b.1))) {
                let (point, normal) = w.contact(self.s, t);
                let rec =
                    super::SweepHit { toi: t, point, normal, geom: ids.0, prim: ids.1, kind: P::HIT_KIND, inst: ids.2 };
                *self.best = Some((t, ids, rec));
            }
        }
    }
}

/// The top-level leaf of a point query.
struct TopPoint<'a, 'b> {
    inst: &'a Instances,
    p: Vec3,
    limit: f32,
    best: &'b mut Cand<super::ClosestPoint>,
}

impl PointLeafAction for TopPoint<'_, '_> {
    fn bound(&self) -> f32 {
        self.best.as_ref().map_or(self.limit, |b| b.0)
    }
    fn leaf(&mut self, first: u32, count: u32) {
        for k in first..first + count {
            let i = self.inst.top.ids[k as usize][0];
            let pl = &self.inst.placed[i as usize];
            if pl.info.mask & ALL_BITS == 0 {
                continue;
            }
            let (geom, proto) = &self.inst.protos[pl.proto];
            if proto.geom_masks[0] & ALL_BITS == 0 {
                continue;
            }
            let q = pl.to_local.transform_point3(self.p);
            let eps = (q.abs().max_element()
                + proto.local_box().max.abs().max(proto.local_box().min.abs()).max_element())
                * (1.0 / 65536.0);
            let mut stack = TraversalStack::new();
            macro_rules! walk {
                ($kb:expr) => {{
                    let mut w = PointWalk {
                        kb: $kb,
                        placed: pl,
                        geom: *geom,
                        inst: i,
                        p: self.p,
                        eps,
                        best: self.best,
                        limit: self.limit,
                    };
                    traverse::point_binary(&$kb.bvh2, q, &mut w, &mut stack);
                }};
            }
            walk!(&proto.tris);
            walk!(&proto.spheres);
            walk!(&proto.boxes);
        }
    }
}

/// The top-level leaf of a sweep.
struct TopSweep<'a, 'b> {
    inst: &'a Instances,
    s: &'a super::SphereSweep,
    best: &'b mut Cand<super::SweepHit>,
}

impl SweepLeafAction for TopSweep<'_, '_> {
    fn bound(&self) -> f32 {
        self.best.as_ref().map_or(1.0, |b| b.0)
    }
    fn leaf(&mut self, first: u32, count: u32) {
        for k in first..first + count {
            let i = self.inst.top.ids[k as usize][0];
            let pl = &self.inst.placed[i as usize];
            let (geom, proto) = &self.inst.protos[pl.proto];
            if pl.info.mask & ALL_BITS == 0 || proto.geom_masks[0] & ALL_BITS == 0 {
                continue;
            }
            let local_box = proto.local_box();
            let c = pl.to_local.transform_point3(self.s.center);
            let m = pl.to_local.transform_vector3(self.s.motion);
            let eps = (c.abs().max((c + m).abs()).max_element()
                + local_box.max.abs().max(local_box.min.abs()).max_element())
                * (1.0 / 65536.0);
            let r = self.s.radius * pl.inv_norm * (1.0 + 1.0 / 4096.0) + eps;
            let Some(swept) = traverse::SweptSphere::new(c, r, m, &local_box) else { continue };
            let mut stack = TraversalStack::new();
            macro_rules! walk {
                ($kb:expr) => {{
                    let mut w = SweepWalk { kb: $kb, placed: pl, geom: *geom, inst: i, s: self.s, best: self.best };
                    traverse::sweep_binary(&$kb.bvh2, &swept, &mut w, &mut stack);
                }};
            }
            walk!(&proto.tris);
            walk!(&proto.spheres);
            walk!(&proto.boxes);
        }
    }
}

impl Instances {
    /// The closest point through the instances within squared distance `limit`, if it
    /// beats `found` (its squared distance and record).
    pub(crate) fn closest_point(
        &self,
        p: Vec3,
        limit: f32,
        found: Option<(f32, super::ClosestPoint)>,
    ) -> Option<super::ClosestPoint> {
        if self.top.is_empty() {
            return found.map(|f| f.1);
        }
        let mut best: Cand<super::ClosestPoint> = found.map(|(d2, c)| (d2, (c.geom, c.prim, c.inst), c));
        let mut top = TopPoint { inst: self, p, limit, best: &mut best };
        traverse::point_binary(&self.top.bvh2, p, &mut top, &mut TraversalStack::new());
        best.map(|b| b.2)
    }

    /// The first contact of a sweep through the instances, if it beats `found`.
    pub(crate) fn sweep(&self, s: &super::SphereSweep, found: Option<super::SweepHit>) -> Option<super::SweepHit> {
        if self.top.is_empty() || !s.is_valid() {
            return found;
        }
        let Some(swept) = traverse::SweptSphere::new(s.center, s.radius, s.motion, &self.bounds) else {
            return found;
        };
        let mut best: Cand<super::SweepHit> = found.map(|h| (h.toi, (h.geom, h.prim, h.inst), h));
        let mut top = TopSweep { inst: self, s, best: &mut best };
        traverse::sweep_binary(&self.top.bvh2, &swept, &mut top, &mut TraversalStack::new());
        best.map(|b| b.2)
    }
}

impl Scene {
    /// The box of the trees' roots of this scene's kinds (their traversal boxes, which hold
    /// every point a query can report), in its own frame.
    pub(crate) fn local_box(&self) -> Aabb {
        let root = |n: &[crate::bvh::Node2]| n.first().map_or(Aabb::EMPTY, |n| n.aabb());
        root(&self.tris.bvh2).union(&root(&self.spheres.bvh2)).union(&root(&self.boxes.bvh2))
    }

    /// The boxes of this scene's binary trees three levels below their roots (or leaves
    /// above that): up to 24 boxes that hold every point a query can report, tighter than
    /// [`Scene::local_box`] under a rotation.
    pub(crate) fn local_cut(&self) -> Vec<Aabb> {
        fn cut(nodes: &[crate::bvh::Node2], out: &mut Vec<Aabb>) {
            let mut stack = if nodes.is_empty() { vec![] } else { vec![(0usize, 0u32)] };
            while let Some((i, d)) = stack.pop() {
                let n = &nodes[i];
                if n.is_leaf() || d == 3 {
                    out.push(n.aabb());
                } else {
                    stack.push((n.index as usize, d + 1));
                    stack.push((n.index as usize + 1, d + 1));
                }
            }
        }
        let mut out = Vec::new();
        cut(&self.tris.bvh2, &mut out);
        cut(&self.spheres.bvh2, &mut out);
        cut(&self.boxes.bvh2, &mut out);
        out
    }

    /// The scene's instances, in id order.
    pub fn instances(&self) -> Vec<Instance> {
        self.inst.placed.iter().map(|p| p.info).collect()
    }

    /// Moves instance `inst` to `transform` (local → world) and rebuilds the top-level tree
    /// only; every query then answers as a fresh build of the moved scene would.
    ///
    /// # Errors
    /// [`SceneError::InvalidInstance`] for an unknown instance or a transform
    /// [`check_transform`] refuses (the scene is left unchanged).
    pub fn set_transform(&mut self, inst: u32, transform: Affine3A) -> Result<(), SceneError> {
        let opts = self.options;
        self.inst.set_transform(inst, transform, &opts)?;
        self.finish_update();
        Ok(())
    }

    /// Sets the mask of instance `inst` (see [`Instance::mask`]); no rebuild needed.
    ///
    /// # Errors
    /// [`SceneError::InvalidInstance`] for an unknown instance.
    pub fn set_instance_mask(&mut self, inst: u32, mask: u32) -> Result<(), SceneError> {
        let n = self.inst.placed.len();
        let p = self
            .inst
            .placed
            .get_mut(inst as usize)
            .ok_or_else(|| bad_instance(inst, format!("no such instance (there are {n})")))?;
        p.info.mask = mask;
        Ok(())
    }
}

impl Carried for Triangle {
    const HIT_KIND: HitKind = HitKind::Triangle;
    fn nearest(&self, p: Vec3) -> (Vec3, f32, f32, Vec3) {
        let (q, u, v) = cp::triangle_scalar(p, self);
        (q, u, v, self.normal())
    }
}

impl Carried for Sphere {
    const HIT_KIND: HitKind = HitKind::Sphere;
    fn nearest(&self, p: Vec3) -> (Vec3, f32, f32, Vec3) {
        let (q, n) = cp::sphere_scalar(p, self);
        (q, 0.0, 0.0, n)
    }
}

impl Carried for Aabb {
    const HIT_KIND: HitKind = HitKind::Box;
    fn nearest(&self, p: Vec3) -> (Vec3, f32, f32, Vec3) {
        let (q, n) = cp::aabb_scalar(p, self);
        (q, 0.0, 0.0, n)
    }
}
