//! Continuous collision with the moving-sphere kernels: fast spheres against boxes and
//! against each other, 8 at a time, compared with a naive discrete check that tunnels.
//!
//! `cargo run --release --example sweep_spheres`

use glam::Vec3;
use lanecast::kernel::{moving_sphere_aabb, moving_sphere_sphere, overlap};
use lanecast::prim::{Aabb, AabbLanes, Soa, Sphere, SphereLanes};
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{F32x8, Lanes, Mask};

fn main() {
    let mut rng = Rng::new(3);
    // A thin wall, and 64 small fast spheres flying at it (one step moves them 10 units).
    let wall = Aabb::new(Vec3::new(-5.0, -5.0, -0.05), Vec3::new(5.0, 5.0, 0.05));
    let spheres: Vec<Sphere> =
        (0..64).map(|_| Sphere::new(Vec3::new(rng.range(-6.0, 6.0), rng.range(-6.0, 6.0), -5.0), 0.1)).collect();
    let v: Vec<Vec3> = (0..64).map(|_| Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 10.0)).collect();

    let soa = Soa::from_slice(&spheres);
    let mut swept = 0;
    let mut discrete = 0;
    for i in (0..spheres.len()).step_by(8) {
        let mut cols = [[0.0f32; 8]; 3];
        for k in 0..8 {
            for c in 0..3 {
                cols[c][k] = v[i + k][c];
            }
        }
        let vel = Vec3x::<F32x8>::load(&cols[0], &cols[1], &cols[2], 0);
        let (hit, t) = moving_sphere_aabb::time_of_impact_lanes(&soa.lanes::<F32x8>(i), vel, &AabbLanes::splat(&wall));
        for k in 0..8 {
            let s = spheres[i + k];
            let scalar = moving_sphere_aabb::time_of_impact_scalar(&s, v[i + k], &wall);
            assert_eq!(scalar.is_some(), hit.lane(k), "lanes and scalar agree");
            if hit.lane(k) {
                swept += 1;
                println!("sphere {:2} touches the wall at t = {:.4}", i + k, t.lane(k));
            }
            // The naive check: overlap only at the start and the end of the step.
            let end = Sphere::new(s.center + v[i + k], s.radius);
            if overlap::sphere_aabb_scalar(&s, &wall) || overlap::sphere_aabb_scalar(&end, &wall) {
                discrete += 1;
            }
        }
    }
    println!("swept test: {swept} of 64 spheres hit the wall; end-of-step check: {discrete} (the rest tunnel through)");

    // Two spheres meeting head on, and equal velocities (never meet).
    let a = SphereLanes::<F32x8>::splat(&Sphere::new(Vec3::ZERO, 0.5));
    let b = SphereLanes::<F32x8>::splat(&Sphere::new(Vec3::new(4.0, 0.0, 0.0), 0.5));
    let (m, t) =
        moving_sphere_sphere::time_of_impact_lanes(&a, Vec3x::splat(Vec3::X * 2.0), &b, Vec3x::splat(-Vec3::X * 2.0));
    println!("head-on: contact {} at t = {} (gap 3 closed at speed 4 → 0.75)", m.all(), t.lane(0));
    let (m, _) = moving_sphere_sphere::time_of_impact_lanes(&a, Vec3x::splat(Vec3::Y), &b, Vec3x::splat(Vec3::Y));
    println!("equal velocities: contact {}", m.any());
}
