//! A renderer submitting 8-ray packets: 2×4-pixel tiles traced together with
//! `Scene::intersect_packet`, checked against single rays, printed as ASCII art.
//!
//! `cargo run --release --example render_packets`

use glam::Vec3;
use lanecast::camera::Camera;
use lanecast::prim::{Aabb, Plane, Sphere};
use lanecast::scene::PacketScratch;
use lanecast::{F32x8, HitPacket, Ray, RayPacket, SceneBuilder};
use std::time::Instant;

fn main() {
    let mut b = SceneBuilder::new();
    b.add_plane(Plane::new(Vec3::Y, 0.0)).unwrap();
    b.add_sphere(Sphere::new(Vec3::new(0.0, 1.0, 0.0), 1.0)).unwrap();
    b.add_sphere(Sphere::new(Vec3::new(-2.2, 0.6, 0.8), 0.6)).unwrap();
    b.add_box(Aabb::new(Vec3::new(1.4, 0.0, -0.6), Vec3::new(2.6, 1.2, 0.6))).unwrap();
    let scene = b.build().unwrap();
    let (w, h) = (72u32, 28u32);
    let cam = Camera::new(Vec3::new(0.0, 1.6, 5.5), Vec3::new(0.0, 0.7, 0.0), 40.0).with_size(w, h);

    let mut scratch = PacketScratch::default(); // caller-owned traversal stack
    let mut shade = vec![b' '; (w * h) as usize];
    let start = Instant::now();
    let (mut packets, mut hits) = (0, 0);
    for ty in (0..h).step_by(2) {
        for tx in (0..w).step_by(4) {
            // One packet = a 4×2 tile of neighbouring pixels: coherent rays.
            let mut rays = [Ray::new(Vec3::ZERO, Vec3::ZERO); 8];
            for (k, r) in rays.iter_mut().enumerate() {
                *r = cam.ray(tx + k as u32 % 4, ty + k as u32 / 4);
            }
            let mut out = HitPacket::<F32x8>::default();
            let packet = RayPacket::from_rays(&rays).expect("8 rays fit 8 lanes");
            scene.intersect_packet(&packet, &mut out, &mut scratch);
            packets += 1;
            for (k, ray) in rays.iter().enumerate() {
                let hit = out.lane(k);
                // The packet answer equals the single-ray answer.
                assert_eq!(Some(hit).filter(|h| h.is_hit()), scene.intersect(ray));
                let (x, y) = (tx + k as u32 % 4, ty + k as u32 / 4);
                if hit.is_hit() {
                    hits += 1;
                    let light = hit.normal.dot(Vec3::new(0.4, 0.8, 0.45).normalize()).max(0.0);
                    shade[(y * w + x) as usize] = b" .:-=+*#%@"[(light * 9.0) as usize];
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    for row in shade.chunks(w as usize) {
        println!("{}", String::from_utf8_lossy(row));
    }
    println!(
        "{packets} packets of 8 rays, {hits} hits, {:.3} ms (including the single-ray check per pixel)",
        secs * 1e3
    );
}
