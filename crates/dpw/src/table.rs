//! The tidy table every experiment returns, and its CSV form.
//!
//! One observation a row: `panel,series,x,y`, then the numeric columns the experiment
//! declares (e.g. `k,epsilon,delta,value`). Floats are written by polars' shortest
//! round-trip formatting (ryu), so a value read back is bit-for-bit the value written.

use polars::prelude::*;
use std::io::Write;
use std::path::Path;

/// Names of the leading columns every table has, in order.
pub const KEY_COLUMNS: [&str; 4] = ["panel", "series", "x", "y"];

/// One observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Panel key (matches a panel of the plot spec).
    pub panel: String,
    /// Series key (matches a series of the plot spec).
    pub series: String,
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
    /// Values of the extra columns, in the table's column order.
    pub extra: Vec<f64>,
}

/// A tidy table: rows in the order the experiment produced them.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    extra_columns: Vec<String>,
    rows: Vec<Row>,
}

impl Table {
    /// An empty table with the given extra numeric columns after `panel,series,x,y`.
    pub fn new(extra_columns: Vec<String>) -> Self {
        Self {
            extra_columns,
            rows: Vec::new(),
        }
    }

    /// Appends a row; its `extra` must have one value per extra column.
    pub fn push(&mut self, row: Row) {
        debug_assert_eq!(row.extra.len(), self.extra_columns.len());
        self.rows.push(row);
    }

    /// The rows, in order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The extra column names.
    pub fn extra_columns(&self) -> &[String] {
        &self.extra_columns
    }

    /// All column names: `panel,series,x,y` then the extra columns.
    pub fn column_names(&self) -> Vec<String> {
        KEY_COLUMNS
            .iter()
            .map(|s| s.to_string())
            .chain(self.extra_columns.iter().cloned())
            .collect()
    }

    /// Names of the numeric columns: `x`, `y` and the extras.
    pub fn numeric_columns(&self) -> Vec<String> {
        ["x", "y"]
            .iter()
            .map(|s| s.to_string())
            .chain(self.extra_columns.iter().cloned())
            .collect()
    }

    /// The numeric values of a row in [`Table::numeric_columns`] order.
    pub fn numeric_values(row: &Row) -> Vec<f64> {
        [row.x, row.y]
            .into_iter()
            .chain(row.extra.iter().copied())
            .collect()
    }

    /// Fails on the first non-finite value, naming its row (1-based) and column.
    pub fn check_finite(&self) -> Result<(), String> {
        let names = self.numeric_columns();
        for (i, row) in self.rows.iter().enumerate() {
            for (name, v) in names.iter().zip(Self::numeric_values(row)) {
                if !v.is_finite() {
                    return Err(format!(
                        "non-finite value {v} in row {} (panel {}, series {}), column {name}",
                        i + 1,
                        row.panel,
                        row.series
                    ));
                }
            }
        }
        Ok(())
    }

    /// The points for the plotting crate; extra columns named `y_lo` / `y_hi` become
    /// error bars, and one named `value` the cell value of heatmap panels.
    pub fn to_points(&self) -> Vec<plotting::Point> {
        let lo = self.extra_columns.iter().position(|c| c == "y_lo");
        let hi = self.extra_columns.iter().position(|c| c == "y_hi");
        let z = self.extra_columns.iter().position(|c| c == "value");
        self.rows
            .iter()
            .map(|r| plotting::Point {
                panel: r.panel.clone(),
                series: r.series.clone(),
                x: r.x,
                y: r.y,
                y_lo: lo.map(|i| r.extra[i]),
                y_hi: hi.map(|i| r.extra[i]),
                z: z.map(|i| r.extra[i]),
            })
            .collect()
    }

    /// The table as a polars DataFrame.
    pub fn to_dataframe(&self) -> PolarsResult<DataFrame> {
        let mut columns = vec![
            Column::new(
                "panel".into(),
                self.rows
                    .iter()
                    .map(|r| r.panel.as_str())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "series".into(),
                self.rows
                    .iter()
                    .map(|r| r.series.as_str())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "x".into(),
                self.rows.iter().map(|r| r.x).collect::<Vec<_>>(),
            ),
            Column::new(
                "y".into(),
                self.rows.iter().map(|r| r.y).collect::<Vec<_>>(),
            ),
        ];
        for (j, name) in self.extra_columns.iter().enumerate() {
            columns.push(Column::new(
                name.as_str().into(),
                self.rows.iter().map(|r| r.extra[j]).collect::<Vec<_>>(),
            ));
        }
        DataFrame::new(columns)
    }

    /// Writes the table as CSV (header, then rows) with full float precision.
    pub fn write_csv<W: Write>(&self, out: &mut W) -> PolarsResult<()> {
        let mut df = self.to_dataframe()?;
        CsvWriter::new(out)
            .include_header(true)
            .with_float_scientific(None)
            .with_float_precision(None)
            .finish(&mut df)
    }

