//! Scenes that move: after `update_positions` / `update_triangles` / `update_spheres` /
//! `update_boxes` (a refit) and after `rebuild`, every query equals the same query on a fresh
//! build of the moved scene, in every backend, and `validate()` passes; bad updates are typed
//! errors that leave the scene as it was.

use glam::Vec3;
use lanecast::prim::{Aabb, Plane, Sphere, Triangle};
use lanecast::rng::Rng;
use lanecast::{Backend, Ray, Scene, SceneBuilder, SceneError, SphereSweep, TriangleTest};

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

/// The source data of a scene: a mesh with shared vertices (geometry 0), a sphere set (1), a
/// box set (2), a triangle soup (3) and a plane (4).
#[derive(Clone)]
struct World {
    positions: Vec<[f32; 3]>,
    indices: Vec<[u32; 3]>,
    spheres: Vec<Sphere>,
    boxes: Vec<Aabb>,
    soup: Vec<Triangle>,
}

fn random_world(rng: &mut Rng) -> World {
    // A bumpy grid: 40 × 40 vertices, two triangles per cell.
    let n = 40;
    let mut positions = Vec::new();
    for i in 0..n {
        for j in 0..n {
            positions.push([i as f32 * 0.5 - 10.0, rng.range(-0.5, 0.5), j as f32 * 0.5 - 10.0]);
        }
    }
    let mut indices = Vec::new();
    for i in 0..n - 1 {
        for j in 0..n - 1 {
            let v = (i * n + j) as u32;
            indices.push([v, v + 1, v + n as u32]);
            indices.push([v + 1, v + n as u32 + 1, v + n as u32]);
        }
    }
    let spheres = (0..300).map(|_| Sphere::new(rng.vec3(-10.0, 10.0), rng.range(0.1, 0.8))).collect();
    let boxes = (0..300)
        .map(|_| {
            let c = rng.vec3(-10.0, 10.0);
            let h = rng.vec3(0.05, 0.8);
            Aabb::new(c - h, c + h)
        })
        .collect();
    let soup = (0..300)
        .map(|_| {
            let c = rng.vec3(-10.0, 10.0);
            Triangle::new(c + rng.unit_vec3(), c + rng.unit_vec3(), c + rng.unit_vec3())
        })
        .collect();
    World { positions, indices, spheres, boxes, soup }
}

fn build(w: &World, test: TriangleTest) -> Scene {
    let mut b = SceneBuilder::new().triangle_test(test);
    assert_eq!(b.add_mesh(&w.positions, &w.indices).unwrap(), 0);
    assert_eq!(b.add_spheres(&w.spheres).unwrap(), 1);
    assert_eq!(b.add_boxes(&w.boxes).unwrap(), 2);
    assert_eq!(b.add_triangles(&w.soup).unwrap(), 3);
    assert_eq!(b.add_plane(Plane::new(Vec3::new(0.1, 1.0, 0.0), -12.0)).unwrap(), 4);
    b.build().unwrap()
}

/// Moves everything, some of it far (across the whole world), some a little.
fn moved(w: &World, rng: &mut Rng, step: f32) -> World {
    let mut m = w.clone();
    for p in &mut m.positions {
        p[1] += rng.range(-1.0, 1.0) * step;
    }
    for s in &mut m.spheres {
        s.center += rng.vec3(-3.0, 3.0) * step;
    }
    for b in &mut m.boxes {
        let d = rng.vec3(-3.0, 3.0) * step;
        *b = Aabb::new(b.min + d, b.max + d);
    }
    for t in &mut m.soup {
        let d = rng.vec3(-8.0, 8.0) * step;
        t.v = t.v.map(|v| v + d);
    }
    m
}

/// Every query of `got` equals the same query of `want` on seeded rays, segments, points and
/// sweeps through the world.
fn same_answers(got: &Scene, want: &Scene, rng: &mut Rng) -> usize {
    let mut hits = 0;
    for _ in 0..if cfg!(debug_assertions) { 200 } else { 2000 } {
        let ray = Ray::new(rng.vec3(-12.0, 12.0), rng.unit_vec3());
        let p = rng.vec3(-12.0, 12.0);
        let sweep = SphereSweep::new(p, rng.range(0.0, 0.5), rng.vec3(-6.0, 6.0));
        for be in BACKENDS {
            let h = got.intersect_with(&ray, be);
            assert_eq!(h, want.intersect_with(&ray, be), "{be:?} {ray:?}");
            hits += usize::from(h.is_some());
            assert_eq!(got.occluded_with(&ray, be), want.occluded_with(&ray, be), "{be:?} {ray:?}");
            assert_eq!(got.closest_point_with(p, be), want.closest_point_with(p, be), "{be:?} {p}");
            assert_eq!(got.sweep_with(&sweep, be), want.sweep_with(&sweep, be), "{be:?} {sweep:?}");
        }
        assert_eq!(got.count_intersections(&ray), want.count_intersections(&ray), "{ray:?}");
        assert_eq!(got.contains(p), want.contains(p), "{p}");
    }
    assert_eq!(got.bounds(), want.bounds());
    hits
}

