//! The real `lanecast` binary on the query commands `cast --all`, `count`, `inside` and
//! `closest`: outputs in every format checked against values worked out by hand for a
//! scene of a box, a sphere, a closed mesh cube and a plane; empty inputs; and bad inputs
//! (exit code 2, a message naming the file and place, no output file left behind).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn lanecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanecast")).args(args).output().expect("run lanecast")
}

fn lanecast_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lanecast"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lanecast");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "lanecast failed ({:?}):\n{}", o.status.code(), stderr(o));
}

/// Exit code 2 and a message that mentions every `needle`.
fn bad(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "expected exit 2, got {:?}; stderr:\n{}", o.status.code(), stderr(o));
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "error message {e:?} does not mention {n:?}");
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Geometry 0: the box [0,1]³. Geometry 1: the sphere of radius 1 about (5, 0.5, 0.5).
/// Geometry 2: a closed mesh cube [10,11]×[0,1]² (`cube.obj`, 12 outward triangles).
/// Geometry 3: the plane y = -5.
const SCENE: &str = r#"
[[box]]
min = [0.0, 0.0, 0.0]
max = [1.0, 1.0, 1.0]

[[sphere]]
center = [5.0, 0.5, 0.5]
radius = 1.0

[[mesh]]
path = "cube.obj"

[[plane]]
normal = [0.0, 1.0, 0.0]
d = -5.0
"#;

/// The unit cube moved to x ∈ [10, 11], faces wound outward. Triangle (prim) order:
/// 0-1 face x=10, 2-3 face x=11, 4-5 face y=0, 6-7 face y=1, 8-9 face z=0, 10-11 face z=1.
const CUBE_OBJ: &str = "\
v 10 0 0\nv 11 0 0\nv 11 1 0\nv 10 1 0\nv 10 0 1\nv 11 0 1\nv 11 1 1\nv 10 1 1\n\
f 1 5 8\nf 1 8 4\n\
f 2 3 7\nf 2 7 6\n\
f 1 2 6\nf 1 6 5\n\
f 4 8 7\nf 4 7 3\n\
f 1 4 3\nf 1 3 2\n\
f 5 6 7\nf 5 7 8\n";

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cube.obj"), CUBE_OBJ).unwrap();
    let scene = dir.path().join("scene.toml");
    std::fs::write(&scene, SCENE).unwrap();
    (dir, scene)
}

/// Names in `dir`, sorted (temporary files included).
fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A minimal `.npy` writer for inputs.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// (header text, data) of an `.npy` file.
fn read_npy(bytes: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY", "npy magic");
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
    };
    assert_eq!((start + hlen) % 64, 0, "npy header padded to 64 bytes");
    (String::from_utf8(bytes[start..start + hlen].to_vec()).unwrap(), bytes[start + hlen..].to_vec())
}

fn le_f32(b: &[u8], i: usize) -> f32 {
    f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}
fn le_u32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}

fn close(a: f32, b: f64) -> bool {
    (a as f64 - b).abs() <= 1e-5 * (1.0 + b.abs())
}

/// Writes `rows` (each 6 or 8 values) as a ray file: csv (6- and 8-field lines as given,
/// with a header), `.bin` (8 f32, default interval filled in) or `.npy` (N, 8).
fn write_rays(path: &Path, rows: &[Vec<f32>]) {
    let full = |r: &Vec<f32>| {
        let mut r = r.clone();
        if r.len() == 6 {
            r.extend([0.0, f32::INFINITY]);
        }
        r
    };
    let bytes = match path.extension().unwrap().to_str().unwrap() {
        "csv" => {
            let mut t = String::from("ox,oy,oz,dx,dy,dz,tmin,tmax\n");
            for r in rows {
                let line: Vec<String> = r.iter().map(|x| x.to_string()).collect();
                t.push_str(&line.join(","));
                t.push('\n');
            }
            t.into_bytes()
        }
        "bin" => rows.iter().flat_map(|r| f32_bytes(&full(r))).collect(),
        "npy" => {
            let data: Vec<u8> = rows.iter().flat_map(|r| f32_bytes(&full(r))).collect();
            npy("<f4", &format!("({}, 8)", rows.len()), &data)
        }
        e => panic!("extension {e}"),
    };
    std::fs::write(path, bytes).unwrap();
}

