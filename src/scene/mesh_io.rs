//! Mesh files: loading triangle meshes from Wavefront OBJ and Stanford PLY into plain
//! position and index arrays ([`MeshData`]) ready for [`SceneBuilder::add_mesh`].
//!
//! This module owns the file formats and their error messages; the scene itself knows
//! nothing about files. Only positions and faces are read: normals, texture coordinates,
//! colours, materials, groups and any other PLY elements are ignored. Polygons with more
//! than three vertices are fan-triangulated (`(0, 1, 2), (0, 2, 3), …`).
//!
//! * **OBJ** goes through `tobj` (triangulated, single index). Before `tobj` sees a line it
//!   is checked here, so errors carry a `line N` place: every `f` must reference at least
//!   three vertices defined above it (1-based, or negative for relative), and every `v` must
//!   have finite coordinates. Points (`p`) and polylines (`l`) are skipped. The positions are
//!   the vertices the faces use, in order of first use (unused `v` lines are dropped). As in
//!   the format, OBJ errors count lines, vertices and faces from 1.
//! * **PLY** goes through `ply-rs-bw`: ascii, binary little endian and binary big endian.
//!   It needs a `vertex` element with scalar `x`, `y`, `z` properties of any numeric type
//!   and a `face` element with an integer list called `vertex_indices` (or `vertex_index`).
//!   The positions are the file's vertices in file order. As with PLY indices, PLY errors
//!   count vertex and face records from 0. Elements after `vertex` and `face` are not read.
//!
//! Every failure is a [`SceneError::File`] naming the file, and where possible the place
//! (`line N`, `vertex N`, `face N`). Bad input never panics. A file that yields no
//! triangles at all is an error too.

use crate::error::SceneError;
use crate::prim::Aabb;
use crate::scene::SceneBuilder;
use glam::Vec3;
use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{ElementDef, Encoding, Property, PropertyAccess, PropertyType, ScalarType};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// An indexed triangle mesh as loaded from a file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Triangles as indices into `positions` (every index is in range).
    pub indices: Vec<[u32; 3]>,
}

impl MeshData {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len()
    }
    /// Box around all positions ([`Aabb::EMPTY`] when there are none).
    pub fn bounds(&self) -> Aabb {
        self.positions.iter().fold(Aabb::EMPTY, |b, p| b.grow(Vec3::from(*p)))
    }
}

/// Loads a triangle mesh, choosing the format by the file extension (`.obj` or `.ply`,
/// any case).
///
/// Errors name the file: `cannot open: <os error>` when it cannot be opened, an
/// unsupported extension, and every format error described in the [module docs](self).
pub fn load_mesh(path: &Path) -> Result<MeshData, SceneError> {
    enum Format {
        Obj,
        Ply,
    }
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("obj") => Format::Obj,
        Some(e) if e.eq_ignore_ascii_case("ply") => Format::Ply,
        Some(e) => {
            return Err(SceneError::file(path, format!("unsupported mesh format `.{e}` (expected .obj or .ply)")));
        }
        None => {
            return Err(SceneError::file(path, "no file extension to pick a mesh format by (expected .obj or .ply)"));
        }
    };
    let file = File::open(path).map_err(|e| SceneError::file(path, format!("cannot open: {e}")))?;
    let reader = BufReader::with_capacity(1 << 16, file);
    match format {
        Format::Obj => mesh_from_obj_reader(reader, path),
        Format::Ply => mesh_from_ply_reader(reader, path),
    }
}

impl SceneBuilder {
    /// Loads a mesh file with [`load_mesh`] and adds it as one mesh geometry; returns its id.
    /// Prim ids are triangle indices in file order (after fan triangulation).
    pub fn add_mesh_file(&mut self, path: &Path) -> Result<u32, SceneError> {
        let mesh = load_mesh(path)?;
        self.add_mesh(&mesh.positions, &mesh.indices).map_err(|e| match e {
            SceneError::InvalidShape { what, .. } => SceneError::file(path, what),
            e => e,
        })
    }
}

// ---------------------------------------------------------------------------------------
// OBJ
// ---------------------------------------------------------------------------------------

