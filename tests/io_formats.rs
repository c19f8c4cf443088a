//! Ray, segment, hit and visibility files (`lanecast::io`): round trips in every format,
//! chunked reading, strict errors naming file and place, atomic output, and a cross-check
//! against numpy itself (ignored by a plain `cargo test`; `.ci/test` runs it with numpy).

use glam::Vec3;
use lanecast::io::{
    Format, HitWriter, InputKind, IoError, RayReader, VisWriter, read_hits, read_visibility, write_f32_records,
    write_rays, write_segments,
};
use lanecast::{Hit, HitSoa, Mask, Ray, RaySoa};
use std::path::Path;
use tempfile::TempDir;

const FORMATS: [Format; 3] = [Format::Csv, Format::Bin, Format::Npy];

fn path(dir: &TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

/// Every ray of the file, read in chunks of `chunk`.
fn read_all(path: &str, format: Format, kind: InputKind, chunk: usize) -> Result<Vec<Ray>, IoError> {
    let mut r = RayReader::open(path, format, kind)?;
    let mut out = Vec::new();
    while let Some(soa) = r.next_chunk(chunk)? {
        assert!(!soa.is_empty() && soa.len() <= chunk.max(1));
        out.extend((0..soa.len()).map(|i| soa.ray(i)));
    }
    assert_eq!(r.position(), out.len() as u64);
    Ok(out)
}

/// Bitwise equality, except that any NaN equals any NaN.
fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn ray_vals(r: &Ray) -> [f32; 8] {
    [r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max]
}

fn assert_same_rays(got: &[Ray], want: &[Ray], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (ray_vals(g), ray_vals(w));
        assert!(g.iter().zip(&w).all(|(a, b)| same(*a, *b)), "{what}: ray {i}: got {g:?}, want {w:?}");
    }
}

fn assert_same_hits(got: &HitSoa, want: &HitSoa, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: count");
    for i in 0..want.len() {
        let (g, w) = (got.get(i), want.get(i));
        let gv = [g.t, g.u, g.v, g.normal.x, g.normal.y, g.normal.z];
        let wv = [w.t, w.u, w.v, w.normal.x, w.normal.y, w.normal.z];
        assert!(
            g.geom == w.geom && g.prim == w.prim && gv.iter().zip(&wv).all(|(a, b)| same(*a, *b)),
            "{what}: hit {i}: got {g:?}, want {w:?}"
        );
    }
}

/// Awkward but legal values: signed zeros, extremes, subnormals, NaN and infinities.
fn odd_values() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.1,
        1e-7,
        -3.3e-9,
        f32::MIN_POSITIVE,
        1e-45,
        f32::MAX,
        f32::MIN,
        16_777_217.0,
        123_456.79,
        std::f32::consts::PI,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        2.5e20,
    ]
}

fn test_rays() -> Vec<Ray> {
    let v = odd_values();
    let mut rays: Vec<Ray> = (0..40)
        .map(|i| {
            let f = |k: usize| v[(i * 7 + k * 3) % v.len()];
            Ray::with_interval(Vec3::new(f(0), f(1), f(2)), Vec3::new(f(3), f(4), f(5)), f(6), f(7))
        })
        .collect();
    rays.push(Ray::new(Vec3::new(0.0, 1.0, -5.0), Vec3::Z));
    rays.push(Ray::with_interval(Vec3::ZERO, Vec3::X, 0.25, 0.75));
    rays
}

fn test_segments() -> Vec<(Vec3, Vec3)> {
    let v = odd_values();
    let mut segs: Vec<(Vec3, Vec3)> = (0..30)
        .map(|i| {
            let f = |k: usize| v[(i * 5 + k * 7) % v.len()];
            (Vec3::new(f(0), f(1), f(2)), Vec3::new(f(3), f(4), f(5)))
        })
        .collect();
    segs.push((Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.5, 9.0)));
    segs
}

fn test_hits(n: usize) -> HitSoa {
    let mut hits = HitSoa::with_len(n);
    let v = odd_values();
    for i in 0..n {
        if i % 4 == 0 {
            continue; // miss
        }
        let f = |k: usize| v[(i * 3 + k) % v.len()];
        hits.set(
            i,
            &Hit {
                t: (i as f32) * 0.37 + 1e-3,
                geom: (i % 5) as u32,
                prim: if i % 7 == 0 { u32::MAX - 1 } else { (i * 13) as u32 },
                u: f(0),
                v: f(1),
                normal: Vec3::new(f(2), -f(3), f(4)),
                kind: lanecast::HitKind::None, // files do not store the kind
                inst: if i % 3 == 0 { u32::MAX } else { (i * 5) as u32 },
            },
        );
    }
    hits
}

/// A sub-range of `hits` as its own HitSoa.
fn hit_slice(hits: &HitSoa, from: usize, to: usize) -> HitSoa {
    let mut out = HitSoa::with_len(to - from);
    for i in from..to {
        out.set(i - from, &hits.get(i));
    }
    out
}

