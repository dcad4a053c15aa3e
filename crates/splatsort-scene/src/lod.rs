//! PlayCanvas LOD bundles ("Streamed SOG", format version 1): a `lod-meta.json` that splits a scene into levels of
//! detail, each level stored as SOG chunks beside it (folder-form `meta.json`s, as splat-transform writes and the
//! format's specification requires; `.sog` bundles are read too, since SuperSplat's publishing docs speak of them),
//! indexed by a spatial tree.
//!
//! How it works: `lod-meta.json` holds `lodLevels` (level 0 is the finest, higher levels coarser: the specification
//! says so, and splat-transform takes level `n` from the input tagged `--tag-lod n`), optionally `counts` (splats per
//! level), `filenames` (chunk paths relative to the folder of `lod-meta.json`, `/` between folders), and `tree`: a
//! binary tree of nodes with a `bound` (min/max box) and either `children` or, at the leaves, `lods`, which maps a
//! level (a decimal key) to `{file, offset, count}`: `count` splats starting at splat `offset` of chunk
//! `filenames[file]`. A level's splats are the union of its leaves' slices; the writer appends each leaf's splats to
//! the level's current chunk in tree order, so slices of one chunk are disjoint and, taken in tree order, cover it.
//! Every number is checked before any chunk is decoded: the tree's depth and node count are bounded (so a hostile
//! file cannot recurse or allocate without end), levels, files and counts stay within `MAX_TILED_SPLATS`, per-level
//! totals match `counts`, names are plain relative paths, and each chunk's declared splat count (read from its
//! `meta.json` alone) holds every slice taken from it. Loading then walks the chosen level's slices in tree order,
//! decoding a chunk when its first slice comes and dropping it after its last, so only the chunks in use are held
//! beside the growing scene. `bound` and the optional per-node `errors` (screen-error tables for streaming) are not
//! needed to load a level and are not read; nor is the optional `environment` SOG (background splats shown at every
//! level), which `load_lod` leaves out and names in `info.format`.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::sog::{is_zip, load_sog};
use super::{MAX_TILED_SPLATS, Scene, SceneError, SceneInfo, sh_coeffs_for_degree};

/// The name splat-transform gives the file.
const LOD_META_NAME: &str = "lod-meta.json";
/// The largest lod-meta.json read. A real one spends about 250 bytes a leaf; a scene of `MAX_TILED_SPLATS` in
/// splat-transform's default chunks (512K splats) has a few thousand leaves, so 64 MiB is far past any real file and
/// still a bounded read.
const MAX_LOD_META_BYTES: u64 = 64 << 20;
/// The largest chunk meta.json read for its count (as the SOG reader bounds it: an SH-3 one is 16 KB).
const MAX_CHUNK_META_BYTES: u64 = 4 << 20;
/// Levels a bundle may declare. splat-transform's users make a handful; 64 halvings of a scene leave nothing.
const MAX_LEVELS: usize = 64;
/// Chunk files a bundle may name: 2^16 chunks of the writer's smallest useful size (a few thousand splats) already
/// pass `MAX_TILED_SPLATS`.
const MAX_CHUNK_FILES: usize = 1 << 16;
/// Tree nodes walked. The writer's tree is binary with a leaf per chunk-sized cell: thousands of nodes in a real
/// scene; a million bounds the walk of a hostile one.
const MAX_NODES: usize = 1 << 20;
/// Tree depth. The writer splits at the median, so depth grows with log2 of the splats (28 for `MAX_TILED_SPLATS`)
/// plus splits made for extent; 48 leaves room and keeps well inside serde_json's own nesting limit (128 JSON
/// levels, two per tree level), so this check, not the parser's, is what a deep file meets.
const MAX_TREE_DEPTH: usize = 48;
/// Longest chunk name accepted.
const MAX_NAME_LEN: usize = 1024;

/// One level of a bundle, for `splatsort info`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LodLevel {
    /// 0 is the finest.
    pub level: usize,
    /// Splats in the level (the sum of its slices in the tree).
    pub splats: u64,
    /// Distinct chunk files the level's slices come from.
    pub chunks: usize,
}

