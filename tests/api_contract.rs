//! The public API's promises that are not about geometry: indices and lengths near
//! `usize::MAX` panic instead of reading out of bounds; limits are typed errors; packets
//! refuse more rays than lanes; every hit names its primitive kind; the builder chains.
//!
//! The out-of-bounds cases matter in release builds, where `i + N` wraps around: before the
//! checks were rewritten, `Soa::lanes(usize::MAX - 3)` and `RaySoa::packet(usize::MAX - 3)`
//! passed their bounds check and read far outside the buffer.

use glam::Vec3;
use lanecast::Mask;
use lanecast::bvh::{MAX_PRIMITIVES, check_primitive_count};
use lanecast::prim::{Aabb, Capsule, Plane, Soa, Sphere, Triangle};
use lanecast::ray::PAD;
use lanecast::scene::{MAX_GEOMETRIES, MAX_PRIMS_PER_GEOMETRY, check_geometry_limits};
use lanecast::{
    F32x4, F32x8, F32x16, HitKind, HitPacket, HitSoa, LimitError, Ray, RayError, RayPacket, RaySoa, SceneBuilder,
};
use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Uses a value so the call that made it cannot be optimised away.
fn touch<T>(x: T) {
    black_box(x);
}

/// Indices every index-taking function is tried with, for a buffer of `len` and lanes `n`.
fn bad_indices(len: usize, n: usize) -> Vec<usize> {
    let padded = len.div_ceil(PAD) * PAD;
    let mut v = vec![usize::MAX, usize::MAX - 1, usize::MAX - 3, usize::MAX - 7, usize::MAX - 8, len - 1 + n + PAD];
    v.push(padded + PAD + 1); // past the storage's slack block
    v
}

fn panics(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

#[test]
fn ray_soa_indices_cannot_overflow() {
    let rays = RaySoa::from_rays(&vec![Ray::new(Vec3::ZERO, Vec3::X); 13]);
    for i in bad_indices(13, 8) {
        assert!(panics(|| touch(rays.packet::<F32x8>(i))), "packet::<8>({i})");
        assert!(panics(|| touch(rays.packet::<F32x4>(i))), "packet::<4>({i})");
        assert!(panics(|| touch(rays.packet::<F32x16>(i))), "packet::<16>({i})");
        assert!(panics(|| touch(rays.ray(i))), "ray({i})");
        let mut r = rays.clone();
        assert!(panics(|| r.set(i, &Ray::new(Vec3::ZERO, Vec3::X))), "set({i})");
        // A prefetch hint is not a read: any index is fine, and nothing changes.
        rays.prefetch_ahead(i);
    }
    assert_eq!(rays.ray(12), Ray::new(Vec3::ZERO, Vec3::X));
    // The last full packet inside the padded storage is fine, one past it is not.
    assert_eq!(rays.packet::<F32x8>(8).requested().bitmask(), 0b11111);
    assert!(panics(|| touch(rays.packet::<F32x8>(9))));
    // Lengths whose padding overflows.
    for n in [usize::MAX, usize::MAX - 6] {
        assert!(panics(|| touch(RaySoa::with_len(n))), "with_len({n})");
        assert!(panics(|| touch(HitSoa::with_len(n))), "HitSoa::with_len({n})");
    }
}

#[test]
fn soa_indices_cannot_overflow() {
    fn check<P: lanecast::prim::Primitive>(what: &str, sample: P) {
        let soa = Soa::<P>::from_slice(&[sample; 13]);
        for i in bad_indices(13, 8) {
            assert!(panics(|| touch(soa.lanes::<F32x8>(i))), "{what} lanes::<8>({i})");
            assert!(panics(|| touch(soa.lanes::<F32x4>(i))), "{what} lanes::<4>({i})");
            assert!(panics(|| touch(soa.lanes::<F32x16>(i))), "{what} lanes::<16>({i})");
            assert!(panics(|| touch(soa.splat_at::<F32x8>(i))), "{what} splat_at({i})");
            assert!(panics(|| touch(soa.get(i))), "{what} get({i})");
            assert!(panics(|| touch(soa.column(i))), "{what} column({i})");
        }
        // Every start up to padded_len reads N lanes (the slack block); past that, no.
        for i in 0..=soa.padded_len() {
            let _ = soa.lanes::<F32x8>(i);
            let _ = soa.lanes::<F32x16>(i);
        }
        let mut grow = soa.clone();
        assert!(panics(|| grow.reserve(usize::MAX)), "{what} reserve(MAX)");
        assert!(panics(|| grow.reserve(usize::MAX - 20)), "{what} reserve(MAX - 20)");
    }
    check("spheres", Sphere::new(Vec3::ONE, 1.0));
    check("boxes", Aabb::new(Vec3::ZERO, Vec3::ONE));
    check("triangles", Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y));
    check("planes", Plane::new(Vec3::Y, 1.0));
    check("capsules", Capsule::new(Vec3::ZERO, Vec3::X, 0.5));
}

