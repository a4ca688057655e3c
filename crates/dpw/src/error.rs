//! Error types of the CLI and the exit status each one maps to.
//!
//! Bad input (a manifest that cannot be read, parsed or validated) is reported as exactly
//! one line `error: <file>: <key>: <what is allowed>` and exit status 2; failures while
//! computing, rendering or writing exit with status 1.

use std::fmt;

/// A problem with one key of a manifest, before the file name is known.
///
/// Experiments return this from their parameter validation; the manifest loader adds
/// the file name and turns it into [`DpwError::Input`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// Dotted key path inside the manifest, e.g. `params.panels[0].epsilon`.
    pub key: String,
    /// What is wrong and what is allowed, on one line.
    pub message: String,
}

impl KeyError {
    /// A new error for `key` with the given message.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }

    /// Attaches the manifest file this key belongs to.
    pub fn in_file(self, file: impl Into<String>) -> DpwError {
        DpwError::Input {
            file: file.into(),
            key: self.key,
            message: self.message,
        }
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Every error the CLI reports.
#[derive(Debug, thiserror::Error)]
pub enum DpwError {
    /// Bad input: the named file's key is missing, malformed or out of range (exit 2).
    #[error("{file}: {key}: {message}")]
    Input {
        /// The manifest path as given on the command line.
        file: String,
        /// Dotted key path, or `file` when the file itself is the problem.
        key: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A computation, rendering or I/O step failed (exit 1).
    #[error("{0}")]
    Failure(String),
}

impl DpwError {
    /// The process exit status for this error: 2 for bad input, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Input { .. } => 2,
            Self::Failure(_) => 1,
        }
    }

    /// The error as one line (newlines and runs of whitespace collapsed), every quoted
    /// piece of the input in it cut to a short excerpt ([`shorten_quotes`]).
    pub fn one_line(&self) -> String {
        shorten_quotes(&one_line(&self.to_string()))
    }
}

/// The most characters of the input an error message quotes: a longer quoted piece (a
/// whole file read as one line, a 100 kB argument) is cut to its first
/// `EXCERPT_CHARS` characters ([`excerpt`]).
pub const EXCERPT_CHARS: usize = 60;

/// `text` as quoted in an error message: whole up to [`EXCERPT_CHARS`] characters, else
/// its first `EXCERPT_CHARS` followed by `…` and how many characters the whole has.
pub fn excerpt(text: &str) -> String {
    let n = text.chars().count();
    if n <= EXCERPT_CHARS {
        text.to_string()
    } else {
        let head: String = text.chars().take(EXCERPT_CHARS).collect();
        format!("{head}… ({n} characters)")
    }
}

/// `message` with every single-quoted piece longer than [`EXCERPT_CHARS`] characters cut
/// to an [`excerpt`]. A quote opens at the start or after a space or one of `(=:[` and
/// closes before the end, a space or punctuation, so an apostrophe (`doesn't`) opens
/// nothing.
pub fn shorten_quotes(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let opens = |i: usize| i == 0 || matches!(chars[i - 1], ' ' | '(' | '=' | ':' | '[');
    let closes = |j: usize| {
        j + 1 == chars.len() || matches!(chars[j + 1], ' ' | ',' | ';' | ':' | ')' | ']' | '.')
    };
    // The first closing quote at or after each position (one pass from the right, so a
    // message of many opening quotes stays linear).
    let mut next_close = vec![None; chars.len() + 1];
    for j in (0..chars.len()).rev() {
        next_close[j] = if chars[j] == '\'' && closes(j) {
            Some(j)
        } else {
            next_close[j + 1]
        };
    }
    let mut out = String::with_capacity(message.len().min(4096));
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\'' && opens(i) {
            if let Some(j) = next_close[i + 1] {
                let inner: String = chars[i + 1..j].iter().collect();
                out.push('\'');
                out.push_str(&excerpt(&inner));
                out.push('\'');
                i = j + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Collapses a possibly multi-line message into one line: lines are trimmed and joined
/// with "; ", empty lines dropped.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_lines() {
        assert_eq!(one_line("a\n  b  \n\nc\n"), "a; b; c");
    }

    #[test]
    fn long_quoted_input_is_cut_to_an_excerpt() {
        let long = "sigma,q,count".repeat(20_000);
        let m = format!("line 1: header: expected sigma,q,count, got '{long}'; fix it");
        let s = shorten_quotes(&m);
        assert!(s.len() < 200, "{s}");
        assert!(s.starts_with("line 1: header: expected sigma,q,count, got 'sigma,q,count"));
        assert!(s.ends_with("… (260000 characters)'; fix it"), "{s}");
        // Short quotes and apostrophes are left alone.
        let m = "it doesn't parse 'abc' (the key 'x' isn't known)";
        assert_eq!(shorten_quotes(m), m);
        let e = KeyError::new("k", format!("got '{long}'")).in_file("f.toml");
        assert!(e.one_line().len() < 150);
    }

    #[test]
    fn input_error_format_names_file_and_key() {
        let e = KeyError::new("params.x", "must be > 0, got -1").in_file("f.toml");
        assert_eq!(e.one_line(), "f.toml: params.x: must be > 0, got -1");
        assert_eq!(e.exit_code(), 2);
    }
}
