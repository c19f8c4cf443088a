//! Primitives: the scalar shapes ([`Sphere`], [`Aabb`], [`Triangle`], [`Plane`], [`Capsule`],
//! all glam), their lane views (`*Lanes<L>`, one shape per lane) and the column storage
//! [`Soa`] that holds many of them padded to a lane multiple.
//!
//! # Invalid shapes
//!
//! A shape is valid when all its numbers are finite and, per kind: a sphere or capsule has
//! `radius >= 0`; a box has `min <= max` on every axis (flat boxes are fine); a plane has a
//! non-zero normal. Triangles only need finite vertices: a zero-area (degenerate) triangle is
//! valid for overlap tests but never hit by a ray.
//!
//! Lane views and [`Soa`] blocks are built only through sanitizing constructors: an invalid
//! shape is stored as its kind's *never-hit* value (NaN numbers, or the empty box
//! `min = +inf, max = -inf`), so every kernel reports a miss / no overlap for it without a
//! per-query check. The same never-hit values fill the padding lanes.

mod shapes;
mod soa;

pub use shapes::{Aabb, Capsule, Plane, Sphere, Triangle};
pub use soa::{
    AabbLanes, CapsuleLanes, ColumnsAt, MAX_COLUMNS, PlaneLanes, Primitive, Soa, SphereLanes, TriangleLanes,
};

/// Spheres in columns `cx cy cz r`.
pub type SphereSoa = Soa<Sphere>;
/// Boxes in columns `min_x min_y min_z max_x max_y max_z`.
pub type AabbSoa = Soa<Aabb>;
/// Triangles in columns `v0x v0y v0z v1x v1y v1z v2x v2y v2z`.
pub type TriangleSoa = Soa<Triangle>;
/// Planes in columns `nx ny nz d`.
pub type PlaneSoa = Soa<Plane>;