#[test]
fn rays_round_trip_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let rays = test_rays();
    for format in FORMATS {
        let p = path(&dir, &format!("rays.{format}"));
        write_rays(&p, format, &rays).unwrap();
        let r = RayReader::open(&p, format, InputKind::Rays).unwrap();
        let want_total = (format != Format::Csv).then_some(rays.len() as u64);
        assert_eq!(r.total(), want_total, "{format}");
        for chunk in [1, 7, 1000] {
            let got = read_all(&p, format, InputKind::Rays, chunk).unwrap();
            assert_same_rays(&got, &rays, &format!("{format} chunk {chunk}"));
        }
    }
    // The special values really survive as themselves.
    let p = path(&dir, "rays.csv");
    let got = read_all(&p, Format::Csv, InputKind::Rays, 100).unwrap();
    let flat: Vec<f32> = got.iter().flat_map(ray_vals).collect();
    assert!(flat.iter().any(|x| x.is_nan()));
    assert!(flat.contains(&f32::INFINITY) && flat.contains(&f32::NEG_INFINITY));
    assert!(flat.iter().any(|x| x.to_bits() == (-0.0f32).to_bits()));
    assert!(flat.contains(&1e-45));
}

#[test]
fn six_column_rays_get_the_default_interval() {
    let dir = tempfile::tempdir().unwrap();
    let vals: Vec<f32> = (0..60).map(|i| i as f32 * 0.5 - 3.0).collect();
    let want: Vec<Ray> =
        vals.chunks_exact(6).map(|c| Ray::new(Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5]))).collect();
    for format in [Format::Csv, Format::Npy] {
        let p = path(&dir, &format!("rays6.{format}"));
        write_f32_records(&p, format, 6, &vals, Some("ox,oy,oz,dx,dy,dz")).unwrap();
        let got = read_all(&p, format, InputKind::Rays, 3).unwrap();
        assert_same_rays(&got, &want, &format.to_string());
        assert!(got.iter().all(|r| r.t_min == 0.0 && r.t_max == f32::INFINITY));
    }
}

#[test]
fn segments_round_trip_as_unit_interval_rays() {
    let dir = tempfile::tempdir().unwrap();
    let segs = test_segments();
    let want: Vec<Ray> = segs.iter().map(|&(a, b)| Ray::segment(a, b)).collect();
    for format in FORMATS {
        let p = path(&dir, &format!("segs.{format}"));
        write_segments(&p, format, &segs).unwrap();
        for chunk in [1, 4, 64] {
            let got = read_all(&p, format, InputKind::Segments, chunk).unwrap();
            assert_same_rays(&got, &want, &format!("{format} chunk {chunk}"));
            assert!(got.iter().all(|r| r.t_min == 0.0 && r.t_max == 1.0));
        }
    }
}

#[test]
fn hits_round_trip_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let hits = test_hits(103);
    for format in FORMATS {
        let p = path(&dir, &format!("hits.{format}"));
        let mut w = HitWriter::create(&p, format).unwrap();
        // Several chunks, one of them empty.
        for (a, b) in [(0, 10), (10, 10), (10, 64), (64, 103)] {
            w.write(&hit_slice(&hits, a, b)).unwrap();
        }
        assert_eq!(w.count(), 103);
        w.finish().unwrap();
        let got = read_hits(&p, format).unwrap();
        assert_same_hits(&got, &hits, &format.to_string());
        assert!(!got.get(0).is_hit() && got.get(0).t == f32::INFINITY);
    }

    let text = std::fs::read_to_string(path(&dir, "hits.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("t,geom,prim,inst,u,v,nx,ny,nz"));
    assert_eq!(lines.next(), Some("inf,-1,-1,-1,0,0,0,0,0"));

    let bin = std::fs::read(path(&dir, "hits.bin")).unwrap();
    assert_eq!(bin.len(), 103 * 36);
    assert_eq!(&bin[..4], &f32::INFINITY.to_le_bytes());
    assert_eq!(&bin[4..16], &[0xFF; 12]);
    assert_eq!(&bin[16..36], &[0; 20]);
    let h1 = hits.get(1);
    assert_eq!(&bin[36..40], &h1.t.to_le_bytes());
    assert_eq!(&bin[40..44], &h1.geom.to_le_bytes());
    assert_eq!(&bin[44..48], &h1.prim.to_le_bytes());
    assert_eq!(&bin[48..52], &h1.inst.to_le_bytes());
}

#[test]
fn hit_npy_header_is_aligned_and_carries_the_final_shape() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "hits.npy");
    let hits = test_hits(12_345);
    let mut w = HitWriter::create(&p, Format::Npy).unwrap();
    for a in (0..hits.len()).step_by(1000) {
        w.write(&hit_slice(&hits, a, (a + 1000).min(hits.len()))).unwrap();
    }
    w.finish().unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0, "data must start at a multiple of 64");
    assert_eq!(bytes[10 + hlen - 1], b'\n');
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.contains("'shape': (12345,)"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    assert!(
        header.contains(
            "'descr': [('t', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), ('u', '<f4'), \
             ('v', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]"
        ),
        "{header}"
    );
    assert_eq!(bytes.len(), 10 + hlen + 12_345 * 36);
    // Read back through our own header parser.
    assert_same_hits(&read_hits(&p, Format::Npy).unwrap(), &hits, "npy");

    // An empty result is a valid (0,) array.
    let p0 = path(&dir, "empty.npy");
    HitWriter::create(&p0, Format::Npy).unwrap().finish().unwrap();
    assert_eq!(read_hits(&p0, Format::Npy).unwrap().len(), 0);
    let v0 = path(&dir, "empty_vis.npy");
    VisWriter::create(&v0, Format::Npy).unwrap().finish().unwrap();
    assert!(read_visibility(&v0, Format::Npy).unwrap().is_empty());
}

