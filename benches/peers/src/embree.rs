//! Embree 4 as a peer (feature `embree`): a triangle mesh in an `RTCScene` at the default
//! (medium) build quality, queried with `rtcIntersect1` / `rtcOccluded1` and the 8-ray
//! packets `rtcIntersect8` / `rtcOccluded8`; at Embree's defaults (Möller–Trumbore, fast box
//! tests), or with the scene flag `RTC_SCENE_FLAG_ROBUST` ([`Embree::build_robust`]: its
//! watertight triangle test and conservative box tests, as lanecast's default).
//!
//! The library is loaded at run time from the path in `LANECAST_EMBREE_LIB` (the
//! `libembree4.so.4` of the `embreex` wheel, which ships it with its TBB;
//! `benches/peers/with-embree.sh` installs the wheel and sets the variable), so nothing is
//! needed to build the crate, and the ordinary test run never touches Embree. The structures
//! follow `include/embree4/rtcore_ray.h` of Embree 4; the hit records are allocated with room
//! for the `instPrimID` fields that a library built with `RTC_GEOMETRY_INSTANCE_ARRAY` appends
//! (they come last, so the layout before them is the same either way).

use crate::{Mesh, Peer};
use lanecast::Ray;
use std::ffi::{CString, c_char, c_int, c_uint, c_void};

type Device = *mut c_void;
type Scene = *mut c_void;
type Geometry = *mut c_void;

const GEOMETRY_TYPE_TRIANGLE: c_int = 0;
const BUFFER_TYPE_INDEX: c_int = 0;
const BUFFER_TYPE_VERTEX: c_int = 1;
const FORMAT_UINT3: c_int = 0x5003;
const FORMAT_FLOAT3: c_int = 0x9003;
const INVALID_ID: c_uint = u32::MAX;
/// `RTC_SCENE_FLAG_ROBUST` (rtcore_scene.h).
const SCENE_FLAG_ROBUST: c_int = 1 << 2;

/// `RTCRay`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
struct RtcRay {
    org: [f32; 3],
    tnear: f32,
    dir: [f32; 3],
    time: f32,
    tfar: f32,
    mask: c_uint,
    id: c_uint,
    flags: c_uint,
}

/// `RTCHit` with one instance level, and room for `instPrimID`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
struct RtcHit {
    ng: [f32; 3],
    u: f32,
    v: f32,
    prim_id: c_uint,
    geom_id: c_uint,
    inst_id: [c_uint; 1],
    inst_prim_id: [c_uint; 1],
}

/// `RTCRayHit`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
struct RtcRayHit {
    ray: RtcRay,
    hit: RtcHit,
}

/// `RTCRay8`.
#[repr(C, align(32))]
#[derive(Clone, Copy, Default)]
struct RtcRay8 {
    org_x: [f32; 8],
    org_y: [f32; 8],
    org_z: [f32; 8],
    tnear: [f32; 8],
    dir_x: [f32; 8],
    dir_y: [f32; 8],
    dir_z: [f32; 8],
    time: [f32; 8],
    tfar: [f32; 8],
    mask: [c_uint; 8],
    id: [c_uint; 8],
    flags: [c_uint; 8],
}

/// `RTCHit8` with one instance level, and room for `instPrimID`.
#[repr(C, align(32))]
#[derive(Clone, Copy, Default)]
struct RtcHit8 {
    ng_x: [f32; 8],
    ng_y: [f32; 8],
    ng_z: [f32; 8],
    u: [f32; 8],
    v: [f32; 8],
    prim_id: [c_uint; 8],
    geom_id: [c_uint; 8],
    inst_id: [c_uint; 8],
    inst_prim_id: [c_uint; 8],
}

/// The valid mask of an 8-ray call (Embree wants it aligned like the packet).
#[repr(C, align(32))]
#[derive(Clone, Copy, Default)]
struct Valid8([c_int; 8]);

/// `RTCRayHit8`.
#[repr(C, align(32))]
#[derive(Clone, Copy, Default)]
struct RtcRayHit8 {
    ray: RtcRay8,
    hit: RtcHit8,
}

// The layouts of rtcore_ray.h: the hit follows the ray at these offsets.
const _: () = assert!(std::mem::offset_of!(RtcRayHit, hit) == 48);
const _: () = assert!(std::mem::offset_of!(RtcRayHit8, hit) == 12 * 32);

