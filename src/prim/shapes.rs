//! The scalar shapes, in glam types, with their validity rules.

use glam::Vec3;

/// A sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre.
    pub center: Vec3,
    /// Radius (`>= 0` to be valid).
    pub radius: f32,
}

impl Sphere {
    /// A sphere from centre and radius.
    pub fn new(center: Vec3, radius: f32) -> Self {
        Self { center, radius }
    }
    /// Finite numbers and `radius >= 0`.
    pub fn is_valid(&self) -> bool {
        self.center.is_finite() && self.radius.is_finite() && self.radius >= 0.0
    }
    /// Bounding box.
    pub fn aabb(&self) -> Aabb {
        Aabb::new(self.center - self.radius, self.center + self.radius)
    }
}

/// An axis-aligned box `[min, max]` (closed: points on the faces are inside).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Minimum corner.
    pub min: Vec3,
    /// Maximum corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (`min = +inf`, `max = -inf`): contains nothing, never hit.
    pub const EMPTY: Aabb = Aabb { min: Vec3::INFINITY, max: Vec3::NEG_INFINITY };

    /// A box from its corners.
    pub fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }
    /// Finite corners with `min <= max` on every axis.
    pub fn is_valid(&self) -> bool {
        self.min.is_finite() && self.max.is_finite() && self.min.cmple(self.max).all()
    }
    /// Centre point.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }
    /// Half extents.
    pub fn half_extents(&self) -> Vec3 {
        (self.max - self.min) * 0.5
    }
    /// Smallest box containing `self` and `p`.
    pub fn grow(&self, p: Vec3) -> Aabb {
        Aabb::new(self.min.min(p), self.max.max(p))
    }
    /// Smallest box containing both.
    pub fn union(&self, o: &Aabb) -> Aabb {
        Aabb::new(self.min.min(o.min), self.max.max(o.max))
    }
    /// Closed containment of a point.
    pub fn contains(&self, p: Vec3) -> bool {
        self.min.cmple(p).all() && p.cmple(self.max).all()
    }
    /// Surface area (0 for empty boxes).
    pub fn surface_area(&self) -> f32 {
        let e = (self.max - self.min).max(Vec3::ZERO);
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }
    /// Corner `n`: bit 0 picks max x, bit 1 max y, bit 2 max z.
    pub fn corner(&self, n: u32) -> Vec3 {
        Vec3::new(
            if n & 1 != 0 { self.max.x } else { self.min.x },
            if n & 2 != 0 { self.max.y } else { self.min.y },
            if n & 4 != 0 { self.max.z } else { self.min.z },
        )
    }
}

/// A triangle `v0 v1 v2`; the point with barycentrics `(u, v)` is `(1-u-v) v0 + u v1 + v v2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triangle {
    /// Vertices.
    pub v: [Vec3; 3],
}

impl Triangle {
    /// Smallest sine of the angle between two edges for a triangle to count as non-degenerate
    /// (2⁻²⁰ ≈ 9.5e-7: below that, f32 cannot resolve the triangle's plane).
    pub const SLIVER: f32 = 1.0 / 1_048_576.0;

    /// A triangle from its vertices.
    pub fn new(v0: Vec3, v1: Vec3, v2: Vec3) -> Self {
        Self { v: [v0, v1, v2] }
    }
    /// Finite vertices (degenerate triangles are valid shapes; rays never hit them).
    pub fn is_valid(&self) -> bool {
        self.v.iter().all(|p| p.is_finite())
    }
    /// `cross(v1 - v0, v2 - v0)`: twice the area times the unit normal.
    pub fn scaled_normal(&self) -> Vec3 {
        (self.v[1] - self.v[0]).cross(self.v[2] - self.v[0])
    }
    /// A non-finite vertex, or an area within f32 rounding of zero: with `e1 = v1 - v0`,
    /// `e2 = v2 - v0`, degenerate when `|e1 × e2|² <= SLIVER² · |e1|² · |e2|²` (the sine of
    /// the angle between the edges is at most [`Triangle::SLIVER`]) or that product is not a
    /// finite f32. Rays never hit degenerate triangles; the ray kernels evaluate this same
    /// expression with the same operations, so every backend agrees on it exactly.
    pub fn is_degenerate(&self) -> bool {
        !self.is_valid() || Self::edges_degenerate(self.v[1] - self.v[0], self.v[2] - self.v[0])
    }
    /// [`Triangle::is_degenerate`]'s test on the edges `e1`, `e2` of a valid triangle (the
    /// closest-point kernel applies it to edges it has scaled by a power of two).
    #[inline(always)]
    pub(crate) fn edges_degenerate(e1: Vec3, e2: Vec3) -> bool {
        let n2 = e1.cross(e2).length_squared();
        let bound = (Self::SLIVER * Self::SLIVER) * (e1.length_squared() * e2.length_squared());
        !(n2 > bound && n2 < f32::INFINITY && bound < f32::INFINITY)
    }
    /// Unit geometric normal `normalize(cross(v1 - v0, v2 - v0))`: in f32 (`s · (1 / √|s|²)`
    /// with `s` the cross product) when `|s|²` is a normal f32, otherwise in f64 (slivers,
    /// and triangles so tiny or so large that `|s|²` is subnormal, zero or infinite in f32:
    /// normalised by a subnormal `|s|²`, a normal came out up to 17 % too long). Zero only
    /// when the vertices are exactly collinear or not finite. The hit records' normal.
    #[inline]
    pub fn normal(&self) -> Vec3 {
        // Tested on the squared length, so the branch does not wait for the square root
        // and the division.
        let s = self.scaled_normal();
        let l2 = s.dot(s);
        if (f32::MIN_POSITIVE..f32::INFINITY).contains(&l2) {
            return s * (1.0 / l2.sqrt());
        }
        self.normal_f64()
    }
    /// [`Triangle::normal`]'s rare case, out of line: the normal worked out in f64.
    #[cold]
    #[inline(never)]
    fn normal_f64(&self) -> Vec3 {
        let [a, b, c] = self.v.map(|v| v.as_dvec3());
        (b - a).cross(c - a).normalize_or_zero().as_vec3()
    }
    /// Bounding box.
    pub fn aabb(&self) -> Aabb {
        Aabb::new(self.v[0].min(self.v[1]).min(self.v[2]), self.v[0].max(self.v[1]).max(self.v[2]))
    }
}

/// The infinite plane `normal · x = d` (the normal need not be unit length).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// Normal.
    pub normal: Vec3,
    /// Offset: points `x` with `normal · x = d`.
    pub d: f32,
}

impl Plane {
    /// A plane from normal and offset.
    pub fn new(normal: Vec3, d: f32) -> Self {
        Self { normal, d }
    }
    /// Finite numbers and a non-zero normal.
    pub fn is_valid(&self) -> bool {
        self.normal.is_finite() && self.d.is_finite() && self.normal.length_squared() > 0.0
    }
}

/// A capsule: the points within `radius` of the segment `a → b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// First end of the axis.
    pub a: Vec3,
    /// Second end of the axis.
    pub b: Vec3,
    /// Radius (`>= 0` to be valid).
    pub radius: f32,
}

impl Capsule {
    /// A capsule from its axis ends and radius.
    pub fn new(a: Vec3, b: Vec3, radius: f32) -> Self {
        Self { a, b, radius }
    }
    /// Finite numbers and `radius >= 0`.
    pub fn is_valid(&self) -> bool {
        self.a.is_finite() && self.b.is_finite() && self.radius.is_finite() && self.radius >= 0.0
    }
}
