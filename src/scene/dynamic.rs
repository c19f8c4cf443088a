//! Scenes that move: new positions for a geometry's primitives, taken in place by refitting the
//! trees (their shape and leaf order kept, every box recomputed bottom-up:
//! [`crate::bvh::refit`]), and a full rebuild when the moved trees have lost too much quality.
//!
//! Answers after an update equal those of a fresh build of the moved scene exactly: the
//! queries do not depend on the tree's shape (conservative traversal, one tie rule), and a
//! refitted tree holds every moved primitive (checked by [`Scene::validate`]).

use super::kind::{KindBvh, Traceable};
use super::{GeomKind, Scene, SceneError, TriangleTest};
use crate::bvh::refit;
use crate::prim::{Aabb, Soa, Sphere, Triangle};
use glam::Vec3;

fn invalid(geom: u32, what: impl Into<String>) -> SceneError {
    SceneError::InvalidShape { geom, what: what.into() }
}

/// Replaces the primitives of geometry `geom` in `kb` (`new[prim]` for each of its
/// primitives in the tree) and refits the trees made so far.
fn update_kind<P: Traceable>(kb: &mut KindBvh<P>, geom: u32, new: &[P]) {
    let mut prims: Vec<P> = (0..kb.len()).map(|k| kb.prims.get(k)).collect();
    for (p, &[g, prim]) in prims.iter_mut().zip(&kb.ids) {
        if g == geom {
            *p = new[prim as usize];
        }
    }
    kb.prims = Soa::from_slice(&prims);
    let boxes: Vec<Aabb> = prims.iter().map(Traceable::bounds).collect();
    refit::refit_bvh2(&mut kb.bvh2, &boxes);
    if let Some(bvh4) = kb.bvh4_mut() {
        refit::refit_wide(bvh4, &boxes);
    }
    if let Some(bvh8) = kb.bvh8_mut() {
        refit::refit_wide(bvh8, &boxes);
    }
    if let Some(bvh16) = kb.bvh16_mut() {
        refit::refit_wide(bvh16, &boxes);
    }
    kb.bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.union(&p.exact_bounds()));
}

impl Scene {
    /// Checks that `geom` is a geometry of `kind` with `n` primitives.
    fn check_update(&self, geom: u32, kind: GeomKind, n: usize) -> Result<(), SceneError> {
        let Some(info) = self.geoms.get(geom as usize) else {
            return Err(invalid(geom, format!("no such geometry (the scene has {})", self.geoms.len())));
        };
        if info.kind != kind {
            return Err(invalid(geom, format!("is a {:?} geometry, not {kind:?}", info.kind)));
        }
        if info.prims as usize != n {
            return Err(invalid(geom, format!("has {} primitives, {n} given", info.prims)));
        }
        Ok(())
    }

    pub(super) fn finish_update(&mut self) {
        self.bounds = self.tris.bounds.union(&self.spheres.bounds).union(&self.boxes.bounds).union(&self.inst.bounds);
    }

    /// Applies an update to the scene of prototype `k` (its geometry is geometry 0 there),
    /// then the world boxes of its instances and the top-level tree.
    fn update_proto(
        &mut self,
        k: usize,
        f: impl FnOnce(&mut Scene) -> Result<(), SceneError>,
    ) -> Result<(), SceneError> {
        let geom = self.inst.protos[k].0;
        f(&mut self.inst.protos[k].1).map_err(|e| match e {
            SceneError::InvalidShape { what, .. } => invalid(geom, what),
            e => e,
        })?;
        self.geoms[geom as usize].degenerate = self.inst.protos[k].1.geoms()[0].degenerate;
        let o = self.options;
        self.inst.refresh_proto(k, &o)?;
        self.finish_update();
        Ok(())
    }

