//! # lanecast
//!
//! A ray-casting engine that stores rays and primitives structure-of-arrays and tests them
//! four or eight lanes at a time (the kernels also sixteen). Every SIMD kernel has a plain
//! scalar twin beside it.
//!
//! ## The contract
//!
//! * **Rays.** A point on a ray is `origin + t · dir` with `t ∈ [t_min, t_max]`; `dir` need
//!   not be unit length and `t` is in units of `dir`. A segment `a → b` is the ray
//!   `origin = a, dir = b - a, t ∈ [0, 1]` ([`Ray::segment`]).
//! * **Invalid input is a defined miss.** A ray with a NaN or infinite component, a
//!   zero-length direction (`dir·dir` not a positive finite f32), a non-finite `t_min`, a NaN
//!   `t_max` or `t_min > t_max` misses everything, in every backend and every lane, and never
//!   panics. So does a shape with a NaN/infinite number, a negative radius, a box with
//!   `min > max`, or a plane with a zero normal. A zero-area triangle is never hit by a ray
//!   (it still takes part in box overlap tests). [`Ray::try_new`] returns a typed
//!   [`RayError`] for callers that prefer an error.
//! * **Overflow.** A hit is always at a finite `t`: an answer that would only be reached
//!   through f32 overflow (a crossing "at infinity") is a miss. Lane results never hold NaN.
//! * **Closed shapes.** Boxes, spheres and capsules include their boundary: touching is a
//!   hit / overlap. A ray starting inside a sphere or box hits at `t_min`.
//! * **Tolerance.** The lanes kernels may use other (equally valid) formulas and fused
//!   multiply-adds, so they can differ from the scalar reference by rounding. They agree on
//!   hit/miss except where the exact answer lies within rounding of the boundary (a grazing
//!   ray, a ray through an edge), and on `t` within **`1e-5` relative to the size of the
//!   problem**: `|t_lanes - t_ref| · |dir| <= 1e-5 · (|t_ref · dir| + extent)`, where extent is
//!   the distance from the ray origin to the shape plus the shape's size. The tests in
//!   `tests/kernels_vs_scalar.rs` check this on millions of seeded cases.
//!
//! ## Layout
//!
//! * [`lanes`]: the [`Lanes`] trait over `f32`, `f32x4`, `f32x8` (the only user of `wide`);
//! * [`vec3x`]: SoA 3-vectors of lanes;
//! * [`ray`]: [`Ray`], [`RayPacket`], [`RaySoa`];
//! * [`prim`]: shapes, their lane views and [`prim::Soa`] column blocks;
//! * [`kernel`]: one file per test, `*_scalar` and `*_lanes` side by side.
//!
//! ## Example
//!
//! ```
//! use glam::Vec3;
//! use lanecast::kernel::ray_sphere;
//! use lanecast::prim::{Sphere, SphereSoa};
//! use lanecast::{Mask, Ray, RayPacket, F32x8};
//!
//! let ray = Ray::new(Vec3::new(0.0, 0.0, -5.0), Vec3::Z);
//! let s = Sphere::new(Vec3::ZERO, 1.0);
//! assert_eq!(ray_sphere::intersect_scalar(&ray, &s), Some(4.0));
//!
//! // One ray against eight spheres at once.
//! let spheres: Vec<Sphere> = (0..8).map(|i| Sphere::new(Vec3::new(i as f32, 0.0, 0.0), 0.5)).collect();
//! let soa = SphereSoa::from_slice(&spheres);
//! let (hit, t) = ray_sphere::intersect_lanes(&RayPacket::<F32x8>::splat(&ray), &soa.lanes(0));
//! assert_eq!(hit.bitmask(), 0b1); // only the sphere at the origin is on the ray
//! assert_eq!(t.to_array()[0], 4.5);
//! ```
#![warn(missing_docs)]

#[cfg(feature = "cli")]
pub mod bench;
pub mod bvh;
pub mod camera;
pub mod error;
pub mod hit;
pub mod io;
pub mod kernel;
pub mod lanes;
pub mod prim;
pub mod ray;
#[cfg(feature = "cli")]
pub mod render;
pub mod rng;
pub mod scene;
pub mod vec3x;
pub mod workload;

pub use error::{LimitError, SceneError};
pub use hit::{Hit, HitKind, HitPacket, HitSoa};
pub use lanes::{F32x4, F32x8, F32x16, Lanes, Mask};
pub use ray::{ALL_BITS, Ray, RayError, RayPacket, RaySoa};
pub use scene::{Backend, ClosestPoint, HitLists, Instance, Scene, SceneBuilder, SphereSweep, SweepHit, TriangleTest};

/// The README's code blocks, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
