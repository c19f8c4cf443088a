//! Queries that look at every hit along a ray instead of the nearest: all hits
//! ([`Scene::intersect_all`], batched as flat lists like Open3D's `list_intersections`),
//! crossing counts ([`Scene::count_intersections`]) and inside tests by crossing parity
//! ([`Scene::contains`]). Each is a traversal that never shrinks the ray's interval and
//! never stops early, with the same leaf kernels as the nearest-hit queries.
//!
//! **What counts as a hit.** Every triangle the ray crosses in `[t_min, t_max]` (with the
//! watertight default, a crossing through a shared edge or vertex of a closed, consistently
//! oriented mesh is reported by exactly one triangle; a ray that only grazes a silhouette
//! edge or vertex reports 0 or 2 hits there); each plane the ray meets; and each sphere or
//! box the ray meets, once, at the point [`Scene::intersect`] would report (spheres and
//! boxes are solids: a ray starting inside one hits it at `t_min`).
//!
//! **Inside.** [`Scene::contains`] says whether a point is inside a sphere or box of the
//! scene, or inside its triangle meshes by crossing parity: the number of triangle crossings
//! of a fixed ray from the point ([`CONTAINS_DIR`]) is odd. For closed, consistently
//! oriented meshes (every edge shared by exactly two triangles, traversed in opposite
//! directions) this is the exact inside/outside answer for the mesh as f32 stores it. For an
//! open mesh the answer is that of the ray in [`CONTAINS_DIR`]: well defined and
//! deterministic, but not an "inside" in any geometric sense. Points exactly on a surface
//! may come out either way. Planes enclose nothing.

use super::best::MaskFilter;
use super::kind::{KindBvh, LeafRay, Traceable};
use super::query::{BATCH_CHUNK, Prepared, ScalarRay, WideTrees, batch_tasks};
use super::{Backend, Scene};
use crate::bvh::traverse::{self, Closest, LeafAction, TraversalStack};
use crate::bvh::{Node4, Node8, Node16, WideNode};
use crate::hit::{Hit, HitSoa};
use crate::kernel::ray_plane;
use crate::lanes::{F32x4, F32x8, F32x16, Lanes, Mask};
use crate::prim::{Aabb, Sphere, Triangle};
use crate::ray::{Ray, RaySoa};
use glam::Vec3;
use rayon::prelude::*;

/// The direction of [`Scene::contains`]'s parity ray: fixed, and off every axis and
/// diagonal so that it is rarely parallel to a modelled face.
pub const CONTAINS_DIR: Vec3 = Vec3::new(0.431_615, 0.660_287, 0.614_583);

/// The hits of many rays as flat arrays: the hits of ray `i` are
/// `hits[ray_splits[i]..ray_splits[i + 1]]`, sorted by `t` (ties by `(geom, prim)`). The
/// shape of Open3D's `list_intersections` (`ray_splits`, `ray_ids`, `t_hit`, ids, uvs).
#[derive(Clone, Debug, Default)]
pub struct HitLists {
    /// `rays + 1` offsets into `hits`, starting at 0.
    pub ray_splits: Vec<u64>,
    /// The ray of each hit (its index in the input).
    pub ray_ids: Vec<u64>,
    /// Every hit, ray after ray.
    pub hits: HitSoa,
}

impl HitLists {
    /// Number of rays.
    pub fn rays(&self) -> usize {
        self.ray_splits.len().saturating_sub(1)
    }
    /// The hits of ray `i`, in order.
    ///
    /// # Panics
    /// If `i >= rays()`.
    pub fn of(&self, i: usize) -> Vec<Hit> {
        let (a, b) = (self.ray_splits[i] as usize, self.ray_splits[i + 1] as usize);
        (a..b).map(|k| self.hits.get(k)).collect()
    }
}

/// Where a leaf puts the hits it finds: `(t, u, v, kind, index)`.
trait Sink {
    fn push(&mut self, t: f32, u: f32, v: f32, kind: u8, index: u32);
}

/// A hit before its record is made: `(t, u, v, kind, index)`.
type RawHit = (f32, f32, f32, u8, u32);

/// Collects hits.
impl Sink for Vec<RawHit> {
    #[inline(always)]
    fn push(&mut self, t: f32, u: f32, v: f32, kind: u8, index: u32) {
        Vec::push(self, (t, u, v, kind, index));
    }
}

/// Counts hits.
impl Sink for u32 {
    #[inline(always)]
    fn push(&mut self, _: f32, _: f32, _: f32, _: u8, _: u32) {
        *self += 1;
    }
}

