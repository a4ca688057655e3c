//! Every checked-in figure as a reader sees it: each manifest's plot spec rendered from
//! its `data/*.csv`, and checked for series that the legend promises but the picture
//! hides (by pixels, and from the data's pixel positions and the series' styles), for
//! mechanisms drawn in different colours in different figures, and for sub/superscripts
//! that the SVG does not set smaller and off the baseline.

use dpw::manifest::{discover, load, Manifest};
use dpw::table::Table;
use plotting::palette;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifests() -> Vec<Manifest> {
    let paths = discover(&root().join("experiments")).expect("experiments/");
    assert!(paths.len() >= 20, "{} manifests", paths.len());
    paths.iter().map(|p| load(p).expect("manifest")).collect()
}

fn data(m: &Manifest) -> Table {
    let path: &Path = &root().join("data").join(format!("{}.csv", m.id));
    Table::read_csv(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A series counts as visible when at least this many of its pixels survive everything
/// drawn after it (a marker alone is about 30 pixels, an uncovered line hundreds) …
const MIN_VISIBLE: usize = 40;
/// … and at least this share of what it draws on its own. (fig20's k ≥ 10 panels are the
/// tightest, about 9 %: there the central limit makes every curve coincide, and the
/// CLT curves are drawn dashed in a darker shade on top so that both remain visible.)
const MIN_SHARE: f64 = 0.08;

#[test]
fn every_legend_entry_is_visible_in_every_panel_it_has_points_in() {
    let mut hidden = Vec::new();
    for m in manifests() {
        let table = data(&m);
        let spec = dpw::run::titled(&m.plot, &table);
        let points = table.to_points();
        let vis = plotting::visibility(&spec, &points).expect("render");
        for v in vis {
            if std::env::var("DPW_SHOW_VIS").is_ok() {
                eprintln!(
                    "{} {} {} {} {}",
                    m.id, v.panel, v.series, v.visible, v.alone
                );
            }
            let ok = v.visible >= MIN_VISIBLE && v.visible as f64 >= MIN_SHARE * v.alone as f64;
            if !ok {
                hidden.push(format!(
                    "{} panel {} series {}: {} of {} pixels visible",
                    m.id, v.panel, v.series, v.visible, v.alone
                ));
            }
        }
    }
    assert!(hidden.is_empty(), "hidden series:\n{}", hidden.join("\n"));
}

/// The mechanism a legend label names, by the words the manifests use for it.
fn mechanism_named(label: &str) -> Option<&'static str> {
    let l = label.to_lowercase();
    if l.contains("truncated laplacian") {
        Some("truncated_laplace")
    } else if l.contains("laplace") {
        Some("laplace")
    } else if l.contains("bounded") {
        Some("bounded")
    } else if l.contains("classical gaussian") {
        Some("classical_gaussian")
    } else if l.contains("gaussian") {
        Some("gaussian")
    } else {
        None
    }
}

#[test]
fn each_mechanism_has_one_colour_in_every_manifest() {
    let mut bad = Vec::new();
    for m in manifests() {
        for s in &m.plot.series {
            let named = mechanism_named(&s.label);
            let drawn = palette::mechanism_of(&s.color);
            let problem = if palette::rgb(&s.color).is_none() {
                Some("a colour outside the shared palette".to_string())
            } else if drawn.is_some() && named != drawn {
                // A mechanism's colour on anything but that mechanism.
                Some(format!("colour {} on a series of {named:?}", s.color))
            } else if let Some(mech) = named {
                (drawn != Some(mech) && s.color != "reference")
                    .then(|| format!("{mech} drawn in {}", s.color))
            } else {
                None
            };
            if let Some(p) = problem {
                bad.push(format!("{}: series {} (\"{}\"): {p}", m.id, s.key, s.label));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// From the RGB actually drawn: over all manifests, the plain (unshaded) colour of each
/// mechanism's series is one colour per mechanism, and no two mechanisms share one.
#[test]
fn the_same_mechanism_key_maps_to_the_same_rgb_everywhere() {
    use std::collections::BTreeMap;
    let mut seen: BTreeMap<String, std::collections::BTreeSet<(u8, u8, u8)>> = BTreeMap::new();
    for m in manifests() {
        for s in &m.plot.series {
            if let Some(mech) = mechanism_named(&s.label) {
                if s.color != "reference" && !s.color.contains(':') {
                    let rgb = plotting::palette::resolve_color(&s.color).expect("colour");
                    seen.entry(mech.to_string()).or_default().insert(rgb);
                }
            }
        }
    }
    assert!(seen.len() >= 5, "{seen:?}");
    let mut all = std::collections::BTreeSet::new();
    for (mech, colours) in &seen {
        assert_eq!(colours.len(), 1, "{mech}: {colours:?}");
        assert!(
            all.insert(*colours.iter().next().unwrap()),
            "{mech} shares a colour"
        );
    }
}

/// One `<text>` element of a rendered SVG.
#[derive(Debug, Clone)]
struct SvgText {
    x: f64,
    y: f64,
    size: f64,
    rotated: bool,
    content: String,
}

/// The `<text>` elements of an SVG written by plotters (one attribute list, then the
/// escaped content).
fn svg_texts(svg: &str) -> Vec<SvgText> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let len = tag[start..].find('"')?;
        Some(tag[start..start + len].to_string())
    };
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find("<text ") {
        let tail = &rest[open..];
        let tag_end = tail.find('>').expect("tag closes");
        let close = tail.find("</text>").expect("text closes");
        let tag = &tail[..tag_end];
        let num = |name: &str| {
            attr(tag, name)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("{name} in {tag}"))
        };
        out.push(SvgText {
            x: num("x"),
            y: num("y"),
            size: num("font-size"),
            rotated: attr(tag, "transform").is_some(),
            content: tail[tag_end + 1..close]
                .trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        });
        rest = &tail[close..];
    }
    out
}

/// Every text a spec draws through the markup layout: the title, line panels' titles
/// and axis labels, legend labels (or a colour bar's label).
fn marked_up_texts(spec: &plotting::PlotSpec) -> Vec<String> {
    let mut all = vec![spec.title.clone()];
    for p in &spec.panels {
        all.push(p.title.clone());
        if p.kind == plotting::PanelKind::Lines {
            all.push(p.x.label.clone());
            all.push(p.y.label.clone());
        }
    }
    all.extend(spec.series.iter().map(|s| s.label.clone()));
    all
}

/// Checks that the runs of `text` appear in `texts` as consecutive elements, scripts
/// smaller and shifted off the baseline in the right direction, and returns how many
/// (sub, sup) runs it checked; `Err` says what is wrong.
fn check_layout(texts: &[SvgText], text: &str) -> Result<(usize, usize), String> {
    use plotting::markup::{segments, Shift};
    let runs: Vec<_> = segments(text)
        .into_iter()
        .filter(|r| !r.text.trim().is_empty())
        .collect();
    if runs.iter().all(|r| r.shift == Shift::Base) {
        return Ok((0, 0));
    }
    let start = (0..texts.len().saturating_sub(runs.len() - 1))
        .find(|&i| {
            runs.iter()
                .zip(&texts[i..])
                .all(|(r, t)| t.content.starts_with(r.text.trim()))
        })
        .ok_or_else(|| format!("runs of {text:?} not found as consecutive <text> elements"))?;
    let drawn = &texts[start..start + runs.len()];
    let base = runs
        .iter()
        .zip(drawn)
        .find(|(r, _)| r.shift == Shift::Base)
        .map(|(_, t)| t.clone())
        .ok_or_else(|| format!("{text:?}: no baseline run"))?;
    let (mut subs, mut sups) = (0, 0);
    for (i, (r, t)) in runs.iter().zip(drawn).enumerate() {
        // Across the line: y for horizontal text, x (to the right = below) when rotated.
        let (along, across, base_across) = if t.rotated {
            (-t.y, t.x, base.x)
        } else {
            (t.x, t.y, base.y)
        };
        if i > 0 {
            let prev = &drawn[i - 1];
            let prev_along = if prev.rotated { -prev.y } else { prev.x };
            if along <= prev_along {
                return Err(format!("{text:?}: run {:?} does not follow", r.text));
            }
        }
        let shift = (across - base_across) / base.size;
        let ratio = t.size / base.size;
        match r.shift {
            Shift::Base => {
                if shift != 0.0 || ratio != 1.0 {
                    return Err(format!("{text:?}: base run {:?} moved or resized", r.text));
                }
            }
            Shift::Sub | Shift::Sup => {
                if !(0.6..=0.8).contains(&ratio) {
                    return Err(format!("{text:?}: script {:?} at {ratio:.2} size", r.text));
                }
                let sub = r.shift == Shift::Sub;
                let (lo, hi) = if sub { (0.2, 0.6) } else { (-0.6, -0.2) };
                if !(lo..=hi).contains(&shift) {
                    return Err(format!(
                        "{text:?}: script {:?} shifted {shift:.2} em (want {lo}..{hi})",
                        r.text
                    ));
                }
                if sub {
                    subs += 1;
                } else {
                    sups += 1;
                }
            }
        }
    }
    Ok((subs, sups))
}

/// Every manifest's SVG: no markup printed literally, and every sub/superscript that
/// Unicode lacks drawn as its own smaller `<text>` moved off the baseline (down for a
/// subscript, up for a superscript), on rotated axis labels too. A made-up figure adds
/// the cases the manifests lack (a superscript, a rotated label with a script).
#[test]
fn svg_sub_and_superscripts_are_shifted_and_scaled() {
    let mut cases: Vec<(String, plotting::PlotSpec, Vec<plotting::Point>)> = manifests()
        .into_iter()
        .map(|m| {
            let table = data(&m);
            let spec = dpw::run::titled(&m.plot, &table);
            (m.id.clone(), spec, table.to_points())
        })
        .collect();
    let made_up: plotting::PlotSpec = toml::from_str(
        r##"
        title = "made up: x^{ζω} and f_{ε,δ}"
        [[panels]]
        key = "a"
        title = "e^{−ε} here"
        x = { label = "ε_g", scale = "linear" }
        y = { label = "δ_{ε} over σ^{ζ}", scale = "log" }
        [[series]]
        key = "s"
        label = "f_{ε,δ} budget"
        color = "gaussian"
    "##,
    )
    .unwrap();
    let pts = (1..4)
        .map(|i| plotting::Point {
            panel: "a".into(),
            series: "s".into(),
            x: i as f64,
            y: 10f64.powi(i),
            y_lo: None,
            y_hi: None,
            z: None,
        })
        .collect();
    cases.push(("made-up".into(), made_up, pts));
    let (mut subs, mut sups, mut rotated) = (0, 0, 0);
    let mut bad = Vec::new();
    for (id, spec, points) in &cases {
        let svg = plotting::render_svg(spec, points).expect("render");
        let texts = svg_texts(&svg);
        for t in &texts {
            if t.content.contains("_{") || t.content.contains("^{") {
                bad.push(format!("{id}: markup printed: {:?}", t.content));
            }
        }
        for text in marked_up_texts(spec) {
            match check_layout(&texts, &text) {
                Ok((b, p)) => {
                    subs += b;
                    sups += p;
                    if b + p > 0 && spec.panels.iter().any(|p| p.y.label == text) {
                        rotated += 1;
                    }
                }
                Err(e) => bad.push(format!("{id}: {e}")),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The manifests alone have several subscripts (f_{ε,δ}, ε_g, ‖I_X‖, G_μ).
    assert!(
        subs >= 8 && sups >= 2 && rotated >= 1,
        "{subs} {sups} {rotated}"
    );
}

/// Share of a series' points that must stay visible under everything drawn after it.
const MIN_POINT_SHARE: f64 = 0.2;

/// Distance from pixel `p` to the polyline through `line`.
fn to_polyline(p: (f64, f64), line: &[(i32, i32)]) -> f64 {
    let (px, py) = p;
    let seg = |a: (i32, i32), b: (i32, i32)| {
        let (ax, ay, bx, by) = (a.0 as f64, a.1 as f64, b.0 as f64, b.1 as f64);
        let (dx, dy) = (bx - ax, by - ay);
        let len2 = dx * dx + dy * dy;
        let t = if len2 > 0.0 {
            (((px - ax) * dx + (py - ay) * dy) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (px - ax - t * dx).hypot(py - ay - t * dy)
    };
    match line {
        [] => f64::INFINITY,
        [a] => seg(*a, *a),
        _ => line
            .windows(2)
            .map(|w| seg(w[0], w[1]))
            .fold(f64::INFINITY, f64::min),
    }
}

/// Where a series leaves a mark: each point (a marker, or a stretch of line when it has
/// no markers) and, when its points are joined, the midpoint of each segment (line).
/// `(pixel, is a marker)`.
fn samples(style: &plotting::SeriesStyle, px: &[(i32, i32)]) -> Vec<((f64, f64), bool)> {
    let joined = style.line != plotting::LineStyle::None;
    let mut out: Vec<((f64, f64), bool)> = px
        .iter()
        .filter(|_| style.markers || joined)
        .map(|&(x, y)| ((x as f64, y as f64), style.markers))
        .collect();
    if joined {
        out.extend(px.windows(2).map(|w| {
            let mid = (
                0.5 * (w[0].0 + w[1].0) as f64,
                0.5 * (w[0].1 + w[1].1) as f64,
            );
            (mid, false)
        }));
    }
    out
}

/// Whether `later`, drawn over an earlier series, hides the earlier one's mark at `p`:
/// a marker of `later` (radius 3) hides a marker on the same pixel and a 2-pixel line
/// within 2.5 pixels of its centre; a solid 2-pixel line of `later` hides a line within a
/// pixel but not a marker. Dashed and dotted lines leave gaps, so they hide nothing.
fn hides(
    later: &plotting::SeriesStyle,
    later_px: &[(i32, i32)],
    (p, is_marker): ((f64, f64), bool),
) -> bool {
    use plotting::LineStyle;
    let reach = if is_marker { 1.5 } else { 2.5 };
    let on_marker = later.markers
        && later_px
            .iter()
            .any(|q| (q.0 as f64 - p.0).hypot(q.1 as f64 - p.1) <= reach);
    let on_line = later.line == LineStyle::Solid && !is_marker && to_polyline(p, later_px) <= 1.0;
    on_marker || on_line
}

/// From the plot spec and the data (no pixel counting): in each line panel, for each
/// series and each series drawn after it, the share of its points that the later one
/// covers (same pixel within marker radius or line width, given the two styles). Each
/// legend entry must keep at least [`MIN_POINT_SHARE`] of its points uncovered by all
/// later series together; a pair in which the later series covers every point of the
/// earlier is only allowed when their styles let the earlier one show through (the
/// later dashed, dotted or markers-only, or the earlier marked and the later not).
/// What [`every_series_keeps_a_share_of_its_points_uncovered`] finds wrong with one
/// figure, and how many (earlier, later) pairs it compared.
fn coverage_problems(
    id: &str,
    spec: &plotting::PlotSpec,
    points: &[plotting::Point],
) -> (Vec<String>, usize) {
    let mut bad = Vec::new();
    let mut pairs = 0;
    let drawn = plotting::series_pixels(spec, points).expect("render");
    let style = |key: &str| spec.series.iter().find(|s| s.key == key).unwrap();
    for (i, a) in drawn.iter().enumerate() {
        let marks = samples(style(&a.series), &a.pixels);
        let later: Vec<_> = drawn[i + 1..]
            .iter()
            .filter(|b| b.panel == a.panel)
            .collect();
        for b in &later {
            pairs += 1;
            let sb = style(&b.series);
            if marks.iter().all(|&m| hides(sb, &b.pixels, m)) {
                bad.push(format!(
                    "{id} panel {}: {} covers every point of {}",
                    a.panel, b.series, a.series
                ));
            }
        }
        let uncovered = marks
            .iter()
            .filter(|&&m| !later.iter().any(|b| hides(style(&b.series), &b.pixels, m)))
            .count();
        let share = uncovered as f64 / marks.len() as f64;
        if std::env::var("DPW_SHOW_VIS").is_ok() {
            eprintln!("{id} {} {} {share:.3}", a.panel, a.series);
        }
        if share < MIN_POINT_SHARE {
            bad.push(format!(
                "{id} panel {} series {}: {uncovered} of {} marks uncovered",
                a.panel,
                a.series,
                marks.len()
            ));
        }
    }
    (bad, pairs)
}

#[test]
fn every_series_keeps_a_share_of_its_points_uncovered() {
    let mut bad = Vec::new();
    let mut pairs = 0;
    for m in manifests() {
        let table = data(&m);
        let spec = dpw::run::titled(&m.plot, &table);
        let (b, p) = coverage_problems(&m.id, &spec, &table.to_points());
        bad.extend(b);
        pairs += p;
    }
    assert!(pairs > 100, "{pairs} pairs");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The coverage check on a made-up figure: a series drawn again on the same points in
/// the same solid style is reported; drawn dashed, or with the first one marked, not.
#[test]
fn the_coverage_check_finds_a_series_drawn_over_an_identical_one() {
    let spec = |second: &str| -> plotting::PlotSpec {
        toml::from_str(&format!(
            r##"
            title = "t"
            [[panels]]
            key = "a"
            title = "a"
            x = {{ label = "x", scale = "linear" }}
            y = {{ label = "y", scale = "linear" }}
            [[series]]
            key = "first"
            label = "first"
            color = "laplace"
            {}
            [[series]]
            key = "second"
            label = "second"
            color = "gaussian"
            {second}
        "##,
            if second.contains("first-marked") {
                "markers = true"
            } else {
                ""
            }
        ))
        .unwrap()
    };
    let points: Vec<plotting::Point> = ["first", "second"]
        .iter()
        .flat_map(|s| {
            (0..20).map(move |i| plotting::Point {
                panel: "a".into(),
                series: s.to_string(),
                x: i as f64,
                y: (i * i) as f64,
                y_lo: None,
                y_hi: None,
                z: None,
            })
        })
        .collect();
    let (bad, pairs) = coverage_problems("t", &spec(""), &points);
    assert_eq!(pairs, 1);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].contains("second covers every point of first"));
    assert!(coverage_problems("t", &spec("line = \"dashed\""), &points)
        .0
        .is_empty());
    assert!(coverage_problems("t", &spec("# first-marked"), &points)
        .0
        .is_empty());
    // Markers on top of markers hide them again.
    let (bad, _) = coverage_problems("t", &spec("# first-marked\nmarkers = true"), &points);
    assert!(!bad.is_empty());
}

/// By series key: a series whose key is a mechanism's palette name, or starts with it and
/// `_` (`laplace_clt`, `bounded_certified`), is drawn in that mechanism's colour or a shade
/// of it, in every manifest (the longest name wins: `truncated_laplace` is not `laplace`).
#[test]
fn a_series_keyed_by_a_mechanism_wears_its_colour_in_every_manifest() {
    let mut names: Vec<&str> = palette::MECHANISMS.iter().map(|(n, _)| *n).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let mut bad = Vec::new();
    let mut checked = 0;
    for m in manifests() {
        for s in &m.plot.series {
            let Some(mech) = names
                .iter()
                .find(|n| s.key == **n || s.key.starts_with(&format!("{n}_")))
            else {
                continue;
            };
            checked += 1;
            if palette::mechanism_of(&s.color) != Some(*mech) {
                bad.push(format!("{}: series {} drawn in {}", m.id, s.key, s.color));
            }
        }
    }
    assert!(checked >= 30, "{checked}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The SVG layout check rejects a script left on the baseline or at full size.
#[test]
fn the_svg_layout_check_rejects_unshifted_or_unscaled_scripts() {
    let t = |x: f64, y: f64, size: f64, content: &str| SvgText {
        x,
        y,
        size,
        rotated: false,
        content: content.into(),
    };
    let good = [t(10.0, 50.0, 13.0, "f"), t(18.0, 55.0, 9.1, "ε,δ")];
    assert_eq!(check_layout(&good, "f_{ε,δ}"), Ok((1, 0)));
    let flat = [t(10.0, 50.0, 13.0, "f"), t(18.0, 50.0, 9.1, "ε,δ")];
    assert!(check_layout(&flat, "f_{ε,δ}").is_err());
    let big = [t(10.0, 50.0, 13.0, "f"), t(18.0, 55.0, 13.0, "ε,δ")];
    assert!(check_layout(&big, "f_{ε,δ}").is_err());
    let up = [t(10.0, 50.0, 13.0, "f"), t(18.0, 45.0, 9.1, "ε,δ")];
    assert!(check_layout(&up, "f_{ε,δ}").is_err());
    assert!(check_layout(&good[..1], "f_{ε,δ}").is_err());
}
