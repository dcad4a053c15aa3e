//! Parsing the JSON files the readers meet (glTF, SOG's meta.json, LOD bundles' lod-meta.json) with one message
//! for the one way valid JSON is refused: serde_json stops at 128 levels of nesting (so a hostile file cannot
//! overflow the stack), and its error for that, "recursion limit exceeded", is filed under syntax errors.

use serde_json::Value;

/// serde_json's nesting limit: arrays and objects deeper than this are refused.
const MAX_NESTING: usize = 128;

/// The JSON value in `bytes`, or a message saying why not: either where the syntax breaks, or that the document
/// nests deeper than the parser follows.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|error| {
        let depth = nesting(bytes);
        if depth > MAX_NESTING {
            format!(
                "its JSON nests arrays and objects {depth} levels deep, deeper than the {MAX_NESTING} levels \
                 splatsort reads"
            )
        } else {
            format!("it is not valid JSON ({error})")
        }
    })
}

/// The deepest nesting of arrays and objects in `bytes`, brackets inside strings not counted (a scan that needs
/// no valid JSON, so it can explain why a parse failed).
fn nesting(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_valid_json_is_called_deep_and_broken_json_invalid() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let message = parse(deep.as_bytes()).expect_err("past serde_json's limit");
        assert!(message.contains("200 levels deep"), "{message}");
        let shallow = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(parse(shallow.as_bytes()).is_ok(), "100 levels parse");
        let message = parse(b"{\"a\": [1, 2}").expect_err("broken");
        assert!(message.contains("not valid JSON"), "{message}");
        // Brackets in strings are not nesting.
        assert_eq!(nesting(br#"{"a": "[[[[\"[[", "b": [1]}"#), 2, "strings skipped");
    }
}
