//! The shipped meshes `scenes/bunny.ply` and `scenes/sponza.ply` hold the source models.
//!
//! The PLY files were written by the crate's own mesh loader, so they are checked here
//! through paths that do not use it: a minimal binary-PLY reader written in this file reads
//! them, and the result is compared with constants taken from the source OBJ files (the
//! Stanford bunny as kept in the public repository alecjacobson/common-3d-test-models,
//! `data/stanford-bunny.obj`; the Dabrovic Sponza OBJ as kept in YangYuchu/cg, `sponza.zip`).
//! Then the crate's loader must read the same mesh as the minimal reader.
//!
//! How the constants were obtained: a short Python script, run once by hand on the OBJ files
//! (not part of the repository), read every `v` line (parsing each coordinate to a double,
//! then rounding it to f32) and every `f` line (first number of each `v/vt/vn` corner, 1-based
//! or negative-relative; polygons fan-triangulated), and printed the number of `v` lines, the
//! number of vertices the faces use, the number of triangles, the smallest and largest
//! coordinate per axis (given below as the OBJ's own text), and the corner checksum of
//! [`corner_checksum`]. Neither scene file applies a transform (`scenes/bunny.toml` and
//! `scenes/sponza.toml` have no `scale`/`rotate`/`translate`), and the PLY files are not
//! pre-transformed either: their coordinates are the OBJ's, bit for bit.

use lanecast::scene::mesh_io::load_mesh;
use std::path::{Path, PathBuf};

struct Source {
    ply: &'static str,
    /// `v` lines in the OBJ.
    obj_vertices: usize,
    /// OBJ vertices used by some face: the loader keeps only these, in order of first use.
    used_vertices: usize,
    triangles: usize,
    /// Per axis, the smallest and largest coordinate, as written in the OBJ.
    min: [&'static str; 3],
    max: [&'static str; 3],
    /// [`corner_checksum`] of the OBJ's triangles.
    checksum: f64,
}

const BUNNY: Source = Source {
    ply: "bunny.ply",
    obj_vertices: 35_947,
    used_vertices: 34_834,
    triangles: 69_451,
    min: ["-0.094690", "0.032987", "-0.061874"],
    max: ["0.061009", "0.187321", "0.058800"],
    checksum: 317207.0071991059,
};

const SPONZA: Source = Source {
    ply: "sponza.ply",
    obj_vertices: 39_999,
    used_vertices: 39_999,
    triangles: 66_454,
    min: ["-17.40276", "-0.906689", "-7.798512"],
    max: ["17.41724", "15.653312", "7.801489"],
    checksum: 24763833.33530701,
};

fn scene_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name)
}

/// A mesh as read by [`read_binary_ply`].
struct Mesh {
    positions: Vec<[f32; 3]>,
    triangles: Vec<[u32; 3]>,
}

/// A deliberately minimal reader for exactly the PLY layout the shipped files use:
/// `format binary_little_endian 1.0`, `element vertex N` with `property float x`, `y`, `z`,
/// then `element face M` with `property list uchar int vertex_indices`, comments allowed.
/// Anything else is a test failure (panic), not a guess.
fn read_binary_ply(bytes: &[u8]) -> Mesh {
    let mut pos = 0;
    let mut header = Vec::new();
    loop {
        let end = bytes[pos..].iter().position(|&b| b == b'\n').expect("header line without newline") + pos;
        let line = std::str::from_utf8(&bytes[pos..end]).expect("header is ASCII");
        pos = end + 1;
        if line == "end_header" {
            break;
        }
        if !line.starts_with("comment ") {
            header.push(line.to_string());
        }
    }
    let [magic, format, vertex, x, y, z, face, list] = header.as_slice() else {
        panic!("unexpected PLY header {header:?}");
    };
    assert_eq!((magic.as_str(), format.as_str()), ("ply", "format binary_little_endian 1.0"));
    assert_eq!([x, y, z], ["property float x", "property float y", "property float z"]);
    assert_eq!(list, "property list uchar int vertex_indices");
    let count = |line: &str, element: &str| -> usize {
        line.strip_prefix(element).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("bad element line {line:?}"))
    };
    let (nv, nf) = (count(vertex, "element vertex "), count(face, "element face "));

    let f32_at = |p: usize| f32::from_le_bytes(bytes[p..p + 4].try_into().unwrap());
    let i32_at = |p: usize| i32::from_le_bytes(bytes[p..p + 4].try_into().unwrap());
    let positions: Vec<[f32; 3]> = (0..nv).map(|i| [0, 1, 2].map(|k| f32_at(pos + 12 * i + 4 * k))).collect();
    pos += 12 * nv;
    let mut triangles = Vec::with_capacity(nf);
    for f in 0..nf {
        assert_eq!(bytes[pos], 3, "face {f} is not a triangle");
        let idx = [0, 1, 2].map(|k| i32_at(pos + 1 + 4 * k));
        assert!(idx.iter().all(|&i| 0 <= i && (i as usize) < nv), "face {f} indices {idx:?} out of range");
        triangles.push(idx.map(|i| i as u32));
        pos += 13;
    }
    assert_eq!(pos, bytes.len(), "data after the last face");
    Mesh { positions, triangles }
}

