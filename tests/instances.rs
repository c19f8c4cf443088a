//! Instances: every query on a scene with instances (rotated, scaled, mirrored, nested-scale
//! and axis-permuting transforms) against the same query on the flattened scene, whose
//! primitives this test carries into the world itself; the instanced scene against its own
//! brute force exactly; packets against single rays exactly; masks; `set_transform` and
//! updates of a placed geometry against a fresh build; bad instances as typed errors.
//!
//! Tolerances (what the README and `scene::instance` promise): the instanced query tests the
//! ray carried into the instance's frame, the flattened one the primitives carried into the
//! world, so the two round differently. Where both hit the same primitive, `t` (and a
//! distance, or a time of impact times the motion's length) agrees within
//! `T_TOL · (|t·d| + extent)` with `extent` the scene's size and position scale, and normals
//! within `N_TOL`. They may disagree on what is hit only where the flattened scene itself
//! changes its answer when the query moves by 10⁻⁴ of the scene's size (a boundary).

use glam::{Affine3A, Mat3, Quat, Vec3};
use lanecast::prim::{Aabb, Plane, Sphere, Triangle};
use lanecast::rng::Rng;
use lanecast::scene::PacketScratch;
use lanecast::{
    Backend, F32x4, F32x8, Hit, HitKind, HitPacket, Mask, Ray, RayPacket, Scene, SceneBuilder, SceneError, SphereSweep,
};

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];
/// Relative tolerance of `t`, distances and contact times (see the module docs).
const T_TOL: f32 = 2e-5;
/// Tolerance of unit normals (component-wise).
const N_TOL: f32 = 2e-3;
const NO_ID: u32 = u32::MAX;

/// A closed octahedron mesh (for `contains`).
fn octahedron(c: Vec3, r: f32) -> Vec<Triangle> {
    let p = [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z].map(|v| c + v * r);
    let f = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]];
    f.iter().map(|f| Triangle::new(p[f[0]], p[f[1]], p[f[2]])).collect()
}

/// The shapes of a test world: the scene's own geometries, the prototypes, the instances.
struct World {
    own_soup: Vec<Triangle>,
    own_spheres: Vec<Sphere>,
    plane: Option<Plane>,
    proto_mesh: Vec<Triangle>,
    proto_closed: Vec<Triangle>,
    proto_spheres: Vec<Sphere>,
    proto_boxes: Vec<Aabb>,
    /// `(prototype 0..4, transform)`.
    instances: Vec<(usize, Affine3A)>,
}

fn random_rotation(rng: &mut Rng) -> Quat {
    Quat::from_axis_angle(rng.unit_vec3(), rng.range(0.0, std::f32::consts::TAU))
}

/// Transforms of every shape the issue names, for a prototype of kind `k`.
fn random_transform(rng: &mut Rng, k: usize, i: usize) -> Affine3A {
    let at = rng.vec3(-8.0, 8.0);
    match k {
        // Meshes: any affine map.
        0 | 1 => match i % 4 {
            0 => Affine3A::from_rotation_translation(random_rotation(rng), at),
            1 => Affine3A::from_scale_rotation_translation(rng.vec3(0.3, 2.5), random_rotation(rng), at),
            2 => {
                // Mirrored: negative determinant.
                let m = Mat3::from_quat(random_rotation(rng)) * Mat3::from_diagonal(Vec3::new(-1.0, 1.0, 1.0));
                Affine3A::from_mat3_translation(m * Mat3::from_diagonal(rng.vec3(0.5, 2.0)), at)
            }
            _ => {
                // Nested scales: scale · rotation · scale · rotation (a shear overall).
                let a = Mat3::from_diagonal(rng.vec3(0.5, 2.0)) * Mat3::from_quat(random_rotation(rng));
                let b = Mat3::from_diagonal(rng.vec3(0.5, 2.0)) * Mat3::from_quat(random_rotation(rng));
                Affine3A::from_mat3_translation(a * b, at)
            }
        },
        // Spheres: similarities, mirrored or not.
        2 => {
            let s = rng.range(0.4, 2.5);
            let mirror = if i.is_multiple_of(2) { 1.0 } else { -1.0 };
            Affine3A::from_mat3_translation(Mat3::from_quat(random_rotation(rng)) * (s * mirror), at)
        }
        // Boxes: axes permuted, mirrored, scaled.
        _ => {
            let perm = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]][i % 6];
            let mut cols = [Vec3::ZERO; 3];
            for (c, &p) in cols.iter_mut().zip(&perm) {
                let sign = if rng.range(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 };
                let mut v = Vec3::ZERO;
                v[p] = sign * rng.range(0.5, 2.0);
                *c = v;
            }
            Affine3A::from_mat3_translation(Mat3::from_cols(cols[0], cols[1], cols[2]), at)
        }
    }
}

