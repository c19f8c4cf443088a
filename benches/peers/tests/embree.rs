//! The Embree adapter against hand-worked answers and against lanecast on the bunny: run with
//! `LANECAST_EMBREE_LIB=… cargo test -p lanecast-peers --features embree -- --ignored`
//! (`benches/peers/with-embree.sh` shows where the library comes from). Ignored otherwise: the
//! ordinary test run does not need Embree.
#![cfg(feature = "embree")]

use glam::Vec3;
use lanecast::{Ray, RaySoa, workload};
use lanecast_peers::{Embree, Lanecast, Mesh, Peer};
use std::path::Path;

fn quad() -> Mesh {
    Mesh {
        positions: vec![[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]],
        indices: vec![[0, 1, 2], [0, 2, 3]],
        dropped: 0,
    }
}

#[test]
#[ignore = "needs Embree: LANECAST_EMBREE_LIB (benches/peers/with-embree.sh)"]
fn hand_worked_hits_single_and_packets() {
    let em = Embree::build(&quad(), 1).unwrap();
    let down = |x: f32, t_max: f32| Ray { t_max, ..Ray::new(Vec3::new(x, 0.25, 4.0), Vec3::new(0.0, 0.0, -2.0)) };
    assert_eq!(em.closest(&down(0.5, f32::INFINITY)), Some(2.0));
    assert_eq!(em.closest(&down(3.0, f32::INFINITY)), None);
    assert!(em.occluded(&down(0.5, 2.5)) && !em.occluded(&down(0.5, 1.5)));
    let rays: Vec<Ray> = (0..8).map(|k| down(-1.5 + 0.5 * k as f32, f32::INFINITY)).collect();
    let t = em.closest8(&rays);
    for (k, r) in rays.iter().enumerate() {
        assert_eq!(t[k], em.closest(r).unwrap_or(f32::INFINITY), "lane {k}");
    }
    // The packet's whole records, lane by lane as the single-ray record; none past the rays.
    let records = em.closest8_record(&rays[..7]);
    for (k, r) in rays[..7].iter().enumerate() {
        assert_eq!(records[k], em.closest_record(r), "lane {k}");
    }
    assert_eq!(records[7], None);
    assert!(records.iter().filter(|r| r.is_some()).count() >= 3);
    // The record carries more than `t`: two hits at the same `t` with the same `Ng`, whose
    // `u + v` are 0.75 (first triangle, at (0.5, 0.25)) and 0.5 (second, at (-0.5, 0)), fold
    // 0.25 apart, and the ids' low byte (255: no instance) is in both.
    let at = |x: f32, y: f32| em.closest_record(&Ray::new(Vec3::new(x, y, 4.0), Vec3::new(0.0, 0.0, -2.0)));
    let (a, b) = (at(0.5, 0.25).unwrap(), at(-0.5, 0.0).unwrap());
    assert!((a - b - 0.25).abs() < 1e-3 && b > 255.0, "records {a} and {b}");
    let segs: Vec<Ray> = rays.iter().map(|r| Ray { t_max: 2.5, ..*r }).collect();
    let bits = em.occluded8(&segs[..5]);
    assert_eq!(bits, (0..5).fold(0, |m, k| m | (u32::from(em.occluded(&segs[k])) << k)));
    assert!(bits != 0 && bits < 1 << 5);
}

#[test]
#[ignore = "needs Embree: LANECAST_EMBREE_LIB (benches/peers/with-embree.sh)"]
fn agrees_with_lanecast_on_the_bunny() {
    let mesh = Mesh::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/bunny.ply"));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let lc = Lanecast::build(&mesh, &pool);
    let em = Embree::build(&mesh, 2).unwrap();
    let rays: RaySoa = workload::incoherent(&lc.scene.bounds(), 1 << 16, 7);
    let (mut same, mut close, mut both) = (0, 0, 0);
    for i in 0..rays.len() {
        let r = rays.ray(i);
        let (a, b) = (lc.closest(&r), em.closest(&r));
        same += usize::from(a.is_some() == b.is_some());
        if let (Some(a), Some(b)) = (a, b) {
            both += 1;
            close += usize::from((a - b).abs() <= 1e-4 * a.max(b));
        }
    }
    assert!(same as f64 >= 0.999 * rays.len() as f64, "hit/miss agreement {same} of {}", rays.len());
    assert!(close as f64 >= 0.999 * both as f64, "t agreement {close} of {both}");
}

#[test]
#[ignore = "needs Embree: LANECAST_EMBREE_LIB (benches/peers/with-embree.sh)"]
fn the_robust_scene_is_flagged_robust_and_answers_alike() {
    let (plain, robust) = (Embree::build(&quad(), 1).unwrap(), Embree::build_robust(&quad(), 1).unwrap());
    assert!(!plain.is_robust());
    assert!(robust.is_robust());
    // Through the shared diagonal edge and inside either triangle: both modes hit.
    for (x, y) in [(0.0, 0.0), (0.5, 0.5), (0.5, 0.25), (0.25, -0.5)] {
        let r = Ray::new(Vec3::new(x, y, 4.0), Vec3::new(0.0, 0.0, -2.0));
        assert_eq!(robust.closest(&r), Some(2.0), "robust at ({x}, {y})");
        assert_eq!(plain.closest(&r), Some(2.0), "default at ({x}, {y})");
    }
}

/// Scenes of one build-thread count share one Embree device (two one-thread devices alive at
/// once keep a TBB worker spinning on a core: see `Embree::build`), dropping a scene leaves
/// the shared device usable, and the last user releases it (a two-thread device left alive
/// would make later one-thread builds use two threads). Thread count 3 is this test's alone.
#[test]
#[ignore = "needs Embree: LANECAST_EMBREE_LIB (benches/peers/with-embree.sh)"]
fn scenes_of_one_thread_count_share_a_device() {
    let (plain, robust) = (Embree::build(&quad(), 1).unwrap(), Embree::build_robust(&quad(), 1).unwrap());
    let two = Embree::build(&quad(), 2).unwrap();
    assert!(plain.shares_device_with(&robust));
    assert!(!plain.shares_device_with(&two));
    drop((plain, two));
    let again = Embree::build(&quad(), 1).unwrap();
    assert!(again.shares_device_with(&robust));
    let r = Ray::new(Vec3::new(0.5, 0.25, 4.0), Vec3::new(0.0, 0.0, -2.0));
    assert_eq!(again.closest(&r), Some(2.0));
    assert_eq!(robust.closest(&r), Some(2.0));
    let (a, b) = (Embree::build(&quad(), 3).unwrap(), Embree::build_robust(&quad(), 3).unwrap());
    assert!(a.shares_device_with(&b));
    assert_eq!(Embree::device_users(3), Some(2));
    drop(a);
    assert_eq!(Embree::device_users(3), Some(1));
    drop(b);
    assert_eq!(Embree::device_users(3), None, "the last user releases the device");
}