    /// Reads a CSV written by [`Table::write_csv`]: the header must start with
    /// `panel,series,x,y`; every other column is read as a float.
    pub fn read_csv(path: &Path) -> Result<Self, String> {
        let text_columns: Schema = [
            Field::new("panel".into(), DataType::String),
            Field::new("series".into(), DataType::String),
        ]
        .into_iter()
        .collect();
        let df = CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(None)
            .with_schema_overwrite(Some(Arc::new(text_columns)))
            .try_into_reader_with_file_path(Some(path.to_path_buf()))
            .and_then(|r| r.finish())
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::from_dataframe(&df).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Converts a DataFrame with the tidy layout back into a table.
    pub fn from_dataframe(df: &DataFrame) -> Result<Self, String> {
        let names: Vec<String> = df
            .get_column_names_str()
            .iter()
            .map(|s| s.to_string())
            .collect();
        if names.len() < 4 || names[..4] != KEY_COLUMNS {
            return Err(format!(
                "header must start with panel,series,x,y, got {}",
                names.join(",")
            ));
        }
        let text = |name: &str| -> Result<Vec<String>, String> {
            let col = df.column(name).map_err(|e| e.to_string())?;
            let col = col.cast(&DataType::String).map_err(|e| e.to_string())?;
            let ca = col.str().map_err(|e| e.to_string())?;
            ca.into_iter()
                .enumerate()
                .map(|(i, v)| {
                    v.map(str::to_string)
                        .ok_or_else(|| format!("row {}: {name} is empty", i + 1))
                })
                .collect()
        };
        let number = |name: &str| -> Result<Vec<f64>, String> {
            let col = df.column(name).map_err(|e| e.to_string())?;
            let col = col
                .cast(&DataType::Float64)
                .map_err(|e| format!("column {name}: {e}"))?;
            let ca = col.f64().map_err(|e| e.to_string())?;
            ca.into_iter()
                .enumerate()
                .map(|(i, v)| {
                    v.ok_or_else(|| {
                        format!("row {}: column {name} is empty or not a number", i + 1)
                    })
                })
                .collect()
        };
        let panels = text("panel")?;
        let series = text("series")?;
        let xs = number("x")?;
        let ys = number("y")?;
        let extra_names = names[4..].to_vec();
        let extras = extra_names
            .iter()
            .map(|n| number(n))
            .collect::<Result<Vec<_>, _>>()?;
        let mut table = Table::new(extra_names);
        for (i, (panel, series)) in panels.into_iter().zip(series).enumerate() {
            let extra = extras.iter().map(|c| c[i]).collect();
            table.push(Row {
                panel,
                series,
                x: xs[i],
                y: ys[i],
                extra,
            });
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[f64]) -> Table {
        let mut t = Table::new(vec!["value".into(), "k".into()]);
        for (i, &v) in values.iter().enumerate() {
            t.push(Row {
                panel: "a".into(),
                series: "s,1".into(),
                x: i as f64,
                y: v,
                extra: vec![-v, 1e6],
            });
        }
        t
    }

    #[test]
    fn csv_round_trip_is_exact() {
        let values = [
            0.1,
            1e-300,
            4.812345678901234,
            1e10,
            1.0 / 3.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            123456789012345680.0,
            0.0,
            -0.0,
            2.0f64.sqrt(),
        ];
        let table = sample(&values);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut file = std::fs::File::create(&path).unwrap();
        table.write_csv(&mut file).unwrap();
        drop(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("panel,series,x,y,value,k\n"), "{text}");
        let back = Table::read_csv(&path).unwrap();
        assert_eq!(back.rows().len(), values.len());
        for (row, &v) in back.rows().iter().zip(&values) {
            assert_eq!(row.y.to_bits(), v.to_bits(), "y {v} came back as {}", row.y);
            assert_eq!(row.extra[0].to_bits(), (-v).to_bits());
            assert_eq!(row.series, "s,1");
        }
        assert_eq!(back, table);
    }

    #[test]
    fn numeric_looking_panel_keys_stay_text() {
        let mut t = Table::new(vec![]);
        t.push(Row {
            panel: "1".into(),
            series: "2".into(),
            x: 1.0,
            y: 2.0,
            extra: vec![],
        });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        t.write_csv(&mut std::fs::File::create(&path).unwrap())
            .unwrap();
        assert_eq!(Table::read_csv(&path).unwrap(), t);
    }

    #[test]
    fn check_finite_names_row_and_column() {
        let t = sample(&[1.0, f64::NAN]);
        let err = t.check_finite().unwrap_err();
        assert!(err.contains("row 2") && err.contains("column y"), "{err}");
        assert!(sample(&[1.0, 2.0]).check_finite().is_ok());
    }

    #[test]
    fn read_rejects_wrong_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        assert!(Table::read_csv(&path).unwrap_err().contains("header"));
    }
}
