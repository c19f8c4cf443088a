//! Every lanes kernel, at widths 1, 4 and 8 and in every orientation it supports, against
//! its scalar reference: 10⁶ seeded random cases per kernel (release builds), edge-value
//! tables, every number replaced by NaN/±inf/±0/tiny/huge, and batch tails of 1..=17.
//! See `common/mod.rs` for how near-boundary cases are recognised and counted.

mod common;

use common::*;
use glam::Vec3;
use lanecast::kernel::*;
use lanecast::prim::*;
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{Lanes, Mask, Ray, RayPacket, RaySoa};

// ---------------------------------------------------------------------------------------
// Packing helpers.

fn ray_nums(r: &Ray) -> [f32; 8] {
    [r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max]
}
fn ray_from(n: &[f32]) -> Ray {
    Ray::with_interval(Vec3::from_slice(&n[0..3]), Vec3::from_slice(&n[3..6]), n[6], n[7])
}
fn v3(n: &[f32], i: usize) -> Vec3 {
    Vec3::from_slice(&n[i..i + 3])
}

fn packet<L: Lanes>(rays: &[Ray], orient: Orient) -> RayPacket<L> {
    if orient == Orient::SplatFirst {
        RayPacket::splat(&rays[0])
    } else {
        RayPacket::from_rays(rays).expect("at most N rays")
    }
}
fn prim_lanes<P: Primitive, L: Lanes>(prims: &[P], orient: Orient) -> P::Lanes<L> {
    if orient == Orient::SplatSecond { prims[0].splat_lanes() } else { Soa::from_slice(prims).lanes(0) }
}
fn vec_lanes<L: Lanes>(v: &[Vec3]) -> Vec3x<L> {
    let mut c = [[0.0f32; 16]; 3];
    for (i, p) in v.iter().enumerate() {
        for k in 0..3 {
            c[k][i] = p[k];
        }
    }
    Vec3x::load(&c[0], &c[1], &c[2], 0)
}
fn no_nan<L: Lanes>(name: &str, vals: &[L]) {
    for v in vals {
        for i in 0..L::N {
            assert!(!v.lane(i).is_nan(), "{name}: lane {i} of a {} result is NaN: {vals:?}", L::NAME);
        }
    }
}
fn opt_t(hit: bool, t: f32) -> Option<f32> {
    hit.then_some(t)
}
fn t_sig(t: Option<f32>, scale: f32) -> (f32, f32) {
    (t.unwrap_or(f32::INFINITY), scale + t.map_or(0.0, f32::abs))
}

fn perturb_ray(rng: &mut Rng, r: &Ray, s: f32) -> Ray {
    let tu = s / sane(r.dir.length());
    Ray::with_interval(
        jig(rng, r.origin, s),
        jig_dir(rng, r.dir),
        jigf(rng, r.t_min, r.t_min.abs() + tu),
        jigf(rng, r.t_max, r.t_max.abs() + tu),
    )
}

fn aim(rng: &mut Rng, o: Vec3, target: Vec3) -> Vec3 {
    let d = if rng.f32() < 0.1 { rng.unit_vec3() } else { (target - o) * 10f32.powf(rng.range(-2.0, 2.0)) };
    zero_some(rng, d, 0.05)
}

// ---------------------------------------------------------------------------------------
// Ray–sphere (test, intersect, crossings share the case data).

#[derive(Clone, Copy, Debug)]
struct RaySphereCase<const K: u8> {
    ray: Ray,
    s: Sphere,
}

impl<const K: u8> RaySphereCase<K> {
    fn random(rng: &mut Rng) -> Self {
        let k = magnitude(rng);
        let off = if rng.f32() < 0.2 { rng.vec3(-1e3, 1e3) } else { Vec3::ZERO };
        let c = rng.vec3(-10.0, 10.0);
        let r = 10f32.powf(rng.range(-2.0, 0.7));
        let o = if rng.f32() < 0.15 { c + rng.unit_vec3() * r * rng.f32() } else { rng.vec3(-20.0, 20.0) };
        let target = c + rng.unit_vec3() * r * rng.range(0.0, 1.6);
        let d = aim(rng, o, target);
        let (t0, t1) = interval(rng);
        Self { ray: Ray::with_interval(o * k + off, d * k, t0, t1), s: Sphere::new(c * k + off, r * k) }
    }
    fn scale(&self) -> f32 {
        sane((self.ray.origin - self.s.center).length() + self.s.radius.abs())
    }
    fn tscale(&self) -> f32 {
        self.scale() / sane(self.ray.dir.length())
    }
    fn perturb_(&self, rng: &mut Rng) -> Self {
        let s = self.scale();
        Self {
            ray: perturb_ray(rng, &self.ray, s),
            s: Sphere::new(jig(rng, self.s.center, s), jigf(rng, self.s.radius, s)),
        }
    }
    fn numbers_(&self) -> Vec<f32> {
        let mut n = ray_nums(&self.ray).to_vec();
        n.extend([self.s.center.x, self.s.center.y, self.s.center.z, self.s.radius]);
        n
    }
    fn from_(n: &[f32]) -> Self {
        Self { ray: ray_from(n), s: Sphere::new(v3(n, 8), n[11]) }
    }
    fn share_(&mut self, from: &Self, o: Orient) {
        match o {
            Orient::SplatFirst => self.ray = from.ray,
            Orient::SplatSecond => self.s = from.s,
            Orient::Pairs => {}
        }
    }
    fn split(cases: &[Self]) -> (Vec<Ray>, Vec<Sphere>) {
        (cases.iter().map(|c| c.ray).collect(), cases.iter().map(|c| c.s).collect())
    }
}

macro_rules! ray_prim_case_common {
    () => {
        const ORIENTS: &'static [Orient] = &[Orient::Pairs, Orient::SplatFirst, Orient::SplatSecond];
        fn perturb(&self, rng: &mut Rng) -> Self {
            self.perturb_(rng)
        }
        fn share(&mut self, from: &Self, o: Orient) {
            self.share_(from, o)
        }
        fn numbers(&self) -> Vec<f32> {
            self.numbers_()
        }
        fn from_numbers(n: &[f32]) -> Self {
            Self::from_(n)
        }
    };
}

impl Case for RaySphereCase<0> {
    type Out = bool;
    ray_prim_case_common!();
    fn scalar(&self) -> bool {
        ray_sphere::test_scalar(&self.ray, &self.s)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<bool> {
        let (rays, spheres) = Self::split(cases);
        let m = ray_sphere::test_lanes(&packet::<L>(&rays, o), &prim_lanes::<Sphere, L>(&spheres, o));
        (0..cases.len()).map(|i| m.lane(i)).collect()
    }
    fn sig(&self, out: &bool) -> Sig {
        Sig { discrete: vec![*out], cont: vec![] }
    }
}

impl Case for RaySphereCase<1> {
    type Out = Option<f32>;
    ray_prim_case_common!();
    fn scalar(&self) -> Option<f32> {
        ray_sphere::intersect_scalar(&self.ray, &self.s)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<Option<f32>> {
        let (rays, spheres) = Self::split(cases);
        let (m, t) = ray_sphere::intersect_lanes(&packet::<L>(&rays, o), &prim_lanes::<Sphere, L>(&spheres, o));
        no_nan("ray_sphere::intersect", &[t]);
        (0..cases.len()).map(|i| opt_t(m.lane(i), t.lane(i))).collect()
    }
    fn sig(&self, out: &Option<f32>) -> Sig {
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(*out, self.tscale())] }
    }
}

