//! lanecast against other Rust BVH crates: obvhs (CWBVH), parry3d (`TriMesh`) and bvh.
//!
//! ```text
//! cargo bench -p lanecast-peers --bench peers
//! cargo bench -p lanecast-peers --bench peers -- peers_bunny     # one scene
//! benches/peers/with-embree.sh                                   # with Embree 4 (feature `embree`)
//! ```
//!
//! With the feature `embree` (Embree 4 loaded from `LANECAST_EMBREE_LIB`, see
//! `with-embree.sh`), Embree joins every group: `rtcIntersect1` / `rtcOccluded1` in the
//! single-ray groups, at its defaults (`embree`) and with `RTC_SCENE_FLAG_ROBUST`
//! (`embree_robust`: its watertight triangle test and conservative box tests, the guarantees
//! of lanecast's default; see `Embree::build_robust`); groups `peers_<scene>_<set>_packet8`
//! time 8-ray packets (lanecast `intersect_packet` / `occluded_packet` with `Backend::Auto`, the
//! set's rays taken 8 at a time in order; Embree `rtcIntersect8` / `rtcOccluded8` on the same
//! rays, both modes; every field of every closest hit is read on both sides, as in the
//! single-ray groups); groups `peers_<scene>_<set>_in_turns` time lanecast against Embree's
//! defaults in turns, `single` (the single-ray loops) and `packet8` (the packet loops): each
//! iteration is a round of four passes over the set (lanecast, Embree, Embree, lanecast), and
//! the closing table gives the median and quartiles of the rounds' speed ratios, which a
//! host whose speed drifts between criterion's groups moves far less than the ratio of two
//! groups' medians; and the build groups time Embree's build (`rtcCommitScene` at the
//! default medium quality, device `threads=1` and `threads=2`) beside lanecast's at 1 and 2
//! rayon threads. The build groups run after every scene's query groups, and the two-thread
//! builds after all one-thread ones (Embree's TBB otherwise leaves a worker spinning on the
//! second core, or runs a one-thread device's builds on two threads: see `Embree::build`).
//! Groups `peers_<scene>_<set>_threads`
//! time lanecast's batch queries and Embree's single rays on one and two rayon threads, and the
//! set-up records the memory each keeps (lanecast's own accounting; Embree's resident memory
//! per committed scene).
//!
//! Same scenes and ray sets as lanecast's `traversal` bench: `scenes/bunny.ply` and
//! `scenes/sponza.ply` with the meshes README's cameras; `primary` (1024×1024 from
//! `workload::primary`), `incoherent` (2^20 rays, `workload::incoherent`, seed
//! [`SEED_INCOHERENT`]) as closest-hit queries, `los` (2^20 segments, `workload::segments`,
//! seed [`SEED_LOS`]) as occlusion queries. How each library is queried is described in the
//! `lanecast_peers` crate docs (`benches/peers/src/lib.rs`).
//!
//! Before any timing, every library casts every ray of every set once and is compared with
//! lanecast (`Backend::Auto`: x16 on AVX-512 builds, x8 with AVX): the share of rays on
//! which it agrees on hit/miss (at least 99.9 % expected; lower is flagged) and, for
//! closest-hit sets, the share of rays both hit whose `t` agrees within 1e-4 relative. This
//! pass is also timed once (one-shot Mrays/s).
//!
//! Groups `peers_<scene>_<set>` hold one function per library (`lanecast`, `obvhs`,
//! `parry3d`, `bvh`); **every iteration casts the whole set** (2^20 rays), one thread,
//! `Throughput::Elements(rays)`. Groups `peers_build_<scene>` time each library's default
//! build from data already in its input format (lanecast: `SceneBuilder::build` at medium
//! quality in a one-thread rayon pool; obvhs: `build_cwbvh_from_tris` with `medium_build`
//! plus the reorder of its triangles; parry3d: `TriMesh::new`; bvh: `Bvh::build`); input
//! copies are made outside the timed region.
//! With the feature `embree`, functions `in_turns` and `in_turns_2t` of those groups time
//! lanecast's build against Embree's in turns, at one and at two threads (rounds as in the
//! `_in_turns` query groups; the closing table gives time ratios).
//!
//! Criterion: 10 flat samples, 1 s warm-up, 3 s measurement per function (stretched when one
//! iteration is long). At the end a table goes to stderr: Mrays/s per (scene, set, library)
//! from the median per-iteration time of the samples, lanecast/peer ratios, the ratios timed
//! in turns (with the feature `embree`), agreement, and build times.

