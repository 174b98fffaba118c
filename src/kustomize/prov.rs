//! Provenance: where each node of a built object came from.
//!
//! A [`Prov`] tree has the shape of the object's value: one node for each
//! map entry and list item, each with the source position that set it.
//! Every step of the build that changes the value changes the tree the same
//! way, so the two stay in step (see [`Prov::check_shape`] in tests).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostics::Location;
use crate::yaml::{pointer_segment, Positions};

/// A place in a source file: the file as findings name it, and a 1-based
/// line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Src {
    pub file: Arc<Path>,
    pub line: u32,
    pub column: u32,
}

impl Src {
    pub fn new(file: &Arc<Path>, line: usize, column: usize) -> Self {
        Src {
            file: Arc::clone(file),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }

    pub fn location(&self) -> Location {
        Location::at(self.file.as_ref(), self.line as usize, self.column as usize)
    }
}

/// The children of a provenance node, mirroring a map or a list.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Kids {
    #[default]
    Leaf,
    /// A scalar written quoted or as a block: Kustomize keeps that style
    /// when a patch or a transformer sets the value, so a number set there
    /// is written, and read back, as text.
    Quoted,
    Map(BTreeMap<String, Prov>),
    List(Vec<Prov>),
}

/// Where one node, and each node below it, came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Prov {
    pub at: Src,
    pub kids: Kids,
}

impl Prov {
    /// The tree of `value` with every node set by `at`.
    pub fn uniform(value: &Value, at: &Src) -> Prov {
        let kids = match value {
            Value::Object(map) => Kids::Map(
                map.iter()
                    .map(|(k, v)| (k.clone(), Prov::uniform(v, at)))
                    .collect(),
            ),
            Value::Array(items) => Kids::List(items.iter().map(|v| Prov::uniform(v, at)).collect()),
            _ => Kids::Leaf,
        };
        Prov {
            at: at.clone(),
            kids,
        }
    }

    /// The tree of `value` parsed from `file`, with the positions the YAML
    /// parser gave (lines moved down by `line_offset`, columns by
    /// `column_offset`); a node without a position takes its parent's.
    pub fn from_positions(
        value: &Value,
        positions: &Positions,
        file: &Arc<Path>,
        line_offset: usize,
        column_offset: usize,
    ) -> Prov {
        let root = Src::new(file, 1 + line_offset, 1);
        let mut pointer = String::new();
        let place = Place {
            positions,
            file,
            line_offset,
            column_offset,
        };
        place.walk(value, &mut pointer, &root)
    }

    /// The children of a scalar set here: none, in this node's style
    /// (see [`in_style_of`]).
    pub fn scalar_kids(&self) -> Kids {
        match self.kids {
            Kids::Quoted => Kids::Quoted,
            _ => Kids::Leaf,
        }
    }

    /// This node's position alone, without children.
    pub fn clone_leaf(&self) -> Prov {
        Prov {
            at: self.at.clone(),
            kids: Kids::Leaf,
        }
    }