/// Every hit in one leaf, `N` primitives at a time; the interval never shrinks.
struct WideAll<'a, L: Lanes, P: Traceable, S: Sink> {
    kb: &'a KindBvh<P>,
    ray: &'a LeafRay<L>,
    t_max: f32,
    sink: &'a mut S,
}

impl<L: Lanes, P: Traceable, S: Sink> LeafAction for WideAll<'_, L, P, S> {
    #[inline(always)]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline(always)]
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        for (i, lanes) in self.kb.prims.blocks::<L>(first as usize, count as usize) {
            let (m, t, u, v) = P::hit_one(self.ray, self.t_max, &self.kb.prims, i, L::Mask::from_bitmask(lanes));
            let mut bits = m.bitmask();
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.sink.push(t.lane(k), u.lane(k), v.lane(k), P::KIND, (i + k) as u32);
            }
        }
        false
    }
}

/// Every hit in one leaf with the scalar kernels.
struct ScalarAll<'a, P: Traceable, S: Sink> {
    kb: &'a KindBvh<P>,
    ray: &'a ScalarRay,
    sink: &'a mut S,
}

impl<P: Traceable, S: Sink> LeafAction for ScalarAll<'_, P, S> {
    fn t_max(&self) -> f32 {
        self.ray.ray.t_max
    }
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        for k in first as usize..first as usize + count as usize {
            if let Some((t, u, v)) = self.kb.prims.get(k).hit_scalar(&self.ray.ray, &self.ray.sheared, self.ray.test) {
                self.sink.push(t, u, v, P::KIND, k as u32);
            }
        }
        false
    }
}

/// Forwards the hits of the geometries a mask filter admits.
struct Masked<'a, S: Sink> {
    inner: &'a mut S,
    filter: MaskFilter<'a>,
    /// The ids tables by kind: triangles, spheres, boxes, planes.
    ids: [&'a [[u32; 2]]; 4],
}

impl<S: Sink> Sink for Masked<'_, S> {
    #[inline(always)]
    fn push(&mut self, t: f32, u: f32, v: f32, kind: u8, index: u32) {
        if self.filter.admits(self.ids[kind as usize][index as usize][0]) {
            self.inner.push(t, u, v, kind, index);
        }
    }
}

/// Which kinds a walk visits.
#[derive(Clone, Copy)]
struct Kinds {
    triangles: bool,
    solids: bool,
    planes: bool,
}

const ALL_KINDS: Kinds = Kinds { triangles: true, solids: true, planes: true };

impl Scene {
    /// Feeds every hit of a valid `ray` in the chosen kinds whose geometry the ray's mask
    /// admits to `sink`, in no particular order.
    fn walk_all<S: Sink>(&self, ray: &Ray, backend: Backend, kinds: Kinds, sink: &mut S) {
        match self.mask_filter(ray.mask) {
            None => self.walk_kinds(ray, backend, kinds, sink),
            Some(filter) => {
                let ids = [&self.tris.ids[..], &self.spheres.ids[..], &self.boxes.ids[..], &self.plane_ids[..]];
                self.walk_kinds(ray, backend, kinds, &mut Masked { inner: sink, filter, ids });
            }
        }
    }

    /// [`Scene::walk_all`] without the mask test.
    fn walk_kinds<S: Sink>(&self, ray: &Ray, backend: Backend, kinds: Kinds, sink: &mut S) {
        match backend.resolve() {
            Backend::Scalar => {
                let Some(r) = ScalarRay::new(ray, self.triangle_test) else { return };
                let mut stack = TraversalStack::new();
                fn one<P: Traceable, S: Sink>(
                    kb: &KindBvh<P>,
                    r: &ScalarRay,
                    sink: &mut S,
                    stack: &mut TraversalStack,
                ) {
                    let mut action = ScalarAll { kb, ray: r, sink };
                    traverse::ray_binary::<Closest>(&kb.bvh2, &r.ray, &mut action, stack);
                }
                if kinds.triangles {
                    one(&self.tris, &r, sink, &mut stack);
                }
                if kinds.solids {
                    one(&self.spheres, &r, sink, &mut stack);
                    one(&self.boxes, &r, sink, &mut stack);
                }
            }
            Backend::X4 => self.walk_wide::<F32x4, Node4, S>(ray, kinds, sink),
            Backend::X16 if self.has_x16_trees() => self.walk_wide::<F32x16, Node16, S>(ray, kinds, sink),
            _ => self.walk_wide::<F32x8, Node8, S>(ray, kinds, sink),
        }
        if kinds.planes {
            for i in 0..self.planes.len() {
                if let Some(t) = ray_plane::intersect_scalar(ray, &self.planes.get(i)) {
                    sink.push(t, 0.0, 0.0, super::query::PLANE_KIND, i as u32);
                }
            }
        }
    }