/// Writes points as csv (with a header), `.bin` (3 f32) or `.npy` (N, 3).
fn write_points(path: &Path, pts: &[[f32; 3]]) {
    let bytes = match path.extension().unwrap().to_str().unwrap() {
        "csv" => {
            let mut t = String::from("x,y,z\n");
            for p in pts {
                t.push_str(&format!("{},{},{}\n", p[0], p[1], p[2]));
            }
            t.into_bytes()
        }
        "bin" => pts.iter().flat_map(|p| f32_bytes(p)).collect(),
        "npy" => npy("<f4", &format!("({}, 3)", pts.len()), &pts.iter().flat_map(|p| f32_bytes(p)).collect::<Vec<_>>()),
        e => panic!("extension {e}"),
    };
    std::fs::write(path, bytes).unwrap();
}

/// The rays of the hand-worked cases (row = ray index).
fn query_rays() -> Vec<Vec<f32>> {
    let nan = f32::NAN;
    vec![
        // 0: along +x at y = 0.5, z = 0.25: box, sphere, mesh cube in and out.
        vec![-1.0, 0.5, 0.25, 1.0, 0.0, 0.0],
        // 1: down from inside the box: the box at t = 0, then the plane at y = -5.
        vec![0.5, 0.5, 0.5, 0.0, -1.0, 0.0],
        // 2: up from above everything: nothing.
        vec![0.0, 5.0, 0.0, 0.0, 1.0, 0.0],
        // 3: NaN: an invalid ray, a defined miss.
        vec![nan, 0.0, 0.0, 1.0, 0.0, 0.0],
        // 4: from inside the mesh cube along +x: its x = 11 face.
        vec![10.5, 0.5, 0.25, 1.0, 0.0, 0.0],
        // 5: ray 0 limited to t <= 3: the box only.
        vec![-1.0, 0.5, 0.25, 1.0, 0.0, 0.0, 0.0, 3.0],
    ]
}

/// One expected hit row: ray, t, geom, prim, u, v, normal (`None`: not checked).
type Row = (u32, f64, u32, u32, f64, f64, Option<[f64; 3]>);

/// The hits of [`query_rays`], worked out by hand, sorted by ray then t.
fn expected_all() -> Vec<Row> {
    // The sphere: |(x, 0.5, 0.25) - (5, 0.5, 0.5)| = 1 at x = 5 - sqrt(1 - 0.25²).
    let c = (1.0f64 - 0.0625).sqrt();
    vec![
        (0, 1.0, 0, 0, 0.0, 0.0, Some([-1.0, 0.0, 0.0])),
        (0, 6.0 - c, 1, 0, 0.0, 0.0, Some([-c, 0.0, -0.25])),
        // (10, 0.5, 0.25) on triangle 1 (v1, v8, v4): (10, u+v, u) -> u = v = 0.25.
        (0, 11.0, 2, 1, 0.25, 0.25, Some([-1.0, 0.0, 0.0])),
        // (11, 0.5, 0.25) on triangle 2 (v2, v3, v7): (11, u+v, v) -> u = v = 0.25.
        (0, 12.0, 2, 2, 0.25, 0.25, Some([1.0, 0.0, 0.0])),
        (1, 0.0, 0, 0, 0.0, 0.0, None),
        (1, 5.5, 3, 0, 0.0, 0.0, Some([0.0, 1.0, 0.0])),
        (4, 0.5, 2, 2, 0.25, 0.25, Some([1.0, 0.0, 0.0])),
        (5, 1.0, 0, 0, 0.0, 0.0, Some([-1.0, 0.0, 0.0])),
    ]
}

/// Checks parsed rows `(ray, [t, u, v, nx, ny, nz], geom, prim)` against [`expected_all`].
fn check_rows(got: &[(u32, [f32; 6], u32, u32)], what: &str) {
    let want = expected_all();
    assert_eq!(got.len(), want.len(), "{what}: {got:?}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (ray, f, geom, prim) = *g;
        assert_eq!((ray, geom, prim), (w.0, w.2, w.3), "{what}: row {i}: {g:?}");
        assert!(close(f[0], w.1) && close(f[1], w.4) && close(f[2], w.5), "{what}: row {i}: {g:?} vs {w:?}");
        if let Some(n) = w.6 {
            assert!((0..3).all(|k| close(f[3 + k], n[k])), "{what}: row {i} normal: {g:?} vs {n:?}");
        }
    }
}