/// Reads an OBJ mesh from `reader`; `path` only names the source in errors.
pub fn mesh_from_obj_reader(reader: impl BufRead, path: &Path) -> Result<MeshData, SceneError> {
    let mut filter = ObjFilter::new(reader);
    // With tobj's optional `merging`/`reordering` features on (feature unification), the
    // struct has more fields, so the update is not always needless.
    #[allow(clippy::needless_update)]
    let options = tobj::LoadOptions {
        single_index: true,
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    // Material libraries are never requested: the filter drops `mtllib` lines.
    let loaded = tobj::load_obj_buf(&mut filter, &options, |_| Err(tobj::LoadError::GenericFailure));
    let models = match loaded {
        Ok((models, _materials)) => models,
        Err(e) => {
            return Err(match filter.error.take() {
                Some((line, message)) => SceneError::at(path, format!("line {line}"), message),
                None if filter.eof => SceneError::file(path, format!("OBJ parse error: {e}")),
                None => SceneError::at(path, format!("line {}", filter.line), format!("OBJ parse error: {e}")),
            });
        }
    };

    let mut mesh = MeshData::default();
    for model in &models {
        let m = &model.mesh;
        let base = mesh.positions.len();
        let too_many = || SceneError::file(path, "more than 2^32 vertices");
        let offset = u32::try_from(base).map_err(|_| too_many())?;
        u32::try_from(base + m.positions.len() / 3).map_err(|_| too_many())?;
        mesh.positions.extend(m.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]]));
        for t in m.indices.chunks_exact(3) {
            let tri = [t[0] + offset, t[1] + offset, t[2] + offset];
            if tri.iter().any(|&i| i as usize >= mesh.positions.len()) {
                // tobj guarantees this; checked anyway so bad data can never reach the builder.
                return Err(SceneError::file(path, "OBJ loader produced an index out of range"));
            }
            mesh.indices.push(tri);
        }
    }
    // A `v x y z w` line divides by w, which can overflow after the per-line check.
    if let Some(p) = mesh.positions.iter().find(|p| !Vec3::from(**p).is_finite()) {
        return Err(SceneError::file(
            path,
            format!("a vertex is not finite after dividing by its w: ({}, {}, {})", p[0], p[1], p[2]),
        ));
    }
    if mesh.indices.is_empty() {
        return Err(SceneError::file(path, "no faces: the file holds no triangles"));
    }
    Ok(mesh)
}

/// A [`BufRead`] between the OBJ file and `tobj`: it counts lines, checks `v` and `f` lines
/// (recording the first error with its line), strips texture/normal references from faces,
/// resolves relative indices, and drops every other statement, so that `tobj` builds one
/// model whose vertices are exactly the referenced positions.
struct ObjFilter<R> {
    inner: R,
    raw: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    /// Lines read so far (the current line's 1-based number).
    line: u64,
    vertices: u64,
    faces: u64,
    eof: bool,
    error: Option<(u64, String)>,
}

impl<R: BufRead> ObjFilter<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            raw: Vec::new(),
            out: Vec::new(),
            pos: 0,
            line: 0,
            vertices: 0,
            faces: 0,
            eof: false,
            error: None,
        }
    }

    /// Loads the next line that produces output; `Ok(false)` at end of input.
    fn advance(&mut self) -> io::Result<bool> {
        loop {
            self.raw.clear();
            self.out.clear();
            self.pos = 0;
            let n = match self.inner.read_until(b'\n', &mut self.raw) {
                Ok(n) => n,
                Err(e) => {
                    self.error = Some((self.line + 1, format!("read error: {e}")));
                    return Err(e);
                }
            };
            if n == 0 {
                self.eof = true;
                return Ok(false);
            }
            self.line += 1;
            if let Err(message) = self.transform() {
                self.error = Some((self.line, message));
                return Err(io::Error::new(io::ErrorKind::InvalidData, "invalid OBJ line"));
            }
            if !self.out.is_empty() {
                return Ok(true);
            }
        }
    }

    fn transform(&mut self) -> Result<(), String> {
        let raw = std::mem::take(&mut self.raw);
        let result = self.transform_line(&raw);
        self.raw = raw;
        result
    }

    fn transform_line(&mut self, raw: &[u8]) -> Result<(), String> {
        let raw = if self.line == 1 { raw.strip_prefix("\u{feff}".as_bytes()).unwrap_or(raw) } else { raw };
        let mut words = raw.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
        match words.next() {
            Some(b"v") => {
                let text = std::str::from_utf8(raw).map_err(|_| "vertex line is not valid UTF-8".to_string())?;
                let c: Vec<f32> = text.split_whitespace().skip(1).take(3).map_while(|w| w.parse().ok()).collect();
                // Unparsable coordinates are left to tobj, which reports them on this line.
                if c.len() == 3 && c.iter().any(|x| !x.is_finite()) {
                    return Err(format!(
                        "vertex {} has a non-finite coordinate ({}, {}, {})",
                        self.vertices + 1,
                        c[0],
                        c[1],
                        c[2]
                    ));
                }
                self.vertices += 1;
                self.out.extend_from_slice(text.trim_end().as_bytes());
                self.out.push(b'\n');
            }
            Some(b"f") => {
                self.faces += 1;
                let face = self.faces;
                self.out.push(b'f');
                let mut count = 0;
                for word in words {
                    let v = word.split(|&b| b == b'/').next().unwrap_or_default();
                    let idx: i64 = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok()).ok_or_else(|| {
                        format!("face {face} has a malformed vertex reference `{}`", String::from_utf8_lossy(word))
                    })?;
                    let n = self.vertices as i64;
                    let abs = if idx < 0 { n.checked_add(idx).map_or(0, |a| a + 1) } else { idx };
                    if idx == 0 {
                        return Err(format!("face {face} uses vertex index 0 (OBJ vertex indices start at 1)"));
                    }
                    if abs < 1 || abs > n {
                        return Err(format!(
                            "face {face} uses vertex {idx}, but only {n} vertices are defined before it"
                        ));
                    }
                    self.out.push(b' ');
                    self.out.extend_from_slice(abs.to_string().as_bytes());
                    count += 1;
                }
                if count < 3 {
                    return Err(format!("face {face} has {count} vertices (a face needs at least 3)"));
                }
                self.out.push(b'\n');
            }
            // Texture coordinates, normals, groups, materials, points, polylines, comments…
            _ => {}
        }
        Ok(())
    }
}

