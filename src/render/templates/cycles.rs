//! Recursion in templates, found before anything is rendered.
//!
//! Tera has no depth limit: a template that includes itself, two that
//! include (or import) each other, or a macro that calls itself for ever
//! recurse until the stack overflows, which kills `build` and the preview
//! server. So the templates' graph is read from their syntax trees first:
//! templates point at the templates they extend, include and import, and
//! templates and macros at the macros they call. Any circle in it is an
//! error, with one exception that always ends: a macro calling itself on a
//! part of its own argument, as the sidebar's does
//! (`{% for item in items %}…{{ self::nav(items=item.children) }}`). Each
//! such call goes one level down a finite tree of data, so it stops at the
//! tree's leaves.
//!
//! Chains without a circle are bounded too: at most [`MAX_DEPTH`] steps.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use tera::ast::{Expr, ExprVal, MacroCall, Node};
use tera::Tera;

/// The longest chain of includes, extends, imports and macro calls
/// accepted.
pub const MAX_DEPTH: usize = 64;

/// A template, or a macro of one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Vertex {
    Template(String),
    Macro(String, String),
}

impl Vertex {
    fn template(&self) -> &str {
        match self {
            Vertex::Template(t) | Vertex::Macro(t, _) => t,
        }
    }

    fn describe(&self) -> String {
        match self {
            Vertex::Template(t) => format!("`{t}`"),
            Vertex::Macro(t, m) => format!("macro `{m}` of `{t}`"),
        }
    }
}

/// A circle or a chain too long: the template to fix, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub template: String,
    pub message: String,
}

/// Every circle (at most ten are reported) and the first chain longer than
/// [`MAX_DEPTH`] among the templates of `tera`.
pub fn find(tera: &Tera) -> Vec<Problem> {
    let graph = Graph::of(tera);
    let mut problems = Vec::new();
    let mut removed = BTreeSet::new();
    for _ in 0..10 {
        let (order, left) = graph.order(&removed);
        if left.is_empty() {
            if let Some(p) = graph.too_deep(&order, &removed) {
                problems.push(p);
            }
            break;
        }
        let circle = graph.circle(&left);
        problems.push(graph.describe_circle(&circle));
        removed.extend(circle);
    }
    problems
}

/// Every `include` of a template there is not (without `ignore
/// missing`), as `(template, name)`: Tera only finds it when it renders
/// that include, and its error then names no line.
pub fn missing_includes(tera: &Tera) -> Vec<(String, String)> {
    Graph::of(tera).missing
}

