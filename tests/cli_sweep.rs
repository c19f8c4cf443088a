//! The real `lanecast` binary on `sweep`: contacts in every format checked against values
//! worked out by hand (a box, a sphere, a closed mesh cube and a floor plane), every backend
//! giving the same file, an empty input, and bad inputs (exit code 2, a message naming the
//! file, the line or record and the column, no output file left behind).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lanecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanecast")).args(args).output().expect("run lanecast")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "lanecast failed ({:?}):\n{}", o.status.code(), String::from_utf8_lossy(&o.stderr));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Geometry 0: the box [0,1]³. Geometry 1: the sphere of radius 1 about (5, 0.5, 0.5).
/// Geometry 2: a closed mesh cube [10,11]×[0,1]² (12 outward triangles). Geometry 3: the
/// plane y = -5.
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

/// Triangle order: 0-1 face x=10, 2-3 face x=11, 4-5 face y=0, 6-7 face y=1, 8-9 face z=0,
/// 10-11 face z=1.
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

/// `(sweep [cx,cy,cz,r,mx,my,mz], toi, geom, prim, point, normal)`; ids `u32::MAX` for a miss.
type Case = ([f32; 7], f32, u32, u32, [f32; 3], [f32; 3]);

const MISS: u32 = u32::MAX;

fn cases() -> Vec<Case> {
    vec![
        // Radius 0.5 from x = -3 towards the box along +x by 6: the centre reaches x = -0.5
        // after 2.5 of 6.
        ([-3.0, 0.5, 0.5, 0.5, 6.0, 0.0, 0.0], 2.5 / 6.0, 0, 0, [0.0, 0.5, 0.5], [-1.0, 0.0, 0.0]),
        // Radius 0.5 from (5, 4.5, 0.5) down by 4 onto the sphere (top at y = 1.5): the
        // centre reaches y = 2 after 2.5 of 4.
        ([5.0, 4.5, 0.5, 0.5, 0.0, -4.0, 0.0], 2.5 / 4.0, 1, 0, [5.0, 1.5, 0.5], [0.0, 1.0, 0.0]),
        // Radius 0.25 towards the mesh cube's x = 11 face along -x by 2 from x = 12.5: the
        // centre reaches x = 11.25 after 1.25 of 2; the point (11, 0.5, 0.25) lies in
        // triangle 2 (v2, v3, v7).
        ([12.5, 0.5, 0.25, 0.25, -2.0, 0.0, 0.0], 1.25 / 2.0, 2, 2, [11.0, 0.5, 0.25], [1.0, 0.0, 0.0]),
        // Radius 1 falling from y = -1 by 10 onto the plane y = -5: reaches y = -4 after 3.
        ([20.0, -1.0, 0.0, 1.0, 0.0, -10.0, 0.0], 0.3, 3, 0, [20.0, -5.0, 0.0], [0.0, 1.0, 0.0]),
        // Moving away from everything: no contact.
        ([20.0, 0.0, 0.0, 1.0, 5.0, 0.0, 0.0], f32::INFINITY, MISS, MISS, [f32::INFINITY; 3], [0.0; 3]),
        // Starting inside the box: contact at 0 on its nearest face (z = 1).
        ([0.5, 0.5, 0.9, 0.05, 1.0, 0.0, 0.0], 0.0, 0, 0, [0.5, 0.5, 1.0], [0.0, 0.0, 1.0]),
        // Zero motion, touching the sphere's side: contact at 0.
        ([7.0, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0], 0.0, 1, 0, [6.0, 0.5, 0.5], [1.0, 0.0, 0.0]),
    ]
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

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

fn write_sweeps(path: &Path, rows: &[[f32; 7]]) {
    let bytes = match path.extension().unwrap().to_str().unwrap() {
        "csv" => {
            let mut t = String::from("cx,cy,cz,r,mx,my,mz\n");
            for r in rows {
                let line: Vec<String> = r.iter().map(|x| x.to_string()).collect();
                t.push_str(&line.join(","));
                t.push('\n');
            }
            t.into_bytes()
        }
        "bin" => rows.iter().flat_map(|r| f32_bytes(r)).collect(),
        "npy" => {
            npy("<f4", &format!("({}, 7)", rows.len()), &rows.iter().flat_map(|r| f32_bytes(r)).collect::<Vec<_>>())
        }
        e => panic!("extension {e}"),
    };
    std::fs::write(path, bytes).unwrap();
}

/// `(toi, geom, prim, inst, point, normal)` of each record.
type Row = (f32, u32, u32, u32, [f32; 3], [f32; 3]);

fn parse_csv(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("toi,geom,prim,inst,px,py,pz,nx,ny,nz"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 10, "{l}");
            let x = |i: usize| f[i].parse::<f32>().unwrap();
            let id = |i: usize| if f[i] == "-1" { u32::MAX } else { f[i].parse().unwrap() };
            (x(0), id(1), id(2), id(3), [x(4), x(5), x(6)], [x(7), x(8), x(9)])
        })
        .collect()
}

