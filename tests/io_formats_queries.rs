//! Point files and the query outputs (`lanecast::io`): [`PointReader`] on hand-made files in
//! every format, strict errors naming file and line/record (non-finite coordinates
//! included), and the byte layouts of [`CountWriter`], [`FlagWriter`] and [`AllHitsWriter`]
//! checked against bytes written out by hand.

use glam::Vec3;
use lanecast::io::{
    AllHitsWriter, ClosestWriter, CountWriter, FlagWriter, Format, IoError, PointReader, read_counts, read_flags,
    write_points,
};
use lanecast::{ClosestPoint, Hit, HitKind, HitLists, HitSoa};
use tempfile::TempDir;

const FORMATS: [Format; 3] = [Format::Csv, Format::Bin, Format::Npy];

fn path(dir: &TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A hand-made version 1.0 `.npy` file with header dict `dict` and `data`.
fn npy_file(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.as_bytes().to_vec();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

/// (header text, data) of a version 1.0 `.npy` file.
fn split_npy(bytes: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0, "data starts at a multiple of 64");
    (String::from_utf8(bytes[10..10 + hlen].to_vec()).unwrap(), bytes[10 + hlen..].to_vec())
}

/// Every point of the file, read in chunks of `chunk`.
fn read_points(path: &str, format: Format, chunk: usize) -> Result<Vec<Vec3>, IoError> {
    let mut r = PointReader::open(path, format)?;
    let mut out = Vec::new();
    while let Some(c) = r.next_chunk(chunk)? {
        assert!(!c.is_empty() && c.len() <= chunk.max(1), "chunk of {} for max {chunk}", c.len());
        out.extend(c);
    }
    assert_eq!(r.position(), out.len() as u64);
    assert!(r.next_chunk(chunk)?.is_none(), "stays at the end");
    Ok(out)
}

/// The 7 points every format below stores, as literal values.
fn seven() -> Vec<Vec3> {
    vec![
        Vec3::new(1.0, 2.0, 3.0),
        Vec3::new(-0.5, 0.25, 1e-7),
        Vec3::new(f32::MAX, f32::MIN, 1e-45),
        Vec3::new(-0.0, 0.0, 16_777_216.0),
        Vec3::new(100.0, 2.0, 0.5),
        Vec3::new(7.0, 8.0, 9.0),
        Vec3::new(3.5, -3.5, 0.125),
    ]
}

#[test]
fn hand_made_point_files_read_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let want = seven();
    // csv: BOM, comment, header, spacing, CRLF, exponent and sign forms, no final newline.
    let csv = path(&dir, "pts.csv");
    std::fs::write(
        &csv,
        "\u{feff}# points\n\
         x, y, z\r\n\
         1,2,3\n\
         \n\
         -0.5 , 0.25 , 1e-7\n\
         3.4028235e38,-3.4028235e38,1e-45\n\
         -0,0,16777216\n\
         1e2,+2,.5\n\
         # between\n\
         7,8,9\n\
         3.5,-3.5,0.125",
    )
    .unwrap();
    let flat: Vec<f32> = want.iter().flat_map(|p| p.to_array()).collect();
    let bin = path(&dir, "pts.bin");
    std::fs::write(&bin, f32_bytes(&flat)).unwrap();
    let npy = path(&dir, "pts.npy");
    std::fs::write(&npy, npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (7, 3), }", &f32_bytes(&flat)))
        .unwrap();
    for (p, format) in [(&csv, Format::Csv), (&bin, Format::Bin), (&npy, Format::Npy)] {
        let r = PointReader::open(p, format).unwrap();
        assert_eq!(r.total(), (format != Format::Csv).then_some(7), "{format}");
        assert_eq!(r.format(), format);
        assert_eq!(r.name(), p.as_str());
        for chunk in [0, 1, 3, 7, 1000] {
            let got = read_points(p, format, chunk).unwrap();
            assert_eq!(got.len(), want.len(), "{format} chunk {chunk}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let (g, w) = (g.to_array().map(f32::to_bits), w.to_array().map(f32::to_bits));
                assert_eq!(g, w, "{format} chunk {chunk}: point {i}");
            }
        }
    }
}