/// The templates that rendering `roots` may use: the roots, and every
/// template they extend, include or import, or whose macros they call,
/// however indirectly.
pub fn reachable(tera: &Tera, roots: &[&str]) -> BTreeSet<String> {
    let graph = Graph::of(tera);
    let mut queue: VecDeque<usize> = roots
        .iter()
        .filter_map(|r| graph.index.get(&Vertex::Template(r.to_string())).copied())
        .collect();
    let mut seen: BTreeSet<usize> = queue.iter().copied().collect();
    while let Some(v) = queue.pop_front() {
        for &next in &graph.out[v] {
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    seen.into_iter()
        .map(|v| graph.vertices[v].template().to_string())
        .collect()
}

struct Graph {
    vertices: Vec<Vertex>,
    index: BTreeMap<Vertex, usize>,
    /// Successors and predecessors, by index.
    out: Vec<BTreeSet<usize>>,
    into: Vec<BTreeSet<usize>>,
    /// Self-calls of macros that do not descend into an argument.
    endless_self_calls: BTreeSet<usize>,
    /// `(template, name)` of each `include` of no template there is
    /// (without `ignore missing`).
    missing: Vec<(String, String)>,
}

impl Graph {
    fn of(tera: &Tera) -> Graph {
        let mut g = Graph {
            vertices: Vec::new(),
            index: BTreeMap::new(),
            out: Vec::new(),
            into: Vec::new(),
            endless_self_calls: BTreeSet::new(),
            missing: Vec::new(),
        };
        let mut names: Vec<&str> = tera.get_template_names().collect();
        names.sort_unstable();
        for name in names {
            let Ok(tpl) = tera.get_template(name) else {
                continue;
            };
            let from = g.vertex(Vertex::Template(name.to_string()));
            let mut walker = Walker {
                tera,
                template: name,
                current: None,
                loops: Vec::new(),
                edges: Vec::new(),
                missing: Vec::new(),
            };
            walker.nodes(&tpl.ast);
            for (to, _) in std::mem::take(&mut walker.edges) {
                g.edge(from, to);
            }
            let mut macros: Vec<_> = tpl.macros.iter().collect();
            macros.sort_by(|a, b| a.0.cmp(b.0));
            for (macro_name, def) in macros {
                let me = Vertex::Macro(name.to_string(), macro_name.clone());
                let from = g.vertex(me.clone());
                let params: BTreeSet<&str> = def.args.keys().map(String::as_str).collect();
                let rebinds = sets_any(&def.body);
                walker.current = Some((me.clone(), params, rebinds));
                walker.nodes(&def.body);
                walker.current = None;
                for (to, descends) in std::mem::take(&mut walker.edges) {
                    if to == me && descends {
                        continue;
                    }
                    if to == me {
                        g.endless_self_calls.insert(from);
                    }
                    g.edge(from, to);
                }
            }
            g.missing
                .extend(walker.missing.into_iter().map(|m| (name.to_string(), m)));
        }
        g
    }

    fn vertex(&mut self, v: Vertex) -> usize {
        if let Some(&i) = self.index.get(&v) {
            return i;
        }
        let i = self.vertices.len();
        self.vertices.push(v.clone());
        self.index.insert(v, i);
        self.out.push(BTreeSet::new());
        self.into.push(BTreeSet::new());
        i
    }

    fn edge(&mut self, from: usize, to: Vertex) {
        let to = self.vertex(to);
        self.out[from].insert(to);
        self.into[to].insert(from);
    }

    /// A topological order of the vertices not `removed` (Kahn's
    /// algorithm, without recursion), and those left over: the ones on a
    /// circle or after one.
    fn order(&self, removed: &BTreeSet<usize>) -> (Vec<usize>, BTreeSet<usize>) {
        let live = |v: &usize| !removed.contains(v);
        let mut indegree: Vec<usize> = (0..self.vertices.len())
            .map(|v| self.into[v].iter().filter(|p| live(p)).count())
            .collect();
        let mut queue: VecDeque<usize> = (0..self.vertices.len())
            .filter(|v| live(v) && indegree[*v] == 0)
            .collect();
        let mut order = Vec::new();
        while let Some(v) = queue.pop_front() {
            order.push(v);
            for &next in self.out[v].iter().filter(|n| live(n)) {
                indegree[next] -= 1;
                if indegree[next] == 0 {
                    queue.push_back(next);
                }
            }
        }
        let done: BTreeSet<usize> = order.iter().copied().collect();
        let left = (0..self.vertices.len())
            .filter(|v| live(v) && !done.contains(v))
            .collect();
        (order, left)
    }

    /// A circle among `left`: each of them has a predecessor among them,
    /// so walking back from one repeats a vertex; the circle is what lies
    /// between the two visits, in calling order.
    fn circle(&self, left: &BTreeSet<usize>) -> Vec<usize> {
        let Some(&start) = left.iter().next() else {
            return Vec::new();
        };
        let mut seen = BTreeMap::new();
        let mut path = Vec::new();
        let mut v = start;
        while !seen.contains_key(&v) {
            seen.insert(v, path.len());
            path.push(v);
            match self.into[v].iter().find(|p| left.contains(p)) {
                Some(&p) => v = p,
                None => break,
            }
        }
        let from = seen.get(&v).copied().unwrap_or(0);
        let mut circle: Vec<usize> = path[from..].to_vec();
        circle.reverse();
        // From its first vertex in name order, for a stable message.
        if let Some(first) = (0..circle.len())
            .min_by(|&a, &b| self.vertices[circle[a]].cmp(&self.vertices[circle[b]]))
        {
            circle.rotate_left(first);
        }
        circle
    }

    fn describe_circle(&self, circle: &[usize]) -> Problem {
        let first = circle.first().map(|&v| &self.vertices[v]);
        let template = first.map_or(String::new(), |v| v.template().to_string());
        let message = match circle {
            [v] if self.endless_self_calls.contains(v) => format!(
                "{} calls itself without descending into one of its arguments, so it never stops",
                self.vertices[*v].describe()
            ),
            [v] => format!(
                "{} includes, extends or imports itself, so rendering it never stops",
                self.vertices[*v].describe()
            ),
            _ => {
                let mut chain: Vec<String> = circle
                    .iter()
                    .map(|&v| self.vertices[v].describe())
                    .collect();
                chain.extend(first.map(Vertex::describe));
                format!(
                    "these templates and macros lead back to themselves, so rendering never stops: {}",
                    chain.join(" → ")
                )
            }
        };
        Problem { template, message }
    }

    /// The first chain longer than [`MAX_DEPTH`], from the order.
    fn too_deep(&self, order: &[usize], removed: &BTreeSet<usize>) -> Option<Problem> {
        let mut depth = vec![0usize; self.vertices.len()];
        let mut from = vec![None; self.vertices.len()];
        for &v in order {
            for &p in self.into[v].iter().filter(|p| !removed.contains(p)) {
                if depth[p] + 1 > depth[v] {
                    depth[v] = depth[p] + 1;
                    from[v] = Some(p);
                }
            }
            if depth[v] > MAX_DEPTH {
                let mut chain = vec![v];
                let mut at = v;
                while let Some(p) = from[at] {
                    chain.push(p);
                    at = p;
                }
                chain.reverse();
                let start = &self.vertices[chain[0]];
                let shown: Vec<String> = chain
                    .iter()
                    .take(5)
                    .map(|&c| self.vertices[c].describe())
                    .collect();
                return Some(Problem {
                    template: start.template().to_string(),
                    message: format!(
                        "templates and macros nest more than {MAX_DEPTH} deep ({} → …)",
                        shown.join(" → ")
                    ),
                });
            }
        }
        None
    }
}

/// Walks a syntax tree, gathering where it leads.
struct Walker<'a> {
    tera: &'a Tera,
    /// The template whose tree this is (it resolves macro namespaces).
    template: &'a str,
    /// The macro being walked: itself, its parameters, and whether its
    /// body rebinds a name with `set` (then no call is known to descend).
    current: Option<(Vertex, BTreeSet<&'a str>, bool)>,
    /// Enclosing `for` loops: the value's name and the container.
    loops: Vec<(&'a str, &'a Expr)>,
    /// Where the tree leads, and for a macro call to the macro being
    /// walked, whether it descends into one of its arguments.
    edges: Vec<(Vertex, bool)>,
    /// The first name of each `include` of no template there is.
    missing: Vec<String>,
}

impl<'a> Walker<'a> {
    fn nodes(&mut self, nodes: &'a [Node]) {
        for n in nodes {
            self.node(n);
        }
    }

    fn node(&mut self, node: &'a Node) {
        match node {
            Node::Extends(_, parent) => self.lead_to_template(parent),
            Node::Include(_, names, ignore_missing) => {
                for n in names {
                    self.lead_to_template(n);
                }
                let none = names.iter().all(|n| self.tera.get_template(n).is_err());
                if none && !ignore_missing {
                    self.missing.extend(names.first().cloned());
                }
            }
            Node::ImportMacro(_, file, _) => self.lead_to_template(file),
            Node::VariableBlock(_, e) => self.expr(e),
            Node::Set(_, set) => self.expr(&set.value),
            Node::FilterSection(_, f, _) => {
                for e in f.filter.args.values() {
                    self.expr(e);
                }
                self.nodes(&f.body);
            }
            Node::Block(_, b, _) => self.nodes(&b.body),
            Node::Forloop(_, f, _) => {
                self.expr(&f.container);
                self.loops.push((&f.value, &f.container));
                self.nodes(&f.body);
                self.loops.pop();
                if let Some(body) = &f.empty_body {
                    self.nodes(body);
                }
            }
            Node::If(i, _) => {
                for (_, cond, body) in &i.conditions {
                    self.expr(cond);
                    self.nodes(body);
                }
                if let Some((_, body)) = &i.otherwise {
                    self.nodes(body);
                }
            }
            // Macros are walked as vertices of their own.
            Node::MacroDefinition(..)
            | Node::Super
            | Node::Text(_)
            | Node::Raw(..)
            | Node::Break(_)
            | Node::Continue(_)
            | Node::Comment(..) => {}
        }
    }

    fn lead_to_template(&mut self, name: &str) {
        if self.tera.get_template(name).is_ok() {
            self.edges.push((Vertex::Template(name.to_string()), false));
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        for f in &e.filters {
            for a in f.args.values() {
                self.expr(a);
            }
        }
        match &e.val {
            ExprVal::MacroCall(call) => {
                for a in call.args.values() {
                    self.expr(a);
                }
                if let Some(file) = resolve(self.tera, self.template, &call.namespace, 0) {
                    let to = Vertex::Macro(file, call.name.clone());
                    let descends = self.descends(&to, call);
                    self.edges.push((to, descends));
                }
            }
            ExprVal::FunctionCall(f) => {
                for a in f.args.values() {
                    self.expr(a);
                }
            }
            ExprVal::Math(m) => {
                self.expr(&m.lhs);
                self.expr(&m.rhs);
            }
            ExprVal::Logic(l) => {
                self.expr(&l.lhs);
                self.expr(&l.rhs);
            }
            ExprVal::Test(t) => {
                for a in &t.args {
                    self.expr(a);
                }
            }
            ExprVal::Array(items) => {
                for a in items {
                    self.expr(a);
                }
            }
            ExprVal::In(i) => {
                self.expr(&i.lhs);
                self.expr(&i.rhs);
            }
            ExprVal::String(_)
            | ExprVal::Int(_)
            | ExprVal::Float(_)
            | ExprVal::Bool(_)
            | ExprVal::Ident(_)
            | ExprVal::StringConcat(_) => {}
        }
    }

    /// Whether a call to `to` is the macro being walked calling itself on
    /// a part of one of its arguments: for a parameter `p`, the call
    /// passes `v` or `v.x…`, where `v` is the value of the nearest loop of
    /// that name, over `p` or `p.x…` itself (no filter anywhere, no `set`
    /// in the body).
    fn descends(&self, to: &Vertex, call: &MacroCall) -> bool {
        let Some((me, params, rebinds)) = &self.current else {
            return false;
        };
        if to != me || *rebinds {
            return false;
        }
        params.iter().any(|p| {
            let Some(arg) = call.args.get(*p).and_then(plain_ident) else {
                return false;
            };
            let var = arg.split('.').next().unwrap_or(arg);
            let Some((_, container)) = self.loops.iter().rev().find(|(v, _)| *v == var) else {
                return false;
            };
            plain_ident(container)
                .is_some_and(|c| c == *p || c.strip_prefix(*p).is_some_and(|r| r.starts_with('.')))
        })
    }
}

/// The name of a variable, when `e` is nothing else.
fn plain_ident(e: &Expr) -> Option<&str> {
    match &e.val {
        ExprVal::Ident(name) if e.filters.is_empty() && !e.negated => Some(name),
        _ => None,
    }
}

/// Whether a body has a `set` anywhere.
fn sets_any(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Set(..) => true,
        Node::FilterSection(_, f, _) => sets_any(&f.body),
        Node::Block(_, b, _) => sets_any(&b.body),
        Node::Forloop(_, f, _) => {
            sets_any(&f.body) || f.empty_body.as_deref().is_some_and(sets_any)
        }
        Node::If(i, _) => {
            i.conditions.iter().any(|(_, _, b)| sets_any(b))
                || i.otherwise.as_ref().is_some_and(|(_, b)| sets_any(b))
        }
        _ => false,
    })
}

/// The template that defines the macros of namespace `ns` as seen from
/// `template`, the way Tera looks them up: its own macros for `self`, the
/// files it imports, then what those import and what its parents see.
fn resolve(tera: &Tera, template: &str, ns: &str, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let tpl = tera.get_template(template).ok()?;
    if ns == "self" && !tpl.macros.is_empty() {
        return Some(template.to_string());
    }
    if let Some((file, _)) = tpl.imported_macro_files.iter().find(|(_, n)| n == ns) {
        return Some(file.clone());
    }
    if ns != "self" {
        for (file, _) in &tpl.imported_macro_files {
            if let Some(found) = resolve(tera, file, ns, depth + 1) {
                return Some(found);
            }
        }
    }
    tpl.parents
        .iter()
        .find_map(|p| resolve(tera, p, ns, depth + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(templates: &[(&str, &str)]) -> Vec<Problem> {
        let mut tera = Tera::default();
        tera.add_raw_templates(templates.to_vec()).unwrap();
        find(&tera)
    }

    #[test]
    fn circles_of_includes_and_imports_are_found() {
        let p = problems(&[("a.html", "{% include \"a.html\" %}")]);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].template, "a.html");
        assert!(p[0].message.contains("`a.html` includes"), "{:?}", p);

        let p = problems(&[
            ("a.html", "x{% include \"b.html\" %}"),
            ("b.html", "{% if x %}{% include \"a.html\" %}{% endif %}"),
            ("c.html", "{% include \"a.html\" %}"),
        ]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].message.contains("`a.html` → `b.html` → `a.html`"),
            "{p:?}"
        );

        let p = problems(&[
            (
                "m1.html",
                "{% import \"m2.html\" as b %}{% macro f() %}{% endmacro f %}",
            ),
            (
                "m2.html",
                "{% import \"m1.html\" as a %}{% macro g() %}{% endmacro g %}",
            ),
        ]);
        assert_eq!(p.len(), 1, "{p:?}");
    }

    #[test]
    fn macros_that_never_stop_are_found_and_tree_walks_are_not() {
        let p = problems(&[(
            "m.html",
            "{% macro f(n) %}{{ self::f(n=n) }}{% endmacro f %}",
        )]);
        assert_eq!(p.len(), 1);
        assert!(
            p[0].message.contains("macro `f` of `m.html` calls itself"),
            "{p:?}"
        );

        let p = problems(&[
            (
                "m.html",
                "{% macro f(n) %}{{ self::g(n=n) }}{% endmacro f %}{% macro g(n) %}{{ self::f(n=n) }}{% endmacro g %}",
            ),
            ("page.html", "{% import \"m.html\" as m %}{{ m::f(n=1) }}"),
        ]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].message
                .contains("macro `f` of `m.html` → macro `g` of `m.html`"),
            "{p:?}"
        );

        // Looping over a part of the argument itself does not descend.
        let p = problems(&[(
            "m.html",
            "{% macro f(items) %}{% for i in items %}{{ self::f(items=items) }}{% endfor %}{% endmacro f %}",
        )]);
        assert_eq!(p.len(), 1, "{p:?}");
        let p = problems(&[(
            "m.html",
            "{% macro f(items) %}{% set items = [1] %}{% for i in items %}{{ self::f(items=i.c) }}{% endfor %}{% endmacro f %}",
        )]);
        assert_eq!(p.len(), 1, "{p:?}");

        let defaults: Vec<(&str, &str)> = crate::render::templates::DEFAULTS.to_vec();
        assert_eq!(problems(&defaults), []);
    }

    #[test]
    fn long_chains_are_refused() {
        let names: Vec<String> = (0..=MAX_DEPTH + 1).map(|i| format!("t{i}.html")).collect();
        let texts: Vec<String> = (0..=MAX_DEPTH + 1)
            .map(|i| match names.get(i + 1) {
                Some(next) => format!("{{% include \"{next}\" %}}"),
                None => "end".to_string(),
            })
            .collect();
        let all: Vec<(&str, &str)> = names
            .iter()
            .zip(&texts)
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let p = problems(&all);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].message.contains("more than 64 deep"), "{p:?}");
        assert_eq!(problems(&all[all.len() - MAX_DEPTH..]), []);
    }
}