fn random_world(rng: &mut Rng, instances: usize, with_plane: bool) -> World {
    let tri = |rng: &mut Rng, spread: f32, size: f32| {
        let c = rng.vec3(-spread, spread);
        Triangle::new(c + rng.unit_vec3() * size, c + rng.unit_vec3() * size, c + rng.unit_vec3() * size)
    };
    World {
        own_soup: (0..60).map(|_| tri(rng, 9.0, 1.0)).collect(),
        own_spheres: (0..20).map(|_| Sphere::new(rng.vec3(-9.0, 9.0), rng.range(0.1, 0.6))).collect(),
        plane: with_plane.then(|| Plane::new(Vec3::Y, -11.0)),
        proto_mesh: (0..40).map(|_| tri(rng, 1.5, 0.6)).collect(),
        proto_closed: octahedron(rng.vec3(-0.3, 0.3), 1.0),
        proto_spheres: (0..12).map(|_| Sphere::new(rng.vec3(-1.5, 1.5), rng.range(0.1, 0.5))).collect(),
        proto_boxes: (0..12)
            .map(|_| {
                let c = rng.vec3(-1.5, 1.5);
                let h = rng.vec3(0.05, 0.5);
                Aabb::new(c - h, c + h)
            })
            .collect(),
        instances: (0..instances)
            .map(|i| {
                let k = i % 4;
                (k, random_transform(rng, k, i / 4))
            })
            .collect(),
    }
}

/// Adds the world's own geometries (soup 0, spheres 1, plane 2 if any); returns the next
/// geometry id.
fn add_own(b: &mut SceneBuilder, w: &World) -> u32 {
    b.add_triangles(&w.own_soup).unwrap();
    b.add_spheres(&w.own_spheres).unwrap();
    if let Some(p) = w.plane {
        b.add_plane(p).unwrap();
    }
    b.geoms().len() as u32
}

/// Geometry ids: own soup 0, own spheres 1, plane 2 (if any), then the four prototypes.
fn build_instanced(w: &World) -> (Scene, u32) {
    let mut b = SceneBuilder::new();
    let first = add_own(&mut b, w);
    let protos = [
        b.add_triangles(&w.proto_mesh).unwrap(),
        b.add_triangles(&w.proto_closed).unwrap(),
        b.add_spheres(&w.proto_spheres).unwrap(),
        b.add_boxes(&w.proto_boxes).unwrap(),
    ];
    for (i, &(k, m)) in w.instances.iter().enumerate() {
        assert_eq!(b.add_instance(protos[k], m).unwrap(), i as u32);
    }
    (b.build().unwrap(), first)
}

/// The flattened scene: the own geometries with the same ids, then one geometry per
/// instance (id `flat_first + inst`) holding its prototype's primitives carried into the
/// world here, with plain glam arithmetic.
fn build_flat(w: &World) -> (Scene, u32) {
    let mut b = SceneBuilder::new();
    let first = add_own(&mut b, w);
    for &(k, m) in &w.instances {
        let pt = |v: Vec3| m.transform_point3(v);
        match k {
            0 | 1 => {
                let src = if k == 0 { &w.proto_mesh } else { &w.proto_closed };
                let t: Vec<Triangle> = src.iter().map(|t| Triangle::new(pt(t.v[0]), pt(t.v[1]), pt(t.v[2]))).collect();
                b.add_triangles(&t).unwrap();
            }
            2 => {
                let s = m.matrix3.determinant().abs().cbrt();
                let set: Vec<Sphere> =
                    w.proto_spheres.iter().map(|x| Sphere::new(pt(x.center), x.radius * s)).collect();
                b.add_spheres(&set).unwrap();
            }
            _ => {
                let set: Vec<Aabb> = w
                    .proto_boxes
                    .iter()
                    .map(|x| {
                        let (a, c) = (pt(x.min), pt(x.max));
                        Aabb::new(a.min(c), a.max(c))
                    })
                    .collect();
                b.add_boxes(&set).unwrap();
            }
        }
    }
    (b.build().unwrap(), first)
}

/// An instanced answer's ids in the flattened scene.
fn flat_ids(geom: u32, prim: u32, inst: u32, flat_first: u32) -> (u32, u32) {
    if inst == NO_ID { (geom, prim) } else { (flat_first + inst, prim) }
}