#[test]
fn write_points_layouts_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let pts = seven();
    for format in FORMATS {
        let p = path(&dir, &format!("w.{format}"));
        write_points(&p, format, &pts).unwrap();
        assert_eq!(read_points(&p, format, 2).unwrap(), pts, "{format}");
    }
    let text = std::fs::read_to_string(path(&dir, "w.csv")).unwrap();
    assert!(text.starts_with("x,y,z\n1,2,3\n-0.5,0.25,1e-7\n"), "{text}");
    let bin = std::fs::read(path(&dir, "w.bin")).unwrap();
    assert_eq!(bin.len(), 7 * 12);
    assert_eq!(&bin[..12], &f32_bytes(&[1.0, 2.0, 3.0])[..]);
    let (header, data) = split_npy(&std::fs::read(path(&dir, "w.npy")).unwrap());
    assert!(header.contains("'descr': '<f4'") && header.contains("'shape': (7, 3)"), "{header}");
    assert_eq!(data, bin);
}

#[test]
fn empty_point_files_hold_no_points() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, Format, Vec<u8>); 4] = [
        ("header_only.csv", Format::Csv, b"x,y,z\n".to_vec()),
        ("comments.csv", Format::Csv, b"# nothing\n\n".to_vec()),
        ("empty.bin", Format::Bin, Vec::new()),
        ("empty.npy", Format::Npy, npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", &[])),
    ];
    for (name, format, bytes) in cases {
        let p = path(&dir, name);
        std::fs::write(&p, bytes).unwrap();
        assert!(read_points(&p, format, 10).unwrap().is_empty(), "{name}");
    }
}

/// The error of reading `path` completely; checks it names the file and `place`.
fn read_err(path: &str, format: Format, place: &str) -> String {
    let e = read_points(path, format, 1000).expect_err("bad input must be an error");
    let text = e.to_string();
    assert_eq!(e.path, path);
    assert!(text.starts_with(path), "error does not name the file: {text}");
    assert!(text.contains(place), "error does not name the place {place:?}: {text}");
    text
}

#[test]
fn bad_point_csv_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = path(&dir, name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let p = write("four.csv", "x,y,z\n1,2,3\n1,2,3,4\n");
    let e = read_err(&p, Format::Csv, ":line 3:");
    assert!(e.contains("expected 3 fields") && e.contains("got 4"), "{e}");
    let p = write("two.csv", "1,2\n");
    let e = read_err(&p, Format::Csv, ":line 1:");
    assert!(e.contains("got 2"), "{e}");
    let p = write("text.csv", "1,2,3\n# c\n4,five,6\n");
    let e = read_err(&p, Format::Csv, ":line 3:");
    assert!(e.contains("column 2 (y)") && e.contains("\"five\""), "{e}");
    let p = write("late_header.csv", "1,2,3\nx,y,z\n");
    let e = read_err(&p, Format::Csv, ":line 2:");
    assert!(e.contains("column 1 (x)"), "{e}");
    for (name, line, col) in [
        ("nan.csv", "nan,0,0", "column 1 (x): coordinate is NaN"),
        ("inf.csv", "0,inf,0", "column 2 (y): coordinate is infinite"),
        ("neginf.csv", "0,0,-Infinity", "column 3 (z): coordinate is infinite"),
        ("overflow.csv", "0,0,1e39", "column 3 (z): coordinate is infinite (or beyond the f32 range)"),
    ] {
        let p = write(name, &format!("x,y,z\n1,1,1\n{line}\n"));
        let e = read_err(&p, Format::Csv, &format!(":line 3: {col}"));
        assert!(e.contains("must be finite"), "{e}");
    }
    // The good points before a bad one in the same chunk are not handed out.
    let p = write("late_nan.csv", "1,1,1\n2,2,2\nnan,1,1\n");
    let mut r = PointReader::open(&p, Format::Csv).unwrap();
    assert!(r.next_chunk(10).is_err());
    assert_eq!(r.position(), 0);
}

