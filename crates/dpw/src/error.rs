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

    /// The error as one line (newlines and runs of whitespace collapsed).
    pub fn one_line(&self) -> String {
        one_line(&self.to_string())
    }
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
    fn input_error_format_names_file_and_key() {
        let e = KeyError::new("params.x", "must be > 0, got -1").in_file("f.toml");
        assert_eq!(e.one_line(), "f.toml: params.x: must be > 0, got -1");
        assert_eq!(e.exit_code(), 2);
    }
}