use criterion::{Bencher, Criterion, SamplingMode, Throughput};
use lanecast::HitSoa;
use lanecast::camera::Camera;
#[cfg(feature = "embree")]
use lanecast::scene::PacketScratch;
#[cfg(feature = "embree")]
use lanecast::{F32x8, HitPacket, Mask};
use lanecast::{RaySoa, workload};
#[cfg(feature = "embree")]
use lanecast_peers::Embree;
use lanecast_peers::{BvhCrate, BvhTri, Lanecast, Mesh, Obvhs, Parry, Peer, TriTest};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// Seed of the `incoherent` set (the same as in lanecast's `traversal` bench).
const SEED_INCOHERENT: u64 = 0x1c0_4e7e;
/// Seed of the `los` set (the same as in lanecast's `traversal` bench).
const SEED_LOS: u64 = 0x105;
/// Rays per rayon task when a peer's single rays are spread over threads.
const THREAD_CHUNK: usize = 256;
/// Image side of the `primary` set; the other sets have `SIDE * SIDE` rays.
const SIDE: u32 = 1024;
/// Least hit/miss agreement with lanecast expected of a peer.
const MIN_AGREEMENT: f64 = 0.999;
/// Relative tolerance of the `t` comparison.
const T_TOL: f32 = 1e-4;

#[cfg(not(feature = "embree"))]
const LIBS: &[&str] = &["lanecast", "obvhs", "parry3d", "bvh"];
#[cfg(feature = "embree")]
const LIBS: &[&str] = &["lanecast", "obvhs", "parry3d", "bvh", "embree", "embree_robust"];
const SETS: [&str; 3] = ["primary", "incoherent", "los"];

#[path = "../../support/mod.rs"]
mod support;
#[cfg(feature = "embree")]
use support::quantile;
use support::{criterion, median, one_thread, record, scenes, timed};

/// Times `routine(setup())` per iteration, leaving `setup` (input copies) out of the time.
fn timed_build<I, O>(
    b: &mut Bencher,
    group: &str,
    function: &str,
    mut setup: impl FnMut() -> I,
    mut routine: impl FnMut(I) -> O,
) {
    let key = (group.to_string(), function.to_string());
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let input = setup();
            let start = Instant::now();
            let out = routine(input);
            total += start.elapsed();
            drop(black_box(out));
        }
        record(&key, total.as_secs_f64() / iters as f64);
        total
    });
}

// ---------------------------------------------------------------------------------------
// Memory.

/// Bytes each library keeps for one scene (with the feature `embree`).
#[cfg_attr(not(feature = "embree"), allow(dead_code))]
struct Memory {
    scene: &'static str,
    triangles: usize,
    /// lanecast's own accounting (`SceneStats::bytes`, `bytes_x8`).
    lanecast: usize,
    lanecast_x8: Option<usize>,
    /// `SceneStats::bytes_x16` (when the scene has its 16-wide trees).
    lanecast_x16: Option<usize>,
    /// Resident memory Embree's `rtcCommitScene` takes (with its copies of the vertex and
    /// index buffers, which it keeps), on a device created beforehand, scenes kept alive.
    embree_rss: usize,
}

/// Resident set size of this process, from `/proc/self/statm` (4 KiB pages); 0 elsewhere.
#[cfg(feature = "embree")]
fn rss() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()))
        .map_or(0, |pages| pages * 4096)
}

// ---------------------------------------------------------------------------------------
// Queries over a whole set.

/// Rays `range` of the set one at a time: hits, or occluded rays for `los`.
fn run_range<P: Peer>(p: &P, set: &str, rays: &RaySoa, range: std::ops::Range<usize>) -> usize {
    let rays = black_box(rays);
    if set == "los" {
        range.filter(|&i| p.occluded(&rays.ray(i))).count()
    } else {
        // Every field of every hit is read (`Peer::closest_record`), as a caller would.
        let mut sum = 0.0f32;
        let n = range.filter_map(|i| p.closest_record(&rays.ray(i))).map(|x| sum += x).count();
        black_box(sum);
        n
    }
}

/// The whole set one ray at a time.
fn run<P: Peer>(p: &P, set: &str, rays: &RaySoa) -> usize {
    run_range(p, set, rays, 0..rays.len())
}

/// lanecast's batch queries over the set (`intersect_batch_with` / `occluded_batch_with`,
/// Auto) on the calling rayon pool: hits, or occluded rays for `los`. The answers are counted
/// on the same pool, in chunks of [`THREAD_CHUNK`] (as [`parallel`] counts a peer's): a
/// count by one thread after the batch would time a serial pass over the whole output as
/// part of the two-thread figure.
fn lanecast_batch(lc: &Lanecast, set: &str, rays: &RaySoa, hits: &mut HitSoa, occ: &mut [bool]) -> usize {
    use rayon::prelude::*;
    let rays = black_box(rays);
    if set == "los" {
        lc.scene.occluded_batch_with(rays, occ, lanecast::Backend::Auto);
        occ.par_chunks(THREAD_CHUNK).map(|c| c.iter().filter(|&&o| o).count()).sum()
    } else {
        lc.scene.intersect_batch_with(rays, hits, lanecast::Backend::Auto);
        // A hit is a record with a geometry id (`Hit::is_hit`).
        hits.geom.par_chunks(THREAD_CHUNK).map(|c| c.iter().filter(|&&g| g != lanecast::hit::NO_ID).count()).sum()
    }
}

