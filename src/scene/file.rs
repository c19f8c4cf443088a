//! Scene files (`scenes/*.toml`): a camera and a list of geometries, loaded into a
//! [`SceneBuilder`].
//!
//! ```toml
//! [camera]                      # optional
//! eye = [0.0, 1.0, 4.0]
//! look_at = [0.0, 0.5, 0.0]
//! up = [0.0, 1.0, 0.0]          # optional, default +Y
//! fov_y_deg = 45.0
//! width = 640                   # optional, default 640
//! height = 480                  # optional, default 480
//!
//! [[sphere]]
//! center = [0.0, 1.0, 0.0]
//! radius = 1.0                  # >= 0
//!
//! [[box]]                       # axis-aligned, min <= max on every axis
//! min = [-5.0, -0.1, -5.0]
//! max = [5.0, 0.0, 5.0]
//!
//! [[triangle]]
//! vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
//!
//! [[mesh]]
//! path = "bunny.ply"            # .obj or .ply, relative to the scene file
//! scale = 1.0                   # optional: a number or [sx, sy, sz], default 1
//! rotate_deg = [0.0, 90.0, 0.0] # optional: about X, then Y, then Z; default [0, 0, 0]
//! translate = [0.0, 0.0, 0.0]   # optional, default [0, 0, 0]
//!
//! [[plane]]                     # the infinite plane normal · x = d; normal non-zero
//! normal = [0.0, 1.0, 0.0]
//! d = 0.0
//!
//! [[generate]]                  # procedural content, see the `generate` module
//! kind = "spheres"              # "terrain", "city" or "spheres"
//! seed = 7
//! count = 20
//!
//! [[mesh]]
//! path = "bunny.ply"
//! name = "bunny"                # optional on sphere, box, triangle and mesh entries
//!
//! [[instance]]                  # places the geometry named "bunny" (see below)
//! of = "bunny"
//! scale = 2.0                   # scale / rotate_deg / translate as for meshes, or:
//! # matrix = [[1, 0, 0, 5], [0, 1, 0, 0], [0, 0, 1, 0]]   # 3 × 4, row-major: [A | t]
//! ```
//!
//! **Instances.** `[[instance]] of = "NAME"` places the geometry named `NAME` (written
//! earlier in the file) with its transform: `scale` / `rotate_deg` / `translate` as for a
//! mesh, or `matrix` (3 rows of 4: the linear part and the translation), not both. A named
//! geometry that some instance places is a *prototype*: it is not also placed by itself (add
//! an `[[instance]]` without a transform for that). Instance ids count from 0 in file order
//! of the `[[instance]]` entries; geometry ids are not affected by them. Names are unique.
//! A transform the geometry's kind cannot take (see [`crate::scene::check_transform`]) is
//! an error at the entry.
//!
//! Every entry is one geometry and **geometry ids follow file order over all kinds**, also
//! when entries of different kinds interleave. A mesh vertex `p` becomes
//! `translate + R · (scale ∘ p)` with `R = Rz · Ry · Rx`. Numbers may be written as
//! integers. The procedural keys are listed in [`generate`](super::generate).
//!
//! Every problem is an error naming the file, and the place as `line:column` (1-based, in
//! characters) when it is known: TOML syntax, unknown keys, wrong types, missing fields,
//! values out of range (at the offending value), a missing or bad mesh (the mesh file's own
//! message, located at the `[[mesh]]` entry), a bad camera. Degenerate triangles are not an
//! error: the builder keeps them out of the BVH and counts them.

use crate::camera::Camera;
use crate::error::SceneError;
use crate::prim::{Aabb, Plane, Sphere, Triangle};
use crate::scene::SceneBuilder;
use crate::scene::generate::{Generator, ParamError};
use crate::scene::mesh_io::load_mesh;
use glam::{Mat3, Vec3};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

/// The built-in scene, embedded in the binary and used when no scene file is named.
pub const DEFAULT_SCENE: &str = include_str!("../../scenes/default.toml");

