//! Property tests (proptest) of geometric facts the kernels and scenes must respect,
//! independent of any second implementation:
//! * a ray–sphere hit point lies on the sphere (or the ray starts inside);
//! * a ray–box entry point lies on the closed box;
//! * a Möller–Trumbore hit point equals its barycentric reconstruction;
//! * `occluded(r) == intersect(r).is_some()` and a ray spawned from a hit point, offset along
//!   the normal, does not re-hit the same triangle at t ≈ 0.

use glam::Vec3;
use lanecast::kernel::{ray_aabb, ray_sphere, ray_triangle};
use lanecast::prim::{Aabb, Sphere, Triangle};
use lanecast::{Backend, Ray, SceneBuilder};
use proptest::prelude::*;

fn v3(r: f32) -> impl Strategy<Value = Vec3> {
    (-r..r, -r..r, -r..r).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn dir() -> impl Strategy<Value = Vec3> {
    v3(1.0).prop_filter("non-zero direction", |d| d.length() > 1e-3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 256 } else { 4096 }))]

    #[test]
    fn sphere_hit_points_lie_on_the_sphere(o in v3(20.0), d in dir(), c in v3(5.0), r in 0.1f32..3.0) {
        let ray = Ray::new(o, d);
        let s = Sphere::new(c, r);
        if let Some(t) = ray_sphere::intersect_scalar(&ray, &s) {
            let dist = (ray.at(t) - c).length();
            let inside = (o - c).length() <= r;
            prop_assert!(inside && t == 0.0 || (dist - r).abs() <= 1e-4 * (r + (o - c).length()), "dist {dist} r {r}");
        }
    }

    #[test]
    fn box_entry_points_lie_on_the_box(o in v3(20.0), d in dir(), c in v3(5.0), h in v3(3.0)) {
        let b = Aabb::new(c - h.abs(), c + h.abs());
        if let Some((t0, t1)) = ray_aabb::intersect_scalar(&Ray::new(o, d), &b) {
            prop_assert!(t0 <= t1);
            let p = o + d * t0;
            let tol = 1e-4 * (1.0 + o.abs().max_element() + c.abs().max_element());
            prop_assert!(p.cmpge(b.min - tol).all() && p.cmple(b.max + tol).all(), "{p} outside {b:?}");
        }
    }

    #[test]
    fn triangle_hits_match_their_barycentrics(o in v3(10.0), d in dir(), a in v3(3.0), b in v3(3.0), c in v3(3.0)) {
        let tri = Triangle::new(a, b, c);
        if let Some(h) = ray_triangle::intersect_scalar(&Ray::new(o, d), &tri) {
            prop_assert!(h.u >= 0.0 && h.v >= 0.0 && h.u + h.v <= 1.0);
            let p = a * (1.0 - h.u - h.v) + b * h.u + c * h.v;
            let q = o + d * h.t;
            prop_assert!((p - q).length() <= 1e-3 * (1.0 + o.length()), "{p} vs {q}");
        }
    }

    #[test]
    fn occlusion_agrees_and_spawned_rays_leave_the_surface(
        tris in prop::collection::vec((v3(4.0), v3(4.0), v3(4.0)), 1..40),
        o in v3(8.0),
        d in dir(),
    ) {
        let mut b = SceneBuilder::new();
        b.add_triangles(&tris.iter().map(|(a, b, c)| Triangle::new(*a, *b, *c)).collect::<Vec<_>>()).unwrap();
        let scene = b.build().unwrap();
        for backend in [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16] {
            let ray = Ray::new(o, d);
            let hit = scene.intersect_with(&ray, backend);
            prop_assert_eq!(scene.occluded_with(&ray, backend), hit.is_some());
            if let Some(h) = hit {
                let n = if h.normal.dot(d) > 0.0 { -h.normal } else { h.normal };
                let p = ray.at(h.t) + n * 1e-4;
                // Leaving the surface on the side the ray came from: the same triangle is not hit again.
                let back = Ray::new(p, n);
                if let Some(h2) = scene.intersect_with(&back, backend) {
                    prop_assert!(!(h2.prim == h.prim && h2.t < 1e-3), "re-hit the spawning triangle at t {}", h2.t);
                }
            }
        }
    }
}
