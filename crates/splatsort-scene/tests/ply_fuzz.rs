//! A deterministic mutation test of the PLY loader. Seeds of every variant (little- and big-endian binary, ASCII;
//! SH degree 0 to 3; an element before the splats and one after) are mutated by byte flips, truncations, inserted
//! bytes, header line edits, count edits and value edits. Each mutant must either load to finite splats that match
//! a plain reference reading of the same bytes, or fail with a one-line error that names the file. A panic, a hang
//! (10 s) or an allocation past a small multiple of the file's size fails the test.
//!
//! The number of mutants is `SPLATSORT_FUZZ_CASES` (default 6000, a few seconds); the seed of the mutations is
//! `SPLATSORT_FUZZ_SEED`. For long coverage-guided runs there is a `cargo fuzz` target in `fuzz/` (see its README).
//!
//! This binary holds one test on purpose: it caps the process's allocations (the `cap` allocator) around each load.

use std::alloc::System;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

mod common;

use cap::Cap;
use splatsort_scene::{PlyEncoding, Scene, load_ply, write_ply};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Extra bytes a load may allocate beyond `MEMORY_PER_FILE_BYTE` per byte of the file: the 1 MiB header buffer and
/// read buffer, block buffers, thread bookkeeping.
const MEMORY_SLACK: usize = 8 << 20;
/// A scene in memory takes at most about 2x an ASCII file's bytes (a value is at least 2 bytes there, 4 in memory)
/// and 1x a binary file's; 8x leaves room and still catches an allocation sized by a lying header.
const MEMORY_PER_FILE_BYTE: usize = 8;

/// The crate's seeded generator, so every run tries the same mutants.
type Rng = splatsort_scene::rng::SplitMix64;

/// The seeds: every encoding at every SH degree, plus files with an element before and after the splats.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut seeds = Vec::new();
    for degree in 0..=3 {
        for (name, encoding) in [
            ("le", PlyEncoding::BinaryLittleEndian),
            ("be", PlyEncoding::BinaryBigEndian),
            ("ascii", PlyEncoding::Ascii),
        ] {
            let mut bytes = Vec::new();
            write_ply(&common::sample_scene(4 + degree as usize, degree), &mut bytes, encoding).expect("write");
            seeds.push((format!("sh{degree}_{name}"), bytes));
        }
    }
    // An element before `vertex` (a binary one the loader must skip exactly) and a list element after it.
    let mut plain = Vec::new();
    write_ply(&common::sample_scene(3, 0), &mut plain, PlyEncoding::BinaryLittleEndian).expect("write");
    let body_at = find(&plain, b"end_header\n").expect("header end") + 11;
    let mut before = plain[..body_at].to_vec();
    let vertex_at = find(&before, b"element vertex").expect("vertex element");
    before.splice(vertex_at..vertex_at, b"element extra 2\nproperty double a\nproperty uchar b\n".iter().copied());
    before.extend_from_slice(&[7u8; 18]);
    before.extend_from_slice(&plain[body_at..]);
    seeds.push(("before_le".into(), before));
    let mut ascii = Vec::new();
    write_ply(&common::sample_scene(3, 1), &mut ascii, PlyEncoding::Ascii).expect("write");
    let end = find(&ascii, b"end_header").expect("header end");
    ascii.splice(end..end, b"element face 2\nproperty list uchar int idx\n".iter().copied());
    ascii.extend_from_slice(b"3 0 1 2\n2 0 1\n");
    seeds.push(("after_ascii".into(), ascii));
    seeds
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Header words a mutation may put in place of another.
const WORDS: &[&str] = &[
    "float",
    "double",
    "uchar",
    "int",
    "list",
    "vertex",
    "face",
    "x",
    "opacity",
    "f_rest_0",
    "f_rest_3",
    "f_rest_44",
    "property",
    "element",
    "format",
    "ascii",
    "binary_big_endian",
    "binary_little_endian",
    "end_header",
    "comment",
    "0",
    "1",
    "-1",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1.99999999999999999999",
    "nan",
    "inf",
    "",
];

/// Counts a count edit may write.
const COUNTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "7",
    "64",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e3",
    "-3",
    "0x10",
];