#[test]
fn visibility_round_trips_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let vis: Vec<bool> = (0..70_001).map(|i| (i * 7919) % 3 != 0).collect();
    for format in FORMATS {
        let p = path(&dir, &format!("vis.{format}"));
        let mut w = VisWriter::create(&p, format).unwrap();
        for c in vis.chunks(9_999) {
            w.write(c).unwrap();
        }
        w.write(&[]).unwrap();
        assert_eq!(w.count(), vis.len() as u64);
        w.finish().unwrap();
        assert_eq!(read_visibility(&p, format).unwrap(), vis, "{format}");
    }
    let text = std::fs::read_to_string(path(&dir, "vis.csv")).unwrap();
    assert!(text.starts_with("visible\n0\n1\n1\n0\n"), "{}", &text[..20]);
    let bin = std::fs::read(path(&dir, "vis.bin")).unwrap();
    assert_eq!(bin.len(), vis.len());
    assert_eq!(&bin[..4], &[0, 1, 1, 0]);
    let npy = std::fs::read(path(&dir, "vis.npy")).unwrap();
    let header = String::from_utf8_lossy(&npy[..128]);
    assert!(header.contains("'descr': '|b1'") && header.contains("'shape': (70001,)"));
}

#[test]
fn chunks_are_bounded_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    const N: usize = 10_001;
    let rays: Vec<Ray> =
        (0..N).map(|i| Ray::with_interval(Vec3::new(i as f32, 0.0, 0.0), Vec3::Y, 0.0, i as f32)).collect();
    for format in FORMATS {
        let p = path(&dir, &format!("big.{format}"));
        write_rays(&p, format, &rays).unwrap();
        let mut r = RayReader::open(&p, format, InputKind::Rays).unwrap();
        let mut sizes = Vec::new();
        let mut next = 0usize;
        while let Some(chunk) = r.next_chunk(1000).unwrap() {
            sizes.push(chunk.len());
            for i in 0..chunk.len() {
                assert_eq!(chunk.ray(i).origin.x, next as f32, "{format}");
                assert_eq!(chunk.ray(i).t_max, next as f32, "{format}");
                next += 1;
            }
        }
        assert_eq!(next, N);
        let mut want = vec![1000; 10];
        want.push(1);
        assert_eq!(sizes, want, "{format}");
        assert!(r.next_chunk(1000).unwrap().is_none(), "stays at the end");
    }
}

#[test]
fn csv_input_rules() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "rules.csv");
    std::fs::write(
        &p,
        "\u{feff}# a comment before the header\n\
         \n\
         ox, oy, oz, dx, dy, dz, tmin, tmax\r\n\
         1, 2, 3, 0, 0, -1\r\n\
         \t# indented comment\n\
         \n\
         4,5,6, 1,0,0 , 0.5 , 2\n\
         inf,-inf,NaN,nan,Infinity,-0,1e-3,INF\n\
         1e2,+2,.5,5.,0,1",
    )
    .unwrap();
    let got = read_all(&p, Format::Csv, InputKind::Rays, 2).unwrap();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0], Ray::new(Vec3::new(1.0, 2.0, 3.0), -Vec3::Z));
    assert_eq!(got[1], Ray::with_interval(Vec3::new(4.0, 5.0, 6.0), Vec3::X, 0.5, 2.0));
    let v = ray_vals(&got[2]);
    assert_eq!(v[0], f32::INFINITY);
    assert_eq!(v[1], f32::NEG_INFINITY);
    assert!(v[2].is_nan() && v[3].is_nan());
    assert_eq!(v[4], f32::INFINITY);
    assert_eq!(v[5].to_bits(), (-0.0f32).to_bits());
    assert_eq!((v[6], v[7]), (1e-3, f32::INFINITY));
    assert!(!got[2].is_valid(), "NaN rays are read, and are invalid (misses)");
    assert_eq!(got[3], Ray::new(Vec3::new(100.0, 2.0, 0.5), Vec3::new(5.0, 0.0, 1.0)));

    // No header at all; a file of comments only is empty, not an error.
    let p2 = path(&dir, "noheader.csv");
    std::fs::write(&p2, "0,0,0,1,1,1\n").unwrap();
    assert_eq!(read_all(&p2, Format::Csv, InputKind::Segments, 5).unwrap().len(), 1);
    let p3 = path(&dir, "empty.csv");
    std::fs::write(&p3, "# nothing\n\n").unwrap();
    assert!(read_all(&p3, Format::Csv, InputKind::Rays, 5).unwrap().is_empty());
    let p4 = path(&dir, "zero.bin");
    std::fs::write(&p4, b"").unwrap();
    assert!(read_all(&p4, Format::Bin, InputKind::Rays, 5).unwrap().is_empty());
}

