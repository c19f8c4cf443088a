//! Intersection and overlap kernels. Each file holds one test as a **scalar reference**
//! (`*_scalar`: glam, one pair at a time, the textbook math with its early-outs) and its
//! **lanes** twin (`*_lanes`: generic over [`Lanes`](crate::lanes::Lanes), so it runs on
//! `f32`, `f32x4` and `f32x8`).
//!
//! A lanes kernel tests lane `i` of its first argument against lane `i` of its second.
//! Both orientations come from splatting one side:
//!
//! * one ray against `N` primitives: `RayPacket::splat(&ray)` with `soa.lanes(i)`;
//! * `N` rays against one primitive: `soa.packet(i)` with `SphereLanes::splat(&sphere)`.
//!
//! Every kernel reports a miss for an invalid ray (see [`crate::ray`]) and for an invalid
//! shape (see [`crate::prim`]); lane results of misses are `+inf` for times and 0 for
//! barycentrics and normals, never NaN.
//!
//! Sources: C. Ericson, *Real-Time Collision Detection* (2005), ch. 5; T. Möller and
//! B. Trumbore, *Fast, Minimum Storage Ray/Triangle Intersection* (1997); E. Haines et al.,
//! *Precision Improvements for Ray/Sphere Intersection*, Ray Tracing Gems (2019), ch. 7.

pub mod aabb_triangle;
pub mod closest_point;
pub mod moving_aabb_aabb;
pub mod moving_sphere_aabb;
pub mod moving_sphere_sphere;
pub mod moving_sphere_triangle;
pub mod overlap;
pub mod ray_aabb;
pub mod ray_plane;
pub mod ray_sphere;
pub mod ray_triangle;
pub(crate) mod scale;
pub mod segment_capsule;
pub mod segment_sphere;
pub mod watertight;