impl<R: BufRead> Read for ObjFilter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for ObjFilter<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.out.len() && !self.eof && self.error.is_none() {
            self.advance()?;
        }
        if self.error.is_some() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "invalid OBJ line"));
        }
        Ok(&self.out[self.pos..])
    }
    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.out.len());
    }
}

// ---------------------------------------------------------------------------------------
// PLY
// ---------------------------------------------------------------------------------------

/// Reads a PLY mesh (ascii or binary, either endianness) from `reader`; `path` only names
/// the source in errors.
pub fn mesh_from_ply_reader(reader: impl BufRead, path: &Path) -> Result<MeshData, SceneError> {
    let mut reader = Counted { inner: reader, newlines: 0, at_line_start: true };
    let header = Parser::<Skip>::new().read_header(&mut reader).map_err(|e| header_error(path, &e))?;

    // Check the header before touching the payload.
    let vertex = header.elements.get("vertex").ok_or_else(|| {
        SceneError::file(path, "PLY has no `vertex` element (expected `element vertex N` with x, y, z)")
    })?;
    for axis in ["x", "y", "z"] {
        match vertex.properties.get(axis).map(|p| &p.data_type) {
            None => {
                return Err(SceneError::file(path, format!("PLY `vertex` element has no `{axis}` property")));
            }
            Some(PropertyType::List(..)) => {
                return Err(SceneError::file(path, format!("PLY vertex property `{axis}` is a list, not a number")));
            }
            Some(PropertyType::Scalar(_)) => {}
        }
    }
    let face = header
        .elements
        .get("face")
        .ok_or_else(|| SceneError::file(path, "PLY has no `face` element (a point cloud is not a mesh)"))?;
    let list_name =
        ["vertex_indices", "vertex_index"].into_iter().find(|n| face.properties.contains_key(*n)).ok_or_else(|| {
            SceneError::file(path, "PLY `face` element has no `vertex_indices` (or `vertex_index`) property")
        })?;
    match &face.properties[list_name].data_type {
        PropertyType::List(_, ScalarType::Float | ScalarType::Double) => {
            return Err(SceneError::file(
                path,
                format!("PLY face property `{list_name}` is a list of floats, not integers"),
            ));
        }
        PropertyType::Scalar(_) => {
            return Err(SceneError::file(path, format!("PLY face property `{list_name}` is a number, not a list")));
        }
        PropertyType::List(..) => {}
    }
    if u32::try_from(vertex.count).is_err() {
        return Err(SceneError::file(
            path,
            format!("PLY has {} vertices; at most 2^32 - 1 are supported", vertex.count),
        ));
    }

    // Read elements in file order up to the last one needed; later ones are never read.
    let ascii = header.encoding == Encoding::Ascii;
    let mut verts: Vec<VertexRec> = Vec::new();
    let mut faces: Vec<FaceRec> = Vec::new();
    let last = header.elements.keys().rposition(|k| k == "vertex" || k == "face").unwrap_or(0);
    for (name, def) in header.elements.iter().take(last + 1) {
        let first_line = reader.newlines + 1;
        let payload_error = |e: io::Error, reader: &mut Counted<_>| {
            // Binary reads that fail at the end of the input are truncation, whatever the
            // parser calls them (it reports a short list as "couldn't find a list element").
            let at_end = reader.fill_buf().is_ok_and(|b| b.is_empty());
            if e.kind() == io::ErrorKind::UnexpectedEof || (!ascii && at_end) {
                return SceneError::file(
                    path,
                    format!(
                        "PLY error: unexpected end of file in element `{name}` (the header declares {})",
                        def.count
                    ),
                );
            }
            let detail = innermost_error(&e.to_string());
            if !ascii {
                return SceneError::file(path, format!("PLY error in element `{name}`: {detail}"));
            }
            // Ascii records are one per line, so the failing one is the last line read.
            let line = reader.line();
            let text = quoted_line(&e.to_string()).map(|t| format!(" `{t}`")).unwrap_or_default();
            let record = line.saturating_sub(first_line);
            SceneError::at(path, format!("line {line}"), format!("PLY error: `{name}` record {record}{text}: {detail}"))
        };
        match name.as_str() {
            "vertex" => {
                verts = read_element(&mut reader, def, &header).map_err(|e| payload_error(e, &mut reader))?;
            }
            "face" => {
                faces = read_element(&mut reader, def, &header).map_err(|e| payload_error(e, &mut reader))?;
            }
            // Binary elements without properties occupy no bytes: nothing to skip.
            _ if def.properties.is_empty() && !ascii => {}
            _ => {
                read_element::<Skip, _>(&mut reader, def, &header).map_err(|e| payload_error(e, &mut reader))?;
            }
        }
    }

    let mut mesh = MeshData { positions: Vec::with_capacity(verts.len()), indices: Vec::with_capacity(faces.len()) };
    for (i, v) in verts.iter().enumerate() {
        let p = v.0.map(|c| c as f32);
        if !Vec3::from(p).is_finite() {
            return Err(SceneError::at(
                path,
                format!("vertex {i}"),
                format!("coordinate is not a finite f32: ({:?}, {:?}, {:?})", v.0[0], v.0[1], v.0[2]),
            ));
        }
        mesh.positions.push(p);
    }
    let n = mesh.positions.len();
    for (f, face) in faces.iter().enumerate() {
        let idx = &face.indices;
        if idx.len() < 3 {
            return Err(SceneError::at(
                path,
                format!("face {f}"),
                format!("has {} vertex indices (a face needs at least 3)", idx.len()),
            ));
        }
        if let Some(&bad) = idx.iter().find(|&&i| i < 0 || i as u64 >= n as u64) {
            return Err(SceneError::at(
                path,
                format!("face {f}"),
                format!("vertex index {bad} is out of range: the file has {n} vertices (valid indices 0..{n})"),
            ));
        }
        // In range, so each index fits in u32 (checked against the vertex count above).
        for j in 1..idx.len() - 1 {
            mesh.indices.push([idx[0] as u32, idx[j] as u32, idx[j + 1] as u32]);
        }
    }
    if mesh.indices.is_empty() {
        return Err(SceneError::file(path, "no faces: the file holds no triangles"));
    }
    Ok(mesh)
}