fn random_ray(rng: &mut Rng) -> Ray {
    let o = rng.vec3(-14.0, 14.0);
    let target = rng.vec3(-9.0, 9.0);
    Ray::new(o, (target - o) * rng.range(0.2, 3.0))
}

/// The flattened scene changes its answer when `ray` moves by 10⁻⁴ of the scene's size.
fn fragile_ray(flat: &Scene, ray: &Ray) -> bool {
    let id = |h: Option<Hit>| h.map(|h| (h.geom, h.prim));
    let base = id(flat.intersect_with(ray, Backend::Scalar));
    let d = 2e-3;
    [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z].iter().any(|&e| {
        let moved = Ray { origin: ray.origin + e * d, ..*ray };
        id(flat.intersect_with(&moved, Backend::Scalar)) != base
    })
}

fn extent(ray: &Ray, t: f32) -> f32 {
    (ray.dir * t).length() + 20.0 + ray.origin.abs().max_element()
}

fn assert_normal(a: Vec3, b: Vec3, what: &str) {
    assert!((a - b).abs().max_element() <= N_TOL, "{what}: normal {a} against {b}");
}

#[test]
fn rays_through_instances_equal_the_flattened_scene() {
    let mut rng = Rng::new(0x1357);
    let (mut checked, mut fragile) = (0usize, 0usize);
    let mut worst = 0.0f32;
    for round in 0..6 {
        let w = random_world(&mut rng, 24, round % 2 == 0);
        let (scene, first) = build_instanced(&w);
        let (flat, flat_first) = build_flat(&w);
        scene.validate().unwrap();
        for _ in 0..1500 {
            let ray = random_ray(&mut rng);
            let want = flat.intersect_with(&ray, Backend::Scalar);
            for b in BACKENDS {
                let got = scene.intersect_with(&ray, b);
                checked += 1;
                let same = match (got, want) {
                    (None, None) => true,
                    (Some(g), Some(f)) => flat_ids(g.geom, g.prim, g.inst, flat_first) == (f.geom, f.prim),
                    _ => false,
                };
                if !same {
                    assert!(fragile_ray(&flat, &ray), "{b:?}: {ray:?}: instanced {got:?}, flattened {want:?}");
                    fragile += 1;
                    continue;
                }
                if let (Some(g), Some(f)) = (got, want) {
                    let err = (g.t - f.t).abs() * ray.dir.length() / extent(&ray, f.t);
                    worst = worst.max(err);
                    assert!(err <= T_TOL, "{b:?}: t {} against {} (relative {err})", g.t, f.t);
                    assert_normal(g.normal, f.normal, "closest hit");
                    assert_eq!(g.kind, f.kind);
                    assert!((g.u - f.u).abs() < 1e-3 && (g.v - f.v).abs() < 1e-3, "{g:?} {f:?}");
                    // Ids: the placed geometry's own id, and the instance.
                    if g.inst != NO_ID {
                        assert_eq!(g.geom, first + w.instances[g.inst as usize].0 as u32);
                    } else {
                        assert!(g.geom < first);
                    }
                }
                // Any hit.
                let any = scene.occluded_with(&ray, b);
                if any != flat.occluded_with(&ray, Backend::Scalar) {
                    assert!(fragile_ray(&flat, &ray), "{b:?}: occluded {any} on {ray:?}");
                }
                // Brute force through the instances: exactly the tree's answer.
                assert_eq!(got, scene.intersect_brute_force_with(&ray, b), "{b:?}: brute force, {ray:?}");
            }
        }
    }
    println!("{checked} rays x backends, {fragile} on a boundary, worst relative t error {worst:e}");
    assert!(fragile * 200 < checked, "{fragile} boundary disagreements of {checked}");
}