#[test]
fn bad_point_bin_and_npy_name_file_and_record() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: Vec<u8>| {
        let p = path(&dir, name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let p = write("trunc.bin", vec![0u8; 2 * 12 + 5]);
    let e = read_err(&p, Format::Bin, ":record 2 (byte offset 24)");
    assert!(e.contains("5 bytes left over"), "{e}");
    assert!(PointReader::open(&p, Format::Bin).is_err(), "refused at open");
    let p = write("nan.bin", f32_bytes(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, f32::NAN, 5.0]));
    let e = read_err(&p, Format::Bin, ":record 2 (byte offset 24): column 2 (y): coordinate is NaN");
    assert!(e.contains("must be finite"), "{e}");
    // Past a chunk boundary the record index counts from the file's start.
    let mut vals = vec![1.0f32; 3 * 10];
    vals[3 * 8 + 2] = f32::NEG_INFINITY;
    let p = write("inf.bin", f32_bytes(&vals));
    let mut r = PointReader::open(&p, Format::Bin).unwrap();
    assert_eq!(r.next_chunk(5).unwrap().unwrap().len(), 5);
    let e = r.next_chunk(5).unwrap_err().to_string();
    assert!(e.contains("inf.bin:record 8 (byte offset 96): column 3 (z): coordinate is infinite"), "{e}");

    let dict = |descr: &str, fortran: &str, shape: &str| {
        format!("{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}")
    };
    let data = f32_bytes(&[0.5; 6]);
    for (name, d, needle) in [
        ("f8.npy", dict("'<f8'", "False", "(2, 3)"), "'<f8'"),
        ("be.npy", dict("'>f4'", "False", "(2, 3)"), "'>f4'"),
        ("shape4.npy", dict("'<f4'", "False", "(1, 4)"), "(N, 3)"),
        ("flat.npy", dict("'<f4'", "False", "(6,)"), "(6,)"),
        ("deep.npy", dict("'<f4'", "False", "(1, 2, 3)"), "(1, 2, 3)"),
        ("fortran.npy", dict("'<f4'", "True", "(2, 3)"), "fortran_order"),
    ] {
        let p = write(name, npy_file(&d, &data));
        let e = read_err(&p, Format::Npy, ":header: ");
        assert!(e.contains(needle), "{e}");
    }
    let p = write("short.npy", npy_file(&dict("'<f4'", "False", "(3, 3)"), &data));
    let e = read_err(&p, Format::Npy, ":record 2");
    assert!(e.contains("shorter than the header promises"), "{e}");
    let mut nan = [0.5f32; 6];
    nan[3] = f32::NAN;
    let bytes = npy_file(&dict("'<f4'", "False", "(2, 3)"), &f32_bytes(&nan));
    let offset = bytes.len() - 24 + 12;
    let p = write("nan.npy", bytes);
    read_err(&p, Format::Npy, &format!(":record 1 (byte offset {offset}): column 1 (x): coordinate is NaN"));

    let missing = path(&dir, "missing.csv");
    let e = PointReader::open(&missing, Format::Csv).err().unwrap();
    assert!(e.to_string().starts_with(&format!("{missing}: cannot open")), "{e}");
    for format in [Format::Bin, Format::Npy] {
        let e = PointReader::open("-", format).err().unwrap();
        assert_eq!(e.path, "<stdin>");
        assert!(e.message.contains("csv only"), "{e}");
    }
}

#[test]
fn count_files_hold_little_endian_u32() {
    let dir = tempfile::tempdir().unwrap();
    let counts: Vec<u32> = (0..70_001u32).map(|i| i.wrapping_mul(2_654_435_761) >> (i % 32)).collect();
    for format in FORMATS {
        let p = path(&dir, &format!("c.{format}"));
        let mut w = CountWriter::create(&p, format).unwrap();
        for c in counts.chunks(9_999) {
            w.write(c).unwrap();
        }
        w.write(&[]).unwrap();
        assert_eq!(w.count(), counts.len() as u64);
        w.finish().unwrap();
        assert_eq!(read_counts(&p, format).unwrap(), counts, "{format}");
    }
    let text = std::fs::read_to_string(path(&dir, "c.csv")).unwrap();
    let want: String = std::iter::once("count".to_string()).chain(counts.iter().map(u32::to_string)).fold(
        String::new(),
        |mut s, l| {
            s.push_str(&l);
            s.push('\n');
            s
        },
    );
    assert_eq!(text, want);
    let bin = std::fs::read(path(&dir, "c.bin")).unwrap();
    assert_eq!(bin.len(), 4 * counts.len());
    assert_eq!(&bin[4..8], &counts[1].to_le_bytes());
    let (header, data) = split_npy(&std::fs::read(path(&dir, "c.npy")).unwrap());
    assert!(header.contains("'descr': '<u4'") && header.contains("'shape': (70001,)"), "{header}");
    assert_eq!(data, bin);
    // An empty file is a valid (0,) array; a bad value names its line.
    let p = path(&dir, "empty.npy");
    CountWriter::create(&p, Format::Npy).unwrap().finish().unwrap();
    assert!(split_npy(&std::fs::read(&p).unwrap()).0.contains("'shape': (0,)"));
    assert!(read_counts(&p, Format::Npy).unwrap().is_empty());
    let p = path(&dir, "bad.csv");
    std::fs::write(&p, "count\n1\n-1\n").unwrap();
    assert!(read_counts(&p, Format::Csv).unwrap_err().to_string().contains("bad.csv:line 3:"));
}