/// The entry points used, resolved from the loaded library.
struct Api {
    new_device: unsafe extern "C" fn(*const c_char) -> Device,
    release_device: unsafe extern "C" fn(Device),
    get_device_error: unsafe extern "C" fn(Device) -> c_int,
    new_scene: unsafe extern "C" fn(Device) -> Scene,
    release_scene: unsafe extern "C" fn(Scene),
    commit_scene: unsafe extern "C" fn(Scene),
    set_scene_flags: unsafe extern "C" fn(Scene, c_int),
    get_scene_flags: unsafe extern "C" fn(Scene) -> c_int,
    new_geometry: unsafe extern "C" fn(Device, c_int) -> Geometry,
    release_geometry: unsafe extern "C" fn(Geometry),
    commit_geometry: unsafe extern "C" fn(Geometry),
    attach_geometry: unsafe extern "C" fn(Scene, Geometry) -> c_uint,
    set_new_geometry_buffer: unsafe extern "C" fn(Geometry, c_int, c_uint, c_int, usize, usize) -> *mut c_void,
    intersect1: unsafe extern "C" fn(Scene, *mut RtcRayHit, *mut c_void),
    occluded1: unsafe extern "C" fn(Scene, *mut RtcRay, *mut c_void),
    intersect8: unsafe extern "C" fn(*const c_int, Scene, *mut RtcRayHit8, *mut c_void),
    occluded8: unsafe extern "C" fn(*const c_int, Scene, *mut RtcRay8, *mut c_void),
    /// Keeps the library loaded while the pointers above are in use: for the whole process
    /// (unloading Embree while its TBB worker threads live crashes).
    _lib: libloading::Library,
}

/// The library, loaded once.
static API: std::sync::OnceLock<Result<Api, String>> = std::sync::OnceLock::new();

/// A live device of [`DEVICES`]: its build-thread count and how many [`Embree`] values use it.
struct SharedDevice {
    threads: usize,
    device: Device,
    users: usize,
}
// SAFETY: an Embree device may be used from any thread; the handle is only passed to Embree.
unsafe impl Send for SharedDevice {}

/// The live devices, one per build-thread count, with how many [`Embree`] values use each: a
/// device is made when the first one needs it and released with the last. Two devices limited
/// to one thread each, alive at once, keep a TBB worker thread spinning on `sched_yield` at
/// 100 % of a core (measured here: 2.0 CPU seconds in every 2 idle seconds, until a device
/// with two threads is made), which took the second vCPU from every benchmark that ran
/// meanwhile. The default and the robust scenes differ only in scene flags, so they share a
/// device. A device is not kept past its last user: while a two-thread device lives, a
/// one-thread device's builds run on two threads.
static DEVICES: std::sync::Mutex<Vec<SharedDevice>> = std::sync::Mutex::new(Vec::new());

impl Api {
    /// Loads the library named by `LANECAST_EMBREE_LIB`.
    fn load() -> Result<Api, String> {
        let path = std::env::var("LANECAST_EMBREE_LIB")
            .map_err(|_| "LANECAST_EMBREE_LIB is not set (see benches/peers/with-embree.sh)".to_string())?;
        // SAFETY: loading runs the library's initialisers; libembree4 is a plain C library
        // whose initialisers only set up its own state.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| format!("cannot load {path}: {e}"))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol is the Embree 4 entry point of that name, and the field it
                // is stored in has that function's C signature (rtcore_*.h of Embree 4).
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{path}: no symbol {}: {e}", $name))?
            };
        }
        Ok(Api {
            new_device: sym!("rtcNewDevice"),
            release_device: sym!("rtcReleaseDevice"),
            get_device_error: sym!("rtcGetDeviceError"),
            new_scene: sym!("rtcNewScene"),
            release_scene: sym!("rtcReleaseScene"),
            commit_scene: sym!("rtcCommitScene"),
            set_scene_flags: sym!("rtcSetSceneFlags"),
            get_scene_flags: sym!("rtcGetSceneFlags"),
            new_geometry: sym!("rtcNewGeometry"),
            release_geometry: sym!("rtcReleaseGeometry"),
            commit_geometry: sym!("rtcCommitGeometry"),
            attach_geometry: sym!("rtcAttachGeometry"),
            set_new_geometry_buffer: sym!("rtcSetNewGeometryBuffer"),
            intersect1: sym!("rtcIntersect1"),
            occluded1: sym!("rtcOccluded1"),
            intersect8: sym!("rtcIntersect8"),
            occluded8: sym!("rtcOccluded8"),
            _lib: lib,
        })
    }
}