#[test]
fn packets_through_instances_equal_single_rays() {
    let mut rng = Rng::new(0x2468);
    let w = random_world(&mut rng, 20, true);
    let (scene, _) = build_instanced(&w);
    let mut scratch = PacketScratch::default();
    for _ in 0..300 {
        let rays: Vec<Ray> = (0..8).map(|_| random_ray(&mut rng)).collect();
        for b in [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16] {
            let p8 = RayPacket::<F32x8>::from_rays(&rays).unwrap();
            let mut out = HitPacket::default();
            scene.intersect_packet_with(&p8, &mut out, &mut scratch, b);
            let occ = scene.occluded_packet_with(&p8, &mut scratch, b);
            for (i, r) in rays.iter().enumerate() {
                let single = scene.intersect_with(r, b).unwrap_or(Hit::MISS);
                assert_eq!(out.lane(i), single, "{b:?} lane {i}");
                assert_eq!(occ.lane(i), scene.occluded_with(r, b), "{b:?} lane {i}");
            }
            let p4 = RayPacket::<F32x4>::from_rays(&rays[..4]).unwrap();
            let mut out4 = HitPacket::default();
            scene.intersect_packet_with(&p4, &mut out4, &mut scratch, b);
            for (i, r) in rays[..4].iter().enumerate() {
                assert_eq!(out4.lane(i), scene.intersect_with(r, b).unwrap_or(Hit::MISS));
            }
        }
    }
}

#[test]
fn every_hit_counts_and_inside_tests_equal_the_flattened_scene() {
    let mut rng = Rng::new(0x5151);
    let (mut n, mut fragile) = (0usize, 0usize);
    for _ in 0..3 {
        let w = random_world(&mut rng, 24, false);
        let (scene, _) = build_instanced(&w);
        let (flat, flat_first) = build_flat(&w);
        for _ in 0..600 {
            let ray = random_ray(&mut rng);
            let mut want: Vec<(u32, u32)> =
                flat.intersect_all_with(&ray, Backend::Scalar).iter().map(|h| (h.geom, h.prim)).collect();
            want.sort_unstable();
            for b in BACKENDS {
                n += 1;
                let all = scene.intersect_all_with(&ray, b);
                assert!(all.windows(2).all(|p| p[0].t <= p[1].t), "sorted by t");
                let mut got: Vec<(u32, u32)> =
                    all.iter().map(|h| flat_ids(h.geom, h.prim, h.inst, flat_first)).collect();
                got.sort_unstable();
                let count = scene.count_intersections_with(&ray, b);
                assert_eq!(count as usize, all.len(), "{b:?}: count against the list");
                if got != want {
                    assert!(
                        fragile_ray(&flat, &ray) || near_edge(&flat, &ray),
                        "{b:?}: {ray:?}: {got:?} against {want:?}"
                    );
                    fragile += 1;
                }
            }
        }
        // Inside: closed octahedra and solids, placed.
        for _ in 0..1500 {
            let p = rng.vec3(-10.0, 10.0);
            let want = flat.contains_with(p, Backend::Scalar);
            for b in BACKENDS {
                n += 1;
                if scene.contains_with(p, b) != want {
                    let moved = [Vec3::X, Vec3::Y, Vec3::Z].iter().any(|&e| flat.contains(p + e * 1e-3) != want);
                    assert!(moved, "{b:?}: contains {p}: flattened {want}");
                    fragile += 1;
                }
            }
        }
    }
    assert!(fragile * 200 < n, "{fragile} boundary disagreements of {n}");
}

/// Some hit of `ray` in the flattened scene lies within 10⁻⁴ of a triangle's edge.
fn near_edge(flat: &Scene, ray: &Ray) -> bool {
    flat.intersect_all_with(ray, Backend::Scalar)
        .iter()
        .any(|h| h.kind == HitKind::Triangle && h.u.min(h.v).min(1.0 - h.u - h.v) < 1e-4)
}

#[test]
fn point_queries_through_instances_equal_the_flattened_scene() {
    let mut rng = Rng::new(0x7777);
    for round in 0..3 {
        let w = random_world(&mut rng, 24, round == 0);
        let (scene, _) = build_instanced(&w);
        let (flat, flat_first) = build_flat(&w);
        for _ in 0..800 {
            let p = rng.vec3(-14.0, 14.0);
            let want = flat.closest_point_with(p, Backend::Scalar).unwrap();
            for b in BACKENDS {
                let got = scene.closest_point_with(p, b).unwrap();
                let tol = T_TOL * (want.distance + 20.0 + p.abs().max_element());
                assert!((got.distance - want.distance).abs() <= tol, "{b:?}: {p}: {got:?} against {want:?}");
                if flat_ids(got.geom, got.prim, got.inst, flat_first) == (want.geom, want.prim) {
                    assert!((got.point - want.point).abs().max_element() <= tol * 4.0, "{got:?} {want:?}");
                    assert_normal(got.normal, want.normal, "closest point");
                } else {
                    // Two primitives at the same distance (within rounding).
                    let other = flat.closest_point_within_with(p, want.distance + tol, Backend::Scalar).unwrap();
                    assert!((other.distance - got.distance).abs() <= tol, "{b:?}: {p}: {got:?} against {want:?}");
                }
                // A search radius just below the distance finds nothing nearer.
                if got.distance > 1e-3 {
                    let r = got.distance * (1.0 - 1e-3);
                    assert!(scene.closest_point_within_with(p, r, b).is_none_or(|c| c.distance <= r));
                }
            }
        }
    }
}