impl Case for RaySphereCase<2> {
    type Out = segment_sphere::Crossings;
    ray_prim_case_common!();
    fn scalar(&self) -> Self::Out {
        segment_sphere::crossings_scalar(&self.ray, &self.s)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<Self::Out> {
        let (rays, spheres) = Self::split(cases);
        let x = segment_sphere::crossings_lanes(&packet::<L>(&rays, o), &prim_lanes::<Sphere, L>(&spheres, o));
        no_nan(
            &format!("segment_sphere {cases:?}"),
            &[x.t_enter, x.t_exit, x.n_enter.x, x.n_enter.y, x.n_enter.z, x.n_exit.x],
        );
        (0..cases.len()).map(|i| x.lane(i)).collect()
    }
    fn sig(&self, out: &Self::Out) -> Sig {
        let ts = self.tscale();
        let ns = 1.0 + self.scale() / sane(self.s.radius);
        let mut cont = Vec::new();
        for c in [out.enter, out.exit] {
            cont.push(t_sig(c.map(|c| c.t), ts));
            let n = c.map_or(Vec3::ZERO, |c| c.normal);
            cont.extend([(n.x, ns), (n.y, ns), (n.z, ns)]);
        }
        Sig { discrete: vec![out.enter.is_some(), out.exit.is_some()], cont }
    }
}

// ---------------------------------------------------------------------------------------
// Ray–box.

#[derive(Clone, Copy, Debug)]
struct RayBoxCase {
    ray: Ray,
    b: Aabb,
}

fn gen_box(rng: &mut Rng, lo: f32, hi: f32) -> Aabb {
    let c = rng.vec3(-10.0, 10.0);
    let mut h = Vec3::new(10f32.powf(rng.range(lo, hi)), 10f32.powf(rng.range(lo, hi)), 10f32.powf(rng.range(lo, hi)));
    if rng.f32() < 0.05 {
        h[rng.below(3) as usize] = 0.0; // flat box
    }
    Aabb::new(c - h, c + h)
}
fn box_scale(b: &Aabb, p: Vec3) -> f32 {
    sane((p - b.center()).length() + b.half_extents().length())
}
fn jig_box(rng: &mut Rng, b: &Aabb, s: f32) -> Aabb {
    Aabb::new(jig(rng, b.min, s), jig(rng, b.max, s))
}
fn box_nums(b: &Aabb) -> [f32; 6] {
    [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z]
}

impl RayBoxCase {
    fn random(rng: &mut Rng) -> Self {
        let k = magnitude(rng);
        let b = gen_box(rng, -2.0, 0.7);
        let (c, h) = (b.center(), b.half_extents());
        let mut o = if rng.f32() < 0.15 { c + h * rng.vec3(-1.0, 1.0) } else { rng.vec3(-20.0, 20.0) };
        if rng.f32() < 0.1 {
            let i = rng.below(3) as usize;
            o[i] = if rng.f32() < 0.5 { b.min[i] } else { b.max[i] }; // on a slab plane
        }
        let target = c + h * rng.vec3(-1.3, 1.3);
        let mut d = aim(rng, o, target);
        d = zero_some(rng, d, 0.1);
        let (t0, t1) = interval(rng);
        Self { ray: Ray::with_interval(o * k, d * k, t0, t1), b: Aabb::new(b.min * k, b.max * k) }
    }
    fn scale(&self) -> f32 {
        box_scale(&self.b, self.ray.origin)
    }
    fn perturb_(&self, rng: &mut Rng) -> Self {
        let s = self.scale();
        Self { ray: perturb_ray(rng, &self.ray, s), b: jig_box(rng, &self.b, s) }
    }
    fn numbers_(&self) -> Vec<f32> {
        let mut n = ray_nums(&self.ray).to_vec();
        n.extend(box_nums(&self.b));
        n
    }
    fn from_(n: &[f32]) -> Self {
        Self { ray: ray_from(n), b: Aabb::new(v3(n, 8), v3(n, 11)) }
    }
    fn share_(&mut self, from: &Self, o: Orient) {
        match o {
            Orient::SplatFirst => self.ray = from.ray,
            Orient::SplatSecond => self.b = from.b,
            Orient::Pairs => {}
        }
    }
}

impl Case for RayBoxCase {
    type Out = Option<(f32, f32)>;
    ray_prim_case_common!();
    fn scalar(&self) -> Self::Out {
        ray_aabb::intersect_scalar(&self.ray, &self.b)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<Self::Out> {
        let rays: Vec<Ray> = cases.iter().map(|c| c.ray).collect();
        let boxes: Vec<Aabb> = cases.iter().map(|c| c.b).collect();
        let (m, t0, t1) = ray_aabb::intersect_lanes(&packet::<L>(&rays, o), &prim_lanes::<Aabb, L>(&boxes, o));
        no_nan("ray_aabb", &[t0, t1]);
        (0..cases.len()).map(|i| m.lane(i).then(|| (t0.lane(i), t1.lane(i)))).collect()
    }
    fn sig(&self, out: &Self::Out) -> Sig {
        let ts = self.scale() / sane(self.ray.dir.length());
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(out.map(|x| x.0), ts), t_sig(out.map(|x| x.1), ts)] }
    }
}

// ---------------------------------------------------------------------------------------
// Ray–triangle.

#[derive(Clone, Copy, Debug)]
struct RayTriCase {
    ray: Ray,
    tri: Triangle,
}

fn gen_triangle(rng: &mut Rng, c: Vec3, size: f32) -> Triangle {
    let v0 = c + rng.unit_vec3() * size;
    let mut v1 = c + rng.unit_vec3() * size;
    let mut v2 = c + rng.unit_vec3() * size;
    let u = rng.f32();
    if u < 0.03 {
        v2 = v0 + (v1 - v0) * rng.range(-1.0, 2.0); // (nearly) collinear
    } else if u < 0.05 {
        v1 = v0; // exactly degenerate
    } else if u < 0.15 {
        let axis = [Vec3::X, Vec3::Y, Vec3::Z][rng.below(3) as usize];
        v1 = v0 + axis * size; // an edge parallel to a box axis
    }
    Triangle::new(v0, v1, v2)
}
fn tri_nums(t: &Triangle) -> [f32; 9] {
    let [a, b, c] = t.v;
    [a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z]
}
fn tri_from(n: &[f32], i: usize) -> Triangle {
    Triangle::new(v3(n, i), v3(n, i + 3), v3(n, i + 6))
}
fn tri_size(t: &Triangle) -> f32 {
    (t.v[1] - t.v[0]).length().max((t.v[2] - t.v[0]).length())
}

impl RayTriCase {
    fn random(rng: &mut Rng) -> Self {
        let k = magnitude(rng);
        let c = rng.vec3(-10.0, 10.0);
        let size = 10f32.powf(rng.range(-1.0, 1.0));
        let tri = gen_triangle(rng, c, size);
        let [v0, v1, v2] = tri.v;
        let (u, v) = (rng.range(-0.2, 1.1), rng.range(-0.2, 1.1));
        let target = v0 + (v1 - v0) * u + (v2 - v0) * v;
        let o = rng.vec3(-20.0, 20.0);
        let d = aim(rng, o, target);
        let (t0, t1) = interval(rng);
        let tri = Triangle::new(v0 * k, v1 * k, v2 * k);
        Self { ray: Ray::with_interval(o * k, d * k, t0, t1), tri }
    }
    fn scale(&self) -> f32 {
        sane((self.ray.origin - self.tri.v[0]).length() + tri_size(&self.tri))
    }
    fn perturb_(&self, rng: &mut Rng) -> Self {
        let s = self.scale();
        let v = self.tri.v.map(|p| jig(rng, p, s));
        Self { ray: perturb_ray(rng, &self.ray, s), tri: Triangle::new(v[0], v[1], v[2]) }
    }
    fn numbers_(&self) -> Vec<f32> {
        let mut n = ray_nums(&self.ray).to_vec();
        n.extend(tri_nums(&self.tri));
        n
    }
    fn from_(n: &[f32]) -> Self {
        Self { ray: ray_from(n), tri: tri_from(n, 8) }
    }
    fn share_(&mut self, from: &Self, o: Orient) {
        match o {
            Orient::SplatFirst => self.ray = from.ray,
            Orient::SplatSecond => self.tri = from.tri,
            Orient::Pairs => {}
        }
    }
}

impl Case for RayTriCase {
    type Out = Option<ray_triangle::TriHit>;
    ray_prim_case_common!();
    fn scalar(&self) -> Self::Out {
        ray_triangle::intersect_scalar(&self.ray, &self.tri)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<Self::Out> {
        let rays: Vec<Ray> = cases.iter().map(|c| c.ray).collect();
        let tris: Vec<Triangle> = cases.iter().map(|c| c.tri).collect();
        let (m, t, u, v) = ray_triangle::intersect_lanes(&packet::<L>(&rays, o), &prim_lanes::<Triangle, L>(&tris, o));
        no_nan("ray_triangle", &[t, u, v]);
        (0..cases.len())
            .map(|i| m.lane(i).then(|| ray_triangle::TriHit { t: t.lane(i), u: u.lane(i), v: v.lane(i) }))
            .collect()
    }
    fn sig(&self, out: &Self::Out) -> Sig {
        let ts = self.scale() / sane(self.ray.dir.length());
        let us = 1.0 + self.scale() / sane(tri_size(&self.tri));
        Sig {
            discrete: vec![out.is_some()],
            cont: vec![t_sig(out.map(|h| h.t), ts), (out.map_or(0.0, |h| h.u), us), (out.map_or(0.0, |h| h.v), us)],
        }
    }
}

// ---------------------------------------------------------------------------------------
// Ray–plane.

#[derive(Clone, Copy, Debug)]
struct RayPlaneCase {
    ray: Ray,
    p: Plane,
}

impl RayPlaneCase {
    fn random(rng: &mut Rng) -> Self {
        let k = magnitude(rng);
        let u = rng.unit_vec3();
        let n = zero_some(rng, u, 0.2) * 10f32.powf(rng.range(-2.0, 2.0));
        let d = rng.range(-10.0, 10.0) * n.length();
        let o = rng.vec3(-20.0, 20.0);
        let target = rng.vec3(-10.0, 10.0);
        let mut dir = aim(rng, o, target);
        if rng.f32() < 0.05 {
            dir = n.any_orthogonal_vector(); // parallel
        }
        let (t0, t1) = interval(rng);
        Self { ray: Ray::with_interval(o * k, dir * k, t0, t1), p: Plane::new(n, d * k) }
    }
    fn scale(&self) -> f32 {
        sane(self.ray.origin.length() + (self.p.d / sane(self.p.normal.length())).abs())
    }
    fn perturb_(&self, rng: &mut Rng) -> Self {
        let s = self.scale();
        let n = jig_dir(rng, self.p.normal);
        Self { ray: perturb_ray(rng, &self.ray, s), p: Plane::new(n, jigf(rng, self.p.d, s * n.length())) }
    }
    fn numbers_(&self) -> Vec<f32> {
        let mut n = ray_nums(&self.ray).to_vec();
        n.extend([self.p.normal.x, self.p.normal.y, self.p.normal.z, self.p.d]);
        n
    }
    fn from_(n: &[f32]) -> Self {
        Self { ray: ray_from(n), p: Plane::new(v3(n, 8), n[11]) }
    }
    fn share_(&mut self, from: &Self, o: Orient) {
        match o {
            Orient::SplatFirst => self.ray = from.ray,
            Orient::SplatSecond => self.p = from.p,
            Orient::Pairs => {}
        }
    }
}

impl Case for RayPlaneCase {
    type Out = Option<f32>;
    ray_prim_case_common!();
    fn scalar(&self) -> Option<f32> {
        ray_plane::intersect_scalar(&self.ray, &self.p)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<Option<f32>> {
        let rays: Vec<Ray> = cases.iter().map(|c| c.ray).collect();
        let planes: Vec<Plane> = cases.iter().map(|c| c.p).collect();
        let (m, t) = ray_plane::intersect_lanes(&packet::<L>(&rays, o), &prim_lanes::<Plane, L>(&planes, o));
        no_nan("ray_plane", &[t]);
        (0..cases.len()).map(|i| opt_t(m.lane(i), t.lane(i))).collect()
    }
    fn sig(&self, out: &Option<f32>) -> Sig {
        let ts = self.scale() / sane(self.ray.dir.length());
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(*out, ts)] }
    }
}

