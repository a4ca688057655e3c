//! TeX-like sub- and superscripts in titles, axis labels and legend entries.
//!
//! Manifests write `ε_g`, `f_{ε,δ}`, `‖x‖_p^a` or `G_1`. A marker `_` or `^` applies to the
//! next character, or to a `{…}` group. A group whose every character has a Unicode
//! sub/superscript form becomes those characters (`G_1` → `G₁`, `‖x‖_p^a` → `‖x‖ₚᵃ`), which
//! every text path can draw; the rest (Unicode has no subscript ε, δ, g or X) stay
//! [`Shift::Sub`] / [`Shift::Sup`] segments that the renderer lays out smaller and shifted
//! off the baseline. Nothing of the markup itself is ever printed.

/// Where a run of text sits relative to the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shift {
    /// On the baseline, full size.
    Base,
    /// Lowered and smaller.
    Sub,
    /// Raised and smaller.
    Sup,
}

/// A run of text drawn with one [`Shift`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The characters, markup removed.
    pub text: String,
    /// Baseline position.
    pub shift: Shift,
}

const SUB_FROM: &str = "0123456789+-−=()aehijklmnoprstuvxβγρφχ";
const SUB_TO: &str = "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ";
const SUP_FROM: &str = "0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθιφχ";
const SUP_TO: &str = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᶥᵠᵡ";

fn map_char(c: char, shift: Shift) -> Option<char> {
    let (from, to) = match shift {
        Shift::Sub => (SUB_FROM, SUB_TO),
        Shift::Sup => (SUP_FROM, SUP_TO),
        Shift::Base => return Some(c),
    };
    let i = from.chars().position(|f| f == c)?;
    to.chars().nth(i)
}

/// The Unicode sub/superscript form of `s`, if every character has one.
pub fn unicode_script(s: &str, shift: Shift) -> Option<String> {
    s.chars().map(|c| map_char(c, shift)).collect()
}

fn push(out: &mut Vec<Segment>, text: &str, shift: Shift) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.shift == shift => last.text.push_str(text),
        _ => out.push(Segment {
            text: text.to_string(),
            shift,
        }),
    }
}

/// Splits `s` into runs: markup removed, Unicode scripts substituted where they exist.
/// A marker with nothing after it, or an unclosed `{`, is kept as plain text.
pub fn segments(s: &str) -> Vec<Segment> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let shift = match c {
            '_' => Shift::Sub,
            '^' => Shift::Sup,
            _ => Shift::Base,
        };
        let group = if shift == Shift::Base {
            None
        } else if chars.get(i + 1) == Some(&'{') {
            chars[i + 2..].iter().position(|&d| d == '}').map(|len| {
                (
                    chars[i + 2..i + 2 + len].iter().collect::<String>(),
                    len + 3,
                )
            })
        } else {
            chars
                .get(i + 1)
                .filter(|d| !d.is_whitespace())
                .map(|d| (d.to_string(), 2))
        };
        match group {
            Some((body, used)) if !body.is_empty() => {
                match unicode_script(&body, shift) {
                    Some(u) => push(&mut out, &u, Shift::Base),
                    None => push(&mut out, &body, shift),
                }
                i += used;
            }
            _ => {
                push(&mut out, &c.to_string(), Shift::Base);
                i += 1;
            }
        }
    }
    out
}

/// `s` as plain text: Unicode scripts where they exist, other groups inline without
/// their markup (for text paths that cannot shift the baseline, and width estimates).
pub fn plain(s: &str) -> String {
    segments(s).into_iter().map(|g| g.text).collect()
}

/// `s` for a terminal or any plain-text output: Unicode scripts where they exist
/// (`G_1` → `G₁`); a script Unicode lacks keeps a bare `_` or `^` before a single
/// character (`ε_g`) and parentheses around a longer run (`f_{ε,δ}` → `f_(ε,δ)`), the
/// usual plain-text spelling. No `{…}` group survives.
pub fn text(s: &str) -> String {
    let mut out = String::new();
    for seg in segments(s) {
        let mark = match seg.shift {
            Shift::Base => {
                out.push_str(&seg.text);
                continue;
            }
            Shift::Sub => '_',
            Shift::Sup => '^',
        };
        out.push(mark);
        if seg.text.chars().count() == 1 {
            out.push_str(&seg.text);
        } else {
            out.push('(');
            out.push_str(&seg.text);
            out.push(')');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(text: &str, shift: Shift) -> Segment {
        Segment {
            text: text.into(),
            shift,
        }
    }

    #[test]
    fn unicode_where_it_exists() {
        assert_eq!(segments("G_1"), vec![seg("G₁", Shift::Base)]);
        assert_eq!(
            segments("exp(−‖x‖_p^a)"),
            vec![seg("exp(−‖x‖ₚᵃ)", Shift::Base)]
        );
        assert_eq!(segments("|X_i|"), vec![seg("|Xᵢ|", Shift::Base)]);
        assert_eq!(segments("x^{10}"), vec![seg("x¹⁰", Shift::Base)]);
    }

    #[test]
    fn layout_segments_where_unicode_has_no_form() {
        assert_eq!(
            segments("f_{ε,δ} (budget)"),
            vec![
                seg("f", Shift::Base),
                seg("ε,δ", Shift::Sub),
                seg(" (budget)", Shift::Base)
            ]
        );
        assert_eq!(
            segments("ε_g"),
            vec![seg("ε", Shift::Base), seg("g", Shift::Sub)]
        );
        assert_eq!(
            segments("E‖X‖² ‖I_X‖ / d"),
            vec![
                seg("E‖X‖² ‖I", Shift::Base),
                seg("X", Shift::Sub),
                seg("‖ / d", Shift::Base)
            ]
        );
        assert_eq!(plain("β − G_μ(α)"), "β − Gμ(α)");
    }

    #[test]
    fn no_markup_is_printed_and_plain_text_is_untouched() {
        for s in ["f_{ε,δ}", "‖x‖_p^a", "ε_g", "‖I_X‖", "G_μ", "a^{bc}d"] {
            let p = plain(s);
            assert!(!p.contains(['_', '^', '{', '}']), "{s} -> {p}");
        }
        assert_eq!(
            plain("noise · ε / √(k log(1/δ))"),
            "noise · ε / √(k log(1/δ))"
        );
        // A dangling marker or unclosed group is text, not lost.
        assert_eq!(plain("a_"), "a_");
        assert_eq!(plain("a_{b"), "a_{b");
        assert_eq!(plain("a_ b"), "a_ b");
    }

    #[test]
    fn text_spells_scripts_for_a_terminal() {
        assert_eq!(text("vs f_{ε,δ}"), "vs f_(ε,δ)");
        assert_eq!(text("exp(−‖x‖_p^a) against G_1"), "exp(−‖x‖ₚᵃ) against G₁");
        assert_eq!(text("ε_g and ‖I_X‖"), "ε_g and ‖I_X‖");
        assert_eq!(text("x^{10} y^{ζω}"), "x¹⁰ y^(ζω)");
        assert_eq!(text("plain (1/δ)"), "plain (1/δ)");
        for s in ["f_{ε,δ}", "a^{ζω}", "G_{μ}"] {
            assert!(!text(s).contains(['{', '}']), "{s}");
        }
    }

    #[test]
    fn tables_align() {
        assert_eq!(SUB_FROM.chars().count(), SUB_TO.chars().count());
        assert_eq!(SUP_FROM.chars().count(), SUP_TO.chars().count());
    }
}