#[test]
fn flag_files_take_their_column_name() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [true, false, false, true, true];
    for format in FORMATS {
        let p = path(&dir, &format!("f.{format}"));
        let mut w = FlagWriter::create(&p, format, "inside").unwrap();
        w.write(&flags[..2]).unwrap();
        w.write(&flags[2..]).unwrap();
        assert_eq!(w.count(), 5);
        w.finish().unwrap();
        assert_eq!(read_flags(&p, format).unwrap(), flags, "{format}");
    }
    assert_eq!(std::fs::read_to_string(path(&dir, "f.csv")).unwrap(), "inside\n1\n0\n0\n1\n1\n");
    assert_eq!(std::fs::read(path(&dir, "f.bin")).unwrap(), [1, 0, 0, 1, 1]);
    let (header, data) = split_npy(&std::fs::read(path(&dir, "f.npy")).unwrap());
    assert!(header.contains("'descr': '|b1'") && header.contains("'shape': (5,)"), "{header}");
    assert_eq!(data, [1, 0, 0, 1, 1]);
}

fn hit(t: f32, geom: u32, prim: u32, u: f32, v: f32, n: Vec3) -> Hit {
    Hit { t, geom, prim, u, v, normal: n, kind: HitKind::None, inst: u32::MAX }
}

/// Hit lists of 4 rays: 2 hits, none, 1 hit, none.
fn lists() -> HitLists {
    let hs = [
        hit(1.5, 0, 7, 0.25, 0.5, Vec3::X),
        Hit { inst: 5, ..hit(2.0, 3, u32::MAX - 1, 0.0, 0.0, Vec3::new(0.0, 0.0, -1.0)) },
        hit(0.0, 1, 0, 0.0, 0.0, Vec3::Y),
    ];
    let mut hits = HitSoa::with_len(hs.len());
    for (i, h) in hs.iter().enumerate() {
        hits.set(i, h);
    }
    HitLists { ray_splits: vec![0, 2, 2, 3, 3], ray_ids: vec![0, 0, 2], hits }
}

#[test]
fn hit_lists_lead_each_hit_with_its_ray() {
    let dir = tempfile::tempdir().unwrap();
    for format in FORMATS {
        let p = path(&dir, &format!("all.{format}"));
        let mut w = AllHitsWriter::create(&p, format).unwrap();
        w.write(0, &lists()).unwrap();
        w.write(4, &HitLists { ray_splits: vec![0], ..Default::default() }).unwrap();
        w.write(4, &lists()).unwrap();
        assert_eq!(w.count(), 6);
        w.finish().unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(path(&dir, "all.csv")).unwrap(),
        "ray,t,geom,prim,inst,u,v,nx,ny,nz\n\
         0,1.5,0,7,-1,0.25,0.5,1,0,0\n\
         0,2,3,4294967294,5,0,0,0,0,-1\n\
         2,0,1,0,-1,0,0,0,1,0\n\
         4,1.5,0,7,-1,0.25,0.5,1,0,0\n\
         4,2,3,4294967294,5,0,0,0,0,-1\n\
         6,0,1,0,-1,0,0,0,1,0\n"
    );
    let bin = std::fs::read(path(&dir, "all.bin")).unwrap();
    assert_eq!(bin.len(), 6 * 40);
    let mut rec0 = 0u32.to_le_bytes().to_vec();
    rec0.extend(1.5f32.to_le_bytes());
    rec0.extend(0u32.to_le_bytes());
    rec0.extend(7u32.to_le_bytes());
    rec0.extend(u32::MAX.to_le_bytes());
    rec0.extend(f32_bytes(&[0.25, 0.5, 1.0, 0.0, 0.0]));
    assert_eq!(&bin[..40], &rec0[..]);
    assert_eq!(&bin[5 * 40..5 * 40 + 4], &6u32.to_le_bytes());
    assert_eq!(&bin[40 + 12..40 + 16], &(u32::MAX - 1).to_le_bytes(), "prim of the second hit");
    assert_eq!(&bin[40 + 16..40 + 20], &5u32.to_le_bytes(), "inst of the second hit");
    let (header, data) = split_npy(&std::fs::read(path(&dir, "all.npy")).unwrap());
    assert!(
        header.contains(
            "'descr': [('ray', '<u4'), ('t', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), \
             ('u', '<f4'), ('v', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]"
        ) && header.contains("'shape': (6,)"),
        "{header}"
    );
    assert_eq!(data, bin);
}