#[test]
fn sweeps_through_instances_equal_the_flattened_scene() {
    let mut rng = Rng::new(0x9999);
    let (mut n, mut odd) = (0usize, 0usize);
    for round in 0..3 {
        let w = random_world(&mut rng, 24, round == 1);
        let (scene, _) = build_instanced(&w);
        let (flat, flat_first) = build_flat(&w);
        for _ in 0..800 {
            let s = SphereSweep::new(rng.vec3(-12.0, 12.0), rng.range(0.0, 0.8), rng.vec3(-12.0, 12.0));
            let want = flat.sweep_with(&s, Backend::Scalar);
            for b in BACKENDS {
                n += 1;
                let got = scene.sweep_with(&s, b);
                assert_eq!(got.is_some(), want.is_some(), "{b:?}: {s:?}: {got:?} against {want:?}");
                let (Some(g), Some(f)) = (got, want) else { continue };
                let scale = s.motion.length().max(1e-6);
                let tol = T_TOL * (20.0 + s.center.abs().max_element() + scale) / scale;
                assert!((g.toi - f.toi).abs() <= tol, "{b:?}: toi {} against {} ({s:?})", g.toi, f.toi);
                if flat_ids(g.geom, g.prim, g.inst, flat_first) != (f.geom, f.prim) {
                    odd += 1; // two contacts at the same time within rounding
                } else if g.toi > 0.0 {
                    assert_normal(g.normal, f.normal, "sweep");
                }
            }
        }
    }
    assert!(odd * 100 < n, "{odd} different contacts of {n}");
}

#[test]
fn mirrored_instances_keep_the_world_triangles_normal() {
    // The triangle (0,0,0) (1,0,0) (0,1,0) has normal +z; mirrored in x it is the world
    // triangle (0,0,0) (-1,0,0) (0,1,0), whose normal cross(p1 - p0, p2 - p0) is -z.
    let mut b = SceneBuilder::new();
    let t = b.add_triangle(Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y)).unwrap();
    let mirror = Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let i = b.add_instance(t, mirror).unwrap();
    let scene = b.build().unwrap();
    for bk in BACKENDS {
        let h = scene.intersect_with(&Ray::new(Vec3::new(-0.2, 0.2, 5.0), -Vec3::Z), bk).unwrap();
        assert_eq!((h.geom, h.prim, h.inst), (t, 0, i));
        assert!((h.t - 5.0).abs() < 1e-5);
        assert_eq!(h.normal, -Vec3::Z, "{bk:?}");
        assert!((h.u - 0.2).abs() < 1e-6 && (h.v - 0.2).abs() < 1e-6);
        // Nothing where the prototype itself is: it is placed only by the instance.
        assert!(scene.intersect_with(&Ray::new(Vec3::new(0.2, 0.2, 5.0), -Vec3::Z), bk).is_none());
    }
}

#[test]
fn t_stays_in_world_units_and_normals_use_the_inverse_transpose() {
    // A unit sphere scaled by 3 at x = 10, and a triangle in the plane x + y = 0 sheared.
    let mut b = SceneBuilder::new();
    let s = b.add_sphere(Sphere::new(Vec3::ZERO, 1.0)).unwrap();
    let t = b
        .add_triangle(Triangle::new(Vec3::new(-1.0, 1.0, -1.0), Vec3::new(1.0, -1.0, -1.0), Vec3::new(0.0, 0.0, 1.0)))
        .unwrap();
    b.add_instance(
        s,
        Affine3A::from_scale_rotation_translation(Vec3::splat(3.0), Quat::IDENTITY, Vec3::new(10.0, 0.0, 0.0)),
    )
    .unwrap();
    // Scale y by 2: the plane x + y = 0 becomes x + y/2 = 0, normal (2, 1, 0)/√5 up to sign.
    b.add_instance(t, Affine3A::from_scale(Vec3::new(1.0, 2.0, 1.0))).unwrap();
    let scene = b.build().unwrap();
    for bk in BACKENDS {
        let h = scene.intersect_with(&Ray::new(Vec3::new(10.0, 10.0, 0.0), Vec3::new(0.0, -2.0, 0.0)), bk).unwrap();
        assert_eq!((h.geom, h.inst), (s, 0));
        assert!((h.t - 3.5).abs() < 1e-5, "t in units of the world direction: {}", h.t);
        assert!((h.normal - Vec3::Y).length() < 1e-6);
        let h = scene.intersect_with(&Ray::new(Vec3::new(5.0, 0.0, 0.0), -Vec3::X), bk).unwrap();
        assert_eq!((h.geom, h.inst), (t, 1));
        assert!((h.t - 5.0).abs() < 1e-5);
        let n = Vec3::new(2.0, 1.0, 0.0).normalize();
        assert!((h.normal.abs() - n).length() < 1e-5, "{}", h.normal);
    }
}

