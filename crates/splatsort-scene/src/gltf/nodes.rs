//! The document's frame: `asset` (a glTF 2.0 file, or one a 2.0 reader may read), and the scene graph walked into
//! the mesh instances it shows, each with its node's world transform.
//!
//! How it works: the scene is `scene`, or the only one in `scenes` (several with none named is an error: there is
//! no telling which to show); a file without `scenes` shows every root node, and one without nodes every mesh once,
//! untransformed. Before the walk every node's `children` are checked as glTF requires: indices that exist, at most
//! one parent a node, and no cycle (with one parent each, the nodes no root reaches are exactly those on or under a
//! cycle). The walk then visits each node once, so instances are bounded by the nodes the file lists.

use glam::{DMat4, DQuat, DVec3};
use serde_json::Value;

use super::{Errors, opt_u64};
use crate::SceneError;

/// A mesh shown by a node (None: a file without nodes, whose meshes are shown untransformed).
pub(super) struct Instance {
    pub(super) node: Option<usize>,
    pub(super) mesh: usize,
    /// glTF's axes, from the mesh's to the scene's: the node's matrix times its parents'.
    pub(super) world: DMat4,
}

/// Refuses a document that is not glTF 2.0: `asset.version` must be `2.x` (a later minor version is readable by a
/// 2.0 reader, the spec says) and `asset.minVersion`, when present, at most `2.0`.
pub(super) fn check_asset(e: &Errors, doc: &Value) -> Result<(), SceneError> {
    let asset = doc
        .get("asset")
        .filter(|a| a.is_object())
        .ok_or_else(|| e.unsupported("not a glTF 2.0 file: it has no `asset` object (glTF requires one)"))?;
    let version = |key: &str| -> Result<Option<(u64, u64)>, SceneError> {
        let Some(v) = asset.get(key) else { return Ok(None) };
        let parsed = v.as_str().and_then(|s| {
            let (major, minor) = s.split_once('.')?;
            let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
            (digits(major) && digits(minor)).then(|| Some((major.parse().ok()?, minor.parse().ok()?)))?
        });
        parsed.map(Some).ok_or_else(|| e.body(format!("`asset.{key}` is {v}, not a version like \"2.0\"")))
    };
    match version("version")? {
        None => return Err(e.unsupported("not a glTF 2.0 file: `asset` has no `version`")),
        Some((2, _)) => {}
        Some((major, minor)) => {
            return Err(e.unsupported(format!("glTF version {major}.{minor}; splatsort reads glTF 2.x")));
        }
    }
    if let Some((major, minor)) = version("minVersion")?
        && (major, minor) > (2, 0)
    {
        return Err(e.unsupported(format!(
            "the file needs a glTF {major}.{minor} reader (`asset.minVersion`); splatsort reads glTF 2.0"
        )));
    }
    Ok(())
}

fn array<'v>(doc: &'v Value, key: &str) -> &'v [Value] {
    doc.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The list under `key` of `value` as indices below `len`; `what` names the owner in errors.
fn indices(
    e: &Errors,
    value: &Value,
    key: &str,
    what: &str,
    target: &str,
    len: usize,
) -> Result<Vec<usize>, SceneError> {
    let Some(list) = value.get(key) else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or_else(|| e.body(format!("{what}: `{key}` is not an array")))?;
    list.iter()
        .map(|v| match v.as_u64() {
            Some(i) if (i as usize as u64) == i && (i as usize) < len => Ok(i as usize),
            _ => Err(e.body(format!("{what}: `{key}` names {target} {v}, but the file has {len}"))),
        })
        .collect()
}

