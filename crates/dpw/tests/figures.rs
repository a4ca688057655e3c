//! Every checked-in figure as a reader sees it: each manifest's plot spec rendered from
//! its `data/*.csv`, and checked for series that the legend promises but the picture
//! hides, and for mechanisms drawn in different colours in different figures.

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
                    let rgb = plotting::spec::resolve_color(&s.color).expect("colour");
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