    /// Moves the triangles of mesh geometry `geom` to `tris` (in prim-id order, as many as it
    /// has) and refits the trees; the scene then answers every query as a fresh build of the
    /// moved scene would. Linear in the scene's primitives and nodes.
    ///
    /// With [`TriangleTest::MollerTrumbore`], whose trees leave degenerate triangles out, the
    /// mesh must have had none and the new triangles must not be degenerate either (rebuild
    /// the scene from a builder otherwise).
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] (and the scene unchanged) for an unknown geometry, another
    /// kind, another count, a non-finite vertex, or a degeneracy Möller–Trumbore cannot take.
    pub fn update_triangles(&mut self, geom: u32, tris: &[Triangle]) -> Result<(), SceneError> {
        self.check_update(geom, GeomKind::Mesh, tris.len())?;
        if let Some(k) = tris.iter().position(|t| !t.is_valid()) {
            return Err(invalid(geom, format!("triangle {k} has a non-finite vertex: {:?}", tris[k].v)));
        }
        if self.triangle_test == TriangleTest::MollerTrumbore {
            let degenerate = self.geoms[geom as usize].degenerate;
            if degenerate > 0 {
                return Err(invalid(
                    geom,
                    format!(
                        "has {degenerate} degenerate triangles, which Möller–Trumbore trees leave out: rebuild instead"
                    ),
                ));
            }
            if let Some(k) = tris.iter().position(Triangle::is_degenerate) {
                return Err(invalid(
                    geom,
                    format!(
                        "triangle {k} would be degenerate, which Möller–Trumbore trees cannot hold: rebuild instead"
                    ),
                ));
            }
        } else {
            self.geoms[geom as usize].degenerate = tris.iter().filter(|t| t.is_degenerate()).count() as u32;
        }
        if let Some(k) = self.inst.proto_of(geom) {
            return self.update_proto(k, |s| s.update_triangles(0, tris));
        }
        update_kind(&mut self.tris, geom, tris);
        self.finish_update();
        Ok(())
    }

    /// [`Scene::update_triangles`] from new vertex positions of a mesh added with
    /// [`super::SceneBuilder::add_mesh`] (whose index buffer the scene keeps): the mesh's
    /// triangles are rebuilt from `positions` (as many as it had) and its indices.
    ///
    /// # Errors
    /// As [`Scene::update_triangles`]; also for a mesh not added with `add_mesh` or another
    /// vertex count.
    pub fn update_positions(&mut self, geom: u32, positions: &[[f32; 3]]) -> Result<(), SceneError> {
        let n = self.geoms.get(geom as usize).map_or(0, |g| g.prims as usize);
        self.check_update(geom, GeomKind::Mesh, n)?;
        let Some((_, vertices, indices)) = self.mesh_indices.iter().find(|m| m.0 == geom) else {
            return Err(invalid(geom, "was not added with add_mesh (no index buffer): use update_triangles"));
        };
        if *vertices != positions.len() {
            return Err(invalid(geom, format!("has {vertices} vertices, {} given", positions.len())));
        }
        let at = |i: u32| Vec3::from(positions[i as usize]);
        let tris: Vec<Triangle> = indices.iter().map(|ix| Triangle::new(at(ix[0]), at(ix[1]), at(ix[2]))).collect();
        self.update_triangles(geom, &tris)
    }

    /// Moves the spheres of sphere-set geometry `geom` to `spheres` (prim-id order, as many as
    /// it has) and refits the trees.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] (and the scene unchanged) for an unknown geometry, another
    /// kind, another count or an invalid sphere.
    pub fn update_spheres(&mut self, geom: u32, spheres: &[Sphere]) -> Result<(), SceneError> {
        self.check_update(geom, GeomKind::Spheres, spheres.len())?;
        if let Some(k) = spheres.iter().position(|s| !s.is_valid()) {
            return Err(invalid(geom, format!("sphere {k} is invalid ({:?})", spheres[k])));
        }
        if let Some(k) = self.inst.proto_of(geom) {
            return self.update_proto(k, |s| s.update_spheres(0, spheres));
        }
        update_kind(&mut self.spheres, geom, spheres);
        self.finish_update();
        Ok(())
    }

    /// Moves the boxes of box-set geometry `geom` to `boxes` (prim-id order, as many as it
    /// has) and refits the trees.
    ///
    /// # Errors
    /// As [`Scene::update_spheres`].
    pub fn update_boxes(&mut self, geom: u32, boxes: &[Aabb]) -> Result<(), SceneError> {
        self.check_update(geom, GeomKind::Boxes, boxes.len())?;
        if let Some(k) = boxes.iter().position(|b| !b.is_valid()) {
            return Err(invalid(geom, format!("box {k} is invalid ({:?})", boxes[k])));
        }
        if let Some(k) = self.inst.proto_of(geom) {
            return self.update_proto(k, |s| s.update_boxes(0, boxes));
        }
        update_kind(&mut self.boxes, geom, boxes);
        self.finish_update();
        Ok(())
    }

    /// Rebuilds every tree from the primitives as they are now, with the scene's build
    /// options: the full quality of a fresh build again after many updates. (The trees are
    /// per primitive kind, not per geometry, so this rebuilds the kinds' trees whole, and the
    /// placed geometries' trees and the top-level tree of the instances.)
    ///
    /// # Errors
    /// [`SceneError::Limit`] as [`super::SceneBuilder::build`].
    pub fn rebuild(&mut self) -> Result<(), SceneError> {
        fn again<P: Traceable>(
            kb: &KindBvh<P>,
            o: &crate::bvh::BuildOptions,
            what: &'static str,
        ) -> Result<KindBvh<P>, SceneError> {
            let prims: Vec<P> = (0..kb.len()).map(|k| kb.prims.get(k)).collect();
            KindBvh::build(prims, kb.ids.clone(), o).map_err(|source| SceneError::Limit { what, source })
        }
        let o = self.options;
        self.tris = again(&self.tris, &o, "triangles")?;
        self.spheres = again(&self.spheres, &o, "spheres")?;
        self.boxes = again(&self.boxes, &o, "boxes")?;
        for (_, proto) in &mut self.inst.protos {
            proto.rebuild()?;
        }
        self.inst.rebuild_top(&o)?;
        self.finish_update();
        Ok(())
    }
}