/// Parses 40-byte hit-list records (`inst` must be "not instanced").
fn parse_all_bin(b: &[u8]) -> Vec<(u32, [f32; 6], u32, u32)> {
    assert_eq!(b.len() % 40, 0);
    b.chunks_exact(40)
        .map(|r| {
            assert_eq!(le_u32(r, 4), u32::MAX, "inst");
            (
                le_u32(r, 0),
                [le_f32(r, 1), le_f32(r, 5), le_f32(r, 6), le_f32(r, 7), le_f32(r, 8), le_f32(r, 9)],
                le_u32(r, 2),
                le_u32(r, 3),
            )
        })
        .collect()
}

fn parse_all_csv(text: &str) -> Vec<(u32, [f32; 6], u32, u32)> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("ray,t,geom,prim,inst,u,v,nx,ny,nz"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 10, "{l}");
            assert_eq!(f[4], "-1", "inst: not instanced");
            let x = |i: usize| f[i].parse::<f32>().unwrap();
            (f[0].parse().unwrap(), [x(1), x(5), x(6), x(7), x(8), x(9)], f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn cast_all_lists_every_hit_in_every_format() {
    let (dir, scene) = setup();
    let mut bin_bytes = None;
    for ext in ["csv", "bin", "npy"] {
        let rays = dir.path().join(format!("rays.{ext}"));
        write_rays(&rays, &query_rays());
        let out = dir.path().join(format!("all.{ext}"));
        ok(&lanecast(&["cast", s(&scene), "--all", "--rays", s(&rays), "--out", s(&out)]));
        let bytes = std::fs::read(&out).unwrap();
        match ext {
            "csv" => check_rows(&parse_all_csv(&String::from_utf8(bytes).unwrap()), "csv"),
            "bin" => {
                check_rows(&parse_all_bin(&bytes), "bin");
                bin_bytes = Some(bytes);
            }
            _ => {
                let (header, data) = read_npy(&bytes);
                assert!(header.contains("'shape': (8,)"), "{header}");
                assert!(
                    header.contains(
                        "[('ray', '<u4'), ('t', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), \
                         ('u', '<f4'), ('v', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]"
                    ),
                    "{header}"
                );
                assert_eq!(Some(data), bin_bytes, "npy records equal the bin records");
            }
        }
    }
    // Every backend and thread count, stdout and stdin give the same csv.
    let rays = dir.path().join("rays.csv");
    let text = std::fs::read_to_string(dir.path().join("all.csv")).unwrap();
    for backend in ["scalar", "x4", "x8", "x16"] {
        let o = lanecast(&["cast", s(&scene), "--all", "--rays", s(&rays), "--backend", backend, "--threads", "1"]);
        ok(&o);
        assert_eq!(stdout(&o), text, "backend {backend}");
    }
    let o = lanecast_stdin(&["cast", s(&scene), "--all", "--rays", "-"], &std::fs::read_to_string(&rays).unwrap());
    ok(&o);
    assert_eq!(stdout(&o), text);
    // --format overrides the extensions of both files.
    let odd_in = dir.path().join("rays.dat");
    std::fs::copy(dir.path().join("rays.bin"), &odd_in).unwrap();
    let odd_out = dir.path().join("all.dat");
    ok(&lanecast(&["cast", s(&scene), "--all", "--rays", s(&odd_in), "--out", s(&odd_out), "--format", "bin"]));
    assert_eq!(Some(std::fs::read(&odd_out).unwrap()), bin_bytes);
}

/// 10,007 rays (several `cast --all` chunks): ray i is ray 0 of [`query_rays`] (4 hits) when
/// i % 3 == 0, else ray 2 (no hit). 70,001 rays for `count` (more than one 65,536-ray chunk).
#[test]
fn cast_all_and_count_number_rays_across_chunks() {
    let (dir, scene) = setup();
    let q = query_rays();
    let rays: Vec<Vec<f32>> = (0..10_007).map(|i| if i % 3 == 0 { q[0].clone() } else { q[2].clone() }).collect();
    let path = dir.path().join("many.bin");
    write_rays(&path, &rays);
    let out = dir.path().join("many_all.bin");
    ok(&lanecast(&["cast", s(&scene), "--all", "--rays", s(&path), "--out", s(&out)]));
    let rows = parse_all_bin(&std::fs::read(&out).unwrap());
    let want_rays: Vec<u32> = (0..10_007u32).filter(|i| i % 3 == 0).flat_map(|i| [i; 4]).collect();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), want_rays);
    assert!(rows.chunks(4).all(|c| c.iter().map(|r| r.2).collect::<Vec<_>>() == [0, 1, 2, 2]), "geoms per ray");

    let rays: Vec<Vec<f32>> = (0..70_001).map(|i| q[[0, 1, 2, 4][i % 4]].clone()).collect();
    let path = dir.path().join("many.npy");
    write_rays(&path, &rays);
    let out = dir.path().join("counts.npy");
    ok(&lanecast(&["count", s(&scene), "--rays", s(&path), "--out", s(&out)]));
    let (header, data) = read_npy(&std::fs::read(&out).unwrap());
    assert!(header.contains("'descr': '<u4'") && header.contains("'shape': (70001,)"), "{header}");
    let got: Vec<u32> = (0..70_001).map(|i| le_u32(&data, i)).collect();
    let want: Vec<u32> = (0..70_001).map(|i| [4, 2, 0, 1][i % 4]).collect();
    assert_eq!(got, want);
}