/// `count` splats from splat `offset` of chunk `filenames[file]`.
#[derive(Clone, Copy, Debug)]
struct Slice {
    file: usize,
    offset: u64,
    count: u64,
}

/// lod-meta.json, checked on its own (not yet against the chunks).
struct LodMeta {
    filenames: Vec<String>,
    /// Per level, its slices in tree order (depth first, a node's own `lods` before its children).
    slices: Vec<Vec<Slice>>,
    /// Per level, the sum of its slices' counts.
    totals: Vec<u64>,
    environment: Option<String>,
    bytes: u64,
}

impl LodMeta {
    fn level(&self, level: usize) -> LodLevel {
        let mut files: Vec<usize> = self.slices[level].iter().map(|s| s.file).collect();
        files.sort_unstable();
        files.dedup();
        LodLevel { level, splats: self.totals[level], chunks: files.len() }
    }
}

/// Whether `path` is a LOD bundle's index: named `lod-meta.json`, or (a renamed copy) a `.json` file whose top level
/// has all three of `lodLevels`, `filenames` and `tree`, which no other JSON splatsort reads has (a SOG meta.json has
/// `means`, a glTF `asset`/`accessors`). The name is enough on its own so that sniffing never parses a real index
/// twice; the content check reads at most `MAX_LOD_META_BYTES`.
pub fn is_lod_meta(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    if name.eq_ignore_ascii_case(LOD_META_NAME) {
        return true;
    }
    if !name.to_ascii_lowercase().ends_with(".json") {
        return false;
    }
    let Ok((file, size)) = super::open_regular_file(path) else { return false };
    if size > MAX_LOD_META_BYTES {
        return false;
    }
    let mut bytes = Vec::new();
    if file.take(MAX_LOD_META_BYTES).read_to_end(&mut bytes).is_err() {
        return false;
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(root)) => ["lodLevels", "filenames", "tree"].iter().all(|k| root.contains_key(*k)),
        _ => false,
    }
}

/// The levels of a bundle with their splat and chunk counts, from lod-meta.json alone (no chunk is opened).
pub fn lod_levels(path: &Path) -> Result<Vec<LodLevel>, SceneError> {
    let meta = parse(path)?;
    Ok((0..meta.slices.len()).map(|level| meta.level(level)).collect())
}