// ---------------------------------------------------------------------------------------
// Overlap tests: box–triangle (SAT), sphere–box, box–box.

#[derive(Clone, Copy, Debug)]
struct BoxTriCase {
    b: Aabb,
    tri: Triangle,
}

impl Case for BoxTriCase {
    type Out = bool;
    const ORIENTS: &'static [Orient] = &[Orient::Pairs, Orient::SplatFirst];
    fn scalar(&self) -> bool {
        aabb_triangle::overlap_scalar(&self.b, &self.tri)
    }
    fn lanes<L: Lanes>(cases: &[Self], o: Orient) -> Vec<bool> {
        let boxes: Vec<Aabb> = cases.iter().map(|c| c.b).collect();
        let tris: Vec<Triangle> = cases.iter().map(|c| c.tri).collect();
        let bl: AabbLanes<L> =
            if o == Orient::SplatFirst { boxes[0].splat_lanes() } else { Soa::from_slice(&boxes).lanes(0) };
        let m = aabb_triangle::overlap_lanes(&bl, &prim_lanes::<Triangle, L>(&tris, Orient::Pairs));
        (0..cases.len()).map(|i| m.lane(i)).collect()
    }
    fn sig(&self, out: &bool) -> Sig {
        Sig { discrete: vec![*out], cont: vec![] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = box_scale(&self.b, self.tri.v[0]) + tri_size(&self.tri);
        let v = self.tri.v.map(|p| jig(rng, p, s));
        Self { b: jig_box(rng, &self.b, s), tri: Triangle::new(v[0], v[1], v[2]) }
    }
    fn share(&mut self, from: &Self, _o: Orient) {
        self.b = from.b;
    }
    fn numbers(&self) -> Vec<f32> {
        let mut n = box_nums(&self.b).to_vec();
        n.extend(tri_nums(&self.tri));
        n
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { b: Aabb::new(v3(n, 0), v3(n, 3)), tri: tri_from(n, 6) }
    }
}

fn gen_bt(rng: &mut Rng) -> BoxTriCase {
    let k = magnitude(rng);
    let b = gen_box(rng, -1.0, 0.5);
    let (c, h) = (b.center(), b.half_extents());
    let size = 10f32.powf(rng.range(-1.0, 1.0));
    let at = c + h * rng.vec3(-1.5, 1.5);
    let tri = gen_triangle(rng, at, size);
    BoxTriCase { b: Aabb::new(b.min * k, b.max * k), tri: Triangle::new(tri.v[0] * k, tri.v[1] * k, tri.v[2] * k) }
}

#[derive(Clone, Copy, Debug)]
struct SphereBoxCase {
    s: Sphere,
    b: Aabb,
}

impl Case for SphereBoxCase {
    type Out = bool;
    fn scalar(&self) -> bool {
        overlap::sphere_aabb_scalar(&self.s, &self.b)
    }
    fn lanes<L: Lanes>(cases: &[Self], _o: Orient) -> Vec<bool> {
        let s: Vec<Sphere> = cases.iter().map(|c| c.s).collect();
        let b: Vec<Aabb> = cases.iter().map(|c| c.b).collect();
        let m = overlap::sphere_aabb_lanes(&Soa::from_slice(&s).lanes::<L>(0), &Soa::from_slice(&b).lanes(0));
        (0..cases.len()).map(|i| m.lane(i)).collect()
    }
    fn sig(&self, out: &bool) -> Sig {
        Sig { discrete: vec![*out], cont: vec![] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = box_scale(&self.b, self.s.center) + self.s.radius.abs();
        Self { s: Sphere::new(jig(rng, self.s.center, s), jigf(rng, self.s.radius, s)), b: jig_box(rng, &self.b, s) }
    }
    fn numbers(&self) -> Vec<f32> {
        let mut n = vec![self.s.center.x, self.s.center.y, self.s.center.z, self.s.radius];
        n.extend(box_nums(&self.b));
        n
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { s: Sphere::new(v3(n, 0), n[3]), b: Aabb::new(v3(n, 4), v3(n, 7)) }
    }
}

fn gen_sb(rng: &mut Rng) -> SphereBoxCase {
    let b = gen_box(rng, -1.0, 0.5);
    let c = b.center() + b.half_extents() * rng.vec3(-2.5, 2.5);
    SphereBoxCase { s: Sphere::new(c, 10f32.powf(rng.range(-2.0, 0.5))), b }
}

#[derive(Clone, Copy, Debug)]
struct BoxBoxCase {
    a: Aabb,
    b: Aabb,
}

impl Case for BoxBoxCase {
    type Out = bool;
    fn scalar(&self) -> bool {
        overlap::aabb_aabb_scalar(&self.a, &self.b)
    }
    fn lanes<L: Lanes>(cases: &[Self], _o: Orient) -> Vec<bool> {
        let a: Vec<Aabb> = cases.iter().map(|c| c.a).collect();
        let b: Vec<Aabb> = cases.iter().map(|c| c.b).collect();
        let m = overlap::aabb_aabb_lanes(&Soa::from_slice(&a).lanes::<L>(0), &Soa::from_slice(&b).lanes(0));
        (0..cases.len()).map(|i| m.lane(i)).collect()
    }
    fn sig(&self, out: &bool) -> Sig {
        Sig { discrete: vec![*out], cont: vec![] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = box_scale(&self.a, self.b.center()) + self.b.half_extents().length();
        Self { a: jig_box(rng, &self.a, s), b: jig_box(rng, &self.b, s) }
    }
    fn numbers(&self) -> Vec<f32> {
        let mut n = box_nums(&self.a).to_vec();
        n.extend(box_nums(&self.b));
        n
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { a: Aabb::new(v3(n, 0), v3(n, 3)), b: Aabb::new(v3(n, 6), v3(n, 9)) }
    }
}

fn gen_bb(rng: &mut Rng) -> BoxBoxCase {
    let a = gen_box(rng, -1.0, 0.5);
    let c = a.center() + a.half_extents() * rng.vec3(-3.0, 3.0);
    let h = Vec3::new(rng.range(0.0, 1.5), rng.range(0.0, 1.5), rng.range(0.0, 1.5));
    BoxBoxCase { a, b: Aabb::new(c - h, c + h) }
}

// ---------------------------------------------------------------------------------------
// Sweeps.

#[derive(Clone, Copy, Debug)]
struct SweepSphereSphere {
    a: Sphere,
    va: Vec3,
    b: Sphere,
    vb: Vec3,
}

impl Case for SweepSphereSphere {
    type Out = Option<f32>;
    fn scalar(&self) -> Option<f32> {
        moving_sphere_sphere::time_of_impact_scalar(&self.a, self.va, &self.b, self.vb)
    }
    fn lanes<L: Lanes>(cases: &[Self], _o: Orient) -> Vec<Option<f32>> {
        let a: Vec<Sphere> = cases.iter().map(|c| c.a).collect();
        let b: Vec<Sphere> = cases.iter().map(|c| c.b).collect();
        let va: Vec<Vec3> = cases.iter().map(|c| c.va).collect();
        let vb: Vec<Vec3> = cases.iter().map(|c| c.vb).collect();
        let (m, t) = moving_sphere_sphere::time_of_impact_lanes(
            &Soa::from_slice(&a).lanes::<L>(0),
            vec_lanes(&va),
            &Soa::from_slice(&b).lanes(0),
            vec_lanes(&vb),
        );
        no_nan("moving_sphere_sphere", &[t]);
        (0..cases.len()).map(|i| opt_t(m.lane(i), t.lane(i))).collect()
    }
    fn sig(&self, out: &Option<f32>) -> Sig {
        let s = (self.b.center - self.a.center).length() + self.a.radius + self.b.radius;
        let ts = 1.0 + s / sane((self.vb - self.va).length());
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(*out, ts)] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = sane((self.b.center - self.a.center).length() + self.a.radius + self.b.radius);
        let vs = s + self.va.length() + self.vb.length();
        Self {
            a: Sphere::new(jig(rng, self.a.center, s), jigf(rng, self.a.radius, s)),
            va: jig(rng, self.va, vs),
            b: Sphere::new(jig(rng, self.b.center, s), jigf(rng, self.b.radius, s)),
            vb: jig(rng, self.vb, vs),
        }
    }
    fn numbers(&self) -> Vec<f32> {
        let (a, b) = (self.a, self.b);
        vec![
            a.center.x, a.center.y, a.center.z, a.radius, self.va.x, self.va.y, self.va.z, b.center.x, b.center.y,
            b.center.z, b.radius, self.vb.x, self.vb.y, self.vb.z,
        ]
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { a: Sphere::new(v3(n, 0), n[3]), va: v3(n, 4), b: Sphere::new(v3(n, 7), n[10]), vb: v3(n, 11) }
    }
}

fn gen_mss(rng: &mut Rng) -> SweepSphereSphere {
    let a = Sphere::new(rng.vec3(-10.0, 10.0), 10f32.powf(rng.range(-1.5, 0.5)));
    let b = Sphere::new(rng.vec3(-10.0, 10.0), 10f32.powf(rng.range(-1.5, 0.5)));
    let vb = rng.vec3(-2.0, 2.0);
    let aim = b.center - a.center + rng.unit_vec3() * (a.radius + b.radius) * rng.range(0.0, 1.5);
    let va = if rng.f32() < 0.05 { vb } else { vb + aim * rng.range(0.2, 2.0) };
    SweepSphereSphere { a, va, b, vb }
}

#[derive(Clone, Copy, Debug)]
struct SegCapsuleCase {
    p: Vec3,
    q: Vec3,
    cap: Capsule,
}

impl Case for SegCapsuleCase {
    type Out = Option<f32>;
    fn scalar(&self) -> Option<f32> {
        segment_capsule::intersect_scalar(self.p, self.q, &self.cap)
    }
    fn lanes<L: Lanes>(cases: &[Self], _o: Orient) -> Vec<Option<f32>> {
        let p: Vec<Vec3> = cases.iter().map(|c| c.p).collect();
        let q: Vec<Vec3> = cases.iter().map(|c| c.q).collect();
        let caps: Vec<Capsule> = cases.iter().map(|c| c.cap).collect();
        let (m, t) =
            segment_capsule::intersect_lanes(vec_lanes::<L>(&p), vec_lanes(&q), &Soa::from_slice(&caps).lanes(0));
        no_nan("segment_capsule", &[t]);
        (0..cases.len()).map(|i| opt_t(m.lane(i), t.lane(i))).collect()
    }
    fn sig(&self, out: &Option<f32>) -> Sig {
        let s = (self.p - self.cap.a).length() + (self.cap.b - self.cap.a).length() + self.cap.radius;
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(*out, 1.0 + s / sane((self.q - self.p).length()))] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = sane((self.p - self.cap.a).length() + (self.cap.b - self.cap.a).length() + self.cap.radius);
        Self {
            p: jig(rng, self.p, s),
            q: jig(rng, self.q, s),
            cap: Capsule::new(jig(rng, self.cap.a, s), jig(rng, self.cap.b, s), jigf(rng, self.cap.radius, s)),
        }
    }
    fn numbers(&self) -> Vec<f32> {
        let c = self.cap;
        vec![
            self.p.x, self.p.y, self.p.z, self.q.x, self.q.y, self.q.z, c.a.x, c.a.y, c.a.z, c.b.x, c.b.y, c.b.z,
            c.radius,
        ]
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { p: v3(n, 0), q: v3(n, 3), cap: Capsule::new(v3(n, 6), v3(n, 9), n[12]) }
    }
}

fn gen_sc(rng: &mut Rng) -> SegCapsuleCase {
    let a = rng.vec3(-5.0, 5.0);
    let b = if rng.f32() < 0.05 { a } else { a + rng.unit_vec3() * rng.range(0.1, 5.0) };
    let r = 10f32.powf(rng.range(-1.5, 0.3));
    let p = rng.vec3(-10.0, 10.0);
    let target = a + (b - a) * rng.range(-0.3, 1.3) + rng.unit_vec3() * r * rng.range(0.0, 1.5);
    let q = if rng.f32() < 0.03 { p } else { p + (target - p) * rng.range(0.5, 2.0) };
    SegCapsuleCase { p, q, cap: Capsule::new(a, b, r) }
}

#[derive(Clone, Copy, Debug)]
struct SweepSphereBox {
    s: Sphere,
    v: Vec3,
    b: Aabb,
}

impl Case for SweepSphereBox {
    type Out = Option<f32>;
    fn scalar(&self) -> Option<f32> {
        moving_sphere_aabb::time_of_impact_scalar(&self.s, self.v, &self.b)
    }
    fn lanes<L: Lanes>(cases: &[Self], _o: Orient) -> Vec<Option<f32>> {
        let s: Vec<Sphere> = cases.iter().map(|c| c.s).collect();
        let v: Vec<Vec3> = cases.iter().map(|c| c.v).collect();
        let b: Vec<Aabb> = cases.iter().map(|c| c.b).collect();
        let (m, t) = moving_sphere_aabb::time_of_impact_lanes(
            &Soa::from_slice(&s).lanes::<L>(0),
            vec_lanes(&v),
            &Soa::from_slice(&b).lanes(0),
        );
        no_nan("moving_sphere_aabb", &[t]);
        (0..cases.len()).map(|i| opt_t(m.lane(i), t.lane(i))).collect()
    }
    fn sig(&self, out: &Option<f32>) -> Sig {
        let s = box_scale(&self.b, self.s.center) + self.s.radius;
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(*out, 1.0 + s / sane(self.v.length()))] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = box_scale(&self.b, self.s.center) + self.s.radius.abs();
        Self {
            s: Sphere::new(jig(rng, self.s.center, s), jigf(rng, self.s.radius, s)),
            v: jig(rng, self.v, s + self.v.length()),
            b: jig_box(rng, &self.b, s),
        }
    }
    fn numbers(&self) -> Vec<f32> {
        let mut n =
            vec![self.s.center.x, self.s.center.y, self.s.center.z, self.s.radius, self.v.x, self.v.y, self.v.z];
        n.extend(box_nums(&self.b));
        n
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { s: Sphere::new(v3(n, 0), n[3]), v: v3(n, 4), b: Aabb::new(v3(n, 7), v3(n, 10)) }
    }
}