/// The hit counts of [`query_rays`], by hand (see [`expected_all`]).
const COUNTS: [u32; 6] = [4, 2, 0, 0, 1, 1];

#[test]
fn count_gives_the_hand_worked_counts_in_every_format() {
    let (dir, scene) = setup();
    for ext in ["csv", "bin", "npy"] {
        let rays = dir.path().join(format!("rays.{ext}"));
        write_rays(&rays, &query_rays());
        let out = dir.path().join(format!("counts.{ext}"));
        ok(&lanecast(&["count", s(&scene), "--rays", s(&rays), "--out", s(&out)]));
        let bytes = std::fs::read(&out).unwrap();
        let got: Vec<u32> = match ext {
            "csv" => {
                let text = String::from_utf8(bytes).unwrap();
                assert_eq!(text, "count\n4\n2\n0\n0\n1\n1\n");
                COUNTS.to_vec()
            }
            "bin" => {
                assert_eq!(bytes.len(), 4 * COUNTS.len());
                (0..COUNTS.len()).map(|i| le_u32(&bytes, i)).collect()
            }
            _ => {
                let (header, data) = read_npy(&bytes);
                assert!(header.contains("'descr': '<u4'") && header.contains("'shape': (6,)"), "{header}");
                (0..COUNTS.len()).map(|i| le_u32(&data, i)).collect()
            }
        };
        assert_eq!(got, COUNTS, "{ext}");
    }
    let rays = dir.path().join("rays.csv");
    for backend in ["scalar", "x4", "x8", "x16"] {
        let o = lanecast(&["count", s(&scene), "--rays", s(&rays), "--backend", backend, "--threads", "2"]);
        ok(&o);
        assert_eq!(stdout(&o), "count\n4\n2\n0\n0\n1\n1\n", "backend {backend}");
    }
    let o = lanecast_stdin(&["count", s(&scene), "--rays", "-"], &std::fs::read_to_string(&rays).unwrap());
    ok(&o);
    assert_eq!(stdout(&o), "count\n4\n2\n0\n0\n1\n1\n");
}

/// Points with known insideness: `(point, inside)`.
fn inside_cases() -> Vec<([f32; 3], bool)> {
    vec![
        ([0.5, 0.5, 0.5], true),    // box centre
        ([0.9, 0.1, 0.95], true),   // box, near a corner
        ([1.1, 0.5, 0.5], false),   // just outside the box
        ([5.0, 0.5, 0.5], true),    // sphere centre
        ([5.0, 0.5, 1.4], true),    // 0.9 from the sphere centre
        ([5.0, 0.5, 1.6], false),   // 1.1 from the sphere centre
        ([5.6, 1.1, 1.1], false),   // in the sphere's bounding box, not in the sphere (|d| = 1.04)
        ([10.5, 0.5, 0.5], true),   // mesh cube centre
        ([10.1, 0.9, 0.2], true),   // mesh cube, off centre
        ([10.5, 0.5, 1.5], false),  // above the mesh cube
        ([11.2, 0.5, 0.5], false),  // beside the mesh cube
        ([2.0, 0.5, 0.5], false),   // between the solids
        ([0.5, -10.0, 0.5], false), // below the plane: planes enclose nothing
    ]
}