    fn walk_wide<L: Lanes, N: WideNode, S: Sink>(&self, ray: &Ray, kinds: Kinds, sink: &mut S)
    where
        KindBvh<Triangle>: WideTrees<N>,
        KindBvh<Sphere>: WideTrees<N>,
        KindBvh<Aabb>: WideTrees<N>,
    {
        if !ray.is_valid() {
            return;
        }
        let pre = Prepared::<L>::new(ray, self.triangle_test);
        let mut stack = TraversalStack::new();
        fn one<L: Lanes, N: WideNode, P: Traceable, S: Sink>(
            kb: &KindBvh<P>,
            pre: &Prepared<L>,
            t_max: f32,
            sink: &mut S,
            stack: &mut TraversalStack,
        ) where
            KindBvh<P>: WideTrees<N>,
        {
            let mut action = WideAll { kb, ray: &pre.leaf, t_max, sink };
            traverse::ray_wide::<Closest, L, N>(kb.tree(), &pre.ray, &mut action, stack);
        }
        if kinds.triangles {
            one::<L, N, _, S>(&self.tris, &pre, ray.t_max, sink, &mut stack);
        }
        if kinds.solids {
            one::<L, N, _, S>(&self.spheres, &pre, ray.t_max, sink, &mut stack);
            one::<L, N, _, S>(&self.boxes, &pre, ray.t_max, sink, &mut stack);
        }
    }

    /// Every hit of `ray` in `[t_min, t_max]`, sorted by `t` (ties by `(geom, prim)`), with
    /// the scene's default backend. See the module docs for what counts as a hit. Empty for
    /// an invalid ray.
    pub fn intersect_all(&self, ray: &Ray) -> Vec<Hit> {
        self.intersect_all_with(ray, self.backend)
    }

    /// [`Scene::intersect_all`] with a given backend (every backend returns the same hits).
    pub fn intersect_all_with(&self, ray: &Ray, backend: Backend) -> Vec<Hit> {
        let mut hits = Vec::new();
        self.append_all(ray, backend, &mut Vec::new(), &mut hits);
        hits
    }

    /// Appends the hits of `ray`, sorted, to `out`; `raw` is scratch.
    fn append_all(&self, ray: &Ray, backend: Backend, raw: &mut Vec<RawHit>, out: &mut Vec<Hit>) {
        raw.clear();
        self.walk_all(ray, backend, ALL_KINDS, raw);
        let start = out.len();
        out.extend(raw.iter().map(|&(t, u, v, k, i)| self.hit_record(ray, t, u, v, k, i)));
        self.inst.all(ray, backend, out);
        out[start..]
            .sort_unstable_by(|a, b| a.t.total_cmp(&b.t).then((a.geom, a.prim, a.inst).cmp(&(b.geom, b.prim, b.inst))));
    }

    /// The hits of every ray of `rays` as flat lists, on all rayon threads, with the scene's
    /// default backend.
    pub fn intersect_all_batch(&self, rays: &RaySoa) -> HitLists {
        self.intersect_all_batch_with(rays, self.backend)
    }

    /// [`Scene::intersect_all_batch`] with a given backend.
    pub fn intersect_all_batch_with(&self, rays: &RaySoa, backend: Backend) -> HitLists {
        // Per chunk of rays: its hits, flat, and where each ray's hits end.
        let per_chunk: Vec<(Vec<Hit>, Vec<usize>)> = batch_tasks((0..rays.len().div_ceil(BATCH_CHUNK)).into_par_iter())
            .map(|c| {
                let end = ((c + 1) * BATCH_CHUNK).min(rays.len());
                let (mut raw, mut hits, mut ends) = (Vec::new(), Vec::new(), Vec::with_capacity(end - c * BATCH_CHUNK));
                for i in c * BATCH_CHUNK..end {
                    rays.prefetch_ahead(i);
                    self.append_all(&rays.ray(i), backend, &mut raw, &mut hits);
                    ends.push(hits.len());
                }
                (hits, ends)
            })
            .collect();
        let total: usize = per_chunk.iter().map(|(h, _)| h.len()).sum();
        let mut out = HitLists {
            ray_splits: Vec::with_capacity(rays.len() + 1),
            ray_ids: Vec::with_capacity(total),
            hits: HitSoa::with_len(total),
        };
        out.ray_splits.push(0);
        let (mut k, mut ray) = (0usize, 0u64);
        for (hits, ends) in &per_chunk {
            let mut from = 0;
            for &to in ends {
                for h in &hits[from..to] {
                    out.hits.set(k, h);
                    out.ray_ids.push(ray);
                    k += 1;
                }
                out.ray_splits.push(k as u64);
                (from, ray) = (to, ray + 1);
            }
        }
        out
    }

