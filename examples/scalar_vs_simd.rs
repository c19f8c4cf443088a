//! The scalar reference and its 8-lane twin side by side: one ray against a block of
//! spheres, the same answers, and how long each takes.
//!
//! `cargo run --release --example scalar_vs_simd`

use lanecast::kernel::ray_sphere;
use lanecast::prim::{Sphere, SphereSoa};
use lanecast::rng::Rng;
use lanecast::{F32x8, Lanes, Mask, Ray, RayPacket};
use std::time::Instant;

fn main() {
    let mut rng = Rng::new(1);
    let spheres: Vec<Sphere> = (0..4096).map(|_| Sphere::new(rng.vec3(-10.0, 10.0), rng.range(0.1, 1.0))).collect();
    let soa = SphereSoa::from_slice(&spheres);
    let rays: Vec<Ray> = (0..256).map(|_| Ray::new(rng.vec3(-20.0, 20.0), rng.unit_vec3())).collect();

    // Scalar reference: one pair at a time.
    let start = Instant::now();
    let mut scalar_hits = 0usize;
    for r in &rays {
        scalar_hits += spheres.iter().filter(|s| ray_sphere::intersect_scalar(r, s).is_some()).count();
    }
    let scalar = start.elapsed();

    // Eight spheres per test: the ray splatted across the lanes, spheres from the SoA block.
    let start = Instant::now();
    let mut lane_hits = 0usize;
    for r in &rays {
        let packet = RayPacket::<F32x8>::splat(r);
        for i in (0..soa.padded_len()).step_by(F32x8::N) {
            let (hit, _t) = ray_sphere::intersect_lanes(&packet, &soa.lanes::<F32x8>(i));
            lane_hits += hit.bitmask().count_ones() as usize;
        }
    }
    let lanes = start.elapsed();

    let pairs = (rays.len() * spheres.len()) as f64;
    println!("lanes compiled for: {}", lanecast::lanes::instruction_set());
    println!("{pairs} ray–sphere pairs");
    println!("scalar: {scalar_hits} hits, {:.2} pairs/ns", pairs / scalar.as_nanos() as f64);
    println!("x8:     {lane_hits} hits, {:.2} pairs/ns", pairs / lanes.as_nanos() as f64);
    println!("x8 / scalar: {:.1}x", scalar.as_secs_f64() / lanes.as_secs_f64());
    assert_eq!(scalar_hits, lane_hits, "the two paths must agree");
}