fn gen_msb(rng: &mut Rng) -> SweepSphereBox {
    let b = gen_box(rng, -1.0, 0.5);
    let (c, h) = (b.center(), b.half_extents());
    let r = 10f32.powf(rng.range(-1.5, 0.3));
    let start = rng.vec3(-15.0, 15.0);
    // Aim at corners and edges often: that is where the Voronoi cases live.
    let target = c + h * rng.vec3(-1.0, 1.0).signum() * rng.vec3(0.6, 1.6);
    let v = if rng.f32() < 0.03 { Vec3::ZERO } else { (target - start) * rng.range(0.5, 2.0) };
    let v = zero_some(rng, v, 0.05);
    SweepSphereBox { s: Sphere::new(start, r), v, b }
}

#[derive(Clone, Copy, Debug)]
struct SweepBoxBox {
    a: Aabb,
    va: Vec3,
    b: Aabb,
    vb: Vec3,
}

impl Case for SweepBoxBox {
    type Out = Option<(f32, f32)>;
    fn scalar(&self) -> Self::Out {
        moving_aabb_aabb::time_of_impact_scalar(&self.a, self.va, &self.b, self.vb)
    }
    fn lanes<L: Lanes>(cases: &[Self], _o: Orient) -> Vec<Self::Out> {
        let a: Vec<Aabb> = cases.iter().map(|c| c.a).collect();
        let b: Vec<Aabb> = cases.iter().map(|c| c.b).collect();
        let va: Vec<Vec3> = cases.iter().map(|c| c.va).collect();
        let vb: Vec<Vec3> = cases.iter().map(|c| c.vb).collect();
        let (m, t0, t1) = moving_aabb_aabb::time_of_impact_lanes(
            &Soa::from_slice(&a).lanes::<L>(0),
            vec_lanes(&va),
            &Soa::from_slice(&b).lanes(0),
            vec_lanes(&vb),
        );
        no_nan("moving_aabb_aabb", &[t0, t1]);
        (0..cases.len()).map(|i| m.lane(i).then(|| (t0.lane(i), t1.lane(i)))).collect()
    }
    fn sig(&self, out: &Self::Out) -> Sig {
        let s = box_scale(&self.a, self.b.center()) + self.b.half_extents().length();
        let ts = 1.0 + s / sane((self.vb - self.va).length());
        Sig { discrete: vec![out.is_some()], cont: vec![t_sig(out.map(|x| x.0), ts), t_sig(out.map(|x| x.1), ts)] }
    }
    fn perturb(&self, rng: &mut Rng) -> Self {
        let s = box_scale(&self.a, self.b.center()) + self.b.half_extents().length();
        let vs = s + self.va.length() + self.vb.length();
        Self {
            a: jig_box(rng, &self.a, s),
            va: jig(rng, self.va, vs),
            b: jig_box(rng, &self.b, s),
            vb: jig(rng, self.vb, vs),
        }
    }
    fn numbers(&self) -> Vec<f32> {
        let mut n = box_nums(&self.a).to_vec();
        n.extend(self.va.to_array());
        n.extend(box_nums(&self.b));
        n.extend(self.vb.to_array());
        n
    }
    fn from_numbers(n: &[f32]) -> Self {
        Self { a: Aabb::new(v3(n, 0), v3(n, 3)), va: v3(n, 6), b: Aabb::new(v3(n, 9), v3(n, 12)), vb: v3(n, 15) }
    }
}

fn gen_mbb(rng: &mut Rng) -> SweepBoxBox {
    let a = gen_box(rng, -1.0, 0.5);
    let b = gen_box(rng, -1.0, 0.5);
    let va = rng.vec3(-2.0, 2.0);
    let va = zero_some(rng, va, 0.2);
    let aim = a.center() - b.center() + rng.vec3(-1.0, 1.0) * (a.half_extents() + b.half_extents()) * 1.5;
    let step = aim * rng.range(0.3, 2.0);
    let vb = if rng.f32() < 0.05 { va } else { va + zero_some(rng, step, 0.15) };
    SweepBoxBox { a, va, b, vb }
}

// ---------------------------------------------------------------------------------------
// The random runs.