#[test]
fn formats_come_from_extensions_or_names() {
    assert_eq!(Format::from_path(Path::new("x/rays.npy")), Some(Format::Npy));
    assert_eq!(Format::from_path(Path::new("rays.BIN")), Some(Format::Bin));
    assert_eq!(Format::from_path(Path::new("rays.csv")), Some(Format::Csv));
    assert_eq!(Format::from_path(Path::new("rays.txt")), None);
    assert_eq!(Format::from_path(Path::new("-")), None);
    assert_eq!("npy".parse::<Format>(), Ok(Format::Npy));
    assert!("parquet".parse::<Format>().is_err());
    assert_eq!(Format::resolve("-", None).unwrap(), Format::Csv);
    assert_eq!(Format::resolve("a.bin", None).unwrap(), Format::Bin);
    assert_eq!(Format::resolve("a.dat", Some(Format::Bin)).unwrap(), Format::Bin);
    let e = Format::resolve("a.dat", None).unwrap_err();
    assert!(e.to_string().starts_with("a.dat: "), "{e}");
}

/// The error of reading `path` completely; checks it names the file and `place`.
fn read_err(path: &str, format: Format, kind: InputKind, place: &str) -> String {
    let e = read_all(path, format, kind, 1000).expect_err("bad input must be an error");
    let text = e.to_string();
    let file = Path::new(path).file_name().unwrap().to_str().unwrap();
    assert!(text.contains(file), "error does not name the file: {text}");
    assert!(text.contains(place), "error does not name the place {place:?}: {text}");
    assert_eq!(e.path, path);
    text
}

#[test]
fn bad_csv_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = path(&dir, name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let rays = InputKind::Rays;
    let segs = InputKind::Segments;

    let p = write("count.csv", "ox,oy,oz,dx,dy,dz\n0,0,0,1,0,0\n# c\n1,2,3,4,5\n");
    let e = read_err(&p, Format::Csv, rays, ":line 4:");
    assert!(e.contains("expected 6 or 8") && e.contains("got 5"), "{e}");

    let p = write("seven.csv", "0,0,0,1,0,0,0\n");
    let e = read_err(&p, Format::Csv, rays, ":line 1:");
    assert!(e.contains("got 7"), "{e}");

    let p = write("seg8.csv", "0,0,0,1,1,1\n0,0,0,1,1,1,0,1\n");
    let e = read_err(&p, Format::Csv, segs, ":line 2:");
    assert!(e.contains("expected 6") && e.contains("got 8"), "{e}");

    let p = write("text.csv", "1,2,3,4,5,6\n1,2,abc,4,5,6\n");
    let e = read_err(&p, Format::Csv, rays, ":line 2:");
    assert!(e.contains("column 3") && e.contains("oz") && e.contains("\"abc\""), "{e}");

    let p = write("segtext.csv", "ax,ay,az,bx,by,bz\n1,2,3,4,5,1.2.3\n");
    let e = read_err(&p, Format::Csv, segs, ":line 2:");
    assert!(e.contains("column 6") && e.contains("bz") && e.contains("1.2.3"), "{e}");

    let p = write("empty_field.csv", "1,2,3,,5,6\n");
    let e = read_err(&p, Format::Csv, rays, ":line 1:");
    assert!(e.contains("column 4") && e.contains("\"\""), "{e}");

    // Only the first content line may be a header.
    let p = write("late_header.csv", "1,2,3,4,5,6\nox,oy,oz,dx,dy,dz\n");
    let e = read_err(&p, Format::Csv, rays, ":line 2:");
    assert!(e.contains("column 1") && e.contains("\"ox\""), "{e}");

    // A garbled first line that starts like a number is not taken for a header.
    let p = write("semicolon.csv", "1;2;3;4;5;6\n");
    let e = read_err(&p, Format::Csv, rays, ":line 1:");
    assert!(e.contains("got 1"), "{e}");
    let p = write("typo.csv", "# rays\n1.0x,2,3,4,5,6\n");
    let e = read_err(&p, Format::Csv, rays, ":line 2:");
    assert!(e.contains("column 1") && e.contains("1.0x"), "{e}");

    let p = path(&dir, "binary.csv");
    std::fs::write(&p, b"1,2,3,4,5,6\n\xff\xfe\x00garbage\n").unwrap();
    let e = read_err(&p, Format::Csv, rays, ":line 2:");
    assert!(e.contains("UTF-8"), "{e}");
}

#[test]
fn bad_bin_is_an_error_naming_file_and_record() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "trunc.bin");
    std::fs::write(&p, vec![0u8; 3 * 32 + 5]).unwrap();
    let e = read_err(&p, Format::Bin, InputKind::Rays, ":record 3");
    assert!(e.contains("5 bytes left over"), "{e}");
    assert!(e.contains("byte offset 96"), "{e}");
    // Refused at open, before any record is handed out.
    assert!(RayReader::open(&p, Format::Bin, InputKind::Rays).is_err());

    let p = path(&dir, "segtrunc.bin");
    std::fs::write(&p, vec![0u8; 2 * 24 + 23]).unwrap();
    let e = read_err(&p, Format::Bin, InputKind::Segments, ":record 2");
    assert!(e.contains("23 bytes left over"), "{e}");

    let p = path(&dir, "tiny.bin");
    std::fs::write(&p, [1u8, 2, 3]).unwrap();
    let e = read_err(&p, Format::Bin, InputKind::Rays, ":record 0");
    assert!(e.contains("3 bytes left over"), "{e}");

    // Hit and visibility readers check values too.
    let p = path(&dir, "hits.bin");
    std::fs::write(&p, vec![0u8; 37]).unwrap();
    let e = read_hits(&p, Format::Bin).unwrap_err().to_string();
    assert!(e.contains("hits.bin:record 1") && e.contains("1 bytes left over"), "{e}");
    let p = path(&dir, "vis.bin");
    std::fs::write(&p, [1u8, 0, 7]).unwrap();
    let e = read_visibility(&p, Format::Bin).unwrap_err().to_string();
    assert!(e.contains("vis.bin:record 2") && e.contains("7"), "{e}");
}

