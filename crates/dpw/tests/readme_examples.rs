//! The README's example commands print what the README says they print.
//!
//! Convention: a fenced block with the info string `console` holds examples. A line
//! starting with `$ ` is a command (it must start with `dpw `); the lines after it, up to
//! the next `$ ` line or the end of the block, are its expected output. Each command is
//! run with the built binary from the repository root, and its output (stdout, then
//! stderr) must equal the README's line for line, trailing spaces aside. The only fields
//! not compared are wall-clock times (a number followed by ` s`, e.g. `0.010 s`, or the
//! `seconds` column of a CSV), masked in both. A command whose expected output starts with
//! `error:` must exit with status 2, any other with 0.
//!
//! To regenerate an example after a change of the program, run its command and paste the
//! output into the README: the test prints both texts when they differ.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One example: the command line as written, its arguments, and the expected output.
#[derive(Debug, Clone)]
struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// Every example of the `console` blocks of `text`.
fn examples(text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_end();
        if !in_block {
            in_block = t == "```console";
            continue;
        }
        if t.starts_with("```") {
            in_block = false;
        } else if let Some(cmd) = t.strip_prefix("$ ") {
            out.push(Example {
                line: n + 1,
                command: cmd.to_string(),
                expected: Vec::new(),
            });
        } else {
            let ex = out
                .last_mut()
                .unwrap_or_else(|| panic!("README.md:{}: output before any `$ ` command", n + 1));
            ex.expected.push(t.to_string());
        }
    }
    assert!(!in_block, "README.md: a console block is not closed");
    out
}

/// Splits a command line into words as a POSIX shell would for these simple cases:
/// spaces separate words, single and double quotes group (no escapes, no globs).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, ' ') => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in `{command}`");
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Masks wall-clock times: every number (digits and dots) followed by ` s` and then the
/// end of the line or a space, `,`, `;`, `)` or `.` becomes `<time> s`; in a CSV whose
/// header ends with `seconds`, the last field of each row becomes `<time>`.
fn mask_times(lines: &[String]) -> Vec<String> {
    let csv_seconds = lines
        .first()
        .is_some_and(|h| h.contains(',') && h.ends_with(",seconds"));
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if csv_seconds && i > 0 {
                if let Some((head, _)) = l.rsplit_once(',') {
                    return format!("{head},<time>");
                }
            }
            mask_line(l)
        })
        .collect()
}

fn mask_line(l: &str) -> String {
    let chars: Vec<char> = l.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_number = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.'));
        if starts_number {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            let unit = j + 1 < chars.len() && chars[j] == ' ' && chars[j + 1] == 's';
            let after = chars.get(j + 2);
            if unit && after.is_none_or(|c| matches!(c, ' ' | ',' | ';' | ')' | '.')) {
                out.push_str("<time> s");
                i = j + 2;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Normalises output for the comparison: trailing spaces and trailing empty lines go.
fn normalise(lines: &[String]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| l.trim_end().to_string()).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    mask_times(&v)
}

/// Runs one example; `Err` with both texts when the output differs.
fn check(ex: &Example) -> Result<(), String> {
    let w = words(&ex.command);
    assert_eq!(
        w.first().map(String::as_str),
        Some("dpw"),
        "README.md:{}: an example command must start with `dpw `: {}",
        ex.line,
        ex.command
    );
    let out = Command::new(env!("CARGO_BIN_EXE_dpw"))
        .args(&w[1..])
        .current_dir(repo_root())
        .output()
        .expect("run dpw");
    let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
    printed.push_str(&String::from_utf8_lossy(&out.stderr));
    let got: Vec<String> = printed.lines().map(String::from).collect();
    let want_status = if ex.expected.first().is_some_and(|l| l.starts_with("error:")) {
        2
    } else {
        0
    };
    let (got_n, want_n) = (normalise(&got), normalise(&ex.expected));
    if out.status.code() != Some(want_status) || got_n != want_n {
        return Err(format!(
            "README.md:{}: `{}` exited with {:?} (expected {want_status}) and printed\n{}\n\
             --- the README says\n{}\n--- first difference (times masked): {}",
            ex.line,
            ex.command,
            out.status.code(),
            got.join("\n"),
            ex.expected.join("\n"),
            first_difference(&got_n, &want_n),
        ));
    }
    Ok(())
}

fn first_difference(got: &[String], want: &[String]) -> String {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            return format!("line {}:\n  printed {g}\n  README  {w}", i + 1);
        }
    }
    format!("{} lines printed, {} in the README", got.len(), want.len())
}

fn readme_examples() -> Vec<Example> {
    let text = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    examples(&text)
}

#[test]
fn every_readme_example_prints_what_the_readme_says() {
    let all = readme_examples();
    // The README shows at least the accountant, the calibration table and a manifest run;
    // losing a block must not pass silently.
    for verb in ["account", "calibrate", "run"] {
        assert!(
            all.iter()
                .any(|e| words(&e.command).get(1).map(String::as_str) == Some(verb)),
            "README.md has no `dpw {verb}` example in a console block"
        );
    }
    let failures: Vec<String> = all.iter().filter_map(|e| check(e).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} README examples differ:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_changed_digit_in_the_readme_fails() {
    // The first `dpw account` example with one printed digit changed must not pass.
    let ex = readme_examples()
        .into_iter()
        .find(|e| e.command.starts_with("dpw account"))
        .expect("an account example");
    let mut bad = ex.clone();
    let line = bad
        .expected
        .iter_mut()
        .find(|l| l.trim_start().starts_with("upper"))
        .expect("an `upper` line");
    let pos = line
        .rfind(|c: char| c.is_ascii_digit())
        .expect("a digit in the upper line");
    let d = line.as_bytes()[pos];
    let swapped = if d == b'9' { '8' } else { (d + 1) as char };
    line.replace_range(pos..=pos, &swapped.to_string());
    check(&ex).expect("the unchanged example passes");
    let err = check(&bad).expect_err("a changed digit must fail");
    assert!(err.contains("first difference"), "{err}");
}

#[test]
fn masking_hides_times_only() {
    let m = |s: &str| mask_line(s);
    assert_eq!(
        m("  relative width 7.77e-5; grid step 7.115e-3; 0.010 s"),
        "  relative width 7.77e-5; grid step 7.115e-3; <time> s"
    );
    assert_eq!(
        m("fig1: done in 2.23 s (/tmp/x/data/fig1.csv)"),
        "fig1: done in <time> s (/tmp/x/data/fig1.csv)"
    );
    assert_eq!(m("total: 1 figure in 12 s"), "total: 1 figure in <time> s");
    // Numbers that are not times stay, including one before an `s`-word.
    assert_eq!(m("k = 1 queries, 2 sets"), "k = 1 queries, 2 sets");
    assert_eq!(m("x 235.3860227134146"), "x 235.3860227134146");
    let csv = vec![
        "quantity,lower,estimate,upper,seconds".to_string(),
        "epsilon,1.5,1.6,1.7,0.019049079".to_string(),
    ];
    assert_eq!(mask_times(&csv)[1], "epsilon,1.5,1.6,1.7,<time>");
    assert_eq!(
        words("dpw run a.toml --set 'params.x=[1, 2]' --out \"/tmp/a b\""),
        [
            "dpw",
            "run",
            "a.toml",
            "--set",
            "params.x=[1, 2]",
            "--out",
            "/tmp/a b"
        ]
    );
}
