//! Every citation of the project's maths reference points at a section that exists.
//!
//! Code cites `docs/maths.md §1.4`, `docs/accountant.md §9`, lists such as
//! `docs/maths.md §0, §1.4 and §3.1` and ranges such as `§1.1–§1.3`. This test walks the
//! repository's source, manifests and documentation, collects every such citation and
//! checks that the file exists under `docs/` and that each cited section is a heading of
//! it (a Markdown line starting with `#` whose first `§` token is the section). It also
//! checks that no file cites the formula sheet that lives outside the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files that may cite the docs: sources, manifests, documentation and scripts.
fn cited_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "__pycache__" {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else if ["rs", "py", "pyi", "toml", "md", "cff", "yml"]
                .iter()
                .any(|x| name.ends_with(&format!(".{x}")))
                || name == "justfile"
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for sub in ["crates", "docs", "experiments", "scripts", ".github"] {
        walk(&root.join(sub), &mut out);
    }
    for f in [
        "README.md",
        "CHANGELOG.md",
        "CITATION.cff",
        "justfile",
        ".ci/run",
    ] {
        if root.join(f).is_file() {
            out.push(root.join(f));
        }
    }
    out.sort();
    out
}

/// A section token `§1.4`: the digits and inner dots after `§` (a trailing dot is
/// punctuation). Returns the token and the rest of the text.
fn section_token(s: &str) -> Option<(String, &str)> {
    let rest = s.strip_prefix('§')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let tok = rest[..end].trim_end_matches('.');
    if tok.is_empty() || !tok.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((tok.to_string(), &rest[tok.len()..]))
}

/// Skips what may stand between a file name and its first `§` or between two `§`s of a
/// list: spaces, line breaks with their comment markers, a Markdown link target, commas,
/// "and", "or".
fn skip_separators(mut s: &str) -> &str {
    loop {
        let t = s.trim_start_matches([' ', '\t', '\n', '\r', ',']);
        let t = t
            .strip_prefix("//!")
            .or_else(|| t.strip_prefix("///"))
            .or_else(|| t.strip_prefix("//"))
            .or_else(|| t.strip_prefix("# "))
            .or_else(|| t.strip_prefix("and "))
            .or_else(|| t.strip_prefix("or "))
            .unwrap_or(t);
        if t.len() == s.len() {
            return s;
        }
        s = t;
    }
}

/// The sections cited right after a file name: `§a`, then more after separators, and
/// both ends of a range `§a–§b` or `§a–b`.
fn cited_sections(after_name: &str) -> Vec<String> {
    let mut s = after_name;
    // A Markdown link `[docs/x.md](docs/x.md) §3`: skip the link target.
    if let Some(rest) = s.strip_prefix("](") {
        s = rest.split_once(')').map_or("", |(_, r)| r);
    } else if let Some(rest) = s.strip_prefix(')') {
        s = rest;
    }
    let mut out = Vec::new();
    loop {
        let t = skip_separators(s);
        let Some((tok, rest)) = section_token(t) else {
            break;
        };
        out.push(tok);
        s = rest;
        // A range: `–` or `-`, then `§b` or a bare `b`.
        for dash in ['–', '-'] {
            if let Some(r) = s.strip_prefix(dash) {
                let r = r.strip_prefix('§').unwrap_or(r);
                if let Some((tok, rest)) = section_token(&format!("§{r}")) {
                    out.push(tok);
                    let used = r.len() - rest.len();
                    s = &r[used..];
                }
            }
        }
    }
    out
}

/// Every `(file, section)` cited in `text`: `docs/NAME.md` anywhere, and inside `docs/`
/// also the relative link form `](NAME.md)`.
fn citations(text: &str, in_docs: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(".md") {
        let before = &rest[..i];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .map_or(0, |j| j + before[j..].chars().next().unwrap().len_utf8());
        let name = &before[start..];
        let prefix = &before[..start];
        let after = &rest[i + 3..];
        let cited = if prefix.ends_with("docs/") {
            true
        } else {
            in_docs && prefix.ends_with("](")
        };
        if cited && !name.is_empty() {
            // In the relative form the sections follow the closing parenthesis.
            for sec in cited_sections(after) {
                out.push((format!("{name}.md"), sec));
            }
            if cited_sections(after).is_empty() {
                out.push((format!("{name}.md"), String::new()));
            }
        }
        rest = after;
    }
    out
}

