//! Ray masks (as in Embree): a query tests a primitive only when the ray's mask and its
//! geometry's mask share a bit.
//!
//! The reference for a ray with mask `m` is a second scene built from only the geometries
//! that `m` admits (ids mapped back): every ray query of every backend, packets with a
//! different mask in each lane, batches, all hits and counts must answer as that scene does.
//! A geometry with mask 0 is invisible to every query, point queries and sweeps included.

use glam::Vec3;
use lanecast::prim::{Aabb, Plane, Sphere, Triangle};
use lanecast::rng::Rng;
use lanecast::scene::PacketScratch;
use lanecast::{
    ALL_BITS, Backend, F32x4, F32x8, Hit, HitPacket, Lanes, Mask, Ray, RayPacket, RaySoa, Scene, SceneBuilder,
    SphereSweep,
};

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

#[derive(Clone)]
enum Geom {
    Tris(Vec<Triangle>),
    Balls(Vec<Sphere>),
    Cubes(Vec<Aabb>),
    Flat(Plane),
}

fn add(b: &mut SceneBuilder, g: &Geom) -> u32 {
    match g {
        Geom::Tris(t) => b.add_triangles(t),
        Geom::Balls(s) => b.add_spheres(s),
        Geom::Cubes(c) => b.add_boxes(c),
        Geom::Flat(p) => b.add_plane(*p),
    }
    .unwrap()
}

/// Twelve geometries of every kind, each with a mask from a few bits (one of them 0).
fn random_geoms(rng: &mut Rng) -> Vec<(Geom, u32)> {
    let masks = [0b0001, 0b0010, 0b0100, 0b0011, 0b0110, 0, ALL_BITS];
    (0..12)
        .map(|i| {
            let at = |rng: &mut Rng| rng.vec3(-10.0, 10.0);
            let g = match i % 4 {
                0 => Geom::Tris(
                    (0..60)
                        .map(|_| {
                            let c = at(rng);
                            Triangle::new(c + rng.unit_vec3(), c + rng.unit_vec3(), c + rng.unit_vec3())
                        })
                        .collect(),
                ),
                1 => Geom::Balls((0..40).map(|_| Sphere::new(at(rng), rng.range(0.1, 1.0))).collect()),
                2 => Geom::Cubes(
                    (0..40)
                        .map(|_| {
                            let c = at(rng);
                            let h = rng.vec3(0.1, 0.8);
                            Aabb::new(c - h, c + h)
                        })
                        .collect(),
                ),
                _ => Geom::Flat(Plane::new(rng.unit_vec3(), rng.range(9.0, 14.0))),
            };
            (g, masks[rng.below(masks.len() as u64) as usize])
        })
        .collect()
}

/// The scene with every geometry and its mask.
fn masked_scene(geoms: &[(Geom, u32)]) -> Scene {
    let mut b = SceneBuilder::new();
    for (g, m) in geoms {
        let id = add(&mut b, g);
        b.set_mask(id, *m).unwrap();
    }
    b.build().unwrap()
}

/// The geometries `ray_mask` admits, as a scene of their own, and the id of each of its
/// geometries in the full scene.
fn admitted(geoms: &[(Geom, u32)], ray_mask: u32) -> (Scene, Vec<u32>) {
    let mut b = SceneBuilder::new();
    let mut ids = Vec::new();
    for (i, (g, m)) in geoms.iter().enumerate() {
        if m & ray_mask != 0 {
            add(&mut b, g);
            ids.push(i as u32);
        }
    }
    (b.build().unwrap(), ids)
}

/// A hit of the reference scene with its geometry id mapped back.
fn mapped(h: Option<Hit>, ids: &[u32]) -> Option<Hit> {
    h.map(|h| Hit { geom: ids[h.geom as usize], ..h })
}

const RAY_MASKS: [u32; 6] = [0b0001, 0b0010, 0b0101, 0b1000, 0, ALL_BITS];

#[test]
fn every_ray_query_sees_only_the_geometries_its_mask_admits() {
    let mut rng = Rng::new(77);
    let geoms = random_geoms(&mut rng);
    let scene = masked_scene(&geoms);
    let refs: Vec<(Scene, Vec<u32>)> = RAY_MASKS.iter().map(|&m| admitted(&geoms, m)).collect();
    let mut hits = 0;
    for _ in 0..if cfg!(debug_assertions) { 300 } else { 3000 } {
        let k = rng.below(RAY_MASKS.len() as u64) as usize;
        let ray = Ray::new(rng.vec3(-12.0, 12.0), rng.unit_vec3()).with_mask(RAY_MASKS[k]);
        let (reference, ids) = &refs[k];
        let plain = Ray { mask: ALL_BITS, ..ray };
        for be in BACKENDS {
            let want = mapped(reference.intersect_with(&plain, be), ids);
            let got = scene.intersect_with(&ray, be);
            assert_eq!(got, want, "{be:?} mask {:#b}", ray.mask);
            hits += usize::from(got.is_some());
            assert_eq!(scene.occluded_with(&ray, be), reference.occluded_with(&plain, be), "{be:?}");
            let all: Vec<Hit> = scene.intersect_all_with(&ray, be);
            let want_all: Vec<Hit> =
                reference.intersect_all_with(&plain, be).into_iter().map(|h| mapped(Some(h), ids).unwrap()).collect();
            assert_eq!(all.len(), want_all.len(), "{be:?}");
            for (a, w) in all.iter().zip(&want_all) {
                assert_eq!((a.t, a.geom, a.prim), (w.t, w.geom, w.prim), "{be:?}");
            }
        }
        assert_eq!(scene.count_intersections(&ray), reference.count_intersections(&plain));
    }
    assert!(hits > 1000, "only {hits} hits compared");
}