#[test]
fn refitted_scenes_answer_as_fresh_builds_of_the_moved_scene() {
    for test in [TriangleTest::Watertight, TriangleTest::MollerTrumbore] {
        let mut rng = Rng::new(41);
        let mut w = random_world(&mut rng);
        let mut scene = build(&w, test);
        for (round, step) in [0.05f32, 1.0, 3.0].into_iter().enumerate() {
            w = moved(&w, &mut rng, step);
            scene.update_positions(0, &w.positions).unwrap();
            scene.update_spheres(1, &w.spheres).unwrap();
            scene.update_boxes(2, &w.boxes).unwrap();
            scene.update_triangles(3, &w.soup).unwrap();
            scene.validate().unwrap_or_else(|e| panic!("{test:?} round {round}: {e}"));
            let fresh = build(&w, test);
            let hits = same_answers(&scene, &fresh, &mut rng);
            assert!(hits > 500, "{test:?} round {round}: only {hits} hits compared");
        }
        // The refitted trees lost quality (the soup moved far); a rebuild gives a fresh
        // build's quality back, and the same answers.
        let fresh = build(&w, test);
        let refitted = scene.stats().sah_cost;
        scene.rebuild().unwrap();
        scene.validate().unwrap();
        same_answers(&scene, &fresh, &mut rng);
        let (rebuilt, want) = (scene.stats().sah_cost, fresh.stats().sah_cost);
        assert!(refitted > 1.1 * rebuilt, "{test:?}: refitted SAH {refitted}, rebuilt {rebuilt}");
        assert!(rebuilt <= 1.05 * want, "{test:?}: rebuilt SAH {rebuilt}, fresh {want}");
    }
}

#[test]
fn moving_one_geometry_leaves_the_others_where_they_are() {
    let mut rng = Rng::new(5);
    let w = random_world(&mut rng);
    let mut scene = build(&w, TriangleTest::Watertight);
    let mut m = w.clone();
    m.spheres.iter_mut().for_each(|s| s.center.y += 30.0); // all spheres far above
    scene.update_spheres(1, &m.spheres).unwrap();
    same_answers(&scene, &build(&m, TriangleTest::Watertight), &mut rng);
}

#[test]
fn bad_updates_are_typed_errors_and_change_nothing() {
    let mut rng = Rng::new(9);
    let w = random_world(&mut rng);
    let mut scene = build(&w, TriangleTest::Watertight);
    let before = scene.clone();
    let invalid = |r: Result<(), SceneError>, geom: u32, words: &str| match r {
        Err(SceneError::InvalidShape { geom: g, what }) => {
            assert_eq!(g, geom);
            assert!(what.contains(words), "{what:?} does not say {words:?}");
        }
        other => panic!("expected InvalidShape, got {other:?}"),
    };
    invalid(scene.update_positions(0, &w.positions[1..]), 0, "vertices");
    let mut nan = w.positions.clone();
    nan[7][2] = f32::NAN;
    invalid(scene.update_positions(0, &nan), 0, "non-finite");
    invalid(scene.update_positions(3, &w.positions), 3, "add_mesh");
    invalid(scene.update_positions(9, &w.positions), 9, "no such geometry");
    invalid(scene.update_spheres(2, &w.spheres), 2, "not Spheres");
    invalid(scene.update_spheres(1, &w.spheres[1..]), 1, "primitives");
    invalid(scene.update_spheres(1, &[Sphere::new(Vec3::ZERO, -1.0); 300]), 1, "sphere 0 is invalid");
    invalid(scene.update_boxes(2, &[Aabb::new(Vec3::ONE, Vec3::ZERO); 300]), 2, "box 0 is invalid");
    invalid(scene.update_triangles(4, &[]), 4, "not Mesh");
    same_answers(&scene, &before, &mut rng);

    // Möller–Trumbore trees cannot take a triangle that becomes degenerate.
    let mut mt = build(&w, TriangleTest::MollerTrumbore);
    let mut flat = w.soup.clone();
    flat[3] = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::X * 2.0);
    invalid(mt.update_triangles(3, &flat), 3, "degenerate");
    // The watertight default keeps degenerate triangles, so it can.
    scene.update_triangles(3, &flat).unwrap();
    scene.validate().unwrap();
}