/// One mutant of `seed`, and what was done (for failure messages).
fn mutate(seed: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let mut bytes = seed.to_vec();
    let header_end = find(&bytes, b"end_header").unwrap_or(bytes.len());
    match rng.below(8) {
        0 => {
            let flips = 1 + rng.below(4);
            for _ in 0..flips {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 + rng.below(255) as u8;
            }
            (bytes, format!("{flips} byte flips"))
        }
        1 => {
            let at = rng.below(bytes.len());
            bytes.truncate(at);
            (bytes, format!("truncated to {at} bytes"))
        }
        2 => {
            // A flip inside the header, where most of the structure is.
            let at = rng.below(header_end);
            bytes[at] ^= 1 + rng.below(255) as u8;
            (bytes, format!("header byte {at} flipped"))
        }
        3 => {
            let at = rng.below(bytes.len() + 1);
            let count = 1 + rng.below(16);
            let insert: Vec<u8> = (0..count).map(|_| rng.next_u64() as u8).collect();
            bytes.splice(at..at, insert);
            (bytes, format!("{count} bytes inserted at {at}"))
        }
        4 | 5 => {
            // Header line edits: delete, duplicate, swap, or replace one word.
            let (head, body) = bytes.split_at(header_end);
            let text = String::from_utf8_lossy(head).into_owned();
            let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
            let i = rng.below(lines.len());
            let j = rng.below(lines.len());
            let what = match rng.below(4) {
                0 => {
                    lines.remove(i);
                    format!("header line {i} deleted")
                }
                1 => {
                    let line = lines[i].clone();
                    lines.insert(j, line);
                    format!("header line {i} repeated at {j}")
                }
                2 => {
                    lines.swap(i, j);
                    format!("header lines {i} and {j} swapped")
                }
                _ => {
                    let mut words: Vec<String> = lines[i].split(' ').map(String::from).collect();
                    let k = rng.below(words.len());
                    let word = rng.pick(WORDS).to_string();
                    words[k] = word.clone();
                    lines[i] = words.join(" ");
                    format!("header line {i} word {k} set to `{word}`")
                }
            };
            let mut out = lines.join("\n").into_bytes();
            out.extend_from_slice(body);
            (out, what)
        }
        6 => {
            // A count edit: the splats' element or another one.
            let text = String::from_utf8_lossy(&bytes[..header_end]).into_owned();
            let elements: Vec<usize> = text.match_indices("element ").map(|(at, _)| at).collect();
            let Some(&at) = elements.get(rng.below(elements.len())) else {
                return (bytes, "no element to edit".into());
            };
            let line_end = at + text[at..].find('\n').unwrap_or(text.len() - at);
            let name_end = at + 8 + text[at + 8..line_end].find(' ').unwrap_or(0);
            let count = rng.pick(COUNTS);
            let mut out = bytes[..name_end + 1].to_vec();
            out.extend_from_slice(count.as_bytes());
            out.extend_from_slice(&bytes[line_end..]);
            (out, format!("an element count set to {count}"))
        }
        _ => {
            // A value edit in the body: NaN, infinity, a huge or a negative number, where a float may be.
            let body = header_end + 11;
            if body + 4 > bytes.len() {
                return (bytes, "no body to edit".into());
            }
            let at = body + 4 * rng.below((bytes.len() - body) / 4);
            let value = *rng.pick(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30, 88.8, 0.0, f32::MAX]);
            let encoded =
                if seed.starts_with(b"ply\nformat binary_big") { value.to_be_bytes() } else { value.to_le_bytes() };
            bytes[at..at + 4].copy_from_slice(&encoded);
            (bytes, format!("value at byte {at} set to {value}"))
        }
    }
}

/// The plain reference reading: the whole file in memory, the header split into lines and words, the body decoded
/// value by value. Slow and simple; None where it finds the file invalid.
mod reference {
    pub struct Splats {
        pub positions: Vec<[f32; 3]>,
        pub scales: Vec<[f32; 3]>,
        pub rotations: Vec<[f32; 4]>,
        pub opacities: Vec<f32>,
        pub sh: Vec<[f32; 3]>,
        pub sh_degree: u32,
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Type {
        Int(i64, i64, usize),
        Float32,
        Float64,
    }

    fn scalar(word: &str) -> Option<Type> {
        Some(match word {
            "char" | "int8" => Type::Int(-128, 127, 1),
            "uchar" | "uint8" => Type::Int(0, 255, 1),
            "short" | "int16" => Type::Int(-32768, 32767, 2),
            "ushort" | "uint16" => Type::Int(0, 65535, 2),
            "int" | "int32" => Type::Int(i32::MIN as i64, i32::MAX as i64, 4),
            "uint" | "uint32" => Type::Int(0, u32::MAX as i64, 4),
            "float" | "float32" => Type::Float32,
            "double" | "float64" => Type::Float64,
            _ => return None,
        })
    }