/// The `§` sections that are headings of a Markdown file.
fn headings(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| {
            let i = l.find('§')?;
            section_token(&l[i..]).map(|(t, _)| t)
        })
        .collect()
}

#[test]
fn parser_reads_lists_ranges_and_links() {
    let c = |s: &str| citations(s, false);
    assert_eq!(
        c("(docs/maths.md §0, §1.4 \"Exact δ\", §3.1 and §3.4)."),
        vec![
            ("maths.md".into(), "0".into()),
            ("maths.md".into(), "1.4".into()),
        ]
    );
    assert_eq!(
        c("docs/maths.md §1.1–§1.3; docs/accountant.md §9-§10"),
        vec![
            ("maths.md".into(), "1.1".into()),
            ("maths.md".into(), "1.3".into()),
            ("accountant.md".into(), "9".into()),
            ("accountant.md".into(), "10".into()),
        ]
    );
    assert_eq!(
        c("Formulas: docs/maths.md §3.1–3.3."),
        vec![
            ("maths.md".into(), "3.1".into()),
            ("maths.md".into(), "3.3".into()),
        ]
    );
    assert_eq!(
        c("(docs/maths.md\n//! §1.2 and §4; fig6)"),
        vec![
            ("maths.md".into(), "1.2".into()),
            ("maths.md".into(), "4".into()),
        ]
    );
    assert_eq!(
        c("theorem ([docs/maths.md](docs/maths.md) §5), optimising"),
        // Once for the link text, once for its target.
        vec![
            ("maths.md".into(), "5".into()),
            ("maths.md".into(), "5".into())
        ]
    );
    assert_eq!(
        citations("see [accountant.md](accountant.md) §9.", true),
        vec![("accountant.md".into(), "9".into())]
    );
    assert_eq!(
        c("(docs/maths.md §1.4 step 2)"),
        vec![("maths.md".into(), "1.4".into())]
    );
    assert!(c("no citation here, only README.md").is_empty());
    let h = headings("# T\n## §3 A\n### §3.1 B.\n- **§9 not a heading**\n");
    assert_eq!(h, BTreeSet::from(["3".to_string(), "3.1".to_string()]));
}

#[test]
fn every_cited_section_is_a_heading() {
    let root = repo_root();
    let mut known: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            let text = fs::read_to_string(e.path()).unwrap();
            known.insert(name, headings(&text));
        }
    }
    assert!(known.contains_key("maths.md") && known.contains_key("accountant.md"));

    let mut bad = Vec::new();
    let mut count = 0usize;
    for path in cited_files(&root) {
        // This file's own examples of the syntax (`docs/NAME.md`) are not citations.
        if path.ends_with("doc_citations.rs") {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let in_docs = path.parent().is_some_and(|p| p.ends_with("docs"));
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (file, sec) in citations(&text, in_docs) {
            count += 1;
            match known.get(&file) {
                None => bad.push(format!("{rel}: docs/{file} does not exist")),
                Some(h) if !sec.is_empty() && !h.contains(&sec) => {
                    bad.push(format!("{rel}: docs/{file} §{sec} is not a heading"))
                }
                _ => {}
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} bad citations:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // The walk must have found the code's citations (about 300 when this was written).
    assert!(
        count > 100,
        "only {count} citations found: is the walk broken?"
    );
}

#[test]
fn nothing_cites_outside_the_repository() {
    // Spelled in pieces so that this file does not match itself.
    let forbidden = [concat!("formulas", ".md"), concat!("shared", "/spec")];
    let root = repo_root();
    let mut bad = Vec::new();
    for path in cited_files(&root) {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if forbidden.iter().any(|f| line.contains(f)) {
                let rel = path.strip_prefix(&root).unwrap_or(&path).display();
                bad.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "citations outside the repository:\n{}",
        bad.join("\n")
    );
}