/// Loads one level of a LOD bundle: `None` for the finest (level 0), `Some(n)` for level `n`. The level's slices
/// are concatenated in the tree's order; SH is cut to the lowest degree among the chunks read. `progress` gets the
/// fraction done.
pub fn load_lod(path: &Path, level: Option<usize>, progress: &mut dyn FnMut(f32)) -> Result<Scene, SceneError> {
    let start = std::time::Instant::now();
    let display = path.display().to_string();
    let bad = |message: String| SceneError::Unsupported { path: display.clone(), message };
    let meta = parse(path)?;
    let levels = meta.slices.len();
    let level = level.unwrap_or(0);
    if level >= levels {
        let listed: Vec<String> = (0..levels)
            .map(|l| {
                let info = meta.level(l);
                format!("{l} ({} splats in {} chunks)", info.splats, info.chunks)
            })
            .collect();
        return Err(bad(format!(
            "there is no level {level}; the bundle has {levels} (0 is the finest): {}",
            listed.join(", ")
        )));
    }
    let slices = &meta.slices[level];
    let total = meta.totals[level];
    if total == 0 {
        return Err(bad(format!("level {level} holds no splats")));
    }

    // Check every chunk of the level against its slices before decoding any: a lying offset or count is an error
    // here, not a short scene.
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    // Each chunk's slices, and the chunks in the order the tree first reads them (one pass: a hostile file may
    // name 2^16 chunks and a million slices).
    let mut ranges_of: Vec<Vec<(u64, u64)>> = vec![Vec::new(); meta.filenames.len()];
    let mut files: Vec<usize> = Vec::new();
    for s in slices {
        if ranges_of[s.file].is_empty() {
            files.push(s.file);
        }
        ranges_of[s.file].push((s.offset, s.offset + s.count));
    }
    let mut chunk_counts = vec![0u64; meta.filenames.len()];
    let mut covers_whole = vec![false; meta.filenames.len()];
    for &file in &files {
        let name = &meta.filenames[file];
        let chunk_path = chunk_path(&dir, name);
        if same_file(&chunk_path, path) {
            return Err(bad(format!(
                "chunk `{name}` (filenames[{file}]) of level {level} is this lod-meta.json itself; a chunk is a SOG \
                 meta.json or .sog bundle"
            )));
        }
        let count = chunk_count(&chunk_path)
            .map_err(|e| bad(format!("chunk `{name}` (filenames[{file}]) of level {level}: {e}")))?;
        let ranges = &mut ranges_of[file];
        ranges.sort_unstable();
        let mut end = 0;
        for &(from, to) in ranges.iter() {
            if to > count {
                return Err(bad(format!(
                    "level {level} takes splats {from}..{to} of chunk `{name}`, which holds {count} splats"
                )));
            }
            if from < end {
                return Err(bad(format!(
                    "level {level} takes splats {from}..{to} of chunk `{name}` twice (an earlier slice ends at {end})"
                )));
            }
            end = to;
        }
        covers_whole[file] = ranges.iter().map(|(from, to)| to - from).sum::<u64>() == count;
        chunk_counts[file] = count;
    }
    // What the level decodes, whatever share of it it keeps, within what splatsort handles.
    let decoded: u64 = files.iter().map(|&f| chunk_counts[f]).sum();
    if decoded > MAX_TILED_SPLATS {
        return Err(bad(format!(
            "level {level} reads chunks of {decoded} splats in all, more than the {MAX_TILED_SPLATS} splatsort handles"
        )));
    }
    progress(0.02);

    // The last slice that reads each chunk, so it can be dropped right after.
    let mut last_use = vec![0usize; meta.filenames.len()];
    for (i, s) in slices.iter().enumerate() {
        last_use[s.file] = i;
    }
    let weight: u64 = files.iter().map(|&f| chunk_counts[f]).sum::<u64>().max(1);
    let mut done: u64 = 0;

    let mut out = Scene::default();
    let mut degree: Option<u32> = None;
    let mut file_bytes = meta.bytes;
    let mut antialiased = false;
    let mut dropped = 0usize;
    // Decoded chunks in use, and chunks already appended whole (see below).
    let mut open: Vec<Option<Scene>> = vec![None; meta.filenames.len()];
    let mut appended_whole = vec![false; meta.filenames.len()];
    for (i, s) in slices.iter().enumerate() {
        let name = &meta.filenames[s.file];
        if open[s.file].is_none() && !appended_whole[s.file] {
            let count = chunk_counts[s.file];
            let base = done as f32 / weight as f32;
            let share = count as f32 / weight as f32;
            let chunk = load_sog(&chunk_path(&dir, name), &mut |f| progress(0.02 + 0.96 * (base + share * f)))
                .map_err(|e| bad(format!("chunk `{name}` (filenames[{}]) of level {level}: {e}", s.file)))?;
            done += count;
            file_bytes += chunk.info.file_bytes;
            antialiased |= chunk.info.antialiased;
            dropped += chunk.info.dropped_invalid;
            if (chunk.len() + chunk.info.dropped_invalid) as u64 != count {
                return Err(bad(format!(
                    "chunk `{name}` declares {count} splats but decodes to {}",
                    chunk.len() + chunk.info.dropped_invalid
                )));
            }
            // A lower degree than the scene so far cuts what is already there; a higher one is cut on copy.
            match degree {
                Some(d) if chunk.sh_degree < d => {
                    cut_sh(&mut out, chunk.sh_degree);
                    degree = Some(chunk.sh_degree);
                }
                None => {
                    out.sh_degree = chunk.sh_degree;
                    degree = Some(chunk.sh_degree);
                    reserve(&mut out, total as usize).map_err(|bytes| SceneError::OutOfMemory {
                        path: display.clone(),
                        count: total,
                        bytes: bytes as u64,
                    })?;
                }
                _ => {}
            }
            if chunk.info.dropped_invalid > 0 {
                // The loader dropped splats with NaN or no extent, so offsets past them no longer point at the
                // right splat. A chunk the level takes whole needs no offsets: append what survived, once.
                if !covers_whole[s.file] {
                    return Err(bad(format!(
                        "chunk `{name}` has {} invalid splats and level {level} takes only part of it, so its \
                         offsets cannot be followed",
                        chunk.info.dropped_invalid
                    )));
                }
                append(&mut out, &chunk, 0, chunk.len());
                appended_whole[s.file] = true;
                continue;
            }
            open[s.file] = Some(chunk);
        }
        if let Some(chunk) = &open[s.file] {
            // Offsets were checked against the declared count, which the decoded chunk was just checked to hold.
            append(&mut out, chunk, s.offset as usize, s.count as usize);
        }
        if last_use[s.file] == i {
            open[s.file] = None;
        }
    }
    progress(1.0);
    if out.is_empty() {
        return Err(SceneError::AllInvalid { path: display, count: dropped });
    }
    let environment = match &meta.environment {
        Some(name) => format!("; environment `{name}` not loaded"),
        None => String::new(),
    };
    let finest = if level == 0 { ", the finest" } else { "" };
    out.info = SceneInfo {
        path: path.to_path_buf(),
        format: format!(
            "SOG LOD bundle (level {level} of {levels}{finest}: {} chunks, {} splats, SH degree {}{environment})",
            files.len(),
            grouped(out.len() as u64),
            out.sh_degree
        ),
        file_bytes,
        load_secs: start.elapsed().as_secs_f64(),
        dropped_invalid: dropped,
        antialiased,
        parts: Vec::new(),
    };
    Ok(out)
}