    fn size(t: Type) -> usize {
        match t {
            Type::Int(_, _, size) => size,
            Type::Float32 => 4,
            Type::Float64 => 8,
        }
    }

    struct Property {
        name: String,
        list_count: Option<Type>,
        item: Type,
    }

    struct Element {
        name: String,
        count: u64,
        properties: Vec<Property>,
    }

    /// Reads one value of type `t` from a binary body at `*at`.
    fn binary(bytes: &[u8], at: &mut usize, t: Type, big: bool) -> Option<f64> {
        let raw = bytes.get(*at..*at + size(t))?;
        *at += size(t);
        let mut word = [0u8; 8];
        word[..raw.len()].copy_from_slice(raw);
        if big {
            word[..raw.len()].reverse();
        }
        Some(match t {
            Type::Int(lo, _, 1) => {
                if lo < 0 {
                    word[0] as i8 as f64
                } else {
                    word[0] as f64
                }
            }
            Type::Int(lo, _, 2) => {
                let v = u16::from_le_bytes([word[0], word[1]]);
                if lo < 0 { v as i16 as f64 } else { v as f64 }
            }
            Type::Int(lo, _, _) => {
                let v = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                if lo < 0 { v as i32 as f64 } else { v as f64 }
            }
            Type::Float32 => f32::from_le_bytes([word[0], word[1], word[2], word[3]]) as f64,
            Type::Float64 => f64::from_le_bytes(word),
        })
    }

    /// Reads one ASCII value of type `t`; floats keep their f32 parse (as a splat's values are f32).
    fn ascii(words: &mut dyn Iterator<Item = &str>, t: Type) -> Option<f64> {
        let word = words.next()?;
        if word.len() > 64 {
            return None;
        }
        match t {
            Type::Int(lo, hi, _) => word.parse::<i64>().ok().filter(|v| (lo..=hi).contains(v)).map(|v| v as f64),
            Type::Float32 => word.parse::<f32>().ok().map(f64::from),
            Type::Float64 => word.parse::<f64>().ok().map(|v| v as f32 as f64),
        }
    }