#[test]
fn masks_of_instances_are_tested_per_lane() {
    let mut rng = Rng::new(0x4242);
    let w = random_world(&mut rng, 16, false);
    let (mut scene, _) = build_instanced(&w);
    // Instances 0..8 are seen only by rays with bit 1; the others by every ray.
    for i in 0..8 {
        scene.set_instance_mask(i, 0b10).unwrap();
    }
    let mut scratch = PacketScratch::default();
    let mut seen_masked = 0;
    for _ in 0..400 {
        let mut rays: Vec<Ray> = (0..8).map(|_| random_ray(&mut rng)).collect();
        for (k, r) in rays.iter_mut().enumerate() {
            r.mask = if k % 2 == 0 { 0b01 } else { 0b11 };
        }
        let p = RayPacket::<F32x8>::from_rays(&rays).unwrap();
        for b in BACKENDS {
            let mut out = HitPacket::default();
            scene.intersect_packet_with(&p, &mut out, &mut scratch, b);
            for (k, r) in rays.iter().enumerate() {
                let h = out.lane(k);
                assert_eq!(h, scene.intersect_with(r, b).unwrap_or(Hit::MISS));
                if r.mask == 0b01 {
                    assert!(h.inst == NO_ID || h.inst >= 8, "lane {k} hit masked instance {}", h.inst);
                } else if h.inst != NO_ID && h.inst < 8 {
                    seen_masked += 1;
                }
            }
        }
    }
    assert!(seen_masked > 0, "the rays that may see the masked instances do");
    // Mask 0: invisible to point queries and sweeps too.
    for i in 0..16 {
        scene.set_instance_mask(i, 0).unwrap();
    }
    let p = Vec3::ZERO;
    let c = scene.closest_point(p).unwrap();
    assert_eq!(c.inst, NO_ID);
    let s = scene.sweep_sphere(Vec3::splat(-12.0), 0.3, Vec3::splat(24.0));
    assert!(s.is_none_or(|s| s.inst == NO_ID));
}

#[test]
fn set_transform_and_updates_of_placed_geometries_equal_a_fresh_build() {
    /// Every query of `scene` equals the same query on a fresh build of `w`.
    fn same_as_fresh(scene: &Scene, w: &World, rng: &mut Rng, what: &str) {
        scene.validate().unwrap();
        let (fresh, _) = build_instanced(w);
        // The instances' world boxes come from the placed geometry's tree, which a refit keeps
        // in its old shape (so they may differ from a fresh build's): both hold the moved scene.
        let exact = build_flat(w).0.bounds();
        for b in [scene.bounds(), fresh.bounds()] {
            assert!(b.min.cmple(exact.min).all() && b.max.cmpge(exact.max).all(), "{what}: {b:?} holds {exact:?}");
        }
        for _ in 0..300 {
            let ray = random_ray(rng);
            for b in BACKENDS {
                assert_eq!(scene.intersect_with(&ray, b), fresh.intersect_with(&ray, b), "{what} {b:?}");
                assert_eq!(scene.occluded_with(&ray, b), fresh.occluded_with(&ray, b), "{what} {b:?}");
                assert_eq!(scene.intersect_all_with(&ray, b), fresh.intersect_all_with(&ray, b), "{what}");
                assert_eq!(scene.count_intersections_with(&ray, b), fresh.count_intersections_with(&ray, b));
            }
            let p = rng.vec3(-12.0, 12.0);
            assert_eq!(scene.contains(p), fresh.contains(p), "{what}");
            assert_eq!(scene.closest_point(p), fresh.closest_point(p), "{what}");
            let s = SphereSweep::new(p, 0.3, rng.vec3(-10.0, 10.0));
            assert_eq!(scene.sweep_with(&s, Backend::Auto), fresh.sweep_with(&s, Backend::Auto), "{what}");
        }
    }
    let mut rng = Rng::new(0x3131);
    let mut w = random_world(&mut rng, 16, true);
    let (mut scene, first) = build_instanced(&w);
    for step in 0..4 {
        // Move a few instances (far, so that a stale top-level tree would miss them).
        for i in (step..16).step_by(5) {
            let k = w.instances[i].0;
            let m = random_transform(&mut rng, k, i + step);
            scene.set_transform(i as u32, m).unwrap();
            w.instances[i].1 = m;
        }
        same_as_fresh(&scene, &w, &mut rng, &format!("step {step}, after set_transform"));
        // Move the placed mesh and spheres.
        for t in &mut w.proto_mesh {
            for v in &mut t.v {
                *v += rng.vec3(-0.1, 0.1);
            }
        }
        scene.update_triangles(first, &w.proto_mesh).unwrap();
        let spheres: Vec<Sphere> =
            w.proto_spheres.iter().map(|s| Sphere::new(s.center + rng.vec3(-0.2, 0.2), s.radius)).collect();
        scene.update_spheres(first + 2, &spheres).unwrap();
        w.proto_spheres = spheres;
        same_as_fresh(&scene, &w, &mut rng, &format!("step {step}, after updates"));
    }
    scene.rebuild().unwrap();
    same_as_fresh(&scene, &w, &mut rng, "after rebuild");
}