#[test]
fn inside_gives_the_hand_worked_answers_in_every_format() {
    let (dir, scene) = setup();
    let cases = inside_cases();
    let pts: Vec<[f32; 3]> = cases.iter().map(|c| c.0).collect();
    let want: Vec<u8> = cases.iter().map(|c| u8::from(c.1)).collect();
    let want_csv: String =
        std::iter::once("inside".to_string()).chain(want.iter().map(u8::to_string)).map(|l| l + "\n").collect();
    for ext in ["csv", "bin", "npy"] {
        let input = dir.path().join(format!("pts.{ext}"));
        write_points(&input, &pts);
        let out = dir.path().join(format!("inside.{ext}"));
        ok(&lanecast(&["inside", s(&scene), "--points", s(&input), "--out", s(&out)]));
        let bytes = std::fs::read(&out).unwrap();
        match ext {
            "csv" => assert_eq!(String::from_utf8(bytes).unwrap(), want_csv),
            "bin" => assert_eq!(bytes, want),
            _ => {
                let (header, data) = read_npy(&bytes);
                assert!(header.contains("'descr': '|b1'") && header.contains("'shape': (13,)"), "{header}");
                assert_eq!(data, want);
            }
        }
    }
    let input = dir.path().join("pts.csv");
    for backend in ["scalar", "x4", "x8", "x16"] {
        let o = lanecast(&["inside", s(&scene), "--points", s(&input), "--backend", backend, "--threads", "1"]);
        ok(&o);
        assert_eq!(stdout(&o), want_csv, "backend {backend}");
    }
    let o = lanecast_stdin(&["inside", s(&scene), "--points", "-"], "0.5,0.5,0.5\n# c\n2,2,2\n");
    ok(&o);
    assert_eq!(stdout(&o), "inside\n1\n0\n");
    // More than one 65,536-point chunk, in order.
    let many: Vec<[f32; 3]> = (0..70_001).map(|i| if i % 5 == 0 { [0.5, 0.5, 0.5] } else { [2.0, 0.5, 0.5] }).collect();
    let input = dir.path().join("many.bin");
    write_points(&input, &many);
    let out = dir.path().join("many_inside.bin");
    ok(&lanecast(&["inside", s(&scene), "--points", s(&input), "--out", s(&out)]));
    let want: Vec<u8> = (0..70_001).map(|i| u8::from(i % 5 == 0)).collect();
    assert_eq!(std::fs::read(&out).unwrap(), want);
}

#[test]
fn empty_inputs_give_empty_outputs() {
    let (dir, scene) = setup();
    let cases: [(&str, &[u8]); 3] = [("csv", b"ox,oy,oz,dx,dy,dz\n# none\n"), ("bin", b""), ("npy", b"")];
    for (ext, bytes) in cases {
        let rays = dir.path().join(format!("empty_rays.{ext}"));
        if ext == "npy" {
            std::fs::write(&rays, npy("<f4", "(0, 8)", &[])).unwrap();
        } else {
            std::fs::write(&rays, bytes).unwrap();
        }
        let points = dir.path().join(format!("empty_points.{ext}"));
        match ext {
            "csv" => std::fs::write(&points, "x,y,z\n").unwrap(),
            "bin" => std::fs::write(&points, b"").unwrap(),
            _ => std::fs::write(&points, npy("<f4", "(0, 3)", &[])).unwrap(),
        }
        for (cmd, flag, input, header) in [
            (&["cast", "--all"][..], "--rays", &rays, "ray,t,geom,prim,inst,u,v,nx,ny,nz\n"),
            (&["count"][..], "--rays", &rays, "count\n"),
            (&["inside"][..], "--points", &points, "inside\n"),
            (&["closest"][..], "--points", &points, "x,y,z,distance,geom,prim,u,v\n"),
            (&["closest", "--signed"][..], "--points", &points, "x,y,z,distance,geom,prim,u,v\n"),
        ] {
            let out = dir.path().join(format!("out_{}.{ext}", cmd.join("")));
            let mut args = cmd.to_vec();
            args.extend([s(&scene), flag, s(input), "--out", s(&out)]);
            ok(&lanecast(&args));
            let bytes = std::fs::read(&out).unwrap();
            match ext {
                "csv" => assert_eq!(String::from_utf8(bytes).unwrap(), header, "{cmd:?}"),
                "bin" => assert!(bytes.is_empty(), "{cmd:?}"),
                _ => {
                    let (h, data) = read_npy(&bytes);
                    assert!(h.contains("'shape': (0,)") && data.is_empty(), "{cmd:?}: {h}");
                }
            }
        }
    }
}