/// A peer's single-ray queries over the set, spread over the calling rayon pool in chunks of
/// [`THREAD_CHUNK`] rays, each chunk its own task (as lanecast's batches are).
#[cfg(feature = "embree")]
fn parallel<P: Peer + Sync>(p: &P, set: &str, rays: &RaySoa) -> usize {
    use rayon::prelude::*;
    let chunks = rays.len().div_ceil(THREAD_CHUNK);
    (0..chunks)
        .into_par_iter()
        .with_max_len(1)
        .map(|c| run_range(p, set, rays, c * THREAD_CHUNK..((c + 1) * THREAD_CHUNK).min(rays.len())))
        .sum()
}

/// lanecast's 8-ray packets over the set (hits, or occluded rays for `los`).
#[cfg(feature = "embree")]
fn lanecast_packets(lc: &Lanecast, set: &str, rays: &RaySoa, scratch: &mut PacketScratch) -> usize {
    let rays = black_box(rays);
    let (mut n, mut sum) = (0, 0.0f32);
    let mut out = HitPacket::<F32x8>::default();
    for i in (0..rays.len()).step_by(8) {
        rays.prefetch_ahead(i);
        let p = rays.packet::<F32x8>(i);
        n += if set == "los" {
            lc.scene.occluded_packet_with(&p, scratch, lanecast::Backend::Auto).bitmask().count_ones()
        } else {
            lc.scene.intersect_packet_with(&p, &mut out, scratch, lanecast::Backend::Auto);
            // Every field of every hit lane is read, as a caller would.
            let mut bits = out.hit_mask().bitmask();
            let hits = bits.count_ones();
            while bits != 0 {
                sum += lanecast_peers::hit_checksum(&out.lane(bits.trailing_zeros() as usize));
                bits &= bits - 1;
            }
            hits
        } as usize;
    }
    black_box(sum);
    n
}

/// Embree's 8-ray packets over the same rays.
#[cfg(feature = "embree")]
fn embree_packets(em: &Embree, set: &str, rays: &RaySoa) -> usize {
    let rays = black_box(rays);
    let (mut n, mut sum) = (0, 0.0f32);
    for i in (0..rays.len()).step_by(8) {
        let r: [lanecast::Ray; 8] = std::array::from_fn(|k| rays.ray((i + k).min(rays.len() - 1)));
        let k = (rays.len() - i).min(8);
        n += if set == "los" {
            em.occluded8(&r[..k]).count_ones() as usize
        } else {
            // Every field of every hit lane is read, as lanecast's packet loop reads its hits.
            let records = em.closest8_record(&r[..k]);
            sum += records.iter().flatten().sum::<f32>();
            records.iter().filter(|x| x.is_some()).count()
        };
    }
    black_box(sum);
    n
}

/// The time of one call of `f`; its result goes through `black_box` and is dropped after the
/// clock stops (a built scene's memory is freed outside the time, as in [`timed_build`]).
#[cfg(feature = "embree")]
fn pass<T>(f: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    let out = f();
    let elapsed = start.elapsed();
    drop(black_box(out));
    elapsed
}

/// Times lanecast (`ours`) and Embree (`theirs`) in turns, each closure returning the time of
/// one pass or build (see [`pass`]): each iteration is one round of four, ours, theirs,
/// theirs, ours (so that a drift of the host's speed within a round weighs on both alike),
/// and records the round's speed ratio, ours over theirs (their two times over ours), under
/// `(group, function)` for the closing table. Criterion's own figure for the function is the
/// round's total time.
#[cfg(feature = "embree")]
fn in_turns(
    b: &mut Bencher,
    group: &str,
    function: &str,
    mut ours: impl FnMut() -> Duration,
    mut theirs: impl FnMut() -> Duration,
) {
    let key = (group.to_string(), function.to_string());
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let (a1, b1) = (ours(), theirs());
            let (b2, a2) = (theirs(), ours());
            record(&key, (b1 + b2).as_secs_f64() / (a1 + a2).as_secs_f64());
            total += a1 + b1 + b2 + a2;
        }
        total
    });
}

/// One library's answers to a set: `t` of the closest hit (`+inf` on a miss) or, for `los`,
/// 0 when occluded and `+inf` when not; and the seconds the pass took.
fn answers(set: &str, rays: &RaySoa, f: impl Fn(&lanecast::Ray, bool) -> Option<f32>) -> (Vec<f32>, f64) {
    let los = set == "los";
    let start = Instant::now();
    let v = (0..rays.len()).map(|i| f(&rays.ray(i), los).unwrap_or(f32::INFINITY)).collect();
    (v, start.elapsed().as_secs_f64())
}

