//! The results files scripts/benchtable.py writes (build/bench.csv,
//! build/bench-linux.csv): tidy, a header `kernel,benchmark,setting,metric,value`
//! and then one row per metric of each run, its setting a space-separated
//! `key=value` list (or `-`). No field holds a comma or a quote, so
//! splitting on commas is the whole format. A run's rows come together;
//! the same benchmark and setting again, or a metric the run already has,
//! starts the next run.

/// One run: the benchmark, its settings and its metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The benchmark's name.
    pub bench: String,
    /// Its settings and then its metrics, as (name, value).
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

/// The header every results file starts with.
const HEADER: &str = "kernel,benchmark,setting,metric,value";

/// Every run of `text`. A file not starting with the header, or a row
/// without five fields, is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r'));
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    if lines.next() != Some(HEADER) {
        return Err(format!("line 1: not the header `{HEADER}`"));
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut last = (String::new(), String::new());
    for (number, line) in lines.enumerate() {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let [_kernel, bench, setting, metric, value] = fields[..] else {
            return Err(format!(
                "line {}: {} fields, not 5",
                number + 2,
                fields.len()
            ));
        };
        let key = (bench.to_owned(), setting.to_owned());
        let same_run = key == last && rows.last().is_some_and(|r| r.get(metric).is_none());
        if !same_run {
            let settings = setting
                .split(' ')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()));
            rows.push(Row {
                bench: bench.to_owned(),
                fields: settings.collect(),
            });
            last = key;
        }
        if let Some(row) = rows.last_mut() {
            row.fields.push((metric.to_owned(), value.to_owned()));
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_rows_become_one_row() {
        let text = "kernel,benchmark,setting,metric,value\n\
                    faultline,boot,-,first_user_ns,17257376\n\
                    faultline,finish_fault,size=65536 multi_page=0,ns_per_iter,6741\r\n\
                    faultline,finish_fault,size=65536 multi_page=0,faults_per_iter,8.00\n\
                    \n\
                    faultline,finish_fault,size=65536 multi_page=1,ns_per_iter,1007\n";
        let rows = parse(text).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].bench, "boot");
        assert_eq!(rows[0].number("first_user_ns"), Some(17257376.0));
        assert_eq!(rows[1].bench, "finish_fault");
        assert_eq!(rows[1].get("size"), Some("65536"));
        assert_eq!(rows[1].get("multi_page"), Some("0"));
        assert_eq!(rows[1].number("faults_per_iter"), Some(8.0));
        assert_eq!(rows[2].number("ns_per_iter"), Some(1007.0));
        assert_eq!(rows[2].get("first_user_ns"), None);
    }

    #[test]
    fn a_repeated_metric_starts_the_next_run() {
        let text = "kernel,benchmark,setting,metric,value\n\
                    linux,finish_fault,size=65536,ns_per_iter,16778\n\
                    linux,finish_fault,size=65536,ns_per_iter,16780\n";
        let rows = parse(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].number("ns_per_iter"), Some(16780.0));
    }

    #[test]
    fn values_that_are_not_numbers() {
        let rows = parse(
            "kernel,benchmark,setting,metric,value\n\
             linux,seed004,workload=python3 exec_enabled=none,ns,1\n",
        )
        .unwrap();
        assert_eq!(rows[0].get("exec_enabled"), Some("none"));
        assert_eq!(rows[0].number("exec_enabled"), None);
        assert_eq!(rows[0].number("workload"), None);
    }

    #[test]
    fn malformed_files_are_errors() {
        assert_eq!(
            parse("bench,a\nx,1\n").unwrap_err(),
            "line 1: not the header `kernel,benchmark,setting,metric,value`"
        );
        assert_eq!(
            parse("kernel,benchmark,setting,metric,value\nx,1\n").unwrap_err(),
            "line 2: 2 fields, not 5"
        );
        assert_eq!(parse("").unwrap(), []);
    }
}