/// An Embree device and a committed scene of one triangle mesh.
pub struct Embree {
    api: &'static Api,
    device: Device,
    scene: Scene,
    /// Scene flags set before every commit (`RTC_SCENE_FLAG_*`).
    flags: c_int,
}

// SAFETY: Embree's committed scenes may be queried from any thread, and the device and scene
// handles are only released in `drop`.
unsafe impl Send for Embree {}
// SAFETY: as above; queries do not mutate the scene.
unsafe impl Sync for Embree {}

impl Embree {
    /// Loads Embree and builds `mesh` with `threads` build threads (the device's `threads=`
    /// setting), at the default (medium) quality. Values of the same thread count alive at
    /// once share one device.
    ///
    /// # Errors
    /// The library cannot be loaded, or Embree reports an error.
    pub fn build(mesh: &Mesh, threads: usize) -> Result<Embree, String> {
        Self::build_with_flags(mesh, threads, 0)
    }

    /// [`Embree::build`] with the scene flag `RTC_SCENE_FLAG_ROBUST` (set before every
    /// commit): Embree then stores `Triangle4v` leaves, tests them with its watertight
    /// (Plücker) test, and widens its box tests so that rounding never culls a box the
    /// triangle test would hit: the guarantees of lanecast's default.
    ///
    /// # Errors
    /// As [`Embree::build`].
    pub fn build_robust(mesh: &Mesh, threads: usize) -> Result<Embree, String> {
        Self::build_with_flags(mesh, threads, SCENE_FLAG_ROBUST)
    }

    /// The shared device with `threads` build threads (see [`DEVICES`]), counted as used by
    /// one more [`Embree`] (whose `drop` gives it back through [`Embree::release_device`]).
    fn device(api: &Api, threads: usize) -> Result<Device, String> {
        let mut devices = DEVICES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(d) = devices.iter_mut().find(|d| d.threads == threads) {
            d.users += 1;
            return Ok(d.device);
        }
        let config = CString::new(format!("threads={threads}")).expect("no NUL");
        // SAFETY: `config` is a NUL-terminated string that outlives the call.
        let d = unsafe { (api.new_device)(config.as_ptr()) };
        if d.is_null() {
            return Err("rtcNewDevice failed".into());
        }
        devices.push(SharedDevice { threads, device: d, users: 1 });
        Ok(d)
    }

    /// One user of this value's device fewer; the last releases it.
    fn release_device(&self) {
        let mut devices = DEVICES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(at) = devices.iter().position(|d| d.device == self.device) else {
            return;
        };
        devices[at].users -= 1;
        if devices[at].users == 0 {
            devices.swap_remove(at);
            // SAFETY: the device is live (its last user is being dropped), and no scene of it
            // is left: each user released its own scene before this call.
            unsafe { (self.api.release_device)(self.device) };
        }
    }

    /// How many values use the live device with `threads` build threads; `None` when no such
    /// device is alive.
    #[must_use]
    pub fn device_users(threads: usize) -> Option<usize> {
        let devices = DEVICES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        devices.iter().find(|d| d.threads == threads).map(|d| d.users)
    }

    /// Whether `self` and `other` build on the same Embree device (true for scenes of the
    /// same build-thread count: see [`Embree::build`]).
    #[must_use]
    pub fn shares_device_with(&self, other: &Embree) -> bool {
        self.device == other.device
    }

    /// Whether the scene was built with `RTC_SCENE_FLAG_ROBUST` (as Embree reports its flags).
    #[must_use]
    pub fn is_robust(&self) -> bool {
        // SAFETY: the scene handle is live (released only in `drop`).
        unsafe { (self.api.get_scene_flags)(self.scene) & SCENE_FLAG_ROBUST != 0 }
    }

    fn build_with_flags(mesh: &Mesh, threads: usize, flags: c_int) -> Result<Embree, String> {
        let api = API.get_or_init(Api::load).as_ref().map_err(Clone::clone)?;
        let device = Self::device(api, threads)?;
        // From here `e` counts as a user of the device (given back in its `drop`).
        let mut e = Embree { api, device, scene: std::ptr::null_mut(), flags };
        let scene = {
            let built = e.commit(mesh)?;
            let scene = built.scene;
            std::mem::forget(built); // now owned by `e`, released in its `drop`
            scene
        };
        e.scene = scene;
        Ok(e)
    }