/// A loaded scene file: the geometries (not yet built) and the camera, if the file has one.
#[derive(Clone, Debug)]
pub struct SceneFile {
    /// Every geometry of the file, added in file order (ids count from 0).
    pub builder: SceneBuilder,
    /// The `[camera]` table, checked with [`Camera::check`].
    pub camera: Option<Camera>,
    /// The scene's name: the file stem (`bunny` for `scenes/bunny.toml`).
    pub name: String,
}

/// Reads and parses a scene file; mesh paths are relative to the file's directory.
pub fn load_scene_file(path: &Path) -> Result<SceneFile, SceneError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| SceneError::file(path, format!("cannot read scene file: {e}")))?;
    parse_scene(&text, path, path.parent().unwrap_or(Path::new("")))
}

/// The embedded default scene ([`DEFAULT_SCENE`]).
///
/// # Panics
/// Only if the embedded file is broken, which a test rules out.
pub fn default_scene() -> SceneFile {
    parse_scene(DEFAULT_SCENE, Path::new("default.toml"), Path::new(""))
        .unwrap_or_else(|e| panic!("the embedded default scene is broken: {e}"))
}

/// Parses scene-file text. `name` names the file in errors (and gives [`SceneFile::name`]);
/// relative mesh paths are resolved against `base_dir` (an empty `base_dir` leaves them
/// relative to the working directory).
pub fn parse_scene(text: &str, name: &Path, base_dir: &Path) -> Result<SceneFile, SceneError> {
    let cx = Cx { text, path: name };
    let doc = DeTable::parse(text).map_err(|e| cx.toml_error(&e, None))?;

    // Every top-level item with the position it starts at; processed in file order so ids
    // follow the file and the first problem in the file is the one reported.
    let mut items: Vec<Item<'_>> = Vec::new();
    for (key, value) in doc.into_inner() {
        let kind = Kind::from_key(key.get_ref());
        let key_span = key.span();
        match (kind, value.get_ref()) {
            (Some(k), DeValue::Array(_)) if k != Kind::Camera => {
                let DeValue::Array(a) = value.into_inner() else { unreachable!() };
                for e in a.iter() {
                    items.push(Item {
                        start: e.span().start,
                        what: What::Entry(k),
                        key_span: key_span.clone(),
                        value: e.clone(),
                    });
                }
            }
            (kind, _) => items.push(Item {
                start: key_span.start.min(value.span().start),
                what: match kind {
                    Some(Kind::Camera) => What::Camera,
                    Some(k) => What::NotArray(k),
                    None => What::Unknown(key.get_ref().to_string()),
                },
                key_span,
                value,
            }),
        }
    }
    items.sort_by_key(|i| i.start);

    let mut builder = SceneBuilder::new();
    let mut camera = None;
    let mut names: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for item in items {
        match item.what {
            What::Unknown(k) => {
                return Err(cx.at(
                    &item.key_span,
                    format!(
                        "unknown key `{k}` (expected camera, sphere, box, triangle, mesh, plane, generate or instance)"
                    ),
                ));
            }
            What::NotArray(k) => {
                return Err(
                    cx.at(&item.key_span, format!("`{0}` must be an array of tables (`[[{0}]]` entries)", k.key()))
                );
            }
            What::Camera => camera = Some(cx.camera(&item.value)?),
            What::Entry(Kind::Instance) => cx.instance(&item.value, &mut builder, &names)?,
            What::Entry(k) => {
                let name = cx.name(k, &item.value, &names)?;
                cx.entry(k, &item.value, &mut builder, base_dir)?;
                if let Some(name) = name {
                    names.insert(name, builder.geoms().len() as u32 - 1);
                }
            }
        }
    }
    let name = name.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| name.display().to_string());
    Ok(SceneFile { builder, camera, name })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Camera,
    Sphere,
    Box,
    Triangle,
    Mesh,
    Plane,
    Generate,
    Instance,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Camera,
        Kind::Sphere,
        Kind::Box,
        Kind::Triangle,
        Kind::Mesh,
        Kind::Plane,
        Kind::Generate,
        Kind::Instance,
    ];
    fn key(self) -> &'static str {
        match self {
            Kind::Camera => "camera",
            Kind::Sphere => "sphere",
            Kind::Box => "box",
            Kind::Triangle => "triangle",
            Kind::Mesh => "mesh",
            Kind::Plane => "plane",
            Kind::Generate => "generate",
            Kind::Instance => "instance",
        }
    }
    fn from_key(k: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|x| x.key() == k)
    }
}