/// The mesh instances the scene shows, in the order of a depth-first walk (a node before its children).
pub(super) fn instances(e: &Errors, doc: &Value) -> Result<Vec<Instance>, SceneError> {
    let nodes = array(doc, "nodes");
    let meshes = array(doc, "meshes");
    let mut children = Vec::with_capacity(nodes.len());
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        let list = indices(e, node, "children", &format!("node {i}"), "node", nodes.len())?;
        for &child in &list {
            if child == i {
                return Err(e.body(format!("node {i} is its own child; glTF's node hierarchy has no cycles")));
            }
            if let Some(other) = parent[child].replace(i) {
                return Err(e.body(format!(
                    "node {child} is a child of node {other} and of node {i}; a glTF node has at most one parent"
                )));
            }
        }
        children.push(list);
    }
    // Nodes reached from the roots; with one parent each, any other node is on or under a cycle.
    let mut reached = vec![false; nodes.len()];
    let mut stack: Vec<usize> = (0..nodes.len()).filter(|&i| parent[i].is_none()).collect();
    while let Some(i) = stack.pop() {
        reached[i] = true;
        stack.extend(&children[i]);
    }
    if let Some(start) = reached.iter().position(|r| !r) {
        // Up the parents until a node repeats: that loop is the cycle.
        let mut seen = vec![start];
        let mut place = vec![usize::MAX; nodes.len()];
        place[start] = 0;
        let mut at = start;
        while let Some(p) = parent[at] {
            if place[p] != usize::MAX {
                let cycle: Vec<String> = seen[place[p]..].iter().rev().map(|n| n.to_string()).collect();
                let shown = if cycle.len() > 8 {
                    format!("{} -> ... ({} nodes)", cycle[..4].join(" -> "), cycle.len())
                } else {
                    cycle.join(" -> ")
                };
                return Err(e.body(format!(
                    "nodes {shown} form a cycle (each the parent of the next, the last of the first); glTF's node \
                     hierarchy has no cycles"
                )));
            }
            place[p] = seen.len();
            seen.push(p);
            at = p;
        }
    }

    let scenes = array(doc, "scenes");
    let chosen = match opt_u64(e, doc, "scene", "the file")? {
        Some(s) if (s as usize) < scenes.len() && s < u64::from(u32::MAX) => Some(s as usize),
        Some(s) => {
            return Err(e.body(format!("`scene` is {s}, but the file has {} scenes", scenes.len())));
        }
        None if scenes.len() == 1 => Some(0),
        None if scenes.is_empty() => None,
        None => {
            return Err(
                e.unsupported(format!("the file has {} scenes and no `scene` saying which to show", scenes.len()))
            );
        }
    };
    let roots = match chosen {
        Some(s) => {
            let what = format!("scene {s}");
            let roots = indices(e, &scenes[s], "nodes", &what, "node", nodes.len())?;
            if let Some(&child) = roots.iter().find(|&&r| parent[r].is_some()) {
                return Err(e.body(format!(
                    "{what} lists node {child} as a root, but it is a child of node {}",
                    parent[child].unwrap_or_default()
                )));
            }
            roots
        }
        None if nodes.is_empty() => {
            return Ok((0..meshes.len()).map(|mesh| Instance { node: None, mesh, world: DMat4::IDENTITY }).collect());
        }
        None => (0..nodes.len()).filter(|&i| parent[i].is_none()).collect(),
    };

    let mut shown = Vec::new();
    let mut visited = vec![false; nodes.len()];
    let mut stack: Vec<(usize, DMat4)> = roots.iter().rev().map(|&r| (r, DMat4::IDENTITY)).collect();
    while let Some((i, above)) = stack.pop() {
        if std::mem::replace(&mut visited[i], true) {
            return Err(e.body(format!("the scene lists node {i} twice; a glTF node appears once in a scene")));
        }
        let world = above * node_matrix(e, &nodes[i], i)?;
        if let Some(mesh) = opt_u64(e, &nodes[i], "mesh", &format!("node {i}"))? {
            if mesh >= meshes.len() as u64 {
                return Err(e.body(format!("node {i} shows mesh {mesh}, but the file has {} meshes", meshes.len())));
            }
            shown.push(Instance { node: Some(i), mesh: mesh as usize, world });
        }
        stack.extend(children[i].iter().rev().map(|&c| (c, world)));
    }
    Ok(shown)
}

/// A node's local transform: `matrix` (column-major) or translation, rotation (a unit quaternion, normalized here)
/// and scale.
fn node_matrix(e: &Errors, node: &Value, index: usize) -> Result<DMat4, SceneError> {
    let numbers = |key: &str, n: usize| -> Result<Option<Vec<f64>>, SceneError> {
        let Some(v) = node.get(key) else { return Ok(None) };
        let values: Option<Vec<f64>> = v.as_array().and_then(|a| a.iter().map(Value::as_f64).collect());
        match values {
            Some(values) if values.len() == n && values.iter().all(|x| x.is_finite()) => Ok(Some(values)),
            _ => Err(e.body(format!("node {index}: `{key}` is not {n} finite numbers"))),
        }
    };
    if let Some(m) = numbers("matrix", 16)? {
        return Ok(DMat4::from_cols_slice(&m));
    }
    let t = numbers("translation", 3)?.map_or(DVec3::ZERO, |v| DVec3::from_slice(&v));
    let r = match numbers("rotation", 4)? {
        None => DQuat::IDENTITY,
        Some(v) => {
            let q = DQuat::from_slice(&v);
            let length = q.length();
            if !(length > 0.0 && length.is_finite()) {
                return Err(e.body(format!("node {index}: `rotation` {v:?} is not a unit quaternion")));
            }
            q / length
        }
    };
    let s = numbers("scale", 3)?.map_or(DVec3::ONE, |v| DVec3::from_slice(&v));
    Ok(DMat4::from_scale_rotation_translation(s, r, t))
}