/// A hand-made `.npy` file: version `ver`, header dict `dict`, then `data`.
fn npy_file(ver: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.as_bytes().to_vec();
    let pre = if ver == 1 { 10 } else { 12 };
    while !(pre + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[ver, 0]);
    if ver == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn foreign_npy_headers_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let vals: Vec<f32> = (0..16).map(|i| i as f32).collect();
    for (i, (ver, dict)) in [
        (1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 8), }"),
        (2, "{\"shape\": (2, 8), \"descr\": \"<f4\", \"fortran_order\": False}"),
        (3, "{'descr':'<f4','fortran_order':False,'shape':(2L,8L)}"),
    ]
    .into_iter()
    .enumerate()
    {
        let p = path(&dir, &format!("v{i}.npy"));
        std::fs::write(&p, npy_file(ver, dict, &f32_bytes(&vals))).unwrap();
        let got = read_all(&p, Format::Npy, InputKind::Rays, 10).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(ray_vals(&got[1]), [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
    }
}

#[test]
fn bad_npy_is_an_error_naming_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let rays = InputKind::Rays;
    let segs = InputKind::Segments;
    let data = f32_bytes(&[0.0; 24]);
    let dict = |descr: &str, fortran: &str, shape: &str| {
        format!("{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}")
    };
    let write = |name: &str, bytes: Vec<u8>| {
        let p = path(&dir, name);
        std::fs::write(&p, bytes).unwrap();
        p
    };

    let p = write("magic.npy", b"PK\x03\x04not numpy at all".to_vec());
    let e = read_err(&p, Format::Npy, rays, ":header:");
    assert!(e.contains("magic"), "{e}");
    let p = write("empty.npy", Vec::new());
    read_err(&p, Format::Npy, rays, ":header:");

    let mut bad_ver = npy_file(1, &dict("'<f4'", "False", "(3, 8)"), &data);
    bad_ver[6] = 4;
    let p = write("version.npy", bad_ver);
    let e = read_err(&p, Format::Npy, rays, ":header:");
    assert!(e.contains("version 4.0"), "{e}");

    for (name, descr) in
        [("f8.npy", "'<f8'"), ("big_endian.npy", "'>f4'"), ("int.npy", "'<i4'"), ("structured.npy", "[('x', '<f4')]")]
    {
        let p = write(name, npy_file(1, &dict(descr, "False", "(3, 8)"), &data));
        let e = read_err(&p, Format::Npy, rays, ":header:");
        assert!(e.contains("'<f4'") && e.contains(descr), "{e}");
    }

    let p = write("fortran.npy", npy_file(1, &dict("'<f4'", "True", "(3, 8)"), &data));
    let e = read_err(&p, Format::Npy, rays, ":header:");
    assert!(e.contains("fortran_order"), "{e}");

    for (name, shape, kind) in [
        ("shape7.npy", "(3, 7)", rays),
        ("shape1d.npy", "(24,)", rays),
        ("shape3d.npy", "(3, 1, 8)", rays),
        ("seg8.npy", "(3, 8)", segs),
        ("scalar.npy", "()", rays),
    ] {
        let p = write(name, npy_file(1, &dict("'<f4'", "False", shape), &data));
        let e = read_err(&p, Format::Npy, kind, ":header:");
        assert!(e.contains("shape") && e.contains(shape), "{e}");
    }

    for (name, text) in [
        ("nodict.npy", "[1, 2]"),
        ("missing_key.npy", "{'descr': '<f4', 'shape': (3, 8)}"),
        ("extra_key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 8), 'x': 1}"),
        ("garbled.npy", "{'descr': '<f4', 'fortran_order': Fals"),
    ] {
        let p = write(name, npy_file(1, text, &data));
        read_err(&p, Format::Npy, rays, ":header:");
    }

    // Header cut short by the end of the file.
    let full = npy_file(1, &dict("'<f4'", "False", "(3, 8)"), &data);
    let p = write("cut_header.npy", full[..40].to_vec());
    let e = read_err(&p, Format::Npy, rays, ":header:");
    assert!(e.contains("header"), "{e}");

    // Data shorter than the shape promises: 3 rows declared, 2.5 present.
    let p = write("short.npy", full[..full.len() - 16].to_vec());
    let e = read_err(&p, Format::Npy, rays, ":record 2");
    assert!(e.contains("shorter than the header promises"), "{e}");
    // Longer than promised.
    let mut long = full.clone();
    long.extend_from_slice(&[0; 4]);
    let p = write("long.npy", long);
    let e = read_err(&p, Format::Npy, rays, ":record 3");
    assert!(e.contains("4 bytes"), "{e}");

    // Hit and visibility files need their own dtypes.
    let p = write("hits_as_f4.npy", npy_file(1, &dict("'<f4'", "False", "(3,)"), &[0; 12]));
    let e = read_hits(&p, Format::Npy).unwrap_err().to_string();
    assert!(e.contains("hits_as_f4.npy:header:") && e.contains("dtype"), "{e}");
    let p = write("vis_2d.npy", npy_file(1, &dict("'|b1'", "False", "(3, 1)"), &[0; 3]));
    let e = read_visibility(&p, Format::Npy).unwrap_err().to_string();
    assert!(e.contains("vis_2d.npy:header:") && e.contains("shape"), "{e}");
}