/// Runs `args` + `--out out` over a bad `input`; expects exit 2 naming `needles`, and no
/// output or temporary file.
fn refused(dir: &Path, args: &[&str], out: &Path, needles: &[&str]) {
    let before = dir_names(dir);
    let mut a = args.to_vec();
    a.extend(["--out", s(out)]);
    bad(&lanecast(&a), needles);
    assert!(!out.exists(), "a failed run left {}", out.display());
    assert_eq!(dir_names(dir), before, "a failed run left files behind");
}

/// `bytes` (an `.npy` file) with `'fortran_order': False` turned into `True ` in place.
fn fortran(mut bytes: Vec<u8>) -> Vec<u8> {
    let at = bytes.windows(5).position(|w| w == b"False").expect("a C-order header");
    bytes[at..at + 5].copy_from_slice(b"True ");
    bytes
}

/// Bad point files: each failure names the file and the line or record.
fn bad_point_files() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    let mut many_then_nan: Vec<f32> = vec![0.5; 3 * 70_000];
    many_then_nan[3 * 69_999 + 1] = f32::NAN; // in the second chunk
    vec![
        ("fields.csv", b"x,y,z\n1,2,3\n1,2\n".to_vec(), vec!["fields.csv:line 3:", "expected 3 fields"]),
        ("text.csv", b"1,2,3\n1,two,3\n".to_vec(), vec!["text.csv:line 2:", "column 2 (y)", "\"two\""]),
        ("nan.csv", b"x,y,z\n# c\n\n1,2,nan\n".to_vec(), vec!["nan.csv:line 4:", "column 3 (z)", "NaN"]),
        ("inf.csv", b"1,2,3\n-inf,0,0\n".to_vec(), vec!["inf.csv:line 2:", "column 1 (x)", "infinite"]),
        ("trunc.bin", vec![0u8; 2 * 12 + 7], vec!["trunc.bin:record 2", "7 bytes left over"]),
        ("late_nan.bin", f32_bytes(&many_then_nan), vec!["late_nan.bin:record 69999", "column 2 (y)", "NaN"]),
        ("dtype.npy", npy("<f8", "(1, 3)", &[0u8; 24]), vec!["dtype.npy:header:", "'<f8'"]),
        ("shape.npy", npy("<f4", "(2, 4)", &[0u8; 32]), vec!["shape.npy:header:", "(N, 3)", "(2, 4)"]),
        ("short.npy", npy("<f4", "(3, 3)", &[0u8; 24]), vec!["short.npy:record 2", "shorter"]),
    ]
}

#[test]
fn bad_point_files_exit_2_and_leave_no_output() {
    let (dir, scene) = setup();
    let outs = tempfile::tempdir().unwrap();
    let mut cases = bad_point_files();
    cases.push((
        "fortran.npy",
        fortran(npy("<f4", "(1, 3)", &[0u8; 12])),
        vec!["fortran.npy:header:", "fortran_order"],
    ));
    for (name, bytes, needles) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        for ext in ["csv", "bin", "npy"] {
            let out = outs.path().join(format!("inside.{ext}"));
            refused(outs.path(), &["inside", s(&scene), "--points", s(&p)], &out, &needles);
            refused(outs.path(), &["closest", s(&scene), "--points", s(&p)], &out, &needles);
            refused(outs.path(), &["closest", "--signed", s(&scene), "--points", s(&p)], &out, &needles);
        }
    }
    bad(&lanecast(&["inside", s(&scene), "--points", s(&dir.path().join("absent.csv"))]), &["absent.csv"]);
    bad(&lanecast(&["inside", s(&scene), "--points", s(&dir.path().join("pts.txt"))]), &["pts.txt", "extension"]);
    bad(&lanecast(&["inside", s(&scene), "--points", "-", "--format", "bin"]), &["csv only"]);
}