fn read_element<E: PropertyAccess, R: BufRead>(
    reader: &mut R,
    def: &ElementDef,
    header: &ply_rs_bw::ply::Header,
) -> io::Result<Vec<E>> {
    Parser::<E>::new().read_payload_for_element(reader, def, header)
}

/// A `ply-rs-bw` header error as a one-line file error: its `Line N:` prefix becomes the
/// place, its first sentence and the offending line are kept, grammar dumps are dropped.
fn header_error(path: &Path, e: &io::Error) -> SceneError {
    let full = e.to_string();
    let first = full.lines().next().unwrap_or_default();
    let (place, first) = match first.strip_prefix("Line ").and_then(|r| r.split_once(": ")) {
        Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => (Some(format!("line {n}")), rest),
        _ => (None, first),
    };
    let text = quoted_line(&full).map(|t| format!(" (`{t}`)")).unwrap_or_default();
    let message = format!("PLY error: {first}{text}");
    match place {
        Some(p) if e.kind() != io::ErrorKind::UnexpectedEof => SceneError::at(path, p, message),
        _ => SceneError::file(path, message),
    }
}

/// The offending input line quoted in a `ply-rs-bw` message (`String: '…'`).
fn quoted_line(text: &str) -> Option<String> {
    let rest = text.split_once("String: '")?.1;
    let end = rest.find("'\n").or_else(|| rest.rfind('\''))?;
    Some(rest[..end].split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The innermost cause in a `ply-rs-bw` message, which nests errors as
/// `…Error: Custom { kind: …, error: "…" }`; on one line.
fn innermost_error(text: &str) -> String {
    let mut t = text.to_string();
    while let Some(i) = t.rfind("Error: ") {
        let cause = t[i + "Error: ".len()..].to_string();
        let nested = cause.strip_prefix("Custom { kind: ").and_then(|r| r.split_once("error: \"")).map(|(_, r)| r);
        match nested {
            Some(inner) => {
                let inner = inner.trim_end().trim_end_matches('}').trim_end().trim_end_matches('"');
                t = unescape_debug(inner);
            }
            None => {
                t = cause;
                break;
            }
        }
    }
    // The data-line grammar's error: "error at 1:<column>: expected one of <token list>".
    if let Some((col, _)) = t.strip_prefix("error at 1:").and_then(|r| r.split_once(':')) {
        return format!("not a number at column {col}");
    }
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Undoes `{:?}` string escaping (`\n`, `\"`, `\\`, …).
fn unescape_debug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(c @ ('"' | '\'' | '\\')) => out.push(c),
            Some(c) => {
                out.push('\\');
                out.push(c);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Counts the lines consumed, so ascii errors can name their line.
struct Counted<R> {
    inner: R,
    newlines: u64,
    at_line_start: bool,
}

impl<R> Counted<R> {
    fn count(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.newlines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            self.at_line_start = last == b'\n';
        }
    }
    /// 1-based number of the line the last consumed byte belongs to.
    fn line(&self) -> u64 {
        if self.at_line_start { self.newlines } else { self.newlines + 1 }
    }
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        // The bytes being consumed are still at the front of the inner buffer.
        if amt == 0 {
            return;
        }
        if let Ok(buf) = self.inner.fill_buf() {
            let (newlines, last) =
                (buf[..amt.min(buf.len())].iter().filter(|&&b| b == b'\n').count(), buf.get(amt.wrapping_sub(1)));
            self.newlines += newlines as u64;
            if let Some(&last) = last {
                self.at_line_start = last == b'\n';
            }
        }
        self.inner.consume(amt);
    }
}

fn scalar(p: &Property) -> Option<f64> {
    Some(match *p {
        Property::Char(v) => v.into(),
        Property::UChar(v) => v.into(),
        Property::Short(v) => v.into(),
        Property::UShort(v) => v.into(),
        Property::Int(v) => v.into(),
        Property::UInt(v) => v.into(),
        Property::Float(v) => v.into(),
        Property::Double(v) => v,
        _ => return None,
    })
}

fn int_list(p: Property) -> Option<Vec<i64>> {
    fn conv<T: Into<i64>>(v: Vec<T>) -> Vec<i64> {
        v.into_iter().map(Into::into).collect()
    }
    Some(match p {
        Property::ListChar(v) => conv(v),
        Property::ListUChar(v) => conv(v),
        Property::ListShort(v) => conv(v),
        Property::ListUShort(v) => conv(v),
        Property::ListInt(v) => conv(v),
        Property::ListUInt(v) => conv(v),
        _ => return None,
    })
}

/// A PLY vertex record: only `x`, `y`, `z` are kept.
struct VertexRec([f64; 3]);

impl PropertyAccess for VertexRec {
    fn new() -> Self {
        VertexRec([0.0; 3])
    }
    fn set_property(&mut self, name: &str, p: Property) {
        let axis = match name {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => return,
        };
        // The header check made these scalars.
        if let Some(v) = scalar(&p) {
            self.0[axis] = v;
        }
    }
}

/// A PLY face record: only the vertex index list is kept (`vertex_indices` wins over
/// `vertex_index` when both are present).
struct FaceRec {
    indices: Vec<i64>,
    primary: bool,
}

impl PropertyAccess for FaceRec {
    fn new() -> Self {
        FaceRec { indices: Vec::new(), primary: false }
    }
    fn set_property(&mut self, name: &str, p: Property) {
        let primary = match name {
            "vertex_indices" => true,
            "vertex_index" if !self.primary => false,
            _ => return,
        };
        // The header check made this an integer list.
        if let Some(v) = int_list(p) {
            self.indices = v;
            self.primary = primary;
        }
    }
}

/// Records of elements that are read only to get past them.
struct Skip;

impl PropertyAccess for Skip {
    fn new() -> Self {
        Skip
    }
}