    pub fn read(bytes: &[u8]) -> Option<Splats> {
        // The header, line by line, up to a line that is `end_header`.
        let mut lines = Vec::new();
        let mut at = 0;
        loop {
            let newline = at + bytes[at..].iter().position(|&b| b == b'\n')?;
            let line = &bytes[at..newline];
            at = newline + 1;
            let line = std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line)).ok()?;
            if !line.is_ascii() {
                return None;
            }
            if line.split_ascii_whitespace().eq(["end_header"]) {
                break;
            }
            lines.push(line);
        }
        let body_start = at;
        if lines.first() != Some(&"ply") {
            return None;
        }
        let mut format = None;
        let mut elements: Vec<Element> = Vec::new();
        for line in &lines[1..] {
            let words: Vec<&str> = line.split_ascii_whitespace().collect();
            match words.as_slice() {
                ["comment" | "obj_info", ..] => {}
                ["format", f, "1.0" | "1"] if format.is_none() => format = Some(f.to_string()),
                ["element", name, count] if format.is_some() => {
                    if elements.iter().any(|e| e.name == *name) {
                        return None;
                    }
                    elements.push(Element { name: name.to_string(), count: count.parse().ok()?, properties: vec![] });
                }
                ["property", "list", c, i, name] => {
                    let c = scalar(c).filter(|c| matches!(c, Type::Int(..)))?;
                    let e = elements.last_mut()?;
                    if e.properties.iter().any(|p| p.name == *name) {
                        return None;
                    }
                    e.properties.push(Property { name: name.to_string(), list_count: Some(c), item: scalar(i)? });
                }
                ["property", t, name] => {
                    let e = elements.last_mut()?;
                    if e.properties.iter().any(|p| p.name == *name) {
                        return None;
                    }
                    e.properties.push(Property { name: name.to_string(), list_count: None, item: scalar(t)? });
                }
                _ => return None,
            }
        }
        let format = format?;
        let vertex_index = elements.iter().position(|e| e.name == "vertex")?;
        let vertex = &elements[vertex_index];
        let index = |name: &str| vertex.properties.iter().position(|p| p.name == name);
        let required = [
            "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1",
            "rot_2", "rot_3",
        ]
        .map(index);
        let rest_count = vertex.properties.iter().filter(|p| p.name.starts_with("f_rest_")).count();
        let sh_degree = [0, 9, 24, 45].iter().position(|&c| c == rest_count)? as u32;
        let rest: Vec<usize> = (0..rest_count).map(|i| index(&format!("f_rest_{i}"))).collect::<Option<_>>()?;
        let required: Vec<usize> = required.into_iter().collect::<Option<_>>()?;
        let needed = required.iter().chain(&rest);
        if needed
            .clone()
            .any(|&i| vertex.properties[i].list_count.is_some() || vertex.properties[i].item != Type::Float32)
        {
            return None;
        }
        if vertex.count == 0 || vertex.count > (bytes.len() as u64) {
            return None;
        }
        // Decode every row of every element up to and including the vertices.
        let body = &bytes[body_start..];
        let mut rows: Vec<Vec<f64>> = Vec::new();
        // ASCII: one row a line, every value of a row on its line and nothing else.
        let text = if format == "ascii" { String::from_utf8_lossy(body).into_owned() } else { String::new() };
        let mut lines = text.split('\n');
        let big = match format.as_str() {
            "ascii" => false,
            "binary_little_endian" => false,
            "binary_big_endian" => true,
            _ => return None,
        };
        let mut at = 0usize;
        for (e, element) in elements.iter().enumerate().take(vertex_index + 1) {
            if format != "ascii" && element.properties.iter().any(|p| p.list_count.is_some()) {
                return None;
            }
            if element.properties.is_empty() {
                continue;
            }
            for _ in 0..element.count {
                let mut row = Vec::new();
                let mut words = if format == "ascii" {
                    lines.next()?.split_ascii_whitespace()
                } else {
                    "".split_ascii_whitespace()
                };
                for p in &element.properties {
                    let mut value =
                        |t| if format == "ascii" { ascii(&mut words, t) } else { binary(body, &mut at, t, big) };
                    match p.list_count {
                        None => row.push(value(p.item)?),
                        Some(c) => {
                            let n = value(c)?;
                            if n < 0.0 {
                                return None;
                            }
                            for _ in 0..n as u64 {
                                value(p.item)?;
                            }
                            row.push(0.0);
                        }
                    }
                }
                if words.next().is_some() {
                    return None;
                }
                if e == vertex_index {
                    rows.push(row);
                }
            }
        }
        let coeffs = ((sh_degree + 1) * (sh_degree + 1)) as usize;
        let mut out =
            Splats { positions: vec![], scales: vec![], rotations: vec![], opacities: vec![], sh: vec![], sh_degree };
        for row in &rows {
            let r: Vec<f32> = required.iter().map(|&i| row[i] as f32).collect();
            let f: Vec<f32> = rest.iter().map(|&i| row[i] as f32).collect();
            // A rotation is normalized in f64 (in f32, tiny components square into denormals).
            let q = glam::DQuat::from_xyzw(r[11].into(), r[12].into(), r[13].into(), r[10].into());
            let length = q.length();
            // A scale must be finite and above zero (a log-scale under about -103 underflows to zero).
            let scale = [r[7].exp(), r[8].exp(), r[9].exp()];
            let usable = scale.iter().all(|s| s.is_finite() && *s > 0.0);
            if r.iter().chain(&f).any(|v| !v.is_finite()) || length == 0.0 || !usable {
                continue;
            }
            out.positions.push([r[0], r[1], r[2]]);
            out.scales.push(scale);
            let q = (q / length).as_quat();
            out.rotations.push([q.x, q.y, q.z, q.w]);
            out.opacities.push(1.0 / (1.0 + (-r[6]).exp()));
            out.sh.push([r[3], r[4], r[5]]);
            let per = coeffs - 1;
            for k in 0..per {
                out.sh.push([f[k], f[per + k], f[2 * per + k]]);
            }
        }
        if out.positions.is_empty() {
            return None;
        }
        Some(out)
    }
}