#[test]
fn missing_files_directories_and_stdio_misuse_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "nope.csv");
    for format in FORMATS {
        let e = RayReader::open(&p, format, InputKind::Rays).err().unwrap();
        assert!(e.to_string().starts_with(&format!("{p}: ")), "{e}");
        assert!(e.message.contains("cannot open"), "{e}");
    }
    let d = dir.path().to_string_lossy().into_owned();
    let e = RayReader::open(&d, Format::Bin, InputKind::Rays).err().unwrap();
    assert!(e.to_string().contains("directory"), "{e}");
    let e = HitWriter::create(&d, Format::Csv).err().unwrap();
    assert!(e.to_string().contains("directory"), "{e}");
    let e = HitWriter::create(&path(&dir, "no/such/dir/hits.csv"), Format::Csv).err().unwrap();
    assert!(e.to_string().contains("hits.csv"), "{e}");

    for format in [Format::Bin, Format::Npy] {
        let e = RayReader::open("-", format, InputKind::Rays).err().unwrap();
        assert_eq!(e.path, "<stdin>");
        assert!(e.message.contains("csv only"), "{e}");
        let e = HitWriter::create("-", format).err().unwrap();
        assert_eq!(e.path, "<stdout>");
        assert!(e.message.contains("csv only"), "{e}");
        let e = VisWriter::create("-", format).err().unwrap();
        assert_eq!(e.path, "<stdout>");
    }
    // Csv on stdin opens (nothing is read until the first chunk is asked for).
    let r = RayReader::open("-", Format::Csv, InputKind::Rays).unwrap();
    assert_eq!((r.name(), r.total()), ("<stdin>", None));
}

/// Reads `bytes` through a named pipe (no size known up front). `mkfifo` is part of
/// coreutils on every Unix this is tested on: without it the test fails.
#[cfg(unix)]
fn read_through_pipe(
    dir: &TempDir,
    name: &str,
    bytes: Vec<u8>,
    format: Format,
    kind: InputKind,
) -> Result<Vec<Ray>, IoError> {
    let p = path(dir, name);
    let made = std::process::Command::new("mkfifo").arg(&p).status();
    match made {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("mkfifo {p} failed ({s}): the pipe check needs a named pipe"),
        Err(e) => panic!("cannot run mkfifo ({e}): the pipe check needs coreutils' mkfifo"),
    }
    let p2 = p.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(&p2).unwrap();
        let _ = f.write_all(&bytes); // the reader may stop early
    });
    let out = (|| {
        let mut r = RayReader::open(&p, format, kind)?;
        assert_eq!(r.total().is_some(), format == Format::Npy);
        let mut v = Vec::new();
        while let Some(c) = r.next_chunk(3)? {
            v.extend((0..c.len()).map(|i| c.ray(i)));
        }
        Ok(v)
    })();
    // The data is smaller than a pipe buffer, so the writer never blocks on a reader that
    // stopped early (its write just fails); and should the reader have failed before
    // opening the pipe, opening it read-write here (never blocks on Linux) lets the
    // writer's open complete.
    let unblock = std::fs::OpenOptions::new().read(true).write(true).open(&p);
    writer.join().unwrap();
    drop(unblock);
    out
}

#[cfg(unix)]
#[test]
fn streams_without_a_known_size_are_checked_while_reading() {
    let dir = tempfile::tempdir().unwrap();
    let rays = test_rays();
    let bin = path(&dir, "src.bin");
    write_rays(&bin, Format::Bin, &rays).unwrap();
    let bin = std::fs::read(&bin).unwrap();
    let got = read_through_pipe(&dir, "p1", bin.clone(), Format::Bin, InputKind::Rays);
    assert_same_rays(&got.unwrap(), &rays, "bin through a pipe");

    let mut cut = bin.clone();
    cut.truncate(5 * 32 + 9);
    let e = read_through_pipe(&dir, "p2", cut, Format::Bin, InputKind::Rays).unwrap_err().to_string();
    assert!(e.contains("p2:record 5") && e.contains("9 bytes left over"), "{e}");

    let npy = path(&dir, "src.npy");
    write_rays(&npy, Format::Npy, &rays).unwrap();
    let npy = std::fs::read(&npy).unwrap();
    let got = read_through_pipe(&dir, "p3", npy.clone(), Format::Npy, InputKind::Rays);
    assert_same_rays(&got.unwrap(), &rays, "npy through a pipe");

    let short = npy[..npy.len() - 40].to_vec();
    let e = read_through_pipe(&dir, "p4", short, Format::Npy, InputKind::Rays).unwrap_err().to_string();
    assert!(e.contains("p4:record 40") && e.contains("shorter"), "{e}");

    let mut long = npy.clone();
    long.extend_from_slice(b"junk");
    let e = read_through_pipe(&dir, "p5", long, Format::Npy, InputKind::Rays).unwrap_err().to_string();
    assert!(e.contains("p5:record 42") && e.contains("unexpected data"), "{e}");
}