/// Reads and checks lod-meta.json.
fn parse(path: &Path) -> Result<LodMeta, SceneError> {
    let display = path.display().to_string();
    let bad = |message: String| SceneError::Unsupported { path: display.clone(), message };
    let (file, bytes) = super::open_regular_file(path)?;
    if bytes > MAX_LOD_META_BYTES {
        return Err(bad(format!(
            "{bytes} bytes is more than a lod-meta.json holds (at most {MAX_LOD_META_BYTES} are read)"
        )));
    }
    let mut text = Vec::new();
    file.take(MAX_LOD_META_BYTES)
        .read_to_end(&mut text)
        .map_err(|error| SceneError::Io { path: display.clone(), error })?;
    let root = crate::json::parse(&text).map_err(|why| bad(format!("not a lod-meta.json: {why}")))?;
    let root = root.as_object().ok_or_else(|| bad("not a lod-meta.json: not a JSON object".into()))?;
    check_fields(root, text.len() as u64).map_err(bad)
}

fn check_fields(root: &Map<String, Value>, bytes: u64) -> Result<LodMeta, String> {
    match root.get("version") {
        // splat-transform wrote no version before version 1; both read the same.
        None => {}
        Some(v) if whole(v) == Some(1) => {}
        Some(v) => return Err(format!("`version` is {v}; splatsort reads lod-meta.json version 1")),
    }
    let levels = root.get("lodLevels").ok_or("not a lod-meta.json: no `lodLevels`")?;
    let levels = match whole(levels) {
        Some(n) if (1..=MAX_LEVELS as u64).contains(&n) => n as usize,
        _ => return Err(format!("`lodLevels` is {levels}, not a whole number from 1 to {MAX_LEVELS}")),
    };
    let counts = match root.get("counts") {
        None => None,
        Some(Value::Array(counts)) if counts.len() == levels => Some(
            counts
                .iter()
                .enumerate()
                .map(|(i, c)| match whole(c) {
                    Some(n) if n <= MAX_TILED_SPLATS => Ok(n),
                    _ => Err(format!("`counts[{i}]` is {c}, not a whole number up to {MAX_TILED_SPLATS}")),
                })
                .collect::<Result<Vec<u64>, String>>()?,
        ),
        Some(c) => return Err(format!("`counts` is {c}; it must be an array of {levels} splat counts, one per level")),
    };
    // `count` (the splats of every level together) is informational: nothing reads it, and a file whose `count`
    // disagrees with `counts` loads as splat-transform loads it.
    if let (Some(counts), Some(count)) = (&counts, root.get("count")) {
        let sum: u64 = counts.iter().sum();
        if whole(count) != Some(sum) {
            log::warn!("lod-meta.json's `count` is {count} but `counts` add up to {sum}; `count` is not used");
        }
    }
    let names = match root.get("filenames") {
        Some(Value::Array(names)) if names.len() <= MAX_CHUNK_FILES => names,
        Some(Value::Array(names)) => {
            return Err(format!("`filenames` names {} chunks, more than the {MAX_CHUNK_FILES} read", names.len()));
        }
        Some(v) => return Err(format!("`filenames` is {v}, not an array of chunk names")),
        None => return Err("not a lod-meta.json: no `filenames`".into()),
    };
    let filenames = names
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let name = v.as_str().ok_or_else(|| format!("`filenames[{i}]` is {v}, not a file name"))?;
            check_name(name).map_err(|e| format!("`filenames[{i}]` {e}"))?;
            Ok(name.to_owned())
        })
        .collect::<Result<Vec<String>, String>>()?;
    // One chunk named twice would be decoded and held once per name (a level taking a splat of each copy in turn
    // holds them all at once).
    let mut sorted: Vec<&String> = filenames.iter().collect();
    sorted.sort_unstable();
    if let Some(twice) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("`filenames` names `{}` twice", twice[0]));
    }
    let environment = match root.get("environment") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => {
            check_name(name).map_err(|e| format!("`environment` {e}"))?;
            Some(name.clone())
        }
        Some(v) => return Err(format!("`environment` is {v}, not a file name")),
    };
    let tree = root.get("tree").ok_or("not a lod-meta.json: no `tree`")?;
    let slices = walk(tree, levels, filenames.len())?;

    let mut totals = Vec::with_capacity(levels);
    for (level, slices) in slices.iter().enumerate() {
        let total = slices.iter().try_fold(0u64, |sum, s| sum.checked_add(s.count).filter(|&t| t <= MAX_TILED_SPLATS));
        let total = total.ok_or_else(|| {
            format!(
                "the tree's slices of level {level} add up to more than the {MAX_TILED_SPLATS} splats splatsort handles"
            )
        })?;
        if let Some(counts) = &counts
            && counts[level] != total
        {
            return Err(format!(
                "`counts[{level}]` is {} but the tree's slices of level {level} add up to {total}",
                counts[level]
            ));
        }
        totals.push(total);
    }
    Ok(LodMeta { filenames, slices, totals, environment, bytes })
}