#[test]
fn ray_sphere_test_random() {
    compare_random("ray_sphere::test", 1, RaySphereCase::<0>::random);
}
#[test]
fn ray_sphere_intersect_random() {
    compare_random("ray_sphere::intersect", 2, RaySphereCase::<1>::random);
}
#[test]
fn segment_sphere_crossings_random() {
    compare_random("segment_sphere::crossings", 3, RaySphereCase::<2>::random);
}
/// Found by the 10⁸-case soak (`LANECAST_SOAK=100`): a sphere of radius 0.068 about 1,200
/// units from the world's origin. The normals must be as accurate as the problem's own size
/// allows (the distance from the origin to the sphere, 0.38), whatever the coordinates' size:
/// both twins against the normals worked out in f64 from the same inputs.
#[test]
fn a_small_sphere_far_out_gets_accurate_crossing_normals() {
    let ray = Ray::with_interval(
        Vec3::new(341.78333, -518.2074, -994.04065),
        Vec3::new(5.438191, 4.032181, 6.5136685),
        0.0,
        1.4930241,
    );
    let s = Sphere::new(Vec3::new(341.94904, -518.03754, -993.8335), 0.06806368);
    // f64: the roots of |m + t·d|² = r², and (m + t·d) / r at each.
    let f = |v: Vec3| [f64::from(v.x), f64::from(v.y), f64::from(v.z)];
    let (o, d, c, r) = (f(ray.origin), f(ray.dir), f(s.center), f64::from(s.radius));
    let m = [o[0] - c[0], o[1] - c[1], o[2] - c[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (a, b, cc) = (dot(d, d), dot(m, d), dot(m, m) - r * r);
    let h = (b * b - a * cc).sqrt();
    let normal = |t: f64| {
        Vec3::new(((m[0] + t * d[0]) / r) as f32, ((m[1] + t * d[1]) / r) as f32, ((m[2] + t * d[2]) / r) as f32)
    };
    let (n_in, n_out) = (normal((-b - h) / a), normal((-b + h) / a));
    // The documented scale of a normal's error: 1e-5 of (1 + problem size / radius).
    let tol = 1e-5 * (1.0 + ((ray.origin - s.center).length() + s.radius) / s.radius);
    let check = |what: &str, x: segment_sphere::Crossings| {
        let (enter, exit) = (x.enter.expect("an entry"), x.exit.expect("an exit"));
        for (name, got, want) in [("entry", enter.normal, n_in), ("exit", exit.normal, n_out)] {
            assert!(
                (got - want).abs().max_element() <= tol,
                "{what} {name} normal {got} against {want} (tolerance {tol})"
            );
        }
    };
    check("scalar", segment_sphere::crossings_scalar(&ray, &s));
    // Every lane of every width holds the same case.
    fn lanes<L: Lanes>(ray: &Ray, s: &Sphere) -> Vec<segment_sphere::Crossings> {
        let (rays, spheres) = (vec![*ray; L::N], vec![*s; L::N]);
        let x = segment_sphere::crossings_lanes(
            &packet::<L>(&rays, Orient::Pairs),
            &prim_lanes::<Sphere, L>(&spheres, Orient::Pairs),
        );
        (0..L::N).map(|i| x.lane(i)).collect()
    }
    let widths = [
        lanes::<f32>(&ray, &s),
        lanes::<lanecast::F32x4>(&ray, &s),
        lanes::<lanecast::F32x8>(&ray, &s),
        lanes::<lanecast::F32x16>(&ray, &s),
    ];
    for (w, lanes) in ["x1", "x4", "x8", "x16"].into_iter().zip(widths) {
        for (i, x) in lanes.into_iter().enumerate() {
            check(&format!("{w} lane {i}"), x);
        }
    }
}
#[test]
fn ray_aabb_random() {
    compare_random("ray_aabb", 4, RayBoxCase::random);
}
#[test]
fn ray_triangle_random() {
    compare_random("ray_triangle", 5, RayTriCase::random);
}
#[test]
fn ray_plane_random() {
    compare_random("ray_plane", 6, RayPlaneCase::random);
}
#[test]
fn aabb_triangle_random() {
    compare_random("aabb_triangle", 7, gen_bt);
}
#[test]
fn sphere_aabb_random() {
    compare_random("sphere_aabb", 8, gen_sb);
}
#[test]
fn aabb_aabb_random() {
    compare_random("aabb_aabb", 9, gen_bb);
}
#[test]
fn moving_sphere_sphere_random() {
    compare_random("moving_sphere_sphere", 10, gen_mss);
}
#[test]
fn segment_capsule_random() {
    compare_random("segment_capsule", 11, gen_sc);
}
/// First contact of the segment `p → q` with the capsule, worked out in f64 from the same
/// inputs: 0 when `p` is inside; otherwise the earliest root in `[0, 1]` of the two end
/// spheres and of the body whose axial position lies on the axis segment.
fn segment_capsule_f64(p: Vec3, q: Vec3, cap: &Capsule) -> Option<f64> {
    let f = |v: Vec3| [f64::from(v.x), f64::from(v.y), f64::from(v.z)];
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (p, q, a, b, r) = (f(p), f(q), f(cap.a), f(cap.b), f64::from(cap.radius));
    let (n, m, d) = (sub(q, p), sub(p, a), sub(b, a));
    let (dd, md, nd) = (dot(d, d), dot(m, d), dot(n, d));
    let w = if dd > 0.0 { (md / dd).clamp(0.0, 1.0) } else { 0.0 };
    let off = [m[0] - w * d[0], m[1] - w * d[1], m[2] - w * d[2]];
    if dot(off, off) <= r * r {
        return Some(0.0);
    }
    let mut best: Option<f64> = None;
    let mut take = |t: f64| {
        if (0.0..=1.0).contains(&t) {
            best = Some(best.map_or(t, |x: f64| x.min(t)));
        }
    };
    for c in [a, b] {
        let o = sub(p, c);
        let (qa, qb, qc) = (dot(n, n), dot(o, n), dot(o, o) - r * r);
        let disc = qb * qb - qa * qc;
        if qa > 0.0 && disc >= 0.0 {
            take((-qb - disc.sqrt()) / qa);
        }
    }
    let (qa, qb, qc) = (dd * dot(n, n) - nd * nd, dd * dot(m, n) - nd * md, dd * (dot(m, m) - r * r) - md * md);
    let disc = qb * qb - qa * qc;
    if dd > 0.0 && qa > 0.0 && disc >= 0.0 {
        let t = (-qb - disc.sqrt()) / qa;
        if (0.0..=dd).contains(&(md + t * nd)) {
            take(t);
        }
    }
    best
}

/// Found by the 10⁸-case soak (`LANECAST_SOAK=100`): segments running nearly along a
/// capsule's axis (2° and 1.9° here, then random ones from 1° to 5°; below that the rounding
/// of the inputs' differences alone, 10⁻⁷ of their size over the angle's sine, nears the
/// tolerance). The body's quadratic coefficients, formed as differences of dot products, kept
/// only a few bits there, and the twins' `t` missed the exact one by up to 2·10⁻⁴. Both twins
/// against `t` worked out in f64 from the same inputs, within the documented
/// `1e-5 · (1 + problem size / segment length)`.
#[test]
fn segments_nearly_along_a_capsule_get_accurate_times() {
    let v = Vec3::new;
    let mut cases = vec![
        SegCapsuleCase {
            p: v(9.075504, -8.795994, -5.1693153),
            q: v(-7.6450996, 7.6964207, -0.35698318),
            cap: Capsule::new(v(-2.5424027, 2.5466685, -2.145015), v(-4.0058594, 3.9832592, -1.6086473), 0.27253214),
        },
        SegCapsuleCase {
            p: v(-2.430129, -1.9614639, -7.316555),
            q: v(-4.9526014, -5.893251, 12.509796),
            cap: Capsule::new(v(-3.859092, -4.33251, 4.2083426), v(-3.4689305, -3.5103106, 0.580745), 0.03664384),
        },
    ];
    // Random ones: the segment crosses the axis segment's middle within half a radius, at a
    // small angle to the axis, mostly from outside the capsule (counted below).
    let mut rng = Rng::new(41);
    while cases.len() < 20_000 {
        let a = rng.vec3(-5.0, 5.0);
        let axis = rng.unit_vec3();
        let len = rng.range(1.0, 8.0);
        let r = 10f32.powf(rng.range(-1.5, 0.0));
        let across = axis.any_orthonormal_pair();
        let (e1, e2) = (across.0, across.1);
        let phi = rng.range(0.0, std::f32::consts::TAU);
        let side = e1 * phi.cos() + e2 * phi.sin();
        let angle = rng.range(1.0, 5.0).to_radians();
        let dir = (axis * angle.cos() + side * angle.sin()) * if rng.f32() < 0.5 { 1.0 } else { -1.0 };
        let x = a + axis * (len * rng.range(0.2, 0.8)) + rng.unit_vec3().reject_from(axis) * (0.5 * r);
        let seg = rng.range(5.0, 30.0);
        let p = x - dir * (seg * rng.range(0.2, 0.8));
        let cap = Capsule::new(a, a + axis * len, r);
        cases.push(SegCapsuleCase { p, q: p + dir * seg, cap });
    }
    // The exact times, once per case.
    let exact: Vec<f64> = cases
        .iter()
        .map(|c| segment_capsule_f64(c.p, c.q, &c.cap).expect("every case crosses the axis within the radius"))
        .collect();
    let check = |what: &str, c: &SegCapsuleCase, want: f64, got: Option<f32>| {
        let size = (c.p - c.cap.a).length() + (c.cap.b - c.cap.a).length() + c.cap.radius;
        let tol = 1e-5 * (1.0 + f64::from(size / (c.q - c.p).length()));
        let got = got.unwrap_or_else(|| panic!("{what}: a miss for {c:?}, exact t {want}"));
        assert!((f64::from(got) - want).abs() <= tol, "{what}: t {got} against {want} (tolerance {tol}) for {c:?}");
    };
    for (c, &want) in cases.iter().zip(&exact) {
        check("scalar", c, want, c.scalar());
    }
    // Every lane of every width.
    for (chunk, exact) in cases.chunks(16).zip(exact.chunks(16)) {
        for (w, got) in [
            ("x1", SegCapsuleCase::lanes::<f32>(&chunk[..1], Orient::Pairs)),
            ("x4", SegCapsuleCase::lanes::<lanecast::F32x4>(&chunk[..chunk.len().min(4)], Orient::Pairs)),
            ("x8", SegCapsuleCase::lanes::<lanecast::F32x8>(&chunk[..chunk.len().min(8)], Orient::Pairs)),
            ("x16", SegCapsuleCase::lanes::<lanecast::F32x16>(chunk, Orient::Pairs)),
        ] {
            for (i, t) in got.into_iter().enumerate() {
                check(&format!("{w} lane {i}"), &chunk[i], exact[i], t);
            }
        }
    }
    // A third of the cases (6,696) start outside and first touch the body strictly between
    // the ends, the part the fix is about; the rest enter through an end sphere.
    let body = cases
        .iter()
        .zip(&exact)
        .filter(|&(c, &t)| {
            let at = c.p.as_dvec3() + (c.q - c.p).as_dvec3() * t;
            let d = (c.cap.b - c.cap.a).as_dvec3();
            let w = (at - c.cap.a.as_dvec3()).dot(d) / d.length_squared();
            t > 0.0 && 0.0 < w && w < 1.0
        })
        .count();
    assert!(body > cases.len() / 4, "only {body} of {} cases enter through the body", cases.len());
}

#[test]
fn moving_sphere_aabb_random() {
    compare_random("moving_sphere_aabb", 12, gen_msb);
}
#[test]
fn moving_aabb_aabb_random() {
    compare_random("moving_aabb_aabb", 13, gen_mbb);
}

// ---------------------------------------------------------------------------------------
// Special values in every position.

fn n_special_base() -> usize {
    if cfg!(debug_assertions) { 30 } else { 600 }
}

#[test]
fn specials_everywhere() {
    let n = n_special_base();
    compare_specials("ray_sphere::test", 21, n, RaySphereCase::<0>::random);
    compare_specials("ray_sphere::intersect", 22, n, RaySphereCase::<1>::random);
    compare_specials("segment_sphere::crossings", 23, n, RaySphereCase::<2>::random);
    compare_specials("ray_aabb", 24, n, RayBoxCase::random);
    compare_specials("ray_triangle", 25, n, RayTriCase::random);
    compare_specials("ray_plane", 26, n, RayPlaneCase::random);
    compare_specials("aabb_triangle", 27, n, gen_bt);
    compare_specials("sphere_aabb", 28, n, gen_sb);
    compare_specials("aabb_aabb", 29, n, gen_bb);
    compare_specials("moving_sphere_sphere", 30, n, gen_mss);
    compare_specials("segment_capsule", 31, n, gen_sc);
    compare_specials("moving_sphere_aabb", 32, n, gen_msb);
    compare_specials("moving_aabb_aabb", 33, n, gen_mbb);
}

// ---------------------------------------------------------------------------------------
// Edge-value tables: grazing, inside, on the surface, ±0, axis-parallel, degenerate, huge
// and tiny. No rarity limit here (these are boundary cases on purpose), but every lane must
// still agree or be provably within rounding of the boundary.

fn axis_dirs() -> Vec<Vec3> {
    let z = [0.0f32, -0.0];
    let mut v = Vec::new();
    for &a in &z {
        for &b in &z {
            v.extend([Vec3::new(1.0, a, b), Vec3::new(-1.0, a, b), Vec3::new(a, 1.0, b), Vec3::new(a, b, -1.0)]);
        }
    }
    v.extend([Vec3::ONE, -Vec3::ONE, Vec3::new(1.0, -1.0, 0.0), Vec3::new(1e-30, 1.0, 0.0)]);
    v
}

fn edge_origins(b: &Aabb) -> Vec<Vec3> {
    let (lo, hi, c) = (b.min, b.max, b.center());
    let mut v = vec![c, lo, hi, Vec3::new(lo.x, c.y, c.z), Vec3::new(hi.x, c.y, c.z), Vec3::new(c.x, hi.y, lo.z)];
    v.extend([Vec3::new(lo.x - 1.0, c.y, c.z), Vec3::new(c.x, c.y, hi.z + 3.0), Vec3::new(lo.x, lo.y, lo.z - 5.0)]);
    v.extend([Vec3::new(lo.x - 2.0, lo.y - 2.0, lo.z - 2.0), Vec3::new(lo.x.next_down(), c.y, c.z)]);
    v
}

/// Every number scaled by `k` (interval ends too, which keeps `t` meaningful only roughly:
/// used for smoke tests outside the precision range).
fn scaled<C: Case>(cases: &[C], k: f32) -> Vec<C> {
    cases.iter().map(|c| C::from_numbers(&c.numbers().iter().map(|x| x * k).collect::<Vec<_>>())).collect()
}

fn intervals() -> [(f32, f32); 5] {
    [(0.0, f32::INFINITY), (0.0, 1.0), (-1.0, 0.5), (1.0, 1.0), (2.0, 1.0)]
}

/// Tangent, inside, on-surface, far, tiny, degenerate and invalid spheres against rays along
/// the axes, over the intervals of [`intervals`].
fn ray_sphere_edge_cases() -> Vec<RaySphereCase<1>> {
    let spheres = [
        Sphere::new(Vec3::ZERO, 1.0),
        Sphere::new(Vec3::new(1e8, 0.0, 0.0), 1e7),
        Sphere::new(Vec3::splat(1e-8), 1e-8),
        Sphere::new(Vec3::ZERO, 0.0),
        Sphere::new(Vec3::ZERO, -1.0),
        Sphere::new(Vec3::new(1000.0, 0.0, 0.0), 1e-3),
    ];
    let mut cases = Vec::new();
    for s in spheres {
        let r = s.radius.abs().max(1e-30);
        let c = s.center;
        let origins = [
            c,
            c + Vec3::X * r,
            c - Vec3::X * 5.0 * r,
            c + Vec3::new(-5.0, 1.0, 0.0) * r,
            c + Vec3::new(-5.0, 1.0f32.next_up(), 0.0) * r,
            c + Vec3::new(5.0, 0.0, 0.0) * r,
            Vec3::ZERO,
        ];
        for o in origins {
            for d in axis_dirs() {
                for (t0, t1) in intervals() {
                    for scale in [1.0, r] {
                        cases.push(RaySphereCase::<1> { ray: Ray::with_interval(o, d * scale, t0, t1), s });
                    }
                }
            }
        }
    }
    cases
}

/// The ray–sphere kernels' lanes twins (`test` and `intersect`) give the scalar reference's
/// answer bit for bit (README, "Tolerance"): both compute the same operations in the same
/// order, fused exactly where the lanes are (`lanes::mul_add_as_lanes`), on every build.
/// Checked on every width and orientation over random cases, the edge table and special
/// values in every input.
#[test]
fn ray_sphere_twins_equal_bit_for_bit() {
    let mut rng = Rng::new(0x5_9e7e);
    let mut cases: Vec<RaySphereCase<1>> = (0..n_random() / 4).map(|_| RaySphereCase::<1>::random(&mut rng)).collect();
    cases.extend(ray_sphere_edge_cases());
    cases.extend(special_cases(&mut rng, n_special_base(), RaySphereCase::<1>::random));
    /// Hits of `cases` on width `L`, each lane's answer asserted equal to the reference's.
    fn exact<C: Case, L: Lanes>(cases: &[C], orient: Orient, key: fn(&C::Out) -> Option<u32>) -> usize {
        let mut hits = 0;
        for_each_lane::<C, L>(cases, orient, |c, got| {
            let want = c.scalar();
            assert_eq!(key(got), key(&want), "[{} {orient:?}] {c:?}", L::NAME);
            hits += usize::from(key(&want).is_some());
        });
        hits
    }
    fn all_widths<C: Case>(cases: &[C], key: fn(&C::Out) -> Option<u32>) {
        for &orient in C::ORIENTS {
            let hits = [
                exact::<C, f32>(cases, orient, key),
                exact::<C, lanecast::F32x4>(cases, orient, key),
                exact::<C, lanecast::F32x8>(cases, orient, key),
                exact::<C, lanecast::F32x16>(cases, orient, key),
            ];
            assert!(hits.iter().all(|&h| h > cases.len() / 50), "{orient:?}: too few hits {hits:?} for a strong test");
        }
    }
    all_widths(&cases, |t: &Option<f32>| t.map(f32::to_bits));
    let as_test: Vec<RaySphereCase<0>> = cases.iter().map(|c| RaySphereCase { ray: c.ray, s: c.s }).collect();
    all_widths(&as_test, |&hit: &bool| hit.then_some(1));
}

#[test]
fn ray_sphere_edges() {
    let cases = ray_sphere_edge_cases();
    compare_all("ray_sphere::intersect edges", &cases, None);
    smoke_all(&scaled(&cases, 1e12));
    smoke_all(&scaled(&cases, 1e-12));
    let as_test: Vec<RaySphereCase<0>> = cases.iter().map(|c| RaySphereCase { ray: c.ray, s: c.s }).collect();
    compare_all("ray_sphere::test edges", &as_test, None);
    let as_cross: Vec<RaySphereCase<2>> = cases.iter().map(|c| RaySphereCase { ray: c.ray, s: c.s }).collect();
    compare_all("segment_sphere edges", &as_cross, None);
}

#[test]
fn ray_aabb_edges() {
    let boxes = [
        Aabb::new(-Vec3::ONE, Vec3::ONE),
        Aabb::new(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, 1.0)), // flat
        Aabb::new(Vec3::ZERO, Vec3::ZERO),                               // a point
        Aabb::new(Vec3::splat(1e30), Vec3::splat(2e30)),
        Aabb::new(Vec3::splat(-1e-30), Vec3::splat(1e-30)),
        Aabb::new(Vec3::splat(-1e-38), Vec3::splat(1e-38)),
        Aabb::new(Vec3::ONE, -Vec3::ONE), // inverted: invalid
    ];
    let mut cases = Vec::new();
    for b in boxes {
        for o in edge_origins(&b) {
            for d in axis_dirs() {
                for (t0, t1) in intervals() {
                    cases.push(RayBoxCase { ray: Ray::with_interval(o, d, t0, t1), b });
                }
            }
        }
    }
    compare_all("ray_aabb edges", &cases, None);
}

#[test]
fn ray_triangle_edges() {
    let tris = [
        Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y),
        Triangle::new(Vec3::ZERO, Vec3::Y, Vec3::X),       // other winding
        Triangle::new(Vec3::ZERO, Vec3::X, Vec3::X * 2.0), // collinear
        Triangle::new(Vec3::ONE, Vec3::ONE, Vec3::ONE),    // a point
        Triangle::new(Vec3::splat(1e8), Vec3::new(2e8, 1e8, 1e8), Vec3::new(1e8, 2e8, 1e8)),
        Triangle::new(Vec3::ZERO, Vec3::X * 1e-8, Vec3::Y * 1e-8),
    ];
    let mut cases = Vec::new();
    for tri in tris {
        let [a, b, c] = tri.v;
        let size = tri_size(&tri).max(1e-30);
        let targets = [a, b, c, (a + b) * 0.5, (b + c) * 0.5, (a + b + c) / 3.0, a + (b - a) * 2.0];
        for t in targets {
            for off in [Vec3::Z, -Vec3::Z, Vec3::new(0.3, 0.2, 1.0), Vec3::new(-1.0, 0.0, 0.0)] {
                let o = t + off * size;
                for (t0, t1) in intervals() {
                    cases.push(RayTriCase { ray: Ray::with_interval(o, (t - o) * 0.5, t0, t1), tri });
                    cases.push(RayTriCase { ray: Ray::with_interval(o, -off, t0, t1), tri });
                }
            }
        }
    }
    compare_all("ray_triangle edges", &cases, None);
    smoke_all(&scaled(&cases, 1e15));
    smoke_all(&scaled(&cases, 1e-15));
}