#[test]
fn packet_and_hit_lanes_are_checked() {
    let pk = RayPacket::<F32x4>::splat(&Ray::new(Vec3::ZERO, Vec3::X));
    let mut hits = HitPacket::<F32x4>::default();
    for i in [4, 7, 8, usize::MAX] {
        assert!(panics(|| touch(pk.ray(i))), "ray({i})");
        assert!(panics(|| touch(hits.lane(i))), "lane({i})");
        assert!(panics(|| hits.set_lane(i, &lanecast::Hit::MISS)), "set_lane({i})");
    }
    let soa = HitSoa::with_len(5);
    for i in bad_indices(5, 8) {
        assert!(panics(|| touch(soa.get(i))), "HitSoa::get({i})");
    }
}

#[test]
fn from_rays_refuses_more_rays_than_lanes() {
    let r = Ray::new(Vec3::ZERO, Vec3::X);
    assert_eq!(RayPacket::<F32x4>::from_rays(&[r; 5]).unwrap_err(), RayError::TooManyRays { given: 5, lanes: 4 });
    assert!(RayPacket::<F32x8>::from_rays(&[r; 9]).is_err());
    let p = RayPacket::<F32x8>::from_rays(&[r; 3]).unwrap();
    assert_eq!(p.requested().bitmask(), 0b111);
    // An invalid ray is requested (it gets an answer: a miss) but not active.
    let p = RayPacket::<F32x8>::from_rays(&[r, Ray::new(Vec3::ZERO, Vec3::ZERO)]).unwrap();
    assert_eq!((p.requested().bitmask(), p.active().bitmask()), (0b11, 0b01));
    assert_eq!(RayPacket::<F32x8>::from_rays(&[r; 8]).unwrap().requested().bitmask(), 0xff);
}

#[test]
fn limits_are_typed_errors() {
    assert_eq!(check_primitive_count(MAX_PRIMITIVES), Ok(()));
    assert_eq!(
        check_primitive_count(MAX_PRIMITIVES + 1),
        Err(LimitError::TooManyPrimitives { count: MAX_PRIMITIVES + 1, max: MAX_PRIMITIVES })
    );
    assert_eq!(MAX_PRIMITIVES, 1 << 27);
    assert_eq!(check_geometry_limits(0, 5), Ok(0));
    assert_eq!(check_geometry_limits(MAX_GEOMETRIES - 1, 0), Ok(u32::MAX - 1));
    assert!(matches!(check_geometry_limits(MAX_GEOMETRIES, 1), Err(LimitError::TooManyGeometries { .. })));
    assert!(matches!(check_geometry_limits(usize::MAX, 1), Err(LimitError::TooManyGeometries { .. })));
    assert!(matches!(check_geometry_limits(3, MAX_PRIMS_PER_GEOMETRY + 1), Err(LimitError::TooManyInGeometry { .. })));
    // No geometry id and no primitive id may be the miss id.
    assert_eq!(MAX_GEOMETRIES, u32::MAX as usize);
    assert_eq!(MAX_PRIMS_PER_GEOMETRY, u32::MAX as usize);
}

#[test]
fn hits_name_their_primitive_kind() {
    let mut b = SceneBuilder::new().quality(lanecast::bvh::Quality::Fast);
    let tri =
        b.add_triangle(Triangle::new(Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)));
    let sph = b.add_sphere(Sphere::new(Vec3::new(5.0, 0.0, 0.0), 0.5));
    let bx = b.add_box(Aabb::new(Vec3::new(9.0, -0.5, -0.5), Vec3::new(10.0, 0.5, 0.5)));
    let pl = b.add_plane(Plane::new(Vec3::Y, -5.0));
    let (tri, sph, bx, pl) = (tri.unwrap(), sph.unwrap(), bx.unwrap(), pl.unwrap());
    assert_eq!(b.build_options().quality, lanecast::bvh::Quality::Fast);
    let scene = b.build().unwrap();
    let cases = [
        (Ray::new(Vec3::new(0.0, 0.0, -3.0), Vec3::Z), tri, HitKind::Triangle),
        (Ray::new(Vec3::new(5.0, 0.0, -3.0), Vec3::Z), sph, HitKind::Sphere),
        (Ray::new(Vec3::new(9.5, 0.0, -3.0), Vec3::Z), bx, HitKind::Box),
        (Ray::new(Vec3::new(20.0, 0.0, 0.0), -Vec3::Y), pl, HitKind::Plane),
    ];
    for backend in [lanecast::Backend::Scalar, lanecast::Backend::X4, lanecast::Backend::X8, lanecast::Backend::X16] {
        for (ray, geom, kind) in cases {
            let h = scene.intersect_with(&ray, backend).unwrap();
            assert_eq!((h.geom, h.kind), (geom, kind), "{backend:?}");
        }
    }
    assert_eq!(lanecast::Hit::MISS.kind, HitKind::None);
}