    /// The child at a map key.
    pub fn key(&self, key: &str) -> Option<&Prov> {
        match &self.kids {
            Kids::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// The child at a list index.
    pub fn index(&self, i: usize) -> Option<&Prov> {
        match &self.kids {
            Kids::List(l) => l.get(i),
            _ => None,
        }
    }

    /// The child at a map key, mutable.
    pub fn key_mut(&mut self, key: &str) -> Option<&mut Prov> {
        match &mut self.kids {
            Kids::Map(m) => m.get_mut(key),
            _ => None,
        }
    }

    /// Sets the child at `key` of a map node (turning a leaf into a map).
    pub fn set_key(&mut self, key: &str, prov: Prov) {
        if !matches!(self.kids, Kids::Map(_)) {
            self.kids = Kids::Map(BTreeMap::new());
        }
        if let Kids::Map(m) = &mut self.kids {
            m.insert(key.to_string(), prov);
        }
    }

    /// Removes the child at `key`.
    pub fn remove_key(&mut self, key: &str) -> Option<Prov> {
        match &mut self.kids {
            Kids::Map(m) => m.remove(key),
            _ => None,
        }
    }

    /// The list children, mutable (turning a leaf into an empty list).
    pub fn list_mut(&mut self) -> Option<&mut Vec<Prov>> {
        if matches!(self.kids, Kids::Leaf | Kids::Quoted) {
            self.kids = Kids::List(Vec::new());
        }
        match &mut self.kids {
            Kids::List(l) => Some(l),
            _ => None,
        }
    }

    /// The node at a JSON pointer, or the deepest node on its way.
    pub fn nearest(&self, pointer: &str) -> &Prov {
        let mut node = self;
        for seg in segments(pointer) {
            let next = match &node.kids {
                Kids::Map(m) => m.get(&seg),
                Kids::List(l) => seg.parse::<usize>().ok().and_then(|i| l.get(i)),
                Kids::Leaf | Kids::Quoted => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        node
    }

    /// The node at a JSON pointer, mutable, if the tree has it.
    pub fn at_mut(&mut self, pointer: &str) -> Option<&mut Prov> {
        let mut node = self;
        for seg in segments(pointer) {
            node = match &mut node.kids {
                Kids::Map(m) => m.get_mut(&seg)?,
                Kids::List(l) => l.get_mut(seg.parse::<usize>().ok()?)?,
                Kids::Leaf | Kids::Quoted => return None,
            };
        }
        Some(node)
    }

    /// Whether the tree has exactly the shape of `value` (for tests).
    pub fn check_shape(&self, value: &Value) -> bool {
        match (value, &self.kids) {
            (Value::Object(map), Kids::Map(m)) => {
                map.len() == m.len()
                    && map
                        .iter()
                        .all(|(k, v)| m.get(k).is_some_and(|p| p.check_shape(v)))
            }
            (Value::Object(map), Kids::Leaf) => map.is_empty(),
            (Value::Array(items), Kids::List(l)) => {
                items.len() == l.len() && items.iter().zip(l).all(|(v, p)| p.check_shape(v))
            }
            (Value::Array(items), Kids::Leaf) => items.is_empty(),
            (Value::Object(_) | Value::Array(_), _) => false,
            (_, Kids::Leaf) => true,
            (_, Kids::Quoted) => value.is_string(),
            _ => false,
        }
    }
}

/// A scalar `new` set where the scalar `old` was, as Kustomize writes it:
/// in the old node's style. A number or a boolean over a string written
/// quoted or as a block (`"http"`, `'x'`, `|`, a generated `8080` or text
/// of several lines) is written quoted, so it is read back as text
/// (`port: 8080` over `port: "http"` is `"8080"`).
pub fn in_style_of(old: &Value, old_prov: &Prov, new: &Value) -> Value {
    match (old, new) {
        (Value::String(_), Value::Number(_) | Value::Bool(_))
            if matches!(old_prov.kids, Kids::Quoted) =>
        {
            Value::String(crate::yaml::scalar_text(new).unwrap_or_default())
        }
        _ => new.clone(),
    }
}

/// The decoded segments of a JSON pointer.
pub fn segments(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer.split('/').skip(1).map(crate::yaml::pointer_key)
}

struct Place<'a> {
    positions: &'a Positions,
    file: &'a Arc<Path>,
    line_offset: usize,
    column_offset: usize,
}

impl Place<'_> {
    fn walk(&self, value: &Value, pointer: &mut String, parent: &Src) -> Prov {
        let at = match self.positions.get(pointer) {
            Some((line, column)) => Src::new(
                self.file,
                line + self.line_offset,
                column + self.column_offset,
            ),
            None => parent.clone(),
        };
        let len = pointer.len();
        let kids = match value {
            Value::Object(map) => {
                let mut kids = BTreeMap::new();
                for (k, v) in map {
                    pointer.push('/');
                    pointer.push_str(&pointer_segment(k));
                    kids.insert(k.clone(), self.walk(v, pointer, &at));
                    pointer.truncate(len);
                }
                Kids::Map(kids)
            }
            Value::Array(items) => {
                let mut kids = Vec::with_capacity(items.len());
                for (i, v) in items.iter().enumerate() {
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    kids.push(self.walk(v, pointer, &at));
                    pointer.truncate(len);
                }
                Kids::List(kids)
            }
            Value::String(_) if self.positions.quoted(pointer) => Kids::Quoted,
            _ => Kids::Leaf,
        };
        Prov { at, kids }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_fill_the_tree() {
        let text = "a:\n  b: [1, 2]\n  c: {d: x}\n";
        let docs = crate::yaml::documents_with_positions(text).unwrap();
        let file: Arc<Path> = Arc::from(Path::new("f.yaml"));
        let p = Prov::from_positions(&docs[0].value, &docs[0].positions, &file, 10, 2);
        assert!(p.check_shape(&docs[0].value));
        assert_eq!(p.nearest("/a/b/1").at.line, 12);
        assert_eq!(p.nearest("/a/b/1").at.column, 12);
        assert_eq!(p.nearest("/a/c/d/zzz").at.line, 13);
        assert_eq!(p.nearest("/nothing").at.line, 11);
    }
}