#[test]
fn ray_plane_edges() {
    let planes = [Plane::new(Vec3::Y, 0.0), Plane::new(Vec3::new(0.0, -2.0, 0.0), 4.0), Plane::new(Vec3::ZERO, 1.0)];
    let mut cases = Vec::new();
    for p in planes {
        for o in [Vec3::ZERO, Vec3::Y, Vec3::new(0.0, -2.0, 0.0), Vec3::new(3.0, 1e30, 0.0)] {
            for d in axis_dirs() {
                for (t0, t1) in intervals() {
                    cases.push(RayPlaneCase { ray: Ray::with_interval(o, d, t0, t1), p });
                }
            }
        }
    }
    compare_all("ray_plane edges", &cases, None);
}

#[test]
fn overlap_edges() {
    let unit = Aabb::new(-Vec3::ONE, Vec3::ONE);
    let flat = Aabb::new(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, 1.0));
    let mut bt = Vec::new();
    for b in [unit, flat, Aabb::new(Vec3::ONE, -Vec3::ONE)] {
        for shift in [0.0f32, 1.0, 1.0f32.next_up(), 2.0, 2.0f32.next_up(), 3.0] {
            for tri in [
                Triangle::new(
                    Vec3::new(shift, -0.5, 0.0),
                    Vec3::new(shift + 1.0, 0.5, 0.0),
                    Vec3::new(shift, 0.5, 0.5),
                ),
                Triangle::new(Vec3::new(shift, 0.0, -1.0), Vec3::new(shift, 0.0, 1.0), Vec3::new(shift, 1.0, 0.0)),
                Triangle::new(Vec3::new(shift, 1.0, 1.0), Vec3::new(shift, 1.0, 1.0), Vec3::new(shift, 1.0, 1.0)),
                Triangle::new(
                    Vec3::new(shift - 3.0, 1.0, 0.0),
                    Vec3::new(shift + 3.0, 1.0, 0.0),
                    Vec3::new(shift, 1.0, 0.0),
                ),
                Triangle::new(
                    Vec3::new(1.0 + shift, 1.0 + shift, -5.0),
                    Vec3::new(1.0 + shift, 1.0 + shift, 5.0),
                    Vec3::new(3.0 + shift, 3.0 + shift, 0.0),
                ),
            ] {
                bt.push(BoxTriCase { b, tri });
            }
        }
    }
    compare_all("aabb_triangle edges", &bt, None);
    let mut sb = Vec::new();
    let mut bb = Vec::new();
    for d in [0.0f32, 1.0, 2.0, 2.0f32.next_up(), 1.0 + std::f32::consts::FRAC_1_SQRT_2] {
        for dir in [Vec3::X, Vec3::new(1.0, 1.0, 0.0).normalize(), Vec3::ONE.normalize()] {
            sb.push(SphereBoxCase { s: Sphere::new(dir * d, 1.0), b: unit });
            sb.push(SphereBoxCase { s: Sphere::new(dir * d, 0.0), b: flat });
            bb.push(BoxBoxCase { a: unit, b: Aabb::new(dir * d, dir * d + Vec3::ONE) });
            bb.push(BoxBoxCase { a: flat, b: Aabb::new(dir * d - Vec3::ONE, dir * d) });
        }
    }
    compare_all("sphere_aabb edges", &sb, None);
    compare_all("aabb_aabb edges", &bb, None);
}