fn peer_answers<P: Peer>(p: &P, set: &str, rays: &RaySoa) -> (Vec<f32>, f64) {
    answers(set, rays, |r, los| if los { p.occluded(r).then_some(0.0) } else { p.closest(r) })
}

/// Agreement of `peer` with `reference`: (hit/miss share, share of common hits with `t`
/// within [`T_TOL`] relative).
fn agreement(reference: &[f32], peer: &[f32]) -> (f64, f64) {
    let (mut same, mut both, mut close) = (0usize, 0usize, 0usize);
    for (&a, &b) in reference.iter().zip(peer) {
        if a.is_finite() == b.is_finite() {
            same += 1;
        }
        if a.is_finite() && b.is_finite() {
            both += 1;
            if (a - b).abs() <= T_TOL * a.abs().max(b.abs()) {
                close += 1;
            }
        }
    }
    (same as f64 / reference.len() as f64, close as f64 / both.max(1) as f64)
}

/// One line of the agreement table.
struct Check {
    scene: &'static str,
    set: &'static str,
    lib: String,
    hit_miss: f64,
    t_agree: Option<f64>,
    oneshot_mrays: f64,
}

// ---------------------------------------------------------------------------------------

#[cfg_attr(not(feature = "embree"), allow(unused_variables, clippy::ptr_arg))]
fn bench_scene(
    c: &mut Criterion,
    pool: &rayon::ThreadPool,
    name: &'static str,
    file: &str,
    cam: &Camera,
    checks: &mut Vec<Check>,
    memory: &mut Vec<Memory>,
) -> (usize, Builds) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(file);
    let mesh = Mesh::load(&path);
    eprintln!(
        "{name}: {} triangles ({} degenerate dropped), {} vertices",
        mesh.len(),
        mesh.dropped,
        mesh.positions.len()
    );
    let lc = Lanecast::build(&mesh, pool);
    let obvhs_tris = Obvhs::triangles(&mesh);
    let ob = Obvhs::build(&obvhs_tris);
    let (pv, pi) = Parry::buffers(&mesh);
    let pa = Parry::build(pv.clone(), pi.clone());
    let bvh_shapes = BvhCrate::shapes(&mesh);
    let mut bc = BvhCrate::build(bvh_shapes.clone(), TriTest::default());
    #[cfg(feature = "embree")]
    let em = Embree::build(&mesh, 1).unwrap_or_else(|e| panic!("Embree: {e}"));
    #[cfg(feature = "embree")]
    let em_robust = Embree::build_robust(&mesh, 1).unwrap_or_else(|e| panic!("Embree (robust): {e}"));
    #[cfg(feature = "embree")]
    {
        // Resident memory grown by KEPT scenes committed and kept alive together, per scene
        // (Embree's allocator maps fresh memory; one commit could reuse memory freed earlier,
        // four dilute that). lanecast's figure is its own accounting instead: its scenes come
        // from the Rust heap, which reuses the memory the bench freed before, so RSS growth
        // says little about them.
        const KEPT: usize = 4;
        let before = rss();
        let built: Vec<_> = (0..KEPT).map(|_| em.commit(&mesh).expect("builds")).collect();
        let embree_rss = rss().saturating_sub(before) / KEPT;
        drop(built);
        let stats = lc.scene.stats();
        memory.push(Memory {
            scene: name,
            triangles: mesh.len(),
            lanecast: stats.bytes,
            lanecast_x8: stats.bytes_x8,
            lanecast_x16: stats.bytes_x16,
            embree_rss,
        });
    }

    let n = (SIDE * SIDE) as usize;
    let bounds = lc.scene.bounds();
    let sets: [(&'static str, RaySoa); 3] = [
        ("primary", workload::primary(cam, SIDE, SIDE)),
        ("incoherent", workload::incoherent(&bounds, n, SEED_INCOHERENT)),
        ("los", workload::segments(&bounds, n, SEED_LOS)),
    ];

    // Agreement, before any timing.
    for (set, rays) in &sets {
        let (reference, secs) = peer_answers(&lc, set, rays);
        let hits = reference.iter().filter(|t| t.is_finite()).count();
        eprintln!(
            "{name} {set}: {} rays, lanecast {} {:.1} %",
            rays.len(),
            if *set == "los" { "occluded" } else { "hit" },
            100.0 * hits as f64 / rays.len() as f64
        );
        let mut note = |lib: &str, (answers, secs): (Vec<f32>, f64)| {
            let (hm, ta) = agreement(&reference, &answers);
            let t_agree = (*set != "los").then_some(ta);
            eprintln!(
                "  {lib:<28} hit/miss agreement {:>8.4} %{}{}   (one pass {:.2} Mrays/s)",
                100.0 * hm,
                t_agree.map_or(String::new(), |t| format!(", t within 1e-4: {:>8.4} %", 100.0 * t)),
                if hm < MIN_AGREEMENT { "   ** BELOW 99.9 % **" } else { "" },
                rays.len() as f64 / secs / 1e6
            );
            checks.push(Check {
                scene: name,
                set,
                lib: lib.to_string(),
                hit_miss: hm,
                t_agree,
                oneshot_mrays: rays.len() as f64 / secs / 1e6,
            });
        };
        note("lanecast", (reference.clone(), secs));
        note("obvhs", peer_answers(&ob, set, rays));
        note("parry3d", peer_answers(&pa, set, rays));
        note("bvh", peer_answers(&bc, set, rays));
        #[cfg(feature = "embree")]
        {
            note("embree", peer_answers(&em, set, rays));
            note("embree_robust", peer_answers(&em_robust, set, rays));
            // Packets must answer as the single rays do.
            let mut scratch = PacketScratch::default();
            assert_eq!(lanecast_packets(&lc, set, rays, &mut scratch), run(&lc, set, rays), "lanecast packets");
            let single = run(&em, set, rays);
            let packets = embree_packets(&em, set, rays);
            eprintln!("  embree packet8 hits {packets}, single {single}");
        }
        // For reference only (not timed by criterion).
        bc.test = TriTest::Crate;
        note("bvh (crate triangle test)", peer_answers(&bc, set, rays));
        bc.test = TriTest::default();
        if *set == "los" {
            note("parry3d (depth-first any-hit)", answers(set, rays, |r, _| pa.occluded_depth_first(r).then_some(0.0)));
        }
    }

    for (set, rays) in &sets {
        let gname = format!("peers_{name}_{set}");
        let mut g = c.benchmark_group(&gname);
        g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(rays.len() as u64));
        g.bench_function("lanecast", |b| timed(b, &gname, "lanecast", || run(&lc, set, rays)));
        g.bench_function("obvhs", |b| timed(b, &gname, "obvhs", || run(&ob, set, rays)));
        g.bench_function("parry3d", |b| timed(b, &gname, "parry3d", || run(&pa, set, rays)));
        g.bench_function("bvh", |b| timed(b, &gname, "bvh", || run(&bc, set, rays)));
        #[cfg(feature = "embree")]
        g.bench_function("embree", |b| timed(b, &gname, "embree", || run(&em, set, rays)));
        #[cfg(feature = "embree")]
        g.bench_function("embree_robust", |b| timed(b, &gname, "embree_robust", || run(&em_robust, set, rays)));
        g.finish();
        #[cfg(feature = "embree")]
        {
            let gname = format!("peers_{name}_{set}_packet8");
            let mut g = c.benchmark_group(&gname);
            g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(rays.len() as u64));
            let mut scratch = PacketScratch::default();
            g.bench_function("lanecast", |b| {
                timed(b, &gname, "lanecast", || lanecast_packets(&lc, set, rays, &mut scratch))
            });
            g.bench_function("embree", |b| timed(b, &gname, "embree", || embree_packets(&em, set, rays)));
            g.bench_function("embree_robust", |b| {
                timed(b, &gname, "embree_robust", || embree_packets(&em_robust, set, rays))
            });
            g.finish();

            // lanecast against Embree's defaults in turns, single rays and packets.
            let gname = format!("peers_{name}_{set}_in_turns");
            let mut g = c.benchmark_group(&gname);
            g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(4 * rays.len() as u64));
            g.bench_function("single", |b| {
                in_turns(b, &gname, "single", || pass(|| run(&lc, set, rays)), || pass(|| run(&em, set, rays)))
            });
            g.bench_function("packet8", |b| {
                in_turns(
                    b,
                    &gname,
                    "packet8",
                    || pass(|| lanecast_packets(&lc, set, rays, &mut scratch)),
                    || pass(|| embree_packets(&em, set, rays)),
                )
            });
            g.finish();
        }
    }
    // Thread scaling: the same sets as batches on one and on two threads.
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a two-thread pool");
    for (set, rays) in &sets {
        let gname = format!("peers_{name}_{set}_threads");
        let mut g = c.benchmark_group(&gname);
        g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(rays.len() as u64));
        let (mut hits, mut occ) = (HitSoa::with_len(rays.len()), vec![false; rays.len()]);
        let want = run(&lc, set, rays);
        for (threads, p) in [("1t", pool), ("2t", &two)] {
            assert_eq!(p.install(|| lanecast_batch(&lc, set, rays, &mut hits, &mut occ)), want, "lanecast batch");
            g.bench_function(format!("lanecast_{threads}"), |b| {
                timed(b, &gname, &format!("lanecast_{threads}"), || {
                    p.install(|| lanecast_batch(&lc, set, rays, &mut hits, &mut occ))
                })
            });
            #[cfg(feature = "embree")]
            g.bench_function(format!("embree_{threads}"), |b| {
                timed(b, &gname, &format!("embree_{threads}"), || p.install(|| parallel(&em, set, rays)))
            });
        }
        g.finish();
    }
    drop(sets);

    let builds = Builds {
        name,
        lb: Lanecast::builder(&mesh),
        obvhs_tris,
        pv,
        pi,
        bvh_shapes,
        #[cfg(feature = "embree")]
        em,
        mesh,
    };
    (builds.mesh.len(), builds)
}