#[test]
fn hit_list_ray_indices_must_fit_u32() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(&dir, "big.bin");
    let mut w = AllHitsWriter::create(&p, Format::Bin).unwrap();
    // Rays 2^32 - 4 ..= 2^32 - 1: the last index that fits.
    w.write((1u64 << 32) - 4, &lists()).unwrap();
    assert_eq!(w.count(), 3);
    let e = w.write((1u64 << 32) - 3, &lists()).unwrap_err().to_string();
    assert!(e.starts_with(&p) && e.contains("ray index 4294967296") && e.contains("u32"), "{e}");
    assert_eq!(w.count(), 3, "nothing of the refused chunk is written");
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no output without finish");
}

#[test]
fn unfinished_query_outputs_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for format in FORMATS {
        let mut c = CountWriter::create(&path(&dir, &format!("c.{format}")), format).unwrap();
        c.write(&[1; 100_000]).unwrap();
        let mut f = FlagWriter::create(&path(&dir, &format!("f.{format}")), format, "inside").unwrap();
        f.write(&[true; 100_000]).unwrap();
        let mut a = AllHitsWriter::create(&path(&dir, &format!("a.{format}")), format).unwrap();
        a.write(0, &lists()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3, "hidden temporary files while writing");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn closest_files_mix_f32_and_u32_like_hit_files() {
    let dir = tempfile::tempdir().unwrap();
    let found = ClosestPoint {
        point: Vec3::new(0.5, -1.0, 2.25),
        distance: -0.75,
        geom: 3,
        prim: u32::MAX - 1,
        u: 0.125,
        v: 0.5,
        normal: Vec3::Y,
        kind: HitKind::Triangle,
        inst: u32::MAX,
    };
    let recs = [found, ClosestPoint::MISS];
    for format in FORMATS {
        let p = path(&dir, &format!("c.{format}"));
        let mut w = ClosestWriter::create(&p, format).unwrap();
        w.write(&recs[..1]).unwrap();
        w.write(&[]).unwrap();
        w.write(&recs[1..]).unwrap();
        assert_eq!(w.count(), 2);
        w.finish().unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(path(&dir, "c.csv")).unwrap(),
        "x,y,z,distance,geom,prim,u,v\n0.5,-1,2.25,-0.75,3,4294967294,0.125,0.5\ninf,inf,inf,inf,-1,-1,0,0\n"
    );
    let mut want = f32_bytes(&[0.5, -1.0, 2.25, -0.75]);
    want.extend(3u32.to_le_bytes());
    want.extend((u32::MAX - 1).to_le_bytes());
    want.extend(f32_bytes(&[0.125, 0.5, f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::INFINITY]));
    want.extend([0xFF; 8]);
    want.extend(f32_bytes(&[0.0, 0.0]));
    let bin = std::fs::read(path(&dir, "c.bin")).unwrap();
    assert_eq!(bin, want);
    let (header, data) = split_npy(&std::fs::read(path(&dir, "c.npy")).unwrap());
    assert!(
        header.contains(
            "'descr': [('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('distance', '<f4'), ('geom', '<u4'), \
             ('prim', '<u4'), ('u', '<f4'), ('v', '<f4')]"
        ) && header.contains("'shape': (2,)"),
        "{header}"
    );
    assert_eq!(data, want);
}