/// The tree's slices per level, depth first, checking every node. An explicit stack, so a deep file costs a
/// bounded loop and an error rather than the call stack.
fn walk(tree: &Value, levels: usize, files: usize) -> Result<Vec<Vec<Slice>>, String> {
    let mut slices = vec![Vec::new(); levels];
    let mut stack: Vec<(&Value, usize, String)> = vec![(tree, 0, "tree".to_owned())];
    let mut nodes = 0usize;
    while let Some((node, depth, at)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(format!("the tree has more than {MAX_NODES} nodes"));
        }
        if depth > MAX_TREE_DEPTH {
            return Err(format!("the tree is deeper than {MAX_TREE_DEPTH} levels (at `{at}`)"));
        }
        let node = node.as_object().ok_or_else(|| format!("`{at}` is not a node (a JSON object)"))?;
        match node.get("lods") {
            None | Some(Value::Null) => {}
            Some(Value::Object(lods)) => {
                for (key, slice) in lods {
                    let level = match key.parse::<usize>() {
                        Ok(l) if l < levels && key.bytes().all(|b| b.is_ascii_digit()) => l,
                        _ => {
                            return Err(format!(
                                "`{at}.lods` has the level `{key}`; the levels are 0 to {}",
                                levels - 1
                            ));
                        }
                    };
                    let number = |field: &str, max: u64| -> Result<u64, String> {
                        let v = slice.get(field).ok_or_else(|| format!("`{at}.lods.{key}` has no `{field}`"))?;
                        whole(v)
                            .filter(|&n| n <= max)
                            .ok_or_else(|| format!("`{at}.lods.{key}.{field}` is {v}, not a whole number up to {max}"))
                    };
                    if files == 0 {
                        return Err(format!("`{at}.lods.{key}` names a chunk but `filenames` is empty"));
                    }
                    let file = number("file", files as u64 - 1)? as usize;
                    let offset = number("offset", MAX_TILED_SPLATS)?;
                    let count = number("count", MAX_TILED_SPLATS - offset)?;
                    // An empty slice adds nothing, and must not make a level open its chunk.
                    if count > 0 {
                        slices[level].push(Slice { file, offset, count });
                    }
                }
            }
            Some(v) => return Err(format!("`{at}.lods` is {v}, not an object of levels")),
        }
        match node.get("children") {
            None | Some(Value::Null) => {}
            Some(Value::Array(children)) => {
                // Counted before they are stacked: a flat list of millions of children is refused, not stacked.
                if nodes + stack.len() + children.len() > MAX_NODES {
                    return Err(format!("the tree has more than {MAX_NODES} nodes"));
                }
                // Reversed onto the stack so they come off in order.
                for (i, child) in children.iter().enumerate().rev() {
                    let child_at = if depth < 4 { format!("{at}.children[{i}]") } else { format!("{at}[{i}]") };
                    stack.push((child, depth + 1, child_at));
                }
            }
            Some(v) => return Err(format!("`{at}.children` is {v}, not an array of nodes")),
        }
    }
    Ok(slices)
}