#[test]
fn builder_geometries_give_back_what_was_added_in_id_order() {
    use lanecast::scene::Geometry;
    let tri = |x: f32| Triangle::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0));
    let mut b = SceneBuilder::new();
    let s = [Sphere::new(Vec3::ONE, 0.5), Sphere::new(Vec3::ZERO, 2.0)];
    let m1 = [tri(0.0), tri(5.0)];
    let bx = [Aabb::new(Vec3::ZERO, Vec3::ONE)];
    let pl = Plane::new(Vec3::Y, -1.0);
    let m2 = [tri(9.0)];
    assert_eq!(b.add_spheres(&s).unwrap(), 0);
    assert_eq!(b.add_triangles(&m1).unwrap(), 1);
    assert_eq!(b.add_boxes(&bx).unwrap(), 2);
    assert_eq!(b.add_plane(pl).unwrap(), 3);
    assert_eq!(b.add_mesh(&[[9.0, 0.0, 0.0], [10.0, 0.0, 0.0], [9.0, 1.0, 0.0]], &[[0, 1, 2]]).unwrap(), 4);
    let g = b.geometries();
    assert_eq!(
        g,
        vec![
            Geometry::Spheres(&s),
            Geometry::Mesh(&m1),
            Geometry::Boxes(&bx),
            Geometry::Plane(&pl),
            Geometry::Mesh(&m2)
        ]
    );
}

#[test]
fn backends_parse_by_name_and_auto_resolves_to_a_wide_backend() {
    use lanecast::Backend;
    for (name, b) in [
        ("scalar", Backend::Scalar),
        ("x4", Backend::X4),
        ("x8", Backend::X8),
        ("x16", Backend::X16),
        ("auto", Backend::Auto),
    ] {
        assert_eq!(name.parse::<Backend>(), Ok(b));
        assert_eq!(b.name(), name);
        if b != Backend::Auto {
            assert_eq!(b.resolve(), b, "a concrete backend is its own resolution");
        }
    }
    let e = "x32".parse::<Backend>().unwrap_err();
    assert_eq!(e.to_string(), "unknown backend `x32` (expected scalar, x4, x8, x16 or auto)");
    let auto = Backend::Auto.resolve();
    assert!([Backend::X4, Backend::X8, Backend::X16].contains(&auto), "{auto:?}");
    // The native build (`target-cpu=native`) on a CPU with AVX-512 takes the 16-wide path;
    // the portable CI build sets LANECAST_PORTABLE=1.
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") && std::env::var_os("LANECAST_PORTABLE").is_none() {
        assert_eq!(auto, Backend::X16);
    }
}

/// The build makes the wide tree the default backend walks (16-wide where `Auto` resolves to
/// `X16`, else 8-wide), and the other one is made by the first query that walks it (its
/// bytes count from then on). `X8` and `X16` give the same answers.
#[test]
fn the_build_makes_the_default_backends_tree_and_a_first_query_the_other() {
    use lanecast::{Backend, prim::Sphere};
    let mut b = SceneBuilder::new();
    let tris: Vec<Triangle> = (0..400)
        .map(|i| {
            let x = (i % 20) as f32;
            let y = (i / 20) as f32;
            Triangle::new(Vec3::new(x, y, 0.0), Vec3::new(x + 1.0, y, 0.0), Vec3::new(x, y + 1.0, 0.0))
        })
        .collect();
    b.add_triangles(&tris).unwrap();
    b.add_spheres(&(0..50).map(|i| Sphere::new(Vec3::new(i as f32 * 0.4, 3.0, 2.0), 0.3)).collect::<Vec<_>>()).unwrap();
    let scene = b.build().unwrap();
    let (eager, lazy) =
        if Backend::Auto.resolve() == Backend::X16 { (Backend::X16, Backend::X8) } else { (Backend::X8, Backend::X16) };
    let st = scene.stats();
    assert_eq!((st.bytes_x16.is_some(), st.bytes_x8.is_some()), (eager == Backend::X16, eager == Backend::X8));
    let ray = Ray::new(Vec3::new(3.2, 3.3, 5.0), -Vec3::Z);
    let before = st.bytes;
    let a = scene.intersect_with(&ray, eager);
    assert_eq!(scene.stats().bytes, before, "the build made {eager:?}'s tree");
    let b = scene.intersect_with(&ray, lazy);
    let after = scene.stats();
    assert!(after.bytes > before, "no tree was made for {lazy:?} ({before} -> {} bytes)", after.bytes);
    assert!(after.bytes_x8.is_some() && after.bytes_x16.is_some());
    assert_eq!(a, b);
    assert!(a.is_some());
    assert_eq!(scene.occluded_with(&ray, Backend::X16), scene.occluded_with(&ray, Backend::X8));
    assert_eq!(scene.stats().bytes, after.bytes, "made once");
}