    /// Builds a scene of `mesh` on this device (the timed part of a build); the scene is
    /// released when the returned value is dropped.
    ///
    /// # Errors
    /// When Embree reports an error.
    pub fn commit(&self, mesh: &Mesh) -> Result<Built<'_>, String> {
        let a = &self.api;
        // SAFETY: every handle passed is the live one just returned by Embree; the buffers
        // Embree allocates hold exactly `itemCount` items of the given stride (vertex buffers
        // with the tail padding Embree adds itself), and are written within those bounds.
        unsafe {
            let scene = (a.new_scene)(self.device);
            if self.flags != 0 {
                (a.set_scene_flags)(scene, self.flags);
            }
            let geom = (a.new_geometry)(self.device, GEOMETRY_TYPE_TRIANGLE);
            let v = (a.set_new_geometry_buffer)(geom, BUFFER_TYPE_VERTEX, 0, FORMAT_FLOAT3, 12, mesh.positions.len())
                as *mut [f32; 3];
            let i = (a.set_new_geometry_buffer)(geom, BUFFER_TYPE_INDEX, 0, FORMAT_UINT3, 12, mesh.indices.len())
                as *mut [u32; 3];
            if v.is_null() || i.is_null() {
                return Err(format!("rtcSetNewGeometryBuffer failed (error {})", (a.get_device_error)(self.device)));
            }
            std::ptr::copy_nonoverlapping(mesh.positions.as_ptr(), v, mesh.positions.len());
            std::ptr::copy_nonoverlapping(mesh.indices.as_ptr(), i, mesh.indices.len());
            (a.commit_geometry)(geom);
            (a.attach_geometry)(scene, geom);
            (a.release_geometry)(geom);
            (a.commit_scene)(scene);
            let built = Built { embree: self, scene };
            match (a.get_device_error)(self.device) {
                0 => Ok(built),
                err => Err(format!("Embree error {err} while building")),
            }
        }
    }

    fn ray(r: &Ray) -> RtcRay {
        RtcRay {
            org: r.origin.to_array(),
            tnear: r.t_min,
            dir: r.dir.to_array(),
            time: 0.0,
            tfar: r.t_max,
            mask: u32::MAX,
            id: 0,
            flags: 0,
        }
    }

    /// The first 8 of `rays` as an `RTCRay8`, with the valid mask of their lanes.
    fn ray8(rays: &[Ray]) -> (Valid8, RtcRay8) {
        let mut r8 = RtcRay8::default();
        let mut valid = Valid8::default();
        for (k, r) in rays.iter().take(8).enumerate() {
            valid.0[k] = -1;
            (r8.org_x[k], r8.org_y[k], r8.org_z[k]) = (r.origin.x, r.origin.y, r.origin.z);
            (r8.dir_x[k], r8.dir_y[k], r8.dir_z[k]) = (r.dir.x, r.dir.y, r.dir.z);
            (r8.tnear[k], r8.tfar[k], r8.mask[k]) = (r.t_min, r.t_max, u32::MAX);
        }
        (valid, r8)
    }

    /// `rtcIntersect8` on the first 8 of `rays`: the ray-hit record Embree filled in.
    fn intersect8(&self, rays: &[Ray]) -> RtcRayHit8 {
        let (valid, ray) = Self::ray8(rays);
        let mut rh = RtcRayHit8 { ray, hit: RtcHit8 { geom_id: [INVALID_ID; 8], ..RtcHit8::default() } };
        // SAFETY: `valid` and `rh` are 32-byte-aligned live locals of the layouts rtcore_ray.h
        // gives (plus trailing room), and the scene is committed.
        unsafe { (self.api.intersect8)(valid.0.as_ptr(), self.scene, &mut rh, std::ptr::null_mut()) };
        rh
    }

    /// Closest hits of up to 8 rays (`rtcIntersect8`): `t` per lane, `+inf` on a miss.
    pub fn closest8(&self, rays: &[Ray]) -> [f32; 8] {
        let rh = self.intersect8(rays);
        std::array::from_fn(|k| if rh.hit.geom_id[k] == INVALID_ID { f32::INFINITY } else { rh.ray.tfar[k] })
    }

    /// Closest hits of up to 8 rays (`rtcIntersect8`) with every field of each lane's record
    /// folded into one number as [`Peer::closest_record`] folds a single ray's (`t`, `u`,
    /// `v`, `Ng` and the ids); `None` on a miss and for lanes past `rays.len()`. What the
    /// bench's packet loop reads, as lanecast's packet loop reads every field of its hits.
    pub fn closest8_record(&self, rays: &[Ray]) -> [Option<f32>; 8] {
        let rh = self.intersect8(rays);
        let h = &rh.hit;
        std::array::from_fn(|k| {
            (k < rays.len() && h.geom_id[k] != INVALID_ID).then(|| {
                let ng = [h.ng_x[k], h.ng_y[k], h.ng_z[k]];
                fold_record(rh.ray.tfar[k], h.u[k], h.v[k], ng, [h.geom_id[k], h.prim_id[k], h.inst_id[k]])
            })
        })
    }

    /// Occlusion of up to 8 rays (`rtcOccluded8`): a bit per occluded lane.
    pub fn occluded8(&self, rays: &[Ray]) -> u32 {
        let (valid, mut r8) = Self::ray8(rays);
        // SAFETY: as in `intersect8`.
        unsafe { (self.api.occluded8)(valid.0.as_ptr(), self.scene, &mut r8, std::ptr::null_mut()) };
        (0..rays.len().min(8)).fold(0, |m, k| m | (u32::from(r8.tfar[k] == f32::NEG_INFINITY) << k))
    }
}