/// Sum over triangles `n` and their corners `c` of `(x + 2y + 3z) · (n mod 7 + 1) · (c + 1)` in
/// f64: depends on every coordinate, on the triangle order and on the corner order, but not on
/// how the vertices are numbered.
fn corner_checksum(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> f64 {
    let mut sum = 0.0f64;
    for (n, t) in triangles.iter().enumerate() {
        for (c, &i) in t.iter().enumerate() {
            let [x, y, z] = positions[i as usize].map(f64::from);
            sum += (x + 2.0 * y + 3.0 * z) * ((n % 7) + 1) as f64 * (c + 1) as f64;
        }
    }
    sum
}

fn bounds(positions: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    positions.iter().fold(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]), |(lo, hi), p| {
        ([0, 1, 2].map(|k| lo[k].min(p[k])), [0, 1, 2].map(|k| hi[k].max(p[k])))
    })
}

fn check(src: &Source) {
    let path = scene_file(src.ply);
    let ply = read_binary_ply(&std::fs::read(&path).unwrap());
    let name = src.ply;

    // Counts: the loader dropped the OBJ's unused vertices and nothing else.
    assert!(src.used_vertices <= src.obj_vertices);
    assert_eq!(ply.positions.len(), src.used_vertices, "{name}: vertices");
    assert_eq!(ply.triangles.len(), src.triangles, "{name}: triangles");
    let mut used = vec![false; ply.positions.len()];
    ply.triangles.iter().flatten().for_each(|&i| used[i as usize] = true);
    assert!(used.iter().all(|&u| u), "{name}: a vertex no face uses");

    // Bounds: the OBJ's extreme coordinates, parsed to f32, exactly (no transform applied).
    let parse = |s: [&str; 3]| s.map(|t| t.parse::<f32>().unwrap());
    let (lo, hi) = bounds(&ply.positions);
    assert_eq!((lo, hi), (parse(src.min), parse(src.max)), "{name}: bounds");

    // Geometry and triangle order: the checksum of the OBJ's triangles. Exact: the Python
    // script did the same f64 operations in the same order (IEEE double arithmetic, no fused
    // operations), so any changed coordinate bit or triangle moves it.
    let sum = corner_checksum(&ply.positions, &ply.triangles);
    assert_eq!(sum, src.checksum, "{name}: corner checksum");

    // The crate's loader reads the same mesh as the minimal reader.
    let mesh = load_mesh(&path).unwrap();
    assert_eq!(mesh.positions.len(), ply.positions.len(), "{name}: loader vertex count");
    assert_eq!(mesh.triangle_count(), ply.triangles.len(), "{name}: loader triangle count");
    let b = mesh.bounds();
    assert_eq!((b.min.to_array(), b.max.to_array()), (lo, hi), "{name}: loader bounds");
    assert!(
        mesh.positions.iter().flatten().map(|c| c.to_bits()).eq(ply.positions.iter().flatten().map(|c| c.to_bits())),
        "{name}: loader positions differ from the file's"
    );
    assert_eq!(mesh.indices, ply.triangles, "{name}: loader indices");
}

#[test]
fn bunny_ply_is_the_stanford_bunny_obj() {
    check(&BUNNY);
}

#[test]
fn sponza_ply_is_the_sponza_obj() {
    check(&SPONZA);
}