/// Names in `dir`, sorted.
fn listing(dir: &TempDir) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn writers_are_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let hits = test_hits(5000);
    for format in FORMATS {
        let p = path(&dir, &format!("out.{format}"));
        {
            let mut w = HitWriter::create(&p, format).unwrap();
            w.write(&hits).unwrap();
            // Only a hidden temporary exists while writing.
            let names = listing(&dir);
            assert_eq!(names.len(), 1, "{names:?}");
            assert!(names[0].starts_with(&format!(".out.{format}.tmp-")), "{names:?}");
            // Dropped without finish(): as if the run failed.
        }
        assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
        {
            let mut w = VisWriter::create(&p, format).unwrap();
            w.write(&[true; 100]).unwrap();
        }
        assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));

        // A finished file replaces the old one only on finish.
        std::fs::write(&p, b"old").unwrap();
        let mut w = HitWriter::create(&p, format).unwrap();
        w.write(&hits).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        drop(w);
        assert_eq!(std::fs::read(&p).unwrap(), b"old", "a failed run keeps the old file");
        let mut w = HitWriter::create(&p, format).unwrap();
        w.write(&hits).unwrap();
        w.finish().unwrap();
        assert_same_hits(&read_hits(&p, format).unwrap(), &hits, &format.to_string());
        assert_eq!(listing(&dir), vec![format!("out.{format}")]);
        std::fs::remove_file(&p).unwrap();
    }
    // A relative path in the current directory works too.
    let name = format!("lanecast-io-test-{}.csv", std::process::id());
    let mut w = VisWriter::create(&name, Format::Csv).unwrap();
    w.write(&[true, false]).unwrap();
    w.finish().unwrap();
    assert_eq!(read_visibility(&name, Format::Csv).unwrap(), vec![true, false]);
    std::fs::remove_file(&name).unwrap();
}

#[test]
fn readers_and_writers_can_move_to_other_threads() {
    fn send<T: Send>() {}
    send::<RayReader>();
    send::<HitWriter>();
    send::<VisWriter>();
    send::<IoError>();
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "huge_chunk.bin");
    write_rays(&p, Format::Bin, &test_rays()).unwrap();
    let got = read_all(&p, Format::Bin, InputKind::Rays, usize::MAX).unwrap();
    assert_same_rays(&got, &test_rays(), "usize::MAX chunk");
}

#[test]
fn read_chunks_are_ray_soas_with_invalid_padding() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "pad.bin");
    let rays: Vec<Ray> = (0..5).map(|i| Ray::new(Vec3::splat(i as f32), Vec3::X)).collect();
    write_rays(&p, Format::Bin, &rays).unwrap();
    let mut r = RayReader::open(&p, Format::Bin, InputKind::Rays).unwrap();
    let soa: RaySoa = r.next_chunk(100).unwrap().unwrap();
    assert_eq!(soa.len(), 5);
    assert_eq!(soa.packet::<lanecast::F32x8>(0).active().bitmask(), 0b1_1111, "padding lanes are inactive");
    assert_eq!(r.kind(), InputKind::Rays);
    assert_eq!(r.format(), Format::Bin);
    assert!(r.next_chunk(0).unwrap().is_none());
}