#[test]
fn sweep_edges() {
    let unit = Aabb::new(-Vec3::ONE, Vec3::ONE);
    let s = |c: Vec3, r: f32| Sphere::new(c, r);
    let mut mss = Vec::new();
    for (a, va, b, vb) in [
        (s(Vec3::ZERO, 1.0), Vec3::ZERO, s(Vec3::X * 2.0, 1.0), Vec3::ZERO), // touching at rest
        (s(Vec3::ZERO, 1.0), Vec3::X, s(Vec3::X * 3.0, 1.0), Vec3::X),       // equal velocities, apart
        (s(Vec3::ZERO, 1.0), Vec3::X, s(Vec3::X * 1.5, 1.0), Vec3::X),       // equal velocities, overlapping
        (s(Vec3::ZERO, 1.0), Vec3::X * 2.0, s(Vec3::X * 4.0, 1.0), Vec3::ZERO), // contact exactly at t = 1
        (s(Vec3::ZERO, 0.5), Vec3::X * 10.0, s(Vec3::new(5.0, 1.0, 0.0), 0.5), Vec3::ZERO), // grazing
        (s(Vec3::ZERO, 0.0), Vec3::X, s(Vec3::X, 0.0), Vec3::ZERO),          // points meeting at t = 1
        (s(Vec3::ZERO, 1.0), -Vec3::X, s(Vec3::X * 3.0, 1.0), Vec3::ZERO),   // moving apart
    ] {
        mss.push(SweepSphereSphere { a, va, b, vb });
    }
    compare_all("moving_sphere_sphere edges", &mss, None);

    let mut msb = Vec::new();
    let mut sc = Vec::new();
    for r in [0.0f32, 0.25, 1.0] {
        for start in [
            Vec3::new(-3.0, 0.0, 0.0),
            Vec3::new(-3.0, -3.0, 0.0),
            Vec3::new(-3.0, -3.0, -3.0),
            Vec3::new(-3.0, 1.0 + r, 0.0),
            Vec3::new(-3.0, 1.0 + r, 1.0 + r),
            Vec3::ZERO,
            Vec3::new(1.0 + r, 1.0, 0.0),
        ] {
            for v in [Vec3::X * 6.0, Vec3::new(6.0, 6.0, 0.0), Vec3::splat(6.0), Vec3::ZERO, Vec3::new(6.0, -0.0, 0.0)]
            {
                msb.push(SweepSphereBox { s: s(start, r), v, b: unit });
                sc.push(SegCapsuleCase { p: start, q: start + v, cap: Capsule::new(-Vec3::X, Vec3::X, r) });
                sc.push(SegCapsuleCase { p: start, q: start + v, cap: Capsule::new(Vec3::ONE, Vec3::ONE, r) });
            }
        }
    }
    compare_all("moving_sphere_aabb edges", &msb, None);
    compare_all("segment_capsule edges", &sc, None);

    let mut mbb = Vec::new();
    for vb in [Vec3::ZERO, Vec3::X * -4.0, Vec3::new(-4.0, 0.0, 0.0), Vec3::new(-4.0, -0.0, 4.0), Vec3::X] {
        for b in [
            Aabb::new(Vec3::new(2.0, -1.0, -1.0), Vec3::new(3.0, 1.0, 1.0)),
            Aabb::new(Vec3::new(1.0, -1.0, -1.0), Vec3::new(3.0, 1.0, 1.0)),
            Aabb::new(Vec3::new(2.0, 1.0, -1.0), Vec3::new(3.0, 2.0, 1.0)),
            Aabb::new(Vec3::new(2.0, 1.0f32.next_up(), -1.0), Vec3::new(3.0, 2.0, 1.0)),
        ] {
            mbb.push(SweepBoxBox { a: unit, va: Vec3::ZERO, b, vb });
        }
    }
    compare_all("moving_aabb_aabb edges", &mbb, None);
}

