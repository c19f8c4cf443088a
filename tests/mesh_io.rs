//! Mesh loading: the shipped bunny as a scene (its contents are checked against the source
//! OBJ in `tests/shipped_meshes.rs`), small OBJ/PLY files in every encoding written here, and
//! every kind of bad input (each must be an error naming the file, never a panic).

use glam::Vec3;
use lanecast::rng::Rng;
use lanecast::scene::mesh_io::{MeshData, load_mesh, mesh_from_obj_reader, mesh_from_ply_reader};
use lanecast::{Ray, SceneBuilder, SceneError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

const BUNNY_TRIANGLES: usize = 69_451;

fn scene_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name)
}

/// A fresh directory under the system temp dir, removed on drop (also when a test fails).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "lanecast-mesh-io-{tag}-{}-{nanos}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Binary PLY writer for the tests, independent of the loader: `ty` is a PLY scalar type.
fn put(out: &mut Vec<u8>, ty: &str, v: f64, be: bool) {
    macro_rules! bytes {
        ($x:expr) => {
            if be { out.extend_from_slice(&$x.to_be_bytes()) } else { out.extend_from_slice(&$x.to_le_bytes()) }
        };
    }
    match ty {
        "char" => bytes!(v as i8),
        "uchar" => bytes!(v as u8),
        "short" => bytes!(v as i16),
        "ushort" => bytes!(v as u16),
        "int" => bytes!(v as i32),
        "uint" => bytes!(v as u32),
        "float" => bytes!(v as f32),
        "double" => bytes!(v),
        _ => panic!("unknown type {ty}"),
    }
}

/// A binary PLY with `coord` x/y/z, an extra `uchar red` per vertex, and faces as
/// `list <count> <index> <list_name>`.
fn binary_ply(
    be: bool,
    coord: &str,
    count: &str,
    index: &str,
    list_name: &str,
    verts: &[[f64; 3]],
    faces: &[&[i64]],
) -> Vec<u8> {
    let format = if be { "binary_big_endian" } else { "binary_little_endian" };
    let mut out = format!(
        "ply\nformat {format} 1.0\ncomment written by tests/mesh_io.rs\nelement vertex {}\nproperty {coord} x\nproperty {coord} y\nproperty {coord} z\nproperty uchar red\nelement face {}\nproperty list {count} {index} {list_name}\nend_header\n",
        verts.len(),
        faces.len()
    )
    .into_bytes();
    for v in verts {
        for &c in v {
            put(&mut out, coord, c, be);
        }
        put(&mut out, "uchar", 200.0, be);
    }
    for f in faces {
        put(&mut out, count, f.len() as f64, be);
        for &i in *f {
            put(&mut out, index, i as f64, be);
        }
    }
    out
}

/// A unit square (fan-triangulated quad) plus a triangle above it.
const VERTS: [[f64; 3]; 5] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 2.0]];
const FACES: [&[i64]; 2] = [&[0, 1, 2, 3], &[0, 1, 4]];

fn expected() -> MeshData {
    MeshData {
        positions: VERTS.iter().map(|v| v.map(|c| c as f32)).collect(),
        indices: vec![[0, 1, 2], [0, 2, 3], [0, 1, 4]],
    }
}

fn err_text(r: Result<MeshData, SceneError>) -> String {
    match r {
        Ok(m) => panic!("expected an error, got a mesh with {} triangles", m.triangle_count()),
        Err(e @ SceneError::File { .. }) => e.to_string(),
        Err(e) => panic!("expected a file error, got {e}"),
    }
}

/// Loads `bytes` written to `name` and checks the error names the file and every fragment.
fn assert_load_err(dir: &TempDir, name: &str, bytes: impl AsRef<[u8]>, fragments: &[&str]) -> String {
    let path = dir.write(name, bytes);
    let msg = err_text(load_mesh(&path));
    eprintln!("{msg}");
    assert!(msg.contains(name), "error for {name} does not name the file: {msg}");
    for f in fragments {
        assert!(msg.contains(f), "error for {name} lacks `{f}`: {msg}");
    }
    msg
}