#[test]
fn bad_instances_are_typed_errors() {
    let mut b = SceneBuilder::new();
    let m = b.add_triangle(Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y)).unwrap();
    let s = b.add_sphere(Sphere::new(Vec3::ZERO, 1.0)).unwrap();
    let x = b.add_box(Aabb::new(Vec3::ZERO, Vec3::ONE)).unwrap();
    let p = b.add_plane(Plane::new(Vec3::Y, 0.0)).unwrap();
    let bad = |r: Result<u32, SceneError>| matches!(r, Err(SceneError::InvalidInstance { inst: 0, .. }));
    assert!(bad(b.add_instance(m, Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0)))), "singular");
    assert!(bad(b.add_instance(m, Affine3A::from_translation(Vec3::new(f32::NAN, 0.0, 0.0)))), "NaN");
    assert!(bad(b.add_instance(m, Affine3A::from_translation(Vec3::new(f32::INFINITY, 0.0, 0.0)))), "inf");
    assert!(bad(b.add_instance(s, Affine3A::from_scale(Vec3::new(1.0, 2.0, 1.0)))), "stretched sphere");
    assert!(bad(b.add_instance(x, Affine3A::from_rotation_z(0.3))), "rotated box");
    assert!(bad(b.add_instance(p, Affine3A::IDENTITY)), "plane");
    assert!(matches!(b.add_instance(99, Affine3A::IDENTITY), Err(SceneError::InvalidShape { geom: 99, .. })));
    assert!(b.set_instance_mask(0, 1).is_err());
    // Accepted: a mirrored similarity for spheres, a permutation for boxes.
    assert_eq!(b.add_instance(s, Affine3A::from_scale(Vec3::new(-2.0, 2.0, 2.0))).unwrap(), 0);
    let perm = Affine3A::from_mat3(Mat3::from_cols(Vec3::Y, Vec3::Z * 3.0, -Vec3::X));
    assert_eq!(b.add_instance(x, perm).unwrap(), 1);
    let mut scene = b.build().unwrap();
    assert!(matches!(scene.set_transform(2, Affine3A::IDENTITY), Err(SceneError::InvalidInstance { inst: 2, .. })));
    let before = scene.instances();
    assert!(scene.set_transform(0, Affine3A::from_scale(Vec3::new(1.0, 3.0, 1.0))).is_err());
    assert_eq!(scene.instances(), before, "a refused transform changes nothing");
    assert!(scene.set_instance_mask(5, 0).is_err());
}