/// What a scene's build groups need, kept until every scene's query groups have run.
struct Builds {
    name: &'static str,
    mesh: Mesh,
    lb: lanecast::SceneBuilder,
    obvhs_tris: Vec<obvhs::triangle::Triangle>,
    pv: Vec<parry3d::math::Vector>,
    pi: Vec<[u32; 3]>,
    bvh_shapes: Vec<BvhTri>,
    #[cfg(feature = "embree")]
    em: Embree,
}

/// The one-thread builds of a scene: group `peers_build_<scene>`.
fn bench_builds(c: &mut Criterion, pool: &rayon::ThreadPool, b: &Builds) {
    let gname = format!("peers_build_{}", b.name);
    let mut g = c.benchmark_group(&gname);
    g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(b.mesh.len() as u64));
    g.bench_function("lanecast", |bn| {
        timed_build(bn, &gname, "lanecast", || b.lb.clone(), |x| pool.install(|| x.build().unwrap()))
    });
    g.bench_function("obvhs", |bn| timed_build(bn, &gname, "obvhs", || (), |_| Obvhs::build(&b.obvhs_tris)));
    g.bench_function("parry3d", |bn| {
        timed_build(bn, &gname, "parry3d", || (b.pv.clone(), b.pi.clone()), |(v, i)| Parry::build(v, i))
    });
    g.bench_function("bvh", |bn| {
        timed_build(bn, &gname, "bvh", || b.bvh_shapes.clone(), |s| BvhCrate::build(s, TriTest::default()))
    });
    #[cfg(feature = "embree")]
    g.bench_function("embree", |bn| {
        timed_build(bn, &gname, "embree", || (), |_| b.em.commit(&b.mesh).expect("builds"))
    });
    #[cfg(feature = "embree")]
    g.bench_function("in_turns", |bn| builds_in_turns(bn, &gname, "in_turns", b, pool, &b.em));
    g.finish();
}