#[test]
fn bunny_scene_builds_and_is_hit() {
    let mut builder = SceneBuilder::new();
    let id = builder.add_mesh_file(&scene_file("bunny.ply")).unwrap();
    let scene = builder.build().unwrap();
    scene.validate().unwrap();
    let st = scene.stats();
    assert_eq!(st.triangles, BUNNY_TRIANGLES, "the watertight default keeps degenerate triangles");
    assert_eq!(scene.geoms()[id as usize].prims as usize, BUNNY_TRIANGLES);
    // The suggested camera looks straight at the bunny.
    let eye = Vec3::new(0.0883, 0.1852, 0.2988);
    let hit = scene.intersect(&Ray::new(eye, Vec3::new(-0.0168, 0.1102, -0.0015) - eye)).unwrap();
    assert_eq!(hit.geom, id);
    assert!(hit.t > 0.0 && hit.t < 1.0);
}

#[test]
fn ascii_ply_round_trip() {
    let dir = TempDir::new("ascii");
    // An extra element before `vertex`, extra vertex properties, `vertex_index` and int coords.
    let ply = "ply\r\nformat ascii 1.0\ncomment hello\nelement material 2\nproperty uchar red\nproperty list uchar float weights\n\
               element vertex 5\nproperty double x\nproperty float nx\nproperty float y\nproperty int z\n\
               element face 2\nproperty uchar flags\nproperty list uchar uint vertex_index\nelement edge 1\nproperty int a\nend_header\n\
               1 2 0.5 0.25\n2 0\n\
               0 9 0 0\n1 9 0 0\n1.0 9 1 0\n0 9 1e0 0\n0.5 9 0.5 2\n\
               7 4 0 1 2 3\n0 3 0 1 4\n";
    let path = dir.write("small.ply", ply);
    assert_eq!(load_mesh(&path).unwrap(), expected());
    // Upper-case extension, and the reader entry point.
    let upper = dir.write("SMALL.PLY", ply);
    assert_eq!(load_mesh(&upper).unwrap(), expected());
    assert_eq!(mesh_from_ply_reader(ply.as_bytes(), Path::new("mem.ply")).unwrap(), expected());
}

#[test]
fn binary_ply_round_trips() {
    let dir = TempDir::new("binary");
    let cases = [
        (false, "float", "uchar", "int", "vertex_indices"),
        (true, "float", "uchar", "int", "vertex_indices"),
        (false, "double", "ushort", "uint", "vertex_index"),
        (true, "double", "int", "ushort", "vertex_indices"),
        (true, "short", "uchar", "uchar", "vertex_indices"),
        (false, "int", "char", "char", "vertex_index"),
    ];
    for (k, (be, coord, count, index, list)) in cases.into_iter().enumerate() {
        // Integer coordinates cannot hold 0.5: move the apex to (3, 3, 2) for those.
        let integer = !matches!(coord, "float" | "double");
        let verts = VERTS.map(|v| v.map(|c| if integer && c == 0.5 { 3.0 } else { c }));
        let want = MeshData { positions: verts.iter().map(|v| v.map(|c| c as f32)).collect(), ..expected() };
        let bytes = binary_ply(be, coord, count, index, list, &verts, &FACES);
        let path = dir.write(&format!("case{k}.ply"), &bytes);
        assert_eq!(load_mesh(&path).unwrap(), want, "case {k}: {be} {coord} {count} {index} {list}");
    }
    // Elements after `face` are never read: a truncated trailing element is fine.
    let mut bytes = binary_ply(false, "float", "uchar", "int", "vertex_indices", &VERTS, &FACES);
    let at = bytes.windows(10).position(|w| w == b"end_header").unwrap();
    bytes.splice(at..at, b"element extra 1000\nproperty double w\n".iter().copied());
    bytes.extend_from_slice(&[1, 2, 3]);
    assert_eq!(mesh_from_ply_reader(&bytes[..], Path::new("mem.ply")).unwrap(), expected());
}

