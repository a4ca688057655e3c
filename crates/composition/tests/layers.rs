//! The accountant's rooms import downwards only (docs/architecture.md): a file in one
//! room may name its own room and the rooms below it, never a room above, and never the
//! facade's re-exports (`crate::accountant::Accountant`), which would hide which room an
//! item lives in. Test code (`#[cfg(test)]` modules, inline or in their own files) may
//! reach any room: a test of the grid that composes through the accountant tests both.
//!
//! Also the crate's other boundary: `closed_form` (the papers' formulas) knows nothing of
//! the accountant.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The rooms, lowest first: a room's rank is its position.
const ROOMS: [&str; 7] = [
    "core", "laws", "sampling", "grid", "compose", "input", "query",
];

fn rank(room: &str) -> Option<usize> {
    ROOMS.iter().position(|r| *r == room)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/` (`accountant/grid/lattice/residue.rs` →
/// `["accountant", "grid", "lattice", "residue"]`; `mod.rs` names its folder).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// Modules declared `#[cfg(test)] mod name;` in a file: their files are test code.
fn test_children(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for w in lines.windows(2) {
        if w[0] == "#[cfg(test)]" {
            let decl = w[1]
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The code of a file without comments, string literals' contents and inline
/// `#[cfg(test)]` items (a module or function up to its closing brace).
fn code_without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth = 0i64;
    let mut pending_test = false;
    for raw in text.lines() {
        let line = match raw.find("//") {
            Some(i) => &raw[..i],
            None => raw,
        };
        let t = line.trim();
        if t == "#[cfg(test)]" {
            pending_test = true;
            continue;
        }
        let opens = line.matches('{').count() as i64;
        let closes = line.matches('}').count() as i64;
        if pending_test && !t.is_empty() {
            pending_test = false;
            if opens > closes {
                skip_depth = Some(depth);
            } else {
                // a one-line item (`mod tests;`, a `use`): skip it
                depth += opens - closes;
                continue;
            }
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Every module path the code names through `crate::` or `super::` (first segments after
/// the root, `use crate::x::{a, b::c}` expanded one level), resolved from `module`.
fn named_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    // Paths are ASCII: blank the rest, so every byte index below is a char boundary.
    let code: String = code
        .chars()
        .map(|c| if c.is_ascii() { c } else { ' ' })
        .collect();
    let code = code.as_str();
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        let rest = &code[i..];
        if starts_word && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            let mut base: Vec<String> = Vec::new();
            let mut j = i;
            if rest.starts_with("crate::") {
                j += "crate::".len();
            } else {
                base = module.to_vec();
                while code[j..].starts_with("super::") {
                    base.pop();
                    j += "super::".len();
                }
            }
            // segments until something not `ident::`
            let mut segs = base.clone();
            loop {
                let s = j;
                while j < bytes.len() && is_ident(bytes[j]) {
                    j += 1;
                }
                if j == s {
                    break;
                }
                segs.push(code[s..j].to_string());
                if code[j..].starts_with("::") {
                    j += 2;
                } else {
                    break;
                }
            }
            if code[j..].starts_with('{') {
                // one level of a use tree: each branch's first segment
                let end = code[j..].find('}').map_or(code.len(), |e| j + e);
                for branch in code[j + 1..end].split(',') {
                    let first = branch.trim().split("::").next().unwrap_or("").trim();
                    if !first.is_empty() && first != "self" && first != "*" {
                        let mut p = segs.clone();
                        p.push(first.to_string());
                        out.push(p);
                    }
                }
            }
            out.push(segs);
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The violations of the layering in the crate's sources under `src`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    // files that are test code as a whole
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let dir = if f
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
        {
            f.parent().unwrap().to_path_buf()
        } else {
            f.with_extension("")
        };
        for child in test_children(&text) {
            test_files.insert(dir.join(format!("{child}.rs")));
            test_files.insert(dir.join(&child).join("mod.rs"));
        }
    }
    let mut bad = Vec::new();
    for f in &files {
        if test_files.contains(f) {
            continue;
        }
        let module = module_path(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let code = code_without_tests(&text);
        let shown = f.strip_prefix(src).unwrap().display().to_string();
        for p in named_paths(&code, &module) {
            // the closed forms know nothing of the accountant
            if module.first().is_some_and(|m| m == "closed_form")
                && p.first().is_some_and(|m| m == "accountant")
            {
                bad.push(format!("{shown}: closed_form names {}", p.join("::")));
            }
            if module.first().map(String::as_str) != Some("accountant") || module.len() < 2 {
                continue; // outside the rooms, or the facade itself
            }
            if p.first().map(String::as_str) != Some("accountant") || p.len() < 2 {
                continue;
            }
            let own = rank(&module[1]).unwrap_or_else(|| panic!("{shown}: not in a room"));
            match rank(&p[1]) {
                Some(r) if r > own => bad.push(format!(
                    "{shown} ({}) names {} ({}, a room above)",
                    module[1],
                    p.join("::"),
                    p[1]
                )),
                Some(_) => {}
                None => bad.push(format!(
                    "{shown} names {} through the facade: name its room",
                    p.join("::")
                )),
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

#[test]
fn the_accountants_rooms_import_downwards_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Every room exists, and nothing else sits beside them but the facade.
    for e in std::fs::read_dir(src.join("accountant")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name == "mod.rs" || p.is_dir() && rank(&name).is_some(),
            "accountant/{name} is not in a room (docs/architecture.md)"
        );
    }
    let bad = violations(&src);
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

/// The check itself catches what it is for: an upward `use`, an upward path in an
/// expression, a `super::super` that climbs out of its room and up, a facade path, and a
/// closed form reaching into the accountant; and lets tests and comments be.
#[test]
fn the_check_finds_planted_upward_imports() {
    let dir = std::env::temp_dir().join(format!("dpw-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let w = |p: &str, text: &str| {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("accountant/mod.rs", "pub mod core;\npub use core::x::Y;\n");
    w(
        "accountant/laws/gaussian.rs",
        "use crate::accountant::core::numeric::log_add;\n\
         // crate::accountant::query::accountant in a comment, ε − δ\n\
         const S: &str = \"σ − μ\";\n\
         #[cfg(test)]\nmod tests {\n    use crate::accountant::query::Accountant;\n}\n",
    );
    w(
        "accountant/grid/lattice.rs",
        "use crate::accountant::{core::pool, compose::tilted};\n",
    );
    w(
        "accountant/grid/lattice/residue.rs",
        "fn f() { super::super::super::query::solve::run(); }\n",
    );
    w(
        "accountant/sampling/mixture.rs",
        "fn g() -> usize { crate::accountant::input::spec::MAX }\n\
         fn h() { crate::accountant::Accountant::new(); }\n",
    );
    w("accountant/compose/jump.rs", "#[cfg(test)]\nmod tests;\n");
    w(
        "accountant/compose/jump/tests.rs",
        "use crate::accountant::query::solve::Solver;\n",
    );
    w(
        "closed_form/rdp.rs",
        "use crate::accountant::core::exact_exp::P;\n",
    );
    let bad = violations(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let expect = [
        "accountant/grid/lattice.rs (grid) names accountant::compose",
        "accountant/grid/lattice/residue.rs (grid) names accountant::query",
        "accountant/sampling/mixture.rs (sampling) names accountant::input",
        "accountant/sampling/mixture.rs names accountant::Accountant",
        "closed_form/rdp.rs: closed_form names accountant",
    ];
    for e in expect {
        assert!(
            bad.iter().any(|b| b.starts_with(e)),
            "missed {e:?} in {bad:#?}"
        );
    }
    assert_eq!(bad.len(), expect.len(), "{bad:#?}");
}