#[test]
fn bad_ray_files_for_count_and_cast_all_exit_2_and_leave_no_output() {
    let (dir, scene) = setup();
    let outs = tempfile::tempdir().unwrap();
    let mut late: Vec<u8> = (0..5000).flat_map(|_| f32_bytes(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])).collect();
    late.extend([0u8; 5]);
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("malformed.csv", b"0,1,0,1,0,0\n0,1,0,abc,0,0\n".to_vec(), vec!["malformed.csv:line 2:", "column 4"]),
        ("columns.csv", b"0,1,0,1,0,0\n0,1,0,1,0\n".to_vec(), vec!["columns.csv:line 2:", "got 5"]),
        ("late.bin", late, vec!["late.bin:record 5000", "5 bytes left over"]),
        ("shape.npy", npy("<f4", "(1, 3)", &[0u8; 12]), vec!["shape.npy:header:", "(1, 3)"]),
    ];
    for (name, bytes, needles) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        for ext in ["csv", "npy"] {
            let out = outs.path().join(format!("out.{ext}"));
            refused(outs.path(), &["count", s(&scene), "--rays", s(&p)], &out, &needles);
            refused(outs.path(), &["cast", "--all", s(&scene), "--rays", s(&p)], &out, &needles);
        }
    }
    // A csv file whose bad line comes after a whole --all chunk (4096 rays) of good ones.
    let mut text = String::new();
    for _ in 0..5000 {
        text.push_str("-1,0.5,0.25,1,0,0\n");
    }
    text.push_str("1,2,3\n");
    let p = dir.path().join("late.csv");
    std::fs::write(&p, text).unwrap();
    let out = outs.path().join("late_out.bin");
    refused(outs.path(), &["cast", "--all", s(&scene), "--rays", s(&p)], &out, &["late.csv:line 5001:", "got 3"]);
    refused(outs.path(), &["count", s(&scene), "--rays", s(&p)], &out, &["late.csv:line 5001:"]);
    // A bad scene is bad input too.
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "[[sphere]]\ncenter = [0, 0, 0]\nradius = -1\n").unwrap();
    let rays = dir.path().join("ok.csv");
    write_rays(&rays, &query_rays());
    for cmd in [&["count"][..], &["cast", "--all"][..]] {
        let mut a = cmd.to_vec();
        a.extend([s(&broken), "--rays", s(&rays)]);
        bad(&lanecast(&a), &["broken.toml:3:"]);
    }
}

/// Closest points worked out by hand: `(query, closest point, distance, geom, prim, u, v,
/// inside)`.
type Closest = ([f32; 3], [f64; 3], f64, u32, u32, f64, f64, bool);

fn closest_cases() -> Vec<Closest> {
    vec![
        // Above the box: its top face.
        ([0.5, 3.0, 0.5], [0.5, 1.0, 0.5], 2.0, 0, 0, 0.0, 0.0, false),
        // Beside the sphere: the surface point towards the query.
        ([5.0, 0.5, 3.0], [5.0, 0.5, 1.5], 1.5, 1, 0, 0.0, 0.0, false),
        // Inside the mesh cube, nearest to its z = 0 face: triangle 9 (v1, v3, v2), whose
        // points are (10 + u + v, u, 0): u = 0.3, v = 0.2.
        ([10.5, 0.3, 0.2], [10.5, 0.3, 0.0], 0.2, 2, 9, 0.3, 0.2, true),
        // Below the box: the plane y = -5 is nearer than the box.
        ([0.5, -6.0, 0.5], [0.5, -5.0, 0.5], 1.0, 3, 0, 0.0, 0.0, false),
        // Inside the box, nearest to its top face.
        ([0.5, 0.8, 0.4], [0.5, 1.0, 0.4], 0.2, 0, 0, 0.0, 0.0, true),
        // Inside the sphere, 0.4 from its centre: 0.6 from its surface.
        ([5.0, 0.5, 0.9], [5.0, 0.5, 1.5], 0.6, 1, 0, 0.0, 0.0, true),
        // Beside the mesh cube's x = 11 face: triangle 2 (v2, v3, v7), points (11, u + v, v).
        ([11.5, 0.5, 0.25], [11.0, 0.5, 0.25], 0.5, 2, 2, 0.25, 0.25, false),
    ]
}