fn parse_bin(b: &[u8]) -> Vec<Row> {
    assert_eq!(b.len() % 40, 0);
    let f = |r: &[u8], i: usize| f32::from_le_bytes(r[4 * i..4 * i + 4].try_into().unwrap());
    let u = |r: &[u8], i: usize| u32::from_le_bytes(r[4 * i..4 * i + 4].try_into().unwrap());
    b.chunks_exact(40)
        .map(|r| (f(r, 0), u(r, 1), u(r, 2), u(r, 3), [f(r, 4), f(r, 5), f(r, 6)], [f(r, 7), f(r, 8), f(r, 9)]))
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    a == b || (a - b).abs() <= 1e-5 * (1.0 + b.abs())
}

fn check(got: &[Row], what: &str) {
    let want = cases();
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!((g.1, g.2, g.3), (w.2, w.3, MISS), "{what}: sweep {i}: {g:?}");
        let ok = close(g.0, w.1) && (0..3).all(|k| close(g.4[k], w.4[k]) && close(g.5[k], w.5[k]));
        assert!(ok, "{what}: sweep {i}: got {g:?}, want {w:?}");
    }
}

#[test]
fn sweep_gives_the_hand_worked_contacts_in_every_format_and_backend() {
    let (dir, scene) = setup();
    let rows: Vec<[f32; 7]> = cases().iter().map(|c| c.0).collect();
    let mut bin_bytes = None;
    for ext in ["csv", "bin", "npy"] {
        let input = dir.path().join(format!("sweeps.{ext}"));
        write_sweeps(&input, &rows);
        let out = dir.path().join(format!("contacts.{ext}"));
        ok(&lanecast(&["sweep", s(&scene), "--spheres", s(&input), "--out", s(&out)]));
        let bytes = std::fs::read(&out).unwrap();
        match ext {
            "csv" => check(&parse_csv(&String::from_utf8(bytes).unwrap()), ext),
            "bin" => {
                check(&parse_bin(&bytes), ext);
                bin_bytes = Some(bytes);
            }
            _ => {
                let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
                let header = String::from_utf8(bytes[10..10 + hlen].to_vec()).unwrap();
                assert!(
                    header.contains(
                        "'descr': [('toi', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), ('px', '<f4'), \
                         ('py', '<f4'), ('pz', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]"
                    ) && header.contains("'shape': (7,)"),
                    "{header}"
                );
                assert_eq!(Some(bytes[10 + hlen..].to_vec()), bin_bytes, "npy records equal the bin records");
            }
        }
    }
    let input = dir.path().join("sweeps.csv");
    let text = std::fs::read_to_string(dir.path().join("contacts.csv")).unwrap();
    // The miss row as documented.
    assert_eq!(text.lines().nth(5), Some("inf,-1,-1,-1,inf,inf,inf,0,0,0"));
    for backend in ["scalar", "x4", "x8", "x16"] {
        let o = lanecast(&["sweep", s(&scene), "--spheres", s(&input), "--backend", backend, "--threads", "1"]);
        ok(&o);
        check(&parse_csv(&String::from_utf8_lossy(&o.stdout)), backend);
    }
    // An empty input gives a header and nothing else.
    let empty = dir.path().join("none.csv");
    std::fs::write(&empty, "cx,cy,cz,r,mx,my,mz\n").unwrap();
    let o = lanecast(&["sweep", s(&scene), "--spheres", s(&empty)]);
    ok(&o);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "toi,geom,prim,inst,px,py,pz,nx,ny,nz\n");
}

#[test]
fn bad_sweep_files_exit_2_and_leave_no_output() {
    let (dir, scene) = setup();
    let good = [0.0f32, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    let mut neg = good;
    neg[3] = -1.0;
    let mut nan = good;
    nan[5] = f32::NAN;
    let files: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "short.csv",
            b"0,0,0,1,1,0\n".to_vec(),
            vec!["short.csv:line 1:", "expected 7 fields (cx,cy,cz,r,mx,my,mz), got 6"],
        ),
        ("word.csv", b"0,0,0,1,1,0,0\n0,0,0,big,1,0,0\n".to_vec(), vec!["word.csv:line 2:", "column 4 (r)", "\"big\""]),
        ("neg.csv", b"0,0,0,-1,1,0,0\n".to_vec(), vec!["neg.csv:line 1:", "column 4 (r): radius is negative"]),
        ("nan.csv", b"0,0,0,1,1,nan,0\n".to_vec(), vec!["nan.csv:line 1:", "column 6 (my): value is NaN"]),
        ("neg.bin", f32_bytes(&[good, neg].concat()), vec!["neg.bin:record 1", "column 4 (r)"]),
        ("nan.npy", npy("<f4", "(2, 7)", &f32_bytes(&[good, nan].concat())), vec!["nan.npy:record 1", "column 6 (my)"]),
        ("odd.bin", f32_bytes(&[0.0; 10]), vec!["odd.bin", "40 bytes"]),
        (
            "wide.npy",
            npy("<f4", "(1, 8)", &f32_bytes(&[0.0; 8])),
            vec!["wide.npy:header", "shape must be (N, 7) for sphere sweeps"],
        ),
    ];
    for (name, bytes, needles) in files {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let out = dir.path().join("out.csv");
        let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        let o = lanecast(&["sweep", s(&scene), "--spheres", s(&input), "--out", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr);
        for n in needles {
            assert!(err.contains(n), "{name}: {err:?} does not mention {n:?}");
        }
        let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(before.len(), after.len(), "{name}: a failed run left a file behind: {after:?}");
    }
}