/// Packets with a different mask in every lane: each lane answers as its own single ray.
fn packets_test_the_bits_per_lane<L: Lanes>() {
    let mut rng = Rng::new(78);
    let geoms = random_geoms(&mut rng);
    let scene = masked_scene(&geoms);
    let mut scratch = PacketScratch::default();
    let mut masked_lanes = 0;
    for _ in 0..if cfg!(debug_assertions) { 100 } else { 1000 } {
        // A coherent bundle: neighbouring origins, similar directions, mixed masks.
        let o = rng.vec3(-12.0, 12.0);
        let d = rng.unit_vec3();
        let rays: Vec<Ray> = (0..L::N)
            .map(|_| {
                let m = RAY_MASKS[rng.below(RAY_MASKS.len() as u64) as usize];
                Ray::new(o + rng.vec3(-0.3, 0.3), d + rng.vec3(-0.05, 0.05)).with_mask(m)
            })
            .collect();
        let packet = RayPacket::<L>::from_rays(&rays).unwrap();
        for be in BACKENDS {
            let mut out = HitPacket::<L>::default();
            scene.intersect_packet_with(&packet, &mut out, &mut scratch, be);
            let occluded = scene.occluded_packet_with(&packet, &mut scratch, be).bitmask();
            for (i, r) in rays.iter().enumerate() {
                let single = scene.intersect_with(r, be);
                assert_eq!(out.lane(i).is_hit(), single.is_some(), "{be:?} lane {i} mask {:#b}", r.mask);
                if let Some(h) = single {
                    assert_eq!((out.lane(i).t, out.lane(i).geom, out.lane(i).prim), (h.t, h.geom, h.prim));
                }
                assert_eq!(occluded >> i & 1 == 1, scene.occluded_with(r, be), "{be:?} lane {i}");
                masked_lanes += usize::from(r.mask != ALL_BITS && single.is_some());
            }
        }
    }
    assert!(masked_lanes > 100, "{masked_lanes}");
}

#[test]
fn packets_test_the_bits_per_lane_4() {
    packets_test_the_bits_per_lane::<F32x4>();
}

#[test]
fn packets_test_the_bits_per_lane_8() {
    packets_test_the_bits_per_lane::<F32x8>();
}

#[test]
fn batches_carry_each_rays_mask() {
    let mut rng = Rng::new(79);
    let geoms = random_geoms(&mut rng);
    let scene = masked_scene(&geoms);
    let rays: Vec<Ray> = (0..4000)
        .map(|_| {
            let m = RAY_MASKS[rng.below(RAY_MASKS.len() as u64) as usize];
            Ray::new(rng.vec3(-12.0, 12.0), rng.unit_vec3()).with_mask(m)
        })
        .collect();
    let soa = RaySoa::from_rays(&rays);
    let mut out = lanecast::HitSoa::default();
    scene.intersect_batch(&soa, &mut out);
    let mut occ = vec![false; rays.len()];
    scene.occluded_batch(&soa, &mut occ);
    for (i, r) in rays.iter().enumerate() {
        assert_eq!(soa.ray(i), *r, "the column buffer keeps the mask");
        let single = scene.intersect(r).unwrap_or(Hit::MISS);
        assert_eq!((out.get(i).t, out.get(i).geom), (single.t, single.geom));
        assert_eq!(occ[i], scene.occluded(r));
    }
}

#[test]
fn a_geometry_with_mask_zero_is_invisible_to_every_query() {
    let mut b = SceneBuilder::new();
    let ghost = b.add_sphere(Sphere::new(Vec3::ZERO, 1.0)).unwrap();
    let wall = b.add_box(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0))).unwrap();
    b.set_mask(ghost, 0).unwrap();
    let mut scene = b.build().unwrap();
    let ray = Ray::new(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
    for be in BACKENDS {
        assert_eq!(scene.intersect_with(&ray, be).unwrap().geom, wall, "{be:?}");
        assert_eq!(scene.closest_point_with(Vec3::new(0.0, 2.0, 0.0), be).unwrap().geom, wall);
        let s = SphereSweep::new(Vec3::new(-5.0, 0.0, 0.0), 0.5, Vec3::new(20.0, 0.0, 0.0));
        assert_eq!(scene.sweep_with(&s, be).unwrap().geom, wall);
    }
    assert!(!scene.contains(Vec3::ZERO));
    assert_eq!(scene.count_intersections(&ray), 1);
    // Masks change without a rebuild.
    scene.set_mask(ghost, 0b1).unwrap();
    assert_eq!(scene.intersect(&ray).unwrap().geom, ghost);
    assert_eq!(scene.intersect(&ray.with_mask(0b10)).unwrap().geom, wall);
    assert!(scene.intersect(&ray.with_mask(0)).is_none(), "a ray with mask 0 sees nothing");
    assert!(scene.set_mask(7, 1).is_err());
    assert!(SceneBuilder::new().set_mask(0, 1).is_err());
}