/// A JSON number that is a whole number (JavaScript writes `3` but may write `3.0` through other tools).
fn whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 2f64.powi(53)).map(|x| x as u64))
}

/// A chunk name must stay inside the bundle's folder: relative, `/` between folders (what the format writes on every
/// platform), no empty, `.` or `..` component, no backslash (a separator on Windows) or colon (a drive or URL).
fn check_name(name: &str) -> Result<(), String> {
    let reason = if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_NAME_LEN {
        Some("is too long")
    } else if name.starts_with('/') {
        Some("is an absolute path")
    } else if name.contains(['\\', ':', '\0']) {
        Some("holds `\\`, `:` or NUL")
    } else if name.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        Some("has an empty, `.` or `..` folder")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(format!("`{name}` {reason}; chunk names are relative paths inside the bundle's folder")),
        None => Ok(()),
    }
}

/// Whether two paths name one file (the same canonical path: links and `..` resolved).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn chunk_path(dir: &Path, name: &str) -> PathBuf {
    name.split('/').fold(dir.to_path_buf(), |p, c| p.join(c))
}

/// The splat count a chunk declares in its meta.json (the folder form's file, or a `.sog` bundle's entry), without
/// decoding its images. Errors name the chunk's path.
fn chunk_count(path: &Path) -> Result<u64, String> {
    let shown = path.display();
    let (mut file, size) = super::open_regular_file(path).map_err(|e| e.to_string())?;
    let mut head = Vec::with_capacity(4);
    (&mut file).take(4).read_to_end(&mut head).map_err(|e| format!("{shown}: cannot read the file: {e}"))?;
    let mut text = Vec::new();
    if is_zip(&head) {
        file.rewind().map_err(|e| format!("{shown}: cannot read the file: {e}"))?;
        let mut archive =
            zip::ZipArchive::new(file).map_err(|e| format!("{shown}: not a readable SOG bundle (ZIP archive): {e}"))?;
        let entry = archive.by_name("meta.json").map_err(|e| format!("{shown}: no readable `meta.json` entry: {e}"))?;
        if entry.size() > MAX_CHUNK_META_BYTES {
            return Err(format!(
                "{shown}: its meta.json holds {} bytes, more than a SOG meta.json holds",
                entry.size()
            ));
        }
        // Read to its end (one byte past the most accepted), where the zip crate checks its CRC-32.
        entry
            .take(MAX_CHUNK_META_BYTES + 1)
            .read_to_end(&mut text)
            .map_err(|e| format!("{shown}: cannot read meta.json: {e}"))?;
    } else {
        if size > MAX_CHUNK_META_BYTES {
            return Err(format!("{shown}: {size} bytes is more than a SOG meta.json holds"));
        }
        file.rewind()
            .and_then(|_| file.read_to_end(&mut text))
            .map_err(|e| format!("{shown}: cannot read the file: {e}"))?;
    }
    let root = crate::json::parse(&text).map_err(|why| format!("{shown}: not a SOG meta.json: {why}"))?;
    if ["lodLevels", "filenames", "tree"].iter().all(|k| root.get(k).is_some()) {
        return Err(format!(
            "{shown} is an LOD bundle's lod-meta.json, not a SOG chunk (a chunk is a SOG meta.json or .sog bundle; \
             bundles do not nest)"
        ));
    }
    // Version 2 states `count`; version 1 has only `means.shape`, [count, 3].
    let count = root.get("count").or_else(|| root.get("means").and_then(|m| m.get("shape")).and_then(|s| s.get(0)));
    match count.and_then(whole) {
        Some(n) if n <= MAX_TILED_SPLATS => Ok(n),
        _ => Err(format!("{shown}: its meta.json states no splat count up to {MAX_TILED_SPLATS}")),
    }
}