#[test]
fn obj_quad_is_fan_triangulated() {
    let dir = TempDir::new("obj");
    let obj = "# a quad and a triangle\nmtllib missing.mtl\no thing\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n\
               usemtl stone\nf 1/1/1 2/1/1 3/1/1 4/1/1\ng other\nv 0.5 0.5 2\nl 1 2 3\nf -5//1 -4//1 -1//1\n";
    let path = dir.write("quad.obj", obj);
    let mesh = load_mesh(&path).unwrap();
    assert_eq!(mesh.triangle_count(), 3);
    assert_eq!(mesh, expected());
    assert_eq!(mesh_from_obj_reader(obj.as_bytes(), Path::new("mem.obj")).unwrap(), expected());

    // A lone quad: exactly two triangles sharing the first vertex.
    let quad = dir.write("lone.OBJ", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n");
    let mesh = load_mesh(&quad).unwrap();
    assert_eq!(mesh.indices, vec![[0, 1, 2], [0, 2, 3]]);

    // The same scene through the builder.
    let mut b = SceneBuilder::new();
    b.add_mesh_file(&path).unwrap();
    let scene = b.build().unwrap();
    scene.validate().unwrap();
    assert_eq!(scene.stats().triangles, 3);
}

#[test]
fn missing_files_and_unknown_formats() {
    let dir = TempDir::new("missing");
    for name in ["nope.obj", "nope.ply"] {
        let msg = err_text(load_mesh(&dir.0.join(name)));
        assert!(msg.contains(name) && msg.contains("cannot open: ") && msg.contains("os error"), "{msg}");
    }
    let msg = assert_load_err(&dir, "mesh.stl", "solid x\n", &["unsupported", ".stl"]);
    assert!(msg.contains(".obj or .ply"), "{msg}");
    assert_load_err(&dir, "mesh", "v 0 0 0\n", &["extension"]);
    // The builder passes file errors through.
    let mut b = SceneBuilder::new();
    let e = b.add_mesh_file(&dir.0.join("gone.ply")).unwrap_err().to_string();
    assert!(e.contains("gone.ply") && e.contains("cannot open"), "{e}");
}

#[test]
fn bad_ply_headers() {
    let dir = TempDir::new("plyhead");
    let tail = "element face 1\nproperty list uchar int vertex_indices\nend_header\n";
    assert_load_err(&dir, "notply.ply", "hello\nworld\n", &["PLY error", "line 1"]);
    assert_load_err(&dir, "empty.ply", "", &["PLY error"]);
    assert_load_err(&dir, "noend.ply", "ply\nformat ascii 1.0\nelement vertex 1\n", &["end_header"]);
    assert_load_err(&dir, "badline.ply", "ply\nformat ascii 1.0\nelemnt vertex 3\nend_header\n", &["line 3"]);
    assert_load_err(&dir, "novertex.ply", format!("ply\nformat ascii 1.0\n{tail}3 0 1 2\n"), &["no `vertex` element"]);
    assert_load_err(
        &dir,
        "noz.ply",
        format!(
            "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n{tail}0 0\n1 0\n0 1\n3 0 1 2\n"
        ),
        &["no `z` property"],
    );
    assert_load_err(
        &dir,
        "listx.ply",
        format!(
            "ply\nformat ascii 1.0\nelement vertex 1\nproperty list uchar float x\nproperty float y\nproperty float z\n{tail}"
        ),
        &["`x` is a list"],
    );
    let verts = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n";
    assert_load_err(&dir, "noface.ply", format!("{verts}end_header\n0 0 0\n1 0 0\n0 1 0\n"), &["no `face` element"]);
    assert_load_err(
        &dir,
        "nolist.ply",
        format!("{verts}element face 1\nproperty list uchar int corners\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"),
        &["`vertex_indices`"],
    );
    assert_load_err(
        &dir,
        "floatlist.ply",
        format!(
            "{verts}element face 1\nproperty list uchar float vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
        ),
        &["list of floats"],
    );
    assert_load_err(
        &dir,
        "scalarlist.ply",
        format!("{verts}element face 1\nproperty int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n2\n"),
        &["not a list"],
    );
}

#[test]
fn bad_ply_payloads() {
    let dir = TempDir::new("plybody");
    let head = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n\
                element face 2\nproperty list uchar int vertex_indices\nend_header\n";
    // Face index out of range: names the face (0-based record) and the index.
    let msg = assert_load_err(
        &dir,
        "range.ply",
        format!("{head}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 7 2\n"),
        &["face 1", "index 7", "3 vertices"],
    );
    assert!(msg.contains("out of range"), "{msg}");
    let bin =
        binary_ply(false, "float", "uchar", "int", "vertex_indices", &VERTS, &[&[0, 1, 2], &[3, 4, 0], &[1, -1, 2]]);
    assert_load_err(&dir, "negative.ply", bin, &["face 2", "index -1"]);
    let bin = binary_ply(true, "double", "uchar", "uint", "vertex_indices", &VERTS, &[&[0, 1, 2, 3, 5]]);
    assert_load_err(&dir, "range_be.ply", bin, &["face 0", "index 5"]);
    // Too few indices.
    assert_load_err(
        &dir,
        "short.ply",
        format!("{head}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n2 0 1\n"),
        &["face 1", "2 vertex indices"],
    );
    // Non-finite coordinates: f32 overflow in ascii, NaN/inf in binary, a double too big for f32.
    assert_load_err(
        &dir,
        "huge.ply",
        format!("{head}0 0 0\n1 1e39 0\n0 1 0\n3 0 1 2\n3 0 1 2\n"),
        &["vertex 1", "not a finite"],
    );
    let mut v = VERTS;
    v[3][2] = f64::NAN;
    assert_load_err(
        &dir,
        "nan.ply",
        binary_ply(false, "float", "uchar", "int", "vertex_indices", &v, &FACES),
        &["vertex 3", "NaN"],
    );
    v[3][2] = f64::INFINITY;
    assert_load_err(
        &dir,
        "inf.ply",
        binary_ply(true, "float", "uchar", "int", "vertex_indices", &v, &FACES),
        &["vertex 3", "inf"],
    );
    v[3][2] = 1e300;
    assert_load_err(
        &dir,
        "big.ply",
        binary_ply(true, "double", "uchar", "int", "vertex_indices", &v, &FACES),
        &["vertex 3", "not a finite"],
    );
    // Malformed ascii data names its line (the header is 9 lines).
    assert_load_err(
        &dir,
        "word.ply",
        format!("{head}0 0 0\n1 zero 0\n0 1 0\n3 0 1 2\n3 0 1 2\n"),
        &["line 11", "`vertex` record 1 `1 zero 0`", "column 3"],
    );
    assert_load_err(
        &dir,
        "fewer.ply",
        format!("{head}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n4 0 1 2\n"),
        &["line 14", "`face` record 1", "Expected 4 list elements"],
    );
    assert_load_err(
        &dir,
        "nonl.ply",
        format!("{head}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n4 0 1 2"),
        &["line 14", "`face` record 1"],
    );
    let uchar = head.replace("uchar int", "uchar uchar");
    assert_load_err(
        &dir,
        "uchar.ply",
        format!("{uchar}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 1 300\n"),
        &["line 14", "`3 0 1 300`", "index 2"],
    );
    // Truncated files.
    assert_load_err(&dir, "cut.ply", format!("{head}0 0 0\n1 0 0\n"), &["end of file", "`vertex`"]);
    let bin = binary_ply(false, "float", "uchar", "int", "vertex_indices", &VERTS, &FACES);
    assert_load_err(&dir, "cut_bin.ply", &bin[..bin.len() - 3], &["end of file", "`face`"]);
    assert_load_err(&dir, "cut_verts.ply", &bin[..bin.len() - 50], &["end of file", "`vertex`"]);
    // No triangles at all.
    assert_load_err(
        &dir,
        "nofaces.ply",
        format!("{}0 0 0\n1 0 0\n0 1 0\n", head.replace("face 2", "face 0")),
        &["no faces"],
    );
}

#[test]
fn bad_obj_files() {
    let dir = TempDir::new("obj");
    let v = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    // Parse errors reported by tobj get the line we were on.
    assert_load_err(&dir, "pos.obj", "v 0 0 0\nv 1 x 0\n", &["line 2", "position parse error"]);
    assert_load_err(&dir, "color.obj", "v 0 0 0 1 1\n", &["line 1", "OBJ parse error"]);
    // Face references.
    let msg = assert_load_err(
        &dir,
        "range.obj",
        format!("# comment\n{v}f 1 2 3\nf 1 2 9\n"),
        &["line 6", "face 2", "vertex 9", "only 3 vertices"],
    );
    assert!(!msg.contains('\n'), "{msg}");
    assert_load_err(&dir, "relative.obj", format!("{v}f -1 -2 -4\n"), &["line 4", "vertex -4"]);
    assert_load_err(&dir, "zero.obj", format!("{v}f 0 1 2\n"), &["line 4", "index 0"]);
    assert_load_err(&dir, "forward.obj", format!("f 1 2 3\n{v}"), &["line 1", "only 0 vertices"]);
    assert_load_err(&dir, "word.obj", format!("{v}f 1 two 3\n"), &["line 4", "malformed", "`two`"]);
    assert_load_err(&dir, "slash.obj", format!("{v}f 1 /2 3\n"), &["line 4", "malformed"]);
    assert_load_err(&dir, "bigidx.obj", format!("{v}f 1 2 99999999999999999999999\n"), &["line 4", "malformed"]);
    assert_load_err(&dir, "two.obj", format!("{v}f 1 2\n"), &["line 4", "2 vertices"]);
    // Non-finite coordinates.
    assert_load_err(&dir, "nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", &["line 2", "vertex 2", "non-finite"]);
    assert_load_err(&dir, "huge.obj", "v 0 0 0\nv 1 1e39 0\nv 0 1 0\nf 1 2 3\n", &["line 2", "non-finite"]);
    assert_load_err(&dir, "w.obj", "v 0 0 0\nv 1e38 0 0 1e-10\nv 0 1 0\nf 1 2 3\n", &["not finite", "w"]);
    assert_load_err(&dir, "scale0.obj", "v 0 0 0 0\n", &["line 1", "scaling"]);
    // Nothing to load.
    assert_load_err(&dir, "empty.obj", "", &["no faces"]);
    assert_load_err(&dir, "points.obj", format!("{v}p 1 2 3\nl 1 2 3\n"), &["no faces"]);
    // Not UTF-8 where it matters; harmless where it does not.
    assert_load_err(&dir, "utf8.obj", b"v 0 0 \xff\n".as_slice(), &["line 1", "UTF-8"]);
    let ok = dir.write("comment.obj", [b"# \xff\xfe\n".as_slice(), v.as_bytes(), b"f 1 2 3".as_slice()].concat());
    assert_eq!(load_mesh(&ok).unwrap().triangle_count(), 1);
}

/// Random corruptions of valid files must give `Ok` or `Err`, never a panic.
#[test]
fn corrupted_inputs_never_panic() {
    let obj = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\nf 1/1/1 2/1/1 3/1/1 4/1/1\nf -1 -2 -3\n";
    let ascii = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n\
                 element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    let seeds: [Vec<u8>; 4] = [
        obj.into(),
        ascii.into(),
        binary_ply(false, "float", "uchar", "int", "vertex_indices", &VERTS, &FACES),
        binary_ply(true, "double", "ushort", "uint", "vertex_index", &VERTS, &FACES),
    ];
    let alphabet = b"0123456789 -+.e\n/fv#xyzlisteu\xff\x00";
    let mut rng = Rng::new(0x6d65_7368);
    let (mut ok, mut err) = (0, 0);
    // `LANECAST_SOAK=n` runs n times as many, as in the kernel tests.
    let soak: usize = std::env::var("LANECAST_SOAK").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    for round in 0..4000 * soak.max(1) {
        let (k, seed) = (round % 4, &seeds[round % 4]);
        let mut bytes = seed.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len() as u64 + 1) as usize;
            match rng.below(4) {
                0 if at < bytes.len() => bytes[at] = alphabet[rng.below(alphabet.len() as u64) as usize],
                1 if at < bytes.len() => bytes[at] = rng.next_u64() as u8,
                2 => bytes.insert(at, alphabet[rng.below(alphabet.len() as u64) as usize]),
                _ => bytes.truncate(at.max(1)),
            }
        }
        let result = if k == 0 {
            mesh_from_obj_reader(&bytes[..], Path::new("fuzz.obj"))
        } else {
            mesh_from_ply_reader(&bytes[..], Path::new("fuzz.ply"))
        };
        match result {
            Ok(m) => {
                let n = m.positions.len() as u32;
                assert!(m.indices.iter().flatten().all(|&i| i < n));
                assert!(m.positions.iter().all(|p| Vec3::from(*p).is_finite()));
                ok += 1;
            }
            Err(e) => {
                assert!(e.to_string().contains("fuzz."), "{e}");
                err += 1;
            }
        }
    }
    assert!(ok > 100 && err > 100, "ok {ok}, err {err}");
}
