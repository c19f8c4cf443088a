//! Throughput of every kernel: the scalar reference against its 4-, 8- and 16-lane twins.
//!
//! A thin criterion loop over the library's kernel table, [`lanecast::bench::kernels`], the
//! same table `lanecast bench` reports. Each kernel is a criterion group named after it
//! (`ray_sphere_test`, `ray_sphere`, `ray_aabb`, …) with one function per
//! [`Variant`](lanecast::bench::Variant):
//!
//! * `scalar`: the `*_scalar` reference, one pair at a time, reading array-of-structs
//!   copies (`Vec<Ray>`, `Vec<Sphere>`, …) of the pool;
//! * `x4` / `x8` / `x16`: the `*_lanes` kernel on `F32x4` / `F32x8` / `F32x16`, over lanes
//!   `i..i + N` of the pool's columns: rays made into a packet from the `RaySoa`'s columns
//!   (the slices `autovec` reads) by `RayPacket::new`, as a caller holding its own column
//!   buffers makes them (so the packet validity mask and the loads are part of the cost),
//!   primitives loaded from their `Soa` (`Soa::lanes`);
//! * `autovec` (ray–sphere, ray–box and ray–triangle only): the lanes math written as a plain
//!   scalar loop over the same `&[f32]` columns, left to the compiler to vectorise.
//!
//! Every function of a group runs over the same seeded pool of
//! [`PAIRS`](lanecast::bench::PAIRS) pairs ("lane `i` of the rays against lane `i` of the
//! primitives"), small enough to stay in L1/L2, with a mix of roughly 30–60 % hits; the hit
//! rates of every function are printed to stderr before the groups run. Each pass counts the
//! hits and, for kernels that return a time, stores one digest of the results per pair (e.g.
//! `t`, or `t + u + v` for triangles) into an output column.
//! Throughput is reported in pairs (`Throughput::Elements`).
//!
//! Run everything (a few minutes), or one group:
//!
//! ```text
//! cargo bench --bench kernels
//! cargo bench --bench kernels -- ray_aabb
//! ```
//!
//! Results land in criterion's default place, `target/criterion/<group>/<function>/`.
//!
//! After the groups, for the kernels that have `autovec` (ray–sphere's test and
//! intersection, ray–box and ray–triangle), the bench prints x16 and x8 against `autovec`,
//! and x8 against `scalar`, timed in turns ([`Kernel::paired`]: 200 rounds, each the best of
//! 50 passes of one variant and then of the other). Criterion runs one function after the
//! other, so on a host whose speed drifts over seconds the ratio of two groups' figures moves
//! with the drift (x16 against `autovec` read 0.70–1.30 on one shared host); in turns, the
//! drift is common to both halves of a round.

use criterion::{Criterion, Throughput, criterion_group};
use lanecast::bench::{Kernel, Variant, kernels};
use std::hint::black_box;
use std::time::Duration;

/// One line per kernel: the hit rate of every variant's pass over the pool.
fn hit_rates(k: &mut Kernel) -> String {
    let rates: Vec<String> = k
        .variants()
        .iter()
        .map(|&v| {
            let hits = k.run(v).expect("a listed variant runs");
            format!("{} {:.1}%", v.name(), 100.0 * hits as f64 / k.pairs() as f64)
        })
        .collect();
    format!("{:<26}{} pairs, hits: {}", k.name(), k.pairs(), rates.join(", "))
}

fn bench_kernels(c: &mut Criterion) {
    let mut table = kernels();
    for k in &mut table {
        eprintln!("{}", hit_rates(k));
    }
    for k in &mut table {
        let mut g = c.benchmark_group(k.name());
        g.throughput(Throughput::Elements(k.pairs() as u64));
        for &v in k.variants() {
            g.bench_function(v.name(), |b| b.iter(|| k.run(black_box(v))));
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = bench_kernels
}
/// Rounds of each comparison in turns (one speed ratio each).
const ROUNDS: usize = 200;
/// Passes of each variant per round (the best one counts).
const PASSES: usize = 50;

/// The comparisons in turns (see the module's documentation), one line each.
fn paired_summary() {
    println!(
        "\nTimed in turns (Kernel::paired: {ROUNDS} rounds, best of {PASSES} passes of each), speed of the first over the second, median [quartiles]:"
    );
    for k in kernels().iter_mut().filter(|k| k.variants().contains(&Variant::Autovec)) {
        for (a, b) in
            [(Variant::X16, Variant::Autovec), (Variant::X8, Variant::Autovec), (Variant::X8, Variant::Scalar)]
        {
            let p = k.paired(a, b, ROUNDS, PASSES).expect("the kernel has both variants");
            println!(
                "  {:<16} {:>3} / {:<7} {:.3} [{:.3}, {:.3}]",
                k.name(),
                a.name(),
                b.name(),
                p.median,
                p.quartiles.0,
                p.quartiles.1
            );
        }
    }
}

fn main() {
    benches();
    paired_summary();
    Criterion::default().configure_from_args().final_summary();
}