/// lanecast's build on `pool` (its input cloned outside the clock) and Embree's on `em`,
/// timed [`in_turns`].
#[cfg(feature = "embree")]
fn builds_in_turns(bn: &mut Bencher, group: &str, function: &str, b: &Builds, pool: &rayon::ThreadPool, em: &Embree) {
    in_turns(
        bn,
        group,
        function,
        || {
            let x = b.lb.clone();
            pass(|| pool.install(|| x.build().unwrap()))
        },
        || pass(|| em.commit(&b.mesh).expect("builds")),
    );
}

/// The two-thread builds of a scene (with the feature `embree`), in the same group name as
/// its one-thread builds. They run after every one-thread build: once Embree has made a
/// two-thread device, a later build on a one-thread device leaves a TBB worker spinning on a
/// core (see `Embree::build`), and while a two-thread device lives, one-thread builds run on
/// two threads; so the two-thread devices come last and no one-thread build follows them.
#[cfg(feature = "embree")]
fn bench_builds_2t(c: &mut Criterion, b: &Builds) {
    let gname = format!("peers_build_{}", b.name);
    let mut g = c.benchmark_group(&gname);
    g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(b.mesh.len() as u64));
    let pool2 = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a two-thread pool");
    g.bench_function("lanecast_2t", |bn| {
        timed_build(bn, &gname, "lanecast_2t", || b.lb.clone(), |x| pool2.install(|| x.build().unwrap()))
    });
    let em2 = Embree::build(&b.mesh, 2).unwrap_or_else(|e| panic!("Embree: {e}"));
    g.bench_function("embree_2t", |bn| {
        timed_build(bn, &gname, "embree_2t", || (), |_| em2.commit(&b.mesh).expect("builds"))
    });
    g.bench_function("in_turns_2t", |bn| builds_in_turns(bn, &gname, "in_turns_2t", b, &pool2, &em2));
    g.finish();
}

/// Whether a group's row has any figure (`NaN` marks a function that did not run): groups a
/// filter left out get no row.
fn ran(row: &[f64]) -> bool {
    row.iter().any(|v| !v.is_nan())
}

/// The machine the figures come from: the CPU's model name (`/proc/cpuinfo`, where there is
/// one), the logical CPUs and the instruction set lanecast's lanes compiled to.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, m)| m.trim().to_string()))
        })
        .unwrap_or_else(|| "CPU model unknown".into());
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    format!(
        "{model}, {cpus} logical CPUs; lanecast's lanes: {}, default backend {}",
        lanecast::lanes::instruction_set(),
        lanecast::Backend::Auto.resolve().name()
    )
}