#[test]
fn a_scene_of_instances_only_answers_every_query() {
    let mut b = SceneBuilder::new();
    let ball = b.add_sphere(Sphere::new(Vec3::ZERO, 1.0)).unwrap();
    for k in 0..10 {
        b.add_instance(ball, Affine3A::from_translation(Vec3::new(3.0 * k as f32, 0.0, 0.0))).unwrap();
    }
    let scene = b.build().unwrap();
    // The instances' world boxes, slightly widened (by 2⁻¹⁶ of their size and position).
    let x = scene.bounds().max.x;
    assert!((28.0..28.01).contains(&x), "{x}");
    let r = Ray::new(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
    for bk in BACKENDS {
        assert_eq!(scene.count_intersections_with(&r, bk), 10); // solids count once
        let h = scene.intersect_with(&r, bk).unwrap();
        assert_eq!((h.inst, h.t), (0, 4.0));
        assert!(scene.contains_with(Vec3::new(9.2, 0.0, 0.0), bk));
        assert!(!scene.contains_with(Vec3::new(10.5, 0.0, 0.0), bk));
        let c = scene.closest_point_with(Vec3::new(7.5, 3.0, 0.0), bk).unwrap();
        assert!(c.inst == 2 || c.inst == 3);
        let s =
            scene.sweep_with(&SphereSweep::new(Vec3::new(6.0, 5.0, 0.0), 0.5, Vec3::new(0.0, -10.0, 0.0)), bk).unwrap();
        assert_eq!((s.inst, s.geom), (2, ball));
        assert!((s.toi - 0.35).abs() < 1e-5 && (s.normal - Vec3::Y).length() < 1e-5);
    }
}

#[cfg(feature = "cli")]
#[test]
fn scene_files_name_geometries_and_place_them() {
    use lanecast::scene::file::parse_scene;
    use std::path::Path;
    let text = r#"
[[sphere]]
center = [0, 0, 0]
radius = 1
name = "ball"

[[triangle]]
vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
name = "tri"

[[box]]
min = [-1, -1, -1]
max = [1, 1, 1]

[[instance]]
of = "ball"
translate = [10, 0, 0]
scale = 2

[[instance]]
of = "tri"
matrix = [[-1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 20]]
"#;
    let f = parse_scene(text, Path::new("inst.toml"), Path::new("")).unwrap();
    let scene = f.builder.build().unwrap();
    // Geometry ids follow the file (ball 0, tri 1, box 2); instances count 0, 1.
    let h = scene.intersect(&Ray::new(Vec3::new(10.0, 9.0, 0.0), -Vec3::Y)).unwrap();
    assert_eq!((h.geom, h.inst, h.t), (0, 0, 7.0));
    // The named ball is a prototype: nothing at the origin but the unnamed box.
    let h = scene.intersect(&Ray::new(Vec3::new(0.0, 9.0, 0.0), -Vec3::Y)).unwrap();
    assert_eq!((h.geom, h.inst, h.t), (2, NO_ID, 8.0));
    // The mirrored triangle at z = 20: x in [-1, 0].
    let h = scene.intersect(&Ray::new(Vec3::new(-0.2, 0.2, 30.0), -Vec3::Z)).unwrap();
    assert_eq!((h.geom, h.prim, h.inst), (1, 0, 1));
    assert!((h.t - 10.0).abs() < 1e-5);
    assert_eq!(scene.intersect(&Ray::new(Vec3::new(0.2, 0.2, 30.0), -Vec3::Z)).unwrap().geom, 2, "past it, the box");

    let err = |t: &str| parse_scene(t, Path::new("bad.toml"), Path::new("")).unwrap_err().to_string();
    let e = err("[[instance]]\nof = \"nothing\"\n");
    assert!(e.starts_with("bad.toml:2:6: instance `of`: no geometry named \"nothing\""), "{e}");
    let e = err(
        "[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\nname = \"a\"\n[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\nname = \"a\"\n",
    );
    assert!(e.starts_with("bad.toml:8:8:") && e.contains("already used by geometry 0"), "{e}");
    let e =
        err("[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\nname = \"a\"\n[[instance]]\nof = \"a\"\nscale = [1, 2, 1]\n");
    assert!(e.starts_with("bad.toml:5:1:") && e.contains("similarity"), "{e}");
    let e = err(
        "[[sphere]]\ncenter = [0, 0, 0]\nradius = 1\nname = \"a\"\n[[instance]]\nof = \"a\"\nscale = 2\nmatrix = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]\n",
    );
    assert!(e.starts_with("bad.toml:7:9:") && e.contains("cannot be combined"), "{e}");
    let e = err("[[plane]]\nnormal = [0, 1, 0]\nd = 0\nname = \"p\"\n");
    assert!(e.starts_with("bad.toml:4:8:") && e.contains("cannot have a name"), "{e}");
    let e = err(
        "[[triangle]]\nvertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\nname = \"t\"\n[[instance]]\nof = \"t\"\nmatrix = [[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]\n",
    );
    assert!(e.starts_with("bad.toml:4:1:") && e.contains("singular"), "{e}");
}