/// The interpreter for the numpy cross-check (`LANECAST_PYTHON`, default `python3`).
fn python() -> String {
    std::env::var("LANECAST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Ignored by a plain `cargo test` (it needs python3 with numpy, which a Rust toolchain does
/// not bring); `.ci/test` installs numpy in a virtualenv and runs it by name. When run, a
/// missing interpreter or numpy is a failure, never a skip.
#[test]
#[ignore = "needs python3 with numpy; .ci/test runs it"]
fn numpy_reads_our_files_and_we_read_numpys() {
    let py = python();
    match std::process::Command::new(&py).args(["-c", "import numpy"]).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "`{py} -c 'import numpy'` failed (set LANECAST_PYTHON to a python with numpy, or run .ci/test):\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("cannot run `{py}` ({e}): set LANECAST_PYTHON to a python with numpy, or run .ci/test"),
    }
    let dir = tempfile::tempdir().unwrap();
    let n = 1037;
    let mut hits = HitSoa::with_len(n);
    for i in (0..n).filter(|i| i % 3 != 0) {
        hits.set(
            i,
            &Hit {
                t: i as f32 * 0.25,
                geom: (i % 11) as u32,
                prim: (i * 7) as u32,
                u: 0.125,
                v: 0.5,
                normal: Vec3::new(0.0, -1.0, 0.0),
                kind: lanecast::HitKind::None, // files do not store the kind
                inst: if i % 2 == 0 { u32::MAX } else { i as u32 },
            },
        );
    }
    let vis: Vec<bool> = (0..n).map(|i| i % 5 == 1).collect();
    let rays: Vec<Ray> = (0..n)
        .map(|i| {
            let mut r = Ray::with_interval(Vec3::new(i as f32, 1.5, -2.0), Vec3::Z, 0.0, 9.0);
            if i == 3 {
                r.origin.x = f32::NAN;
                r.t_max = f32::INFINITY;
            }
            r
        })
        .collect();
    for format in [Format::Npy, Format::Bin, Format::Csv] {
        let ext = format.extension();
        let mut w = HitWriter::create(&path(&dir, &format!("hits.{ext}")), format).unwrap();
        w.write(&hits).unwrap();
        w.finish().unwrap();
        let mut w = VisWriter::create(&path(&dir, &format!("vis.{ext}")), format).unwrap();
        w.write(&vis).unwrap();
        w.finish().unwrap();
    }
    write_rays(&path(&dir, "rays.npy"), Format::Npy, &rays).unwrap();
    let script = r#"
import sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
i = np.arange(n)
hit = i % 3 != 0
names = ('t', 'geom', 'prim', 'inst', 'u', 'v', 'nx', 'ny', 'nz')
h = np.load(d + '/hits.npy')
assert h.dtype.names == names, h.dtype
assert h.dtype.itemsize == 36 and h.dtype['inst'] == np.dtype('<u4'), h.dtype
odd = hit & (i % 2 == 1)
assert np.all(h['inst'][~odd] == 0xFFFFFFFF) and np.array_equal(h['inst'][odd], i[odd])
assert h.shape == (n,), h.shape
assert np.array_equal(h['t'][hit], (i * 0.25).astype(np.float32)[hit])
assert np.all(np.isposinf(h['t'][~hit]))
assert np.all(h['geom'][~hit] == 0xFFFFFFFF) and np.all(h['prim'][~hit] == 0xFFFFFFFF)
assert np.array_equal(h['geom'][hit], (i % 11)[hit]) and np.array_equal(h['prim'][hit], (i * 7)[hit])
assert np.all(h['ny'][hit] == -1) and np.all(h['u'][hit] == 0.125)
hb = np.fromfile(d + '/hits.bin', dtype=h.dtype)
assert np.array_equal(hb, h)
hc = np.genfromtxt(d + '/hits.csv', delimiter=',', names=True)
assert hc.shape == (n,) and hc.dtype.names == names
assert np.array_equal(hc['t'], h['t'].astype(np.float64))
assert np.all(hc['geom'][~hit] == -1)
assert np.all(hc['inst'][~odd] == -1) and np.all(hc['inst'][odd] == i[odd])
v = np.load(d + '/vis.npy')
assert v.dtype == np.bool_ and v.shape == (n,), (v.dtype, v.shape)
assert np.array_equal(v, i % 5 == 1)
assert np.array_equal(np.fromfile(d + '/vis.bin', dtype=np.uint8), (i % 5 == 1).astype(np.uint8))
vc = np.loadtxt(d + '/vis.csv', skiprows=1)
assert np.array_equal(vc, (i % 5 == 1))
r = np.load(d + '/rays.npy')
assert r.dtype == np.dtype('<f4') and r.shape == (n, 8), (r.dtype, r.shape)
assert np.isnan(r[3, 0]) and np.isposinf(r[3, 7])
assert np.array_equal(r[4], np.array([4, 1.5, -2, 0, 0, 1, 0, 9], dtype=np.float32))
# Files numpy writes, for the Rust side to read.
seg = np.arange(5 * 6, dtype='<f4').reshape(5, 6)
np.save(d + '/np_segs.npy', seg)
np.save(d + '/np_rays6.npy', seg)
np.save(d + '/np_rays8.npy', np.arange(3 * 8, dtype='<f4').reshape(3, 8))
np.save(d + '/np_f64.npy', seg.astype(np.float64))
np.save(d + '/np_fortran.npy', np.asfortranarray(np.arange(3 * 8, dtype='<f4').reshape(3, 8)))
np.save(d + '/np_hits.npy', h[:10])
np.save(d + '/np_vis.npy', v[:10])
print('numpy check ok')
"#;
    let out = std::process::Command::new(&py)
        .args(["-c", script, &dir.path().to_string_lossy(), &n.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "numpy check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout).trim());

    let seg = read_all(&path(&dir, "np_segs.npy"), Format::Npy, InputKind::Segments, 2).unwrap();
    assert_eq!(seg.len(), 5);
    assert_eq!(seg[1], Ray::segment(Vec3::new(6.0, 7.0, 8.0), Vec3::new(9.0, 10.0, 11.0)));
    let r6 = read_all(&path(&dir, "np_rays6.npy"), Format::Npy, InputKind::Rays, 2).unwrap();
    assert_eq!(r6[4], Ray::new(Vec3::new(24.0, 25.0, 26.0), Vec3::new(27.0, 28.0, 29.0)));
    let r8 = read_all(&path(&dir, "np_rays8.npy"), Format::Npy, InputKind::Rays, 2).unwrap();
    assert_eq!(ray_vals(&r8[2]), [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0]);
    read_err(&path(&dir, "np_f64.npy"), Format::Npy, InputKind::Rays, ":header:");
    read_err(&path(&dir, "np_fortran.npy"), Format::Npy, InputKind::Rays, ":header:");
    assert_same_hits(
        &read_hits(&path(&dir, "np_hits.npy"), Format::Npy).unwrap(),
        &hit_slice(&hits, 0, 10),
        "numpy hits",
    );
    assert_eq!(read_visibility(&path(&dir, "np_vis.npy"), Format::Npy).unwrap(), vis[..10].to_vec());
}