/// One cell of an in-turns table: the median [quartiles] (rounds) of the speed ratios
/// recorded for `(group, function)` by [`in_turns`], or with `as_time` their inverses, time
/// ratios (whose quartiles swap); "–" when nothing was recorded.
#[cfg(feature = "embree")]
fn turns_cell(group: &str, function: &str, as_time: bool) -> String {
    let q = |p: f64| {
        quantile(group, function, if as_time { 1.0 - p } else { p }).map(|r| if as_time { 1.0 / r } else { r })
    };
    match (q(0.25), q(0.5), q(0.75)) {
        (Some(lo), Some(m), Some(hi)) => format!("{m:.3}× [{lo:.3}, {hi:.3}] ({})", support::count(group, function)),
        _ => "–".into(),
    }
}

fn print_table(scenes: &[(&str, usize)], checks: &[Check], memory: &[Memory]) {
    let mut out = String::new();
    let n = (SIDE * SIDE) as f64;
    let _ = writeln!(out, "Machine: {}\n", machine());
    out.push_str("## Traversal, 1 thread, Mrays/s (median of samples; 2^20 rays per set)\n\n");
    let _ = write!(out, "| scene | set |");
    for lib in LIBS {
        let _ = write!(out, " {lib} |");
    }
    for lib in &LIBS[1..] {
        let _ = write!(out, " lanecast/{lib} |");
    }
    let _ = writeln!(out, "\n|---|---|{}", "---:|".repeat(2 * LIBS.len() - 1));
    for (scene, _) in scenes {
        for set in SETS {
            let g = format!("peers_{scene}_{set}");
            let m: Vec<Option<f64>> = LIBS.iter().map(|lib| median(&g, lib).map(|s| n / s / 1e6)).collect();
            if m.iter().all(Option::is_none) {
                continue;
            }
            let _ = write!(out, "| {scene} | {set} |");
            for v in &m {
                let _ = write!(out, " {} |", v.map_or("–".into(), |v| format!("{v:.2}")));
            }
            for v in &m[1..] {
                let r = match (m[0], v) {
                    (Some(a), Some(b)) => format!("{:.2}×", a / b),
                    _ => "–".into(),
                };
                let _ = write!(out, " {r} |");
            }
            out.push('\n');
        }
    }
    #[cfg(feature = "embree")]
    {
        out.push_str("\n## 8-ray packets, 1 thread, Mrays/s (lanecast intersect_packet / occluded_packet, Backend::Auto; Embree rtcIntersect8 / rtcOccluded8)\n\n");
        out.push_str("| scene | set | lanecast packet8 | embree packet8 | embree_robust packet8 | lanecast/embree | lanecast/embree_robust |\n|---|---|---:|---:|---:|---:|---:|\n");
        for (scene, _) in scenes {
            for set in SETS {
                let g = format!("peers_{scene}_{set}_packet8");
                let m = |f: &str| median(&g, f).map_or(f64::NAN, |s| n / s / 1e6);
                let (l, e, r) = (m("lanecast"), m("embree"), m("embree_robust"));
                if !ran(&[l, e, r]) {
                    continue;
                }
                let _ = writeln!(out, "| {scene} | {set} | {l:.2} | {e:.2} | {r:.2} | {:.2}× | {:.2}× |", l / e, l / r);
            }
        }
        out.push_str("\n## lanecast / Embree (defaults) timed in turns, 1 thread: speed ratio per round (ours, theirs, theirs, ours), median [quartiles] (rounds)\n\n");
        out.push_str("| scene | set | single rays (rtcIntersect1 / rtcOccluded1) | 8-ray packets (rtcIntersect8 / rtcOccluded8) |\n|---|---|---:|---:|\n");
        for (scene, _) in scenes {
            for set in SETS {
                let g = format!("peers_{scene}_{set}_in_turns");
                let (single, packet) = (turns_cell(&g, "single", false), turns_cell(&g, "packet8", false));
                if single == "–" && packet == "–" {
                    continue;
                }
                let _ = writeln!(out, "| {scene} | {set} | {single} | {packet} |");
            }
        }
        out.push_str("\n## Build with Embree, ms (median of samples)\n\n");
        out.push_str("| scene | lanecast 1 thread | embree 1 thread | lanecast/embree | lanecast 2 threads | embree 2 threads | lanecast/embree |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (scene, _) in scenes {
            let g = format!("peers_build_{scene}");
            let m = |f: &str| median(&g, f).map_or(f64::NAN, |s| s * 1e3);
            let (l1, e1, l2, e2) = (m("lanecast"), m("embree"), m("lanecast_2t"), m("embree_2t"));
            if !ran(&[l1, e1, l2, e2]) {
                continue;
            }
            let _ =
                writeln!(out, "| {scene} | {l1:.1} | {e1:.1} | {:.2} | {l2:.1} | {e2:.1} | {:.2} |", l1 / e1, l2 / e2);
        }
        out.push_str("\n## Build, lanecast / Embree time in turns (rounds of lanecast, Embree, Embree, lanecast): median [quartiles] (rounds)\n\n");
        out.push_str("| scene | 1 thread | 2 threads |\n|---|---:|---:|\n");
        for (scene, _) in scenes {
            let g = format!("peers_build_{scene}");
            let (one, two) = (turns_cell(&g, "in_turns", true), turns_cell(&g, "in_turns_2t", true));
            if one == "–" && two == "–" {
                continue;
            }
            let _ = writeln!(out, "| {scene} | {one} | {two} |");
        }
    }
    out.push_str("\n## Threads: batch queries (lanecast intersect_batch / occluded_batch, Backend::Auto; Embree rtcIntersect1 / rtcOccluded1 over rayon chunks), Mrays/s\n\n");
    out.push_str("| scene | set | lanecast 1 thread | lanecast 2 threads | scaling | embree 1 thread | embree 2 threads | scaling |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (scene, _) in scenes {
        for set in SETS {
            let g = format!("peers_{scene}_{set}_threads");
            let m = |f: &str| median(&g, f).map_or(f64::NAN, |s| n / s / 1e6);
            let (l1, l2, e1, e2) = (m("lanecast_1t"), m("lanecast_2t"), m("embree_1t"), m("embree_2t"));
            if !ran(&[l1, l2, e1, e2]) {
                continue;
            }
            let _ = writeln!(
                out,
                "| {scene} | {set} | {l1:.2} | {l2:.2} | {:.2}× | {e1:.2} | {e2:.2} | {:.2}× |",
                l2 / l1,
                e2 / e1
            );
        }
    }
    if !memory.is_empty() {
        out.push_str("\n## Memory, bytes per triangle (lanecast: its own accounting of what it keeps; Embree: resident memory per rtcCommitScene, from /proc/self/statm over four scenes kept alive)\n\n");
        out.push_str(
            "| scene | lanecast x8 traversal | lanecast x16 traversal | lanecast in all | embree RSS |\n|---|---:|---:|---:|---:|\n",
        );
        for m in memory {
            let per = |b: usize| b as f64 / m.triangles as f64;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {:.1} |",
                m.scene,
                m.lanecast_x8.map_or("—".into(), |b| format!("{:.1}", per(b))),
                m.lanecast_x16.map_or("—".into(), |b| format!("{:.1}", per(b))),
                per(m.lanecast),
                per(m.embree_rss)
            );
        }
    }
    out.push_str("\n## Build, 1 thread, ms (median of samples)\n\n");
    out.push_str("| scene | triangles | lanecast (medium) | obvhs (medium_build) | parry3d (TriMesh::new) | bvh (Bvh::build) |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|\n");
    for (scene, tris) in scenes {
        let g = format!("peers_build_{scene}");
        let _ = write!(out, "| {scene} | {tris} |");
        for lib in &LIBS[..4] {
            let _ = write!(out, " {} |", median(&g, lib).map_or("–".into(), |s| format!("{:.1}", s * 1e3)));
        }
        out.push('\n');
    }
    out.push_str("\n## Agreement with lanecast (Backend::Auto) (all rays of each set, before timing)\n\n");
    out.push_str("| scene | set | library | hit/miss agree | t agree (1e-4 rel., common hits) | one-pass Mrays/s |\n");
    out.push_str("|---|---|---|---:|---:|---:|\n");
    for c in checks.iter().filter(|c| c.lib != "lanecast") {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.4} %{} | {} | {:.2} |",
            c.scene,
            c.set,
            c.lib,
            100.0 * c.hit_miss,
            if c.hit_miss < MIN_AGREEMENT { " **(< 99.9 %)**" } else { "" },
            c.t_agree.map_or("–".into(), |t| format!("{:.4} %", 100.0 * t)),
            c.oneshot_mrays
        );
    }
    eprintln!("\n{out}");
}

fn main() {
    let mut c = criterion();
    let pool = one_thread();
    let mut checks = Vec::new();
    let mut memory = Vec::new();
    let (done, builds): (Vec<(&str, usize)>, Vec<Builds>) = scenes()
        .iter()
        .map(|(name, file, cam)| {
            let (n, b) = bench_scene(&mut c, &pool, name, file, cam, &mut checks, &mut memory);
            ((*name, n), b)
        })
        .unzip();
    // Builds after every scene's queries, and the two-thread builds last (see
    // `bench_builds_2t`).
    for b in &builds {
        bench_builds(&mut c, &pool, b);
    }
    #[cfg(feature = "embree")]
    for b in &builds {
        bench_builds_2t(&mut c, b);
    }
    c.final_summary();
    print_table(&done, &checks, &memory);
}