    /// The number of hits of `ray` in `[t_min, t_max]` ([`Scene::intersect_all`]'s length,
    /// without allocating), with the scene's default backend. 0 for an invalid ray.
    pub fn count_intersections(&self, ray: &Ray) -> u32 {
        self.count_intersections_with(ray, self.backend)
    }

    /// [`Scene::count_intersections`] with a given backend.
    pub fn count_intersections_with(&self, ray: &Ray, backend: Backend) -> u32 {
        let mut n = 0u32;
        self.walk_all(ray, backend, ALL_KINDS, &mut n);
        n + self.count_instances(ray, backend, ALL_KINDS)
    }

    /// Hits of the valid `ray` in the chosen kinds of the instances it enters.
    fn count_instances(&self, ray: &Ray, backend: Backend, kinds: Kinds) -> u32 {
        let mut n = 0u32;
        self.inst.every(ray, backend, |_, _, _, proto, local| {
            let mut k = 0u32;
            proto.walk_all(local, backend, kinds, &mut k);
            n += k;
        });
        n
    }

    /// [`Scene::count_intersections`] of every ray into `out`, on all rayon threads.
    ///
    /// # Panics
    /// If `out.len() != rays.len()`.
    pub fn count_intersections_batch(&self, rays: &RaySoa, out: &mut [u32]) {
        self.count_intersections_batch_with(rays, out, self.backend)
    }

    /// [`Scene::count_intersections_batch`] with a given backend.
    ///
    /// # Panics
    /// If `out.len() != rays.len()`.
    pub fn count_intersections_batch_with(&self, rays: &RaySoa, out: &mut [u32], backend: Backend) {
        assert_eq!(out.len(), rays.len(), "count_intersections_batch: output length must equal the ray count");
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).enumerate()).for_each(|(c, chunk)| {
            for (i, o) in chunk.iter_mut().enumerate() {
                rays.prefetch_ahead(c * BATCH_CHUNK + i);
                *o = self.count_intersections_with(&rays.ray(c * BATCH_CHUNK + i), backend);
            }
        });
    }

    /// Whether `p` is inside the scene's solids (see the module docs), with the scene's
    /// default backend. `false` for a non-finite point.
    pub fn contains(&self, p: Vec3) -> bool {
        self.contains_with(p, self.backend)
    }

    /// [`Scene::contains`] with a given backend (every backend gives the same answer).
    pub fn contains_with(&self, p: Vec3, backend: Backend) -> bool {
        if !p.is_finite() {
            return false;
        }
        let instanced = !self.inst.is_empty();
        // Inside a solid: a ray from p with the interval [0, 0] hits it.
        if !self.spheres.is_empty() || !self.boxes.is_empty() || instanced {
            const SOLIDS: Kinds = Kinds { triangles: false, solids: true, planes: false };
            let here = Ray { origin: p, dir: CONTAINS_DIR, t_min: 0.0, t_max: 0.0, mask: crate::ray::ALL_BITS };
            let mut n = 0u32;
            self.walk_all(&here, backend, SOLIDS, &mut n);
            if n + self.count_instances(&here, backend, SOLIDS) > 0 {
                return true;
            }
        }
        if self.tris.is_empty() && !instanced {
            return false;
        }
        // Through an instance the ray's direction is carried into its frame; a crossing is a
        // crossing in either frame, so the parity adds up.
        const TRIANGLES: Kinds = Kinds { triangles: true, solids: false, planes: false };
        let ray = Ray { origin: p, dir: CONTAINS_DIR, t_min: 0.0, t_max: f32::INFINITY, mask: crate::ray::ALL_BITS };
        let mut n = 0u32;
        self.walk_all(&ray, backend, TRIANGLES, &mut n);
        (n + self.count_instances(&ray, backend, TRIANGLES)) % 2 == 1
    }

    /// [`Scene::contains`] of every point into `out`, on all rayon threads.
    ///
    /// # Panics
    /// If `out.len() != points.len()`.
    pub fn contains_batch(&self, points: &[Vec3], out: &mut [bool]) {
        self.contains_batch_with(points, out, self.backend)
    }

    /// [`Scene::contains_batch`] with a given backend.
    ///
    /// # Panics
    /// If `out.len() != points.len()`.
    pub fn contains_batch_with(&self, points: &[Vec3], out: &mut [bool], backend: Backend) {
        assert_eq!(out.len(), points.len(), "contains_batch: output length must equal the point count");
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).zip(points.par_chunks(BATCH_CHUNK))).for_each(|(o, p)| {
            for (o, p) in o.iter_mut().zip(p) {
                *o = self.contains_with(*p, backend);
            }
        });
    }
}