/// Reserves room for `count` more splats at the scene's SH degree (the first chunk's, which later chunks only lower),
/// returning the bytes asked for when the allocator refuses.
fn reserve(scene: &mut Scene, count: usize) -> Result<(), usize> {
    let coeffs = sh_coeffs_for_degree(scene.sh_degree);
    let bytes = count * (12 + 12 + 16 + 4 + 12 * coeffs);
    scene.positions.try_reserve(count).map_err(|_| bytes)?;
    scene.scales.try_reserve(count).map_err(|_| bytes)?;
    scene.rotations.try_reserve(count).map_err(|_| bytes)?;
    scene.opacities.try_reserve(count).map_err(|_| bytes)?;
    scene.sh.try_reserve(count * coeffs).map_err(|_| bytes)
}

/// Appends `count` splats of `chunk` from `offset`, cutting their SH to `out`'s degree (never above the chunk's).
fn append(out: &mut Scene, chunk: &Scene, offset: usize, count: usize) {
    let range = offset..offset + count;
    out.positions.extend_from_slice(&chunk.positions[range.clone()]);
    out.scales.extend_from_slice(&chunk.scales[range.clone()]);
    out.rotations.extend_from_slice(&chunk.rotations[range.clone()]);
    out.opacities.extend_from_slice(&chunk.opacities[range.clone()]);
    let keep = sh_coeffs_for_degree(out.sh_degree);
    let stride = sh_coeffs_for_degree(chunk.sh_degree);
    for i in range {
        out.sh.extend_from_slice(&chunk.sh[i * stride..i * stride + keep]);
    }
}

/// Cuts the SH of every splat in `scene` to `degree` (lower than its own), in place.
fn cut_sh(scene: &mut Scene, degree: u32) {
    let keep = sh_coeffs_for_degree(degree);
    let stride = sh_coeffs_for_degree(scene.sh_degree);
    for i in 0..scene.len() {
        scene.sh.copy_within(i * stride..i * stride + keep, i * keep);
    }
    scene.sh.truncate(scene.len() * keep);
    scene.sh_degree = degree;
}

/// 40000 as "40,000".
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