enum What {
    Camera,
    Entry(Kind),
    NotArray(Kind),
    Unknown(String),
}

struct Item<'i> {
    start: usize,
    what: What,
    key_span: Range<usize>,
    value: Spanned<DeValue<'i>>,
}

// ---------------------------------------------------------------------------------------
// Entries as written
// ---------------------------------------------------------------------------------------

fn default_up() -> [f32; 3] {
    [0.0, 1.0, 0.0]
}
fn default_width() -> u32 {
    640
}
fn default_height() -> u32 {
    480
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CameraEntry {
    eye: [f32; 3],
    look_at: [f32; 3],
    #[serde(default = "default_up")]
    up: [f32; 3],
    fov_y_deg: f32,
    #[serde(default = "default_width")]
    width: u32,
    #[serde(default = "default_height")]
    height: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SphereEntry {
    center: [f32; 3],
    radius: f32,
    #[serde(default, rename = "name")]
    _name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxEntry {
    min: [f32; 3],
    max: [f32; 3],
    #[serde(default, rename = "name")]
    _name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TriangleEntry {
    vertices: [[f32; 3]; 3],
    #[serde(default, rename = "name")]
    _name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceEntry {
    of: String,
    scale: Option<Scale>,
    rotate_deg: Option<[f32; 3]>,
    translate: Option<[f32; 3]>,
    matrix: Option<[[f32; 4]; 3]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeshEntry {
    #[serde(default, rename = "name")]
    _name: Option<String>,
    path: String,
    #[serde(default)]
    scale: Scale,
    #[serde(default)]
    rotate_deg: [f32; 3],
    #[serde(default)]
    translate: [f32; 3],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaneEntry {
    normal: [f32; 3],
    d: f32,
}

/// A mesh scale: one number (uniform) or three.
struct Scale([f32; 3]);

impl Default for Scale {
    fn default() -> Self {
        Scale([1.0; 3])
    }
}

impl<'de> Deserialize<'de> for Scale {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Scale;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or an array of 3 numbers")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Scale, E> {
                Ok(Scale([v as f32; 3]))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scale, E> {
                Ok(Scale([v as f32; 3]))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scale, E> {
                Ok(Scale([v as f32; 3]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Scale, A::Error> {
                let mut s = [0.0f32; 3];
                for (i, x) in s.iter_mut().enumerate() {
                    *x = seq.next_element()?.ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                }
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(serde::de::Error::invalid_length(4, &self));
                }
                Ok(Scale(s))
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------
// Conversion with located errors
// ---------------------------------------------------------------------------------------

/// The text being parsed and the name it goes by in errors.
struct Cx<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Cx<'_> {
    /// 1-based `line:column` (column in characters) of a byte offset.
    fn place(&self, offset: usize) -> String {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        format!("{line}:{col}")
    }
    fn at(&self, span: &Range<usize>, message: impl Into<String>) -> SceneError {
        SceneError::at(self.path, self.place(span.start), message)
    }
    /// A TOML error at its own place, else at `fallback`, else without a place.
    fn toml_error(&self, e: &toml::de::Error, fallback: Option<&Range<usize>>) -> SceneError {
        let message = e.message().trim().to_string();
        match e.span().as_ref().or(fallback) {
            Some(s) => self.at(s, message),
            None => SceneError::file(self.path, message),
        }
    }

    /// The table of an entry (or an error at the entry).
    fn table<'v, 'i>(&self, kind: Kind, value: &'v Spanned<DeValue<'i>>) -> Result<&'v DeTable<'i>, SceneError> {
        match value.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.at(&value.span(), format!("a `{}` entry must be a table", kind.key()))),
        }
    }

    /// Deserializes an entry; errors are located and prefixed with the entry kind and the
    /// key they concern.
    fn decode<T: DeserializeOwned>(
        &self,
        kind: Kind,
        label: &str,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<T, SceneError> {
        let table = self.table(kind, value)?;
        T::deserialize(ValueDeserializer::from(value.clone())).map_err(|e| {
            let span = e.span().unwrap_or(value.span());
            let key = table
                .iter()
                .find(|(k, v)| k.span() != span && v.span().start <= span.start && span.end <= v.span().end);
            let what = match key {
                Some((k, _)) => format!("{label} `{}`", k.get_ref()),
                None => label.to_string(),
            };
            self.at(&span, format!("{what}: {}", e.message().trim()))
        })
    }

    /// Span of `key`'s value in an entry, else of the entry.
    fn field(&self, value: &Spanned<DeValue<'_>>, key: &str) -> Range<usize> {
        match value.get_ref() {
            DeValue::Table(t) => t.get(key).map_or(value.span(), |v| v.span()),
            _ => value.span(),
        }
    }

    /// Checks that numbers are finite; the error points at `key`.
    fn finite(&self, value: &Spanned<DeValue<'_>>, kind: Kind, key: &str, v: &[f32]) -> Result<(), SceneError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(self.at(&self.field(value, key), format!("{} `{key}` must be finite, got {v:?}", kind.key())))
        }
    }

    fn camera(&self, value: &Spanned<DeValue<'_>>) -> Result<Camera, SceneError> {
        let c: CameraEntry = self.decode(Kind::Camera, "camera", value)?;
        let cam = Camera {
            eye: c.eye.into(),
            look_at: c.look_at.into(),
            up: c.up.into(),
            fov_y_deg: c.fov_y_deg,
            width: c.width,
            height: c.height,
        };
        cam.check().map_err(|e| {
            use crate::camera::CameraError;
            let key = match e {
                CameraError::BadFov(_) => "fov_y_deg",
                CameraError::EmptyImage { width: 0, .. } => "width",
                CameraError::EmptyImage { .. } => "height",
                CameraError::BadUp => "up",
                CameraError::NotFinite | CameraError::EyeIsTarget => "",
            };
            self.at(&self.field(value, key), e.to_string())
        })?;
        Ok(cam)
    }

    fn entry(
        &self,
        kind: Kind,
        value: &Spanned<DeValue<'_>>,
        b: &mut SceneBuilder,
        base_dir: &Path,
    ) -> Result<(), SceneError> {
        let added = match kind {
            Kind::Sphere => {
                let s: SphereEntry = self.decode(kind, kind.key(), value)?;
                self.finite(value, kind, "center", &s.center)?;
                if !(s.radius >= 0.0 && s.radius.is_finite()) {
                    return Err(self.at(
                        &self.field(value, "radius"),
                        format!("sphere radius must be finite and >= 0, got {}", s.radius),
                    ));
                }
                b.add_sphere(Sphere::new(s.center.into(), s.radius))
            }
            Kind::Box => {
                let e: BoxEntry = self.decode(kind, kind.key(), value)?;
                self.finite(value, kind, "min", &e.min)?;
                self.finite(value, kind, "max", &e.max)?;
                if (0..3).any(|k| e.min[k] > e.max[k]) {
                    return Err(self.at(
                        &self.field(value, "min"),
                        format!("box min must be <= max on every axis, got min {:?}, max {:?}", e.min, e.max),
                    ));
                }
                b.add_box(Aabb::new(e.min.into(), e.max.into()))
            }
            Kind::Triangle => {
                let t: TriangleEntry = self.decode(kind, kind.key(), value)?;
                self.finite(value, kind, "vertices", t.vertices.as_flattened())?;
                let [a, c, d] = t.vertices.map(Vec3::from);
                b.add_triangle(Triangle::new(a, c, d))
            }
            Kind::Plane => {
                let p: PlaneEntry = self.decode(kind, kind.key(), value)?;
                self.finite(value, kind, "normal", &p.normal)?;
                self.finite(value, kind, "d", &[p.d])?;
                if Vec3::from(p.normal).length_squared() == 0.0 {
                    return Err(self.at(
                        &self.field(value, "normal"),
                        format!("plane normal must be non-zero, got {:?}", p.normal),
                    ));
                }
                b.add_plane(Plane::new(p.normal.into(), p.d))
            }
            Kind::Mesh => {
                let m: MeshEntry = self.decode(kind, kind.key(), value)?;
                self.finite(value, kind, "scale", &m.scale.0)?;
                self.finite(value, kind, "rotate_deg", &m.rotate_deg)?;
                self.finite(value, kind, "translate", &m.translate)?;
                let path = base_dir.join(&m.path);
                let mut mesh = load_mesh(&path)
                    .map_err(|e| self.at(&self.field(value, "path"), format!("cannot load mesh: {e}")))?;
                let xf = MeshTransform {
                    scale: m.scale.0.into(),
                    rotate_deg: m.rotate_deg.into(),
                    translate: m.translate.into(),
                };
                let r = xf.rotation();
                for p in &mut mesh.positions {
                    *p = (r * (xf.scale * Vec3::from(*p)) + xf.translate).into();
                }
                b.add_mesh(&mesh.positions, &mesh.indices)
            }
            Kind::Generate => {
                let g = self.generator(value)?;
                if let Err(e) = g.validate() {
                    return Err(self.param_error(value, &g, e));
                }
                g.add_to(b)
            }
            Kind::Camera | Kind::Instance => unreachable!("the camera and instances are not geometries"),
        };
        added.map(|_| ()).map_err(|e| match e {
            SceneError::InvalidShape { what, .. } => self.at(&value.span(), format!("{}: {what}", kind.key())),
            e => e,
        })
    }

    /// The `name` of an entry, if it has one: a non-empty string not used before.
    fn name(
        &self,
        kind: Kind,
        value: &Spanned<DeValue<'_>>,
        names: &std::collections::HashMap<String, u32>,
    ) -> Result<Option<String>, SceneError> {
        let Some(v) = (match value.get_ref() {
            DeValue::Table(t) => t.get("name"),
            _ => None,
        }) else {
            return Ok(None);
        };
        if matches!(kind, Kind::Plane | Kind::Generate) {
            return Err(self.at(&v.span(), format!("a `{}` entry cannot have a name (only geometries that can be instanced: sphere, box, triangle, mesh)", kind.key())));
        }
        let DeValue::String(n) = v.get_ref() else {
            return Err(self.at(&v.span(), format!("{} `name` must be a string", kind.key())));
        };
        if n.is_empty() {
            return Err(self.at(&v.span(), format!("{} `name` must not be empty", kind.key())));
        }
        if let Some(g) = names.get(n.as_ref()) {
            return Err(self.at(&v.span(), format!("the name \"{n}\" is already used by geometry {g}")));
        }
        Ok(Some(n.to_string()))
    }

    /// An `[[instance]]` entry.
    fn instance(
        &self,
        value: &Spanned<DeValue<'_>>,
        b: &mut SceneBuilder,
        names: &std::collections::HashMap<String, u32>,
    ) -> Result<(), SceneError> {
        let kind = Kind::Instance;
        let e: InstanceEntry = self.decode(kind, kind.key(), value)?;
        let Some(&geom) = names.get(&e.of) else {
            let known = if names.is_empty() {
                "none".to_string()
            } else {
                let mut k: Vec<&str> = names.keys().map(String::as_str).collect();
                k.sort_unstable();
                k.join(", ")
            };
            return Err(self.at(
                &self.field(value, "of"),
                format!("instance `of`: no geometry named \"{}\" earlier in the file (names: {known})", e.of),
            ));
        };
        let m = match e.matrix {
            Some(rows) => {
                for key in ["scale", "rotate_deg", "translate"] {
                    if matches!(value.get_ref(), DeValue::Table(t) if t.contains_key(key)) {
                        return Err(self.at(
                            &self.field(value, key),
                            format!("instance: `{key}` and `matrix` cannot be combined"),
                        ));
                    }
                }
                self.finite(value, kind, "matrix", rows.as_flattened())?;
                let col = |c: usize| Vec3::new(rows[0][c], rows[1][c], rows[2][c]);
                glam::Affine3A::from_cols(col(0).into(), col(1).into(), col(2).into(), col(3).into())
            }
            None => {
                let scale = e.scale.unwrap_or_default().0;
                let rotate = e.rotate_deg.unwrap_or_default();
                let translate = e.translate.unwrap_or_default();
                self.finite(value, kind, "scale", &scale)?;
                self.finite(value, kind, "rotate_deg", &rotate)?;
                self.finite(value, kind, "translate", &translate)?;
                let xf = MeshTransform { scale: scale.into(), rotate_deg: rotate.into(), translate: translate.into() };
                glam::Affine3A::from_mat3_translation(xf.rotation() * Mat3::from_diagonal(xf.scale), xf.translate)
            }
        };
        b.add_instance(geom, m).map(|_| ()).map_err(|err| match err {
            SceneError::InvalidInstance { what, .. } => {
                self.at(&value.span(), format!("instance of \"{}\": {what}", e.of))
            }
            err => err,
        })
    }

    fn generator(&self, value: &Spanned<DeValue<'_>>) -> Result<Generator, SceneError> {
        let table = self.table(Kind::Generate, value)?;
        let kind_value = table.get("kind").ok_or_else(|| self.at(&value.span(), "generate: missing field `kind`"))?;
        let DeValue::String(kind) = kind_value.get_ref() else {
            return Err(
                self.at(&kind_value.span(), "generate `kind` must be a string (\"terrain\", \"city\" or \"spheres\")")
            );
        };
        // The parameters are the other keys.
        let mut params = table.clone();
        params.remove("kind");
        let params = Spanned::new(value.span(), DeValue::Table(params));
        Ok(match kind.as_ref() {
            "terrain" => Generator::Terrain(self.decode(Kind::Generate, "terrain generator", &params)?),
            "city" => Generator::City(self.decode(Kind::Generate, "city generator", &params)?),
            "spheres" => Generator::Spheres(self.decode(Kind::Generate, "spheres generator", &params)?),
            other => {
                return Err(self.at(
                    &kind_value.span(),
                    format!("unknown generate kind `{other}` (expected \"terrain\", \"city\" or \"spheres\")"),
                ));
            }
        })
    }

    /// A generator parameter error at the offending key; when that key is not written (its
    /// default clashes with another key), at the key it clashes with, else at the entry.
    fn param_error(&self, value: &Spanned<DeValue<'_>>, g: &Generator, e: ParamError) -> SceneError {
        let partner = match e.key {
            "max_height" => "min_height",
            "min_height" => "max_height",
            "max" => "min",
            "min" => "max",
            "lots" => "blocks",
            "blocks" => "lots",
            _ => e.key,
        };
        let written = |k: &str| matches!(value.get_ref(), DeValue::Table(t) if t.contains_key(k));
        let key = if written(e.key) { e.key } else { partner };
        self.at(&self.field(value, key), format!("{} generator `{}` {}", g.kind(), e.key, e.message))
    }
}

/// The placement of a `[[mesh]]`: `p ↦ translate + Rz · Ry · Rx · (scale ∘ p)`, i.e. scale,
/// then rotate about X, then Y, then Z (angles in degrees), then translate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshTransform {
    /// Per-axis scale.
    pub scale: Vec3,
    /// Rotation angles about X, Y and Z in degrees, applied in that order.
    pub rotate_deg: Vec3,
    /// Translation.
    pub translate: Vec3,
}

impl Default for MeshTransform {
    fn default() -> Self {
        Self { scale: Vec3::ONE, rotate_deg: Vec3::ZERO, translate: Vec3::ZERO }
    }
}

impl MeshTransform {
    /// The rotation matrix `Rz · Ry · Rx`.
    pub fn rotation(&self) -> Mat3 {
        let r = self.rotate_deg;
        Mat3::from_rotation_z(r.z.to_radians())
            * Mat3::from_rotation_y(r.y.to_radians())
            * Mat3::from_rotation_x(r.x.to_radians())
    }
    /// Transforms one point.
    pub fn apply(&self, p: Vec3) -> Vec3 {
        self.rotation() * (self.scale * p) + self.translate
    }
}
