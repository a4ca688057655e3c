//! Maps a byte span of a TOML document back to the dotted key path it lies in
//! (`params.panels[0].epsilon`), so that `toml`'s errors, which carry a span but not a
//! public key path, can be reported as `<key>: <message>` on one line.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// The shape of a TOML document with the span of every key and value.
#[derive(Debug)]
pub struct KeyTree {
    root: Node,
}

#[derive(Debug)]
struct Node(Spanned<Shape>);

#[derive(Debug)]
enum Shape {
    Table(Vec<(Spanned<String>, Node)>),
    Array(Vec<Node>),
    Scalar,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Spanned::<Shape>::deserialize(d).map(Node)
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Shape::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Shape::Table(entries))
    }
}

impl KeyTree {
    /// Parses `text` as TOML and records the span of every key and value.
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        Ok(Self {
            root: toml::from_str(text)?,
        })
    }

    /// The dotted key path of the innermost key or value whose span contains `span`
    /// (empty when only the whole document does, or when `span` is empty: `toml` reports
    /// errors about the document itself, such as a missing top-level key, at `0..0`).
    pub fn path_at(&self, span: Range<usize>) -> String {
        if span.is_empty() {
            return String::new();
        }
        let mut best = (0usize, String::new());
        visit(&self.root, String::new(), 0, &span, &mut best);
        best.1
    }
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start < outer.end && outer.start <= inner.start && inner.end <= outer.end
}

fn visit(node: &Node, path: String, depth: usize, span: &Range<usize>, best: &mut (usize, String)) {
    if depth > best.0 && contains(&node.0.span(), span) {
        *best = (depth, path.clone());
    }
    match node.0.get_ref() {
        Shape::Table(entries) => {
            for (key, value) in entries {
                let child = if path.is_empty() {
                    key.get_ref().clone()
                } else {
                    format!("{path}.{}", key.get_ref())
                };
                if depth + 1 > best.0 && contains(&key.span(), span) {
                    *best = (depth + 1, child.clone());
                }
                visit(value, child, depth + 1, span, best);
            }
        }
        Shape::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                visit(item, format!("{path}[{i}]"), depth + 1, span, best);
            }
        }
        Shape::Scalar => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(text: &str, needle: &str) -> String {
        let start = text.find(needle).expect("needle present");
        KeyTree::parse(text)
            .expect("valid toml")
            .path_at(start..start + needle.len())
    }

    #[test]
    fn finds_keys_values_and_array_tables() {
        let text = "id = \"a\"\n[params]\nx = 1\n[[params.panels]]\nkey = \"p\"\neps = -1\n\
                    [[params.panels]]\nkey = \"q\"\ngrid = [3, 1]\n";
        assert_eq!(path_of(text, "\"a\""), "id");
        assert_eq!(path_of(text, "x"), "params.x");
        assert_eq!(path_of(text, "-1"), "params.panels[0].eps");
        assert_eq!(path_of(text, "[3, 1]"), "params.panels[1].grid");
        let one = text.find("[3, 1]").unwrap() + 4;
        assert_eq!(
            KeyTree::parse(text).unwrap().path_at(one..one + 1),
            "params.panels[1].grid[1]"
        );
    }

    #[test]
    fn inline_tables_and_empty_span() {
        let text = "a = { b = { c = 1 } }\n";
        assert_eq!(path_of(text, "c"), "a.b.c");
        assert_eq!(KeyTree::parse(text).unwrap().path_at(0..0), "");
    }
}
