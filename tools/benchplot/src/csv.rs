//! The results files scripts/bench-lib.sh writes (build/bench.csv,
//! build/bench-linux.csv): comma-separated, a header row starting with
//! `bench` wherever the columns change, then one row per `result` line,
//! the benchmark's name first. No field holds a comma or a quote, so
//! splitting on commas is the whole format.

/// One result line: the benchmark and its columns, in the file's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The benchmark's name (the `bench` column).
    pub bench: String,
    /// The other columns, as (header, value).
    pub fields: Vec<(String, String)>,
}

impl Row {
    /// The value of column `key`, if the row has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of column `key` as a number, if it has one.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.get(key)?.parse().ok()
    }
}

/// Every row of `text`, each with the header above it. A row before any
/// header, or with another number of fields than its header, is an error
/// naming its line.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut header: Option<Vec<&str>> = None;
    let mut rows = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        if fields[0] == "bench" {
            header = Some(fields);
            continue;
        }
        let Some(columns) = &header else {
            return Err(format!("line {}: a row before any header", number + 1));
        };
        if columns.len() != fields.len() {
            return Err(format!(
                "line {}: {} fields under a header of {}",
                number + 1,
                fields.len(),
                columns.len()
            ));
        }
        rows.push(Row {
            bench: fields[0].to_owned(),
            fields: columns[1..]
                .iter()
                .zip(&fields[1..])
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_take_the_header_above_them() {
        let text = "bench,first_user_ns\n\
                    boot,17257376\n\
                    bench,size,ns_per_iter,multi_page\r\n\
                    finish_fault,65536,6741,0\r\n\
                    \n\
                    finish_fault,65536,1007,1\n";
        let rows = parse(text).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].bench, "boot");
        assert_eq!(rows[0].number("first_user_ns"), Some(17257376.0));
        assert_eq!(rows[2].bench, "finish_fault");
        assert_eq!(rows[2].get("size"), Some("65536"));
        assert_eq!(rows[2].get("multi_page"), Some("1"));
        assert_eq!(rows[2].number("ns_per_iter"), Some(1007.0));
        assert_eq!(rows[2].get("first_user_ns"), None);
    }

    #[test]
    fn values_that_are_not_numbers() {
        let rows = parse("bench,workload,exec_enabled\nseed004,python3,none\n").unwrap();
        assert_eq!(rows[0].get("exec_enabled"), Some("none"));
        assert_eq!(rows[0].number("exec_enabled"), None);
        assert_eq!(rows[0].number("workload"), None);
    }

    #[test]
    fn malformed_files_are_errors() {
        assert_eq!(
            parse("boot,1\n").unwrap_err(),
            "line 1: a row before any header"
        );
        assert_eq!(
            parse("bench,a,b\nx,1\n").unwrap_err(),
            "line 2: 2 fields under a header of 3"
        );
        assert_eq!(parse("").unwrap(), []);
    }
}