/// Parsed closest records: `([x, y, z, distance, u, v], geom, prim)`.
type ClosestRow = ([f32; 6], u32, u32);

fn parse_closest_csv(text: &str) -> Vec<ClosestRow> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("x,y,z,distance,geom,prim,u,v"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 8, "{l}");
            let x = |i: usize| f[i].parse::<f32>().unwrap();
            let id = |i: usize| if f[i] == "-1" { u32::MAX } else { f[i].parse().unwrap() };
            ([x(0), x(1), x(2), x(3), x(6), x(7)], id(4), id(5))
        })
        .collect()
}

fn parse_closest_bin(b: &[u8]) -> Vec<ClosestRow> {
    assert_eq!(b.len() % 32, 0);
    b.chunks_exact(32)
        .map(|r| {
            (
                [le_f32(r, 0), le_f32(r, 1), le_f32(r, 2), le_f32(r, 3), le_f32(r, 6), le_f32(r, 7)],
                le_u32(r, 4),
                le_u32(r, 5),
            )
        })
        .collect()
}

fn check_closest(got: &[ClosestRow], signed: bool, what: &str) {
    let want = closest_cases();
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (f, geom, prim) = *g;
        let d = if signed && w.7 { -w.2 } else { w.2 };
        assert_eq!((geom, prim), (w.3, w.4), "{what}: point {i}: {g:?}");
        let ok = (0..3).all(|k| close(f[k], w.1[k])) && close(f[3], d) && close(f[4], w.5) && close(f[5], w.6);
        assert!(ok, "{what}: point {i}: got {g:?}, want {w:?} (distance {d})");
    }
}

#[test]
fn closest_gives_the_hand_worked_points_in_every_format() {
    let (dir, scene) = setup();
    let pts: Vec<[f32; 3]> = closest_cases().iter().map(|c| c.0).collect();
    for signed in [false, true] {
        let flag: &[&str] = if signed { &["--signed"] } else { &[] };
        let mut bin_bytes = None;
        for ext in ["csv", "bin", "npy"] {
            let input = dir.path().join(format!("pts.{ext}"));
            write_points(&input, &pts);
            let out = dir.path().join(format!("closest{}.{ext}", flag.join("")));
            let mut args = vec!["closest", s(&scene), "--points", s(&input), "--out", s(&out)];
            args.extend(flag);
            ok(&lanecast(&args));
            let bytes = std::fs::read(&out).unwrap();
            let what = format!("{ext} signed={signed}");
            match ext {
                "csv" => check_closest(&parse_closest_csv(&String::from_utf8(bytes).unwrap()), signed, &what),
                "bin" => {
                    check_closest(&parse_closest_bin(&bytes), signed, &what);
                    bin_bytes = Some(bytes);
                }
                _ => {
                    let (header, data) = read_npy(&bytes);
                    assert!(
                        header.contains(
                            "'descr': [('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('distance', '<f4'), \
                             ('geom', '<u4'), ('prim', '<u4'), ('u', '<f4'), ('v', '<f4')]"
                        ) && header.contains("'shape': (7,)"),
                        "{header}"
                    );
                    assert_eq!(Some(data), bin_bytes, "npy records equal the bin records");
                }
            }
        }
        let input = dir.path().join("pts.csv");
        let text = std::fs::read_to_string(dir.path().join(format!("closest{}.csv", flag.join("")))).unwrap();
        for backend in ["scalar", "x4", "x8", "x16"] {
            let mut args = vec!["closest", s(&scene), "--points", s(&input), "--backend", backend, "--threads", "1"];
            args.extend(flag);
            let o = lanecast(&args);
            ok(&o);
            assert_eq!(stdout(&o), text, "backend {backend} signed={signed}");
        }
    }
    // An empty scene has no closest point: a miss record.
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "# nothing\n").unwrap();
    let o = lanecast_stdin(&["closest", s(&empty), "--points", "-", "--signed"], "1,2,3\n");
    ok(&o);
    assert_eq!(stdout(&o), "x,y,z,distance,geom,prim,u,v\ninf,inf,inf,inf,-1,-1,0,0\n");
}