// ---------------------------------------------------------------------------------------
// Batch tails: RaySoa packets and Soa blocks of every length 1..=17. Lanes past the end
// must report a miss; lanes before it must equal the scalar reference.

fn tails_for<L: Lanes>() {
    let mut rng = Rng::new(77);
    for n in 1..=17usize {
        let cases: Vec<RaySphereCase<1>> = (0..n).map(|_| RaySphereCase::random(&mut rng)).collect();
        // N rays against one sphere, through RaySoa::packet.
        let sphere = cases[0].s;
        let soa = RaySoa::from_rays(&cases.iter().map(|c| c.ray).collect::<Vec<_>>());
        let sl = SphereLanes::<L>::splat(&sphere);
        for i in (0..n).step_by(L::N) {
            let (m, t) = ray_sphere::intersect_lanes(&soa.packet::<L>(i), &sl);
            for k in 0..L::N {
                let want = (i + k < n).then(|| ray_sphere::intersect_scalar(&soa.ray(i + k), &sphere)).flatten();
                assert_eq!(m.lane(k), want.is_some(), "tail n={n} lane {k} ({})", L::NAME);
                if let Some(w) = want {
                    assert!((t.lane(k) - w).abs() <= TOL * (1.0 + w.abs()) * 100.0, "tail t {w} vs {}", t.lane(k));
                }
            }
        }
        // One ray against a block of n spheres (padding spheres never hit).
        let ray = cases[0].ray;
        let block = SphereSoa::from_slice(&cases.iter().map(|c| c.s).collect::<Vec<_>>());
        let rp = RayPacket::<L>::splat(&ray);
        for i in (0..block.padded_len()).step_by(L::N) {
            let (m, _) = ray_sphere::intersect_lanes(&rp, &block.lanes::<L>(i));
            for k in 0..L::N {
                let want = i + k < n && ray_sphere::intersect_scalar(&ray, &block.get(i + k)).is_some();
                assert_eq!(m.lane(k), want, "block tail n={n} lane {k} ({})", L::NAME);
            }
        }
    }
}

#[test]
fn tails_1_to_17() {
    tails_for::<f32>();
    tails_for::<lanecast::F32x4>();
    tails_for::<lanecast::F32x8>();
}

// ---------------------------------------------------------------------------------------
// Scale.

/// A segment against a capsule meets it at the same time at every scale from 2⁻⁶⁰ to 2⁶⁰,
/// bit for bit, in both twins: the kernel works on the differences scaled by a power of two
/// (`kernel::normaliser`), and scaling by a power of two commutes with rounding. The body's
/// quadratic holds eighth powers of the sizes: before, from 2¹⁶ on the scalar missed the
/// body (its discriminant overflowed) and the lanes met it at `t = 0`, and below 2⁻¹⁶ both
/// lost it to underflow.
#[test]
fn segment_capsule_same_time_at_every_scale() {
    let cases = [
        // The body, square on: |y| falls to √0.75 at t = (3 - √0.75) / 6.
        (Vec3::new(2.0, 3.0, 0.5), Vec3::new(2.0, -3.0, 0.5), Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), 1.0),
        // An end sphere, along the axis's line: the same time.
        (Vec3::new(-3.0, 0.5, 0.0), Vec3::new(3.0, 0.5, 0.0), Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), 1.0),
        // Slanted, nothing a power of two.
        (
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(3.0, -1.0, -2.0),
            Vec3::new(0.1, 0.2, -0.3),
            Vec3::new(2.0, 1.0, 0.5),
            0.7,
        ),
        // Starting inside.
        (Vec3::new(1.0, 0.25, 0.0), Vec3::new(1.0, 5.0, 0.0), Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), 1.0),
    ];
    let want = (3.0 - 0.75f32.sqrt()) / 6.0;
    let lanes = |p: Vec3, q: Vec3, cap: Capsule| {
        let (hit, t) = segment_capsule::intersect_lanes::<lanecast::F32x8>(
            Vec3x::splat(p),
            Vec3x::splat(q),
            &Soa::from_slice(&[cap; 8]).lanes(0),
        );
        hit.lane(3).then(|| t.lane(3))
    };
    for (i, &(p, q, a, b, r)) in cases.iter().enumerate() {
        let one = segment_capsule::intersect_scalar(p, q, &Capsule::new(a, b, r)).expect("a contact at scale 1");
        let one_lanes = lanes(p, q, Capsule::new(a, b, r)).expect("a lanes contact at scale 1");
        match i {
            0 | 1 => assert!((one - want).abs() <= 1e-6, "case {i}: {one}, want {want}"),
            3 => assert_eq!(one, 0.0),
            _ => {}
        }
        assert!((one - one_lanes).abs() <= 1.0 / 16384.0, "case {i}: {one} against lanes {one_lanes}");
        for k in (-60..=60).step_by(4) {
            let s = 2f32.powi(k);
            let cap = Capsule::new(a * s, b * s, r * s);
            let got = segment_capsule::intersect_scalar(p * s, q * s, &cap);
            assert_eq!(got, Some(one), "case {i} at 2^{k}: scalar");
            assert_eq!(lanes(p * s, q * s, cap), Some(one_lanes), "case {i} at 2^{k}: lanes");
        }
    }
}

/// A sphere moving against a box meets it at the same time at every scale from 2⁻⁶⁰ to 2⁶⁰
/// in both twins: the grown-box entry is linear in the sizes and the edge contacts go
/// through the segment–capsule kernel, which holds at every scale (above). Before that
/// kernel scaled its problem, an edge or corner contact was lost from about 2¹⁶ up.
#[test]
fn moving_sphere_aabb_same_time_at_every_scale() {
    let b = Aabb::new(Vec3::new(-1.0, -1.0, -1.0), Vec3::new(1.0, 2.0, 1.0));
    let cases = [
        // A face, square on.
        (Sphere::new(Vec3::new(-3.0, 0.0, 0.0), 0.5), Vec3::new(4.0, 0.0, 0.0)),
        // An edge (along z): the rounded edge of the grown box.
        (Sphere::new(Vec3::new(-3.0, -3.0, 0.0), 0.5), Vec3::new(4.0, 4.0, 0.0)),
        // A corner.
        (Sphere::new(Vec3::new(-3.0, -3.0, -3.0), 0.75), Vec3::new(4.0, 4.0, 4.0)),
        // Slanted onto an edge, nothing a power of two.
        (Sphere::new(Vec3::new(-2.3, 3.1, 0.2), 0.3), Vec3::new(2.9, -2.2, 0.1)),
    ];
    let lanes = |s: Sphere, v: Vec3, b: Aabb| {
        let (hit, t) = moving_sphere_aabb::time_of_impact_lanes::<lanecast::F32x8>(
            &Soa::from_slice(&[s; 8]).lanes(0),
            Vec3x::splat(v),
            &Soa::from_slice(&[b; 8]).lanes(0),
        );
        hit.lane(5).then(|| t.lane(5))
    };
    for (i, &(s, v)) in cases.iter().enumerate() {
        let one = moving_sphere_aabb::time_of_impact_scalar(&s, v, &b).expect("a contact at scale 1");
        let one_lanes = lanes(s, v, b).expect("a lanes contact at scale 1");
        assert!((one - one_lanes).abs() <= 1.0 / 16384.0, "case {i}: {one} against lanes {one_lanes}");
        for k in (-60..=60).step_by(4) {
            let f = 2f32.powi(k);
            let (sk, vk, bk) = (Sphere::new(s.center * f, s.radius * f), v * f, Aabb::new(b.min * f, b.max * f));
            assert_eq!(moving_sphere_aabb::time_of_impact_scalar(&sk, vk, &bk), Some(one), "case {i} at 2^{k}: scalar");
            assert_eq!(lanes(sk, vk, bk), Some(one_lanes), "case {i} at 2^{k}: lanes");
        }
    }
}

/// Sizes far apart in one problem: a small sphere on a long segment past a short capsule
/// (the motion 2²¹ times the radius). Scaling brings the longest length to 1, so the
/// smallest terms of the body's discriminant come near f32's subnormals; they only matter
/// where they are negligible against the others, and the time stays exact to rounding.
#[test]
fn segment_capsule_with_sizes_far_apart() {
    for (len, r, motion) in
        [(2f32.powi(-7), 2f32.powi(-9), 2f32.powi(14)), (2f32.powi(-9), 2f32.powi(-12), 2f32.powi(14))]
    {
        let cap = Capsule::new(Vec3::ZERO, Vec3::new(len, 0.0, 0.0), r);
        let (p, q) = (Vec3::new(len / 2.0, -motion / 2.0, 0.0), Vec3::new(len / 2.0, motion / 2.0, 0.0));
        let want = 0.5 - r / motion;
        let got = segment_capsule::intersect_scalar(p, q, &cap).expect("the body is met");
        assert!((got - want).abs() <= 1e-7, "scalar {got}, want {want}");
        let (hit, t) = segment_capsule::intersect_lanes::<lanecast::F32x8>(
            Vec3x::splat(p),
            Vec3x::splat(q),
            &Soa::from_slice(&[cap; 8]).lanes(0),
        );
        assert!(hit.lane(0) && (t.lane(0) - want).abs() <= 1e-7, "lanes {}, want {want}", t.lane(0));
    }
}
