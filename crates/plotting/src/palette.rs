//! The shared palette: one colour per mechanism in every figure, and a few other named
//! colours for series that are not a mechanism (values of δ, ℓ, ε or σ, denoisers).
//!
//! A manifest names a colour (`color = "laplace"`) rather than writing its hex code, so the
//! analytic Gaussian is the same blue in every figure and blue means nothing else; variants
//! of one mechanism (another accounting, a bound beside the exact value) share its colour
//! and differ by line style, markers or a shade of it (`"gaussian:dark"`, `":light"`,
//! `":pale"`). `#rrggbb` is still accepted for one-off figures.

/// Mechanism colours: `(name, #rrggbb)`. These hues are reserved: no other name maps to
/// them.
pub const MECHANISMS: [(&str, &str); 5] = [
    ("laplace", "#ff7f0e"),
    ("gaussian", "#1f77b4"),
    ("classical_gaussian", "#7f7f7f"),
    ("truncated_laplace", "#2ca02c"),
    ("bounded", "#d62728"),
];

/// Colours for everything else: `reference` (a budget, a truth, a limiting curve) and
/// hues for parameter sweeps, none of them a mechanism's.
pub const OTHERS: [(&str, &str); 7] = [
    ("reference", "#000000"),
    ("purple", "#9467bd"),
    ("cyan", "#17becf"),
    ("pink", "#e377c2"),
    ("brown", "#8c564b"),
    ("olive", "#bcbd22"),
    ("navy", "#393b79"),
];

/// The hex code of a palette name, if it is one.
pub fn lookup(name: &str) -> Option<&'static str> {
    MECHANISMS
        .iter()
        .chain(OTHERS.iter())
        .find(|(n, _)| *n == name)
        .map(|(_, hex)| *hex)
}

/// Shades of a mechanism's colour: `(suffix, weight of the mix, mixed with white?)`.
const SHADES: [(&str, f64, bool); 3] = [
    ("dark", 0.35, false),
    ("light", 0.35, true),
    ("pale", 0.6, true),
];

/// The colour of a palette name, with an optional shade of a mechanism's colour
/// (`"laplace:dark"`): the colour mixed with black or white.
pub fn rgb(name: &str) -> Option<(u8, u8, u8)> {
    let (base, shade) = match name.split_once(':') {
        Some((b, s)) => (b, Some(s)),
        None => (name, None),
    };
    let (r, g, b) = parse_color(lookup(base)?)?;
    let Some(shade) = shade else {
        return Some((r, g, b));
    };
    if !is_mechanism(base) {
        return None;
    }
    let (_, w, white) = SHADES.iter().find(|(s, _, _)| *s == shade)?;
    let target = if *white { 255.0 } else { 0.0 };
    let mix = |c: u8| (c as f64 + w * (target - c as f64)).round() as u8;
    Some((mix(r), mix(g), mix(b)))
}

/// The mechanism a colour name belongs to (`"gaussian:dark"` → `"gaussian"`), if any.
pub fn mechanism_of(name: &str) -> Option<&'static str> {
    let base = name.split_once(':').map_or(name, |(b, _)| b);
    MECHANISMS.iter().find(|(n, _)| *n == base).map(|(n, _)| *n)
}

/// Whether `name` is one of the mechanism colours or a shade of one.
pub fn is_mechanism(name: &str) -> bool {
    mechanism_of(name).is_some()
}

/// Every name, for error messages.
pub fn names() -> Vec<&'static str> {
    MECHANISMS
        .iter()
        .chain(OTHERS.iter())
        .map(|(n, _)| *n)
        .collect()
}

/// Parses `#rrggbb`.
pub fn parse_color(s: &str) -> Option<(u8, u8, u8)> {
    let hex = s.strip_prefix('#')?;
    if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some((byte(0)?, byte(2)?, byte(4)?))
}

/// A series colour: a palette name or `#rrggbb`.
pub fn resolve_color(s: &str) -> Option<(u8, u8, u8)> {
    rgb(s).or_else(|| parse_color(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_colours_are_distinct_and_valid() {
        let all: Vec<(&str, &str)> = MECHANISMS.iter().chain(OTHERS.iter()).copied().collect();
        for (i, (n, hex)) in all.iter().enumerate() {
            assert!(parse_color(hex).is_some(), "{n}: {hex}");
            for (m, other) in &all[..i] {
                assert_ne!(n, m);
                assert_ne!(hex, other, "{n} and {m} share a colour");
            }
        }
        assert_eq!(lookup("gaussian"), Some("#1f77b4"));
        assert!(lookup("#1f77b4").is_none());
        assert!(is_mechanism("bounded") && !is_mechanism("reference"));
        assert_eq!(rgb("gaussian:dark"), Some((20, 77, 117)));
        assert_eq!(rgb("reference:dark"), None);
        assert_eq!(rgb("gaussian:bright"), None);
        assert_eq!(mechanism_of("laplace:pale"), Some("laplace"));
    }
}
