//! kubectl-style tables: upper-case headers, columns padded to their widest
//! cell and separated by three spaces (kubectl's tabwriter settings).

/// A table being built row by row.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[&str]) -> Self {
        Table {
            rows: vec![headers.iter().map(|h| (*h).to_owned()).collect()],
        }
    }

    /// Appends a row (missing cells print empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The rendered table, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (c, width) in widths.iter().enumerate() {
                let cell = row.get(c).map(String::as_str).unwrap_or_default();
                line.push_str(cell);
                if c + 1 < cols {
                    line.push_str(&" ".repeat(width - cell.chars().count() + 3));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_columns_like_kubectl() {
        let mut t = Table::new(&["NAME", "STATUS"]);
        t.row(vec!["web-0".into(), "Running".into()]);
        t.row(vec!["a".into(), String::new()]);
        assert_eq!(t.render(), "NAME    STATUS\nweb-0   Running\na\n");
    }
}