/// A hit record folded into one number (`t`, `u`, `v`, `Ng` and the low bits of the ids), in
/// one order for single rays and packets, so that equal records give equal numbers.
fn fold_record(t: f32, u: f32, v: f32, ng: [f32; 3], [geom, prim, inst]: [u32; 3]) -> f32 {
    let ids = geom ^ prim.rotate_left(8) ^ inst.rotate_left(16);
    t + u + v + ng[0] + ng[1] + ng[2] + (ids & 0xff) as f32
}

impl Embree {
    /// `rtcIntersect1` on `ray`: the ray-hit record Embree filled in.
    fn intersect1(&self, ray: &Ray) -> RtcRayHit {
        let mut rh = RtcRayHit { ray: Self::ray(ray), hit: RtcHit { geom_id: INVALID_ID, ..RtcHit::default() } };
        // SAFETY: `rh` is a 16-byte-aligned live local of the layout rtcore_ray.h gives (plus
        // trailing room), and the scene is committed.
        unsafe { (self.api.intersect1)(self.scene, &mut rh, std::ptr::null_mut()) };
        rh
    }
}

impl Peer for Embree {
    const NAME: &'static str = "embree";
    fn closest(&self, ray: &Ray) -> Option<f32> {
        let rh = self.intersect1(ray);
        (rh.hit.geom_id != INVALID_ID).then_some(rh.ray.tfar)
    }
    fn closest_record(&self, ray: &Ray) -> Option<f32> {
        let rh = self.intersect1(ray);
        let h = &rh.hit;
        (h.geom_id != INVALID_ID)
            .then(|| fold_record(rh.ray.tfar, h.u, h.v, h.ng, [h.geom_id, h.prim_id, h.inst_id[0]]))
    }
    fn occluded(&self, ray: &Ray) -> bool {
        let mut r = Self::ray(ray);
        // SAFETY: `r` is a 16-byte-aligned live local of the layout rtcore_ray.h gives (plus
        // trailing room), and the scene is committed.
        unsafe { (self.api.occluded1)(self.scene, &mut r, std::ptr::null_mut()) };
        r.tfar == f32::NEG_INFINITY
    }
}

/// A scene built by [`Embree::commit`], released on drop.
pub struct Built<'a> {
    embree: &'a Embree,
    scene: Scene,
}

impl Drop for Built<'_> {
    fn drop(&mut self) {
        // SAFETY: the scene came from `commit` on this live device and is released once.
        unsafe { (self.embree.api.release_scene)(self.scene) }
    }
}

impl Drop for Embree {
    fn drop(&mut self) {
        if !self.scene.is_null() {
            // SAFETY: the scene handle is live and released once, before its device.
            unsafe { (self.api.release_scene)(self.scene) };
        }
        self.release_device();
    }
}