/// The invariant for one mutant. Returns Ok(true) when it loaded, Ok(false) when it was refused properly.
fn check(path: &Path, bytes: &[u8], what: &str) -> Result<bool, String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let baseline = ALLOCATOR.allocated();
    ALLOCATOR
        .set_limit(baseline + MEMORY_PER_FILE_BYTE * bytes.len() + MEMORY_SLACK)
        .map_err(|()| "cannot set the allocation cap".to_string())?;
    let (send, receive) = mpsc::channel();
    let owned = path.to_path_buf();
    let loader = std::thread::spawn(move || {
        let _ = send.send(load_ply(&owned, &mut |_| {}));
    });
    let outcome = receive.recv_timeout(Duration::from_secs(10));
    let joined = if outcome.is_ok() { loader.join() } else { Ok(()) };
    ALLOCATOR.set_limit(usize::MAX).map_err(|()| "cannot lift the allocation cap".to_string())?;
    let result = match (outcome, joined) {
        (Ok(result), Ok(())) => result,
        (Err(mpsc::RecvTimeoutError::Timeout), _) => return Err(format!("{what}: the load hung (10 s)")),
        _ => return Err(format!("{what}: the loader panicked")),
    };
    match result {
        Err(error) => {
            let message = error.to_string();
            let name = path.display().to_string();
            if !message.contains(&name) {
                return Err(format!("{what}: the error does not name the file: {message}"));
            }
            if message.contains('\n') || message.len() > name.len() + 300 {
                return Err(format!("{what}: the error is not one short line: {message:?}"));
            }
            Ok(false)
        }
        Ok(scene) => {
            let Some(want) = reference::read(bytes) else {
                return Err(format!(
                    "{what}: loaded {} splats, but the reference reading refuses the file",
                    scene.len()
                ));
            };
            compare(&scene, &want).map_err(|e| format!("{what}: loaded data differs from the reference: {e}"))?;
            Ok(true)
        }
    }
}

fn compare(scene: &Scene, want: &reference::Splats) -> Result<(), String> {
    if scene.len() != want.positions.len() || scene.sh_degree != want.sh_degree {
        return Err(format!(
            "{} splats at SH {} where the reference has {} at SH {}",
            scene.len(),
            scene.sh_degree,
            want.positions.len(),
            want.sh_degree
        ));
    }
    for i in 0..scene.len() {
        let finite = scene.positions[i].is_finite()
            && scene.scales[i].is_finite()
            && scene.rotations[i].is_finite()
            && scene.opacities[i].is_finite()
            && scene.sh_of(i).iter().flatten().all(|v| v.is_finite());
        if !finite {
            return Err(format!("splat {i} has a non-finite value"));
        }
        let q = scene.rotations[i];
        if scene.positions[i].to_array() != want.positions[i]
            || scene.scales[i].to_array() != want.scales[i]
            || [q.x, q.y, q.z, q.w] != want.rotations[i]
            || scene.opacities[i] != want.opacities[i]
        {
            return Err(format!("splat {i}: geometry or opacity differs"));
        }
    }
    if scene.sh != want.sh {
        return Err("SH coefficients differ".into());
    }
    Ok(())
}

#[test]
fn mutated_ply_files_load_correctly_or_fail_clearly() {
    let cases: usize = std::env::var("SPLATSORT_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6000);
    let seed: u64 = std::env::var("SPLATSORT_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    let dir: PathBuf = std::env::temp_dir().join(format!("splatsort-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("mutant.ply");
    let seeds = seeds();

    // The seeds themselves load, and match the reference: the harness can tell a good file from a bad one.
    for (name, bytes) in &seeds {
        assert!(check(&path, bytes, name).expect("a seed passes the invariant"), "seed {name} must load");
    }

    let mut rng = Rng::new(seed);
    let (mut loaded, mut refused) = (0usize, 0usize);
    let mut failures = Vec::new();
    for case in 0..cases {
        let (name, bytes) = rng.pick(&seeds);
        let (mutant, what) = mutate(bytes, &mut rng);
        match check(&path, &mutant, &format!("case {case} ({name}, {what})")) {
            Ok(true) => loaded += 1,
            Ok(false) => refused += 1,
            Err(failure) => {
                let keep = dir.join(format!("failure-{case}.ply"));
                let _ = std::fs::write(&keep, &mutant);
                failures.push(format!("{failure} [kept as {}]", keep.display()));
                if failures.len() >= 10 {
                    break;
                }
            }
        }
    }
    eprintln!("{cases} mutants: {loaded} loaded and matched the reference, {refused} refused with a clear error");

    // Memory stays a small multiple of the file for every encoding at a size where it shows: through a generic
    // row reader, big-endian and ASCII bodies took ~4.3 KB per splat, 17x the binary file.
    for (name, encoding) in [("big-endian", PlyEncoding::BinaryBigEndian), ("ASCII", PlyEncoding::Ascii)] {
        let mut bytes = Vec::new();
        write_ply(&common::sample_scene(20_000, 3), &mut bytes, encoding).expect("write");
        match check(&path, &bytes, &format!("20,000 splats, {name}")) {
            Ok(true) => {}
            Ok(false) => failures.push(format!("the 20,000-splat {name} file did not load")),
            Err(failure) => failures.push(failure),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(loaded > cases / 20 && refused > cases / 4, "the mutants exercise both outcomes: {loaded} / {refused}");
    let _ = std::fs::remove_dir_all(&dir);
}
