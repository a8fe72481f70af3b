//! Which chart each benchmark gets, and its bars: the rows of both kernels'
//! results grouped into x-axis groups (a view size, a task count, a
//! workload...) and, within each group, one bar per series: faultline with
//! each setting of the fault-path switches the benchmark varies (the switch
//! off and on), then Linux 6.12.
//!
//! Which switches vary is read from the rows, not written here: a switch
//! that takes more than one value among a kernel's rows of a chart splits
//! its bars. The spec below only says what each benchmark measures, how to
//! group its rows and what the axes show.

use std::cmp::Ordering;

use crate::csv::Row;

/// Whose results a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kernel {
    /// build/bench.csv.
    Faultline,
    /// build/bench-linux.csv.
    Linux,
}

impl Kernel {
    /// The name in the legend.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Faultline => "faultline",
            Kernel::Linux => "Linux 6.12",
        }
    }
}

/// How a chart's rows become x-axis groups.
enum Groups {
    /// One group per distinct value of these columns, named by the
    /// function from those values; the bars show `metric`.
    ByColumns {
        /// The columns that tell the groups apart.
        columns: &'static [&'static str],
        /// The group's name on the axis, from those columns' values.
        name: fn(&[&str]) -> String,
        /// The column the bars show.
        metric: &'static str,
    },
    /// One group per metric column of each row: (column, group name).
    ByMetric(&'static [(&'static str, &'static str)]),
}

/// One chart: a benchmark, what it shows and how.
struct Spec {
    /// The benchmark's name, as its rows start.
    bench: &'static str,
    /// The chart's caption.
    title: &'static str,
    /// What the x axis's groups are.
    x_desc: &'static str,
    /// What the y axis measures, with its unit.
    y_desc: &'static str,
    /// How rows become groups.
    groups: Groups,
}

/// `65536` as `64K`; other numbers as they are.
fn bytes(value: &str) -> String {
    match value.parse::<u64>() {
        Ok(n) if n >= 1024 && n % 1024 == 0 => format!("{}K", n / 1024),
        _ => value.to_owned(),
    }
}

/// A view's size.
fn view(values: &[&str]) -> String {
    format!("{} view", bytes(values[0]))
}

/// lat_pagefault's file size.
fn pages(values: &[&str]) -> String {
    format!("{} pages", values[0])
}

/// will-it-scale's tasks: threads of one process or processes.
fn tasks(values: &[&str]) -> String {
    let (n, mode) = (values[0], values[1]);
    let plural = if n == "1" { "" } else { "s" };
    match mode {
        "1" => format!("{n} thread{plural}"),
        _ => format!("{n} process{}", if n == "1" { "" } else { "es" }),
    }
}

/// seed 004's workloads: `bash_coreutils` is bash running coreutils.
fn workload(values: &[&str]) -> String {
    values[0].replace('_', " + ")
}

/// The y axis of the icount benchmarks: virtual time is instructions.
const ICOUNT_NS: &str = "virtual ns (-icount: 1 ns = 1 instruction)";

/// will-it-scale's rates, one group per task count and mode.
const BY_TASKS: Groups = Groups::ByColumns {
    columns: &["tasks", "threads"],
    name: tasks,
    metric: "ops_per_sec",
};

/// The charts, in the order drawn: each seed's claim first, in the unit
/// the seed states it (seed 000: faults per iteration; seed 004: the share
/// of text in 64K folios), then the time it buys, then the controls.
/// Benchmarks without one (boot, with one number and no Linux
/// counterpart) are left out.
const SPECS: &[Spec] = &[
    Spec {
        bench: "finish_fault",
        title: "Seed 000's claim: faults per iteration in a 64K view of a 2M folio (8 -> 1)",
        x_desc: "view of the folio",
        y_desc: "page faults per iteration",
        groups: Groups::ByColumns {
            columns: &["size"],
            name: view,
            metric: "faults_per_iter",
        },
    },
    Spec {
        bench: "finish_fault",
        title: "Seed 000: time per iteration (8 stores into the view)",
        x_desc: "view of the folio",
        y_desc: ICOUNT_NS,
        groups: Groups::ByColumns {
            columns: &["size"],
            name: view,
            metric: "ns_per_iter",
        },
    },
    Spec {
        bench: "seed000",
        title: "Seed 000, the seed's own C program: time per iteration",
        x_desc: "view of the folio",
        y_desc: ICOUNT_NS,
        groups: Groups::ByColumns {
            columns: &["size"],
            name: view,
            metric: "ns_per_iter",
        },
    },
    Spec {
        bench: "page_fault4",
        title: "Seed 002: page_fault4 (will-it-scale) under -icount, per-VMA locks off and on",
        x_desc: "tasks",
        y_desc: "pages faulted per virtual second",
        groups: BY_TASKS,
    },
    Spec {
        bench: "mttcg_scaling",
        title: "Seed 002: 2 threads : 1 thread on 2 vCPUs, MTTCG (real time, medians of 5)",
        x_desc: "benchmark",
        y_desc: "rate with 2 threads / rate with 1",
        groups: Groups::ByMetric(&[
            ("ratio", "page_fault4"),
            ("spin_ratio", "spin"),
            ("getppid1_ratio", "getppid1"),
        ]),
    },
    Spec {
        bench: "lat_pagefault",
        title: "Seeds 002 and 003: lat_pagefault, read faults on a cached file, fault-around off and on",
        x_desc: "file size",
        y_desc: "virtual ns per page (-icount: 1 ns = 1 instruction)",
        groups: Groups::ByColumns {
            columns: &["pages"],
            name: pages,
            metric: "ns_per_page",
        },
    },
    Spec {
        bench: "seed004",
        title: "Seed 004's claim: share of mapped text in aligned 64K folios",
        x_desc: "workload",
        y_desc: "% of text (faultline's /proc/thpmaps)",
        groups: Groups::ByColumns {
            columns: &["workload"],
            name: workload,
            metric: "text_64k_aligned",
        },
    },
    Spec {
        bench: "seed004",
        title: "Seed 004: share of mapped text under the contiguous bit",
        x_desc: "workload",
        y_desc: "% of text mapped cont",
        groups: Groups::ByColumns {
            columns: &["workload"],
            name: workload,
            metric: "text_cont",
        },
    },
    Spec {
        bench: "seed004",
        title: "Seed 004: page faults running Debian's programs, per run",
        x_desc: "workload",
        y_desc: "page faults",
        groups: Groups::ByColumns {
            columns: &["workload"],
            name: workload,
            metric: "faults",
        },
    },
    Spec {
        bench: "tlb_seed000",
        title: "TLB model (make bench TLB=1): seed 000's dTLB misses, 1000 iterations",
        x_desc: "view of the folio",
        y_desc: "dTLB misses (N1-sized TLBs)",
        groups: Groups::ByColumns {
            columns: &["size"],
            name: view,
            metric: "dtlb_miss",
        },
    },
    Spec {
        bench: "tlb_lat_pagefault",
        title: "TLB model: lat_pagefault's dTLB misses, 4K and 64K shmem folios",
        x_desc: "file size",
        y_desc: "dTLB misses (N1-sized TLBs)",
        groups: Groups::ByColumns {
            columns: &["pages"],
            name: pages,
            metric: "dtlb_miss",
        },
    },
    Spec {
        bench: "tlb_seed004",
        title: "TLB model: seed 004's iTLB misses, exec folios and mapping alignment",
        x_desc: "workload",
        y_desc: "iTLB misses (N1-sized TLBs)",
        groups: Groups::ByColumns {
            columns: &["workload"],
            name: workload,
            metric: "itlb_miss",
        },
    },
    Spec {
        bench: "tlb_seed004",
        title: "TLB model: seed 004's table walks (L2 TLB misses)",
        x_desc: "workload",
        y_desc: "walks (N1-sized TLBs)",
        groups: Groups::ByColumns {
            columns: &["workload"],
            name: workload,
            metric: "l2_miss",
        },
    },
    Spec {
        bench: "getppid1",
        title: "Control: getppid1, null system calls under -icount",
        x_desc: "tasks",
        y_desc: "calls per virtual second",
        groups: BY_TASKS,
    },
    Spec {
        bench: "clock_gettime",
        title: "Control: clock_gettime through the vDSO and as a system call",
        x_desc: "how the clock is read",
        y_desc: "virtual ns per call",
        groups: Groups::ByMetric(&[
            ("vdso_ns_per_call", "vDSO"),
            ("syscall_ns_per_call", "system call"),
        ]),
    },
];

/// The columns that are settings of the kernel, not results, with the
/// name the legend gives them.
const SWITCHES: &[(&str, &str)] = &[
    ("multi_page", "multi_page"),
    ("contpte", "contpte"),
    ("fault_around_bytes", "fault-around"),
    ("vma_lock", "vma_lock"),
    ("hw_af", "hardware AF"),
    ("hw_dirty", "hardware dirty"),
    ("tlbi_range", "range TLBI"),
    ("exec_enabled", "exec"),
    ("mapping_align", "align"),
    ("fault_around", "fault-around"),
    ("shmem_64k", "64K folios"),
    ("pmu", "PMU"),
];

/// A switch's value as the legend shows it: 0 and 1 as off and on, sizes
/// in K.
fn setting(value: &str) -> String {
    match value {
        "0" => "off".to_owned(),
        "1" => "on".to_owned(),
        _ => bytes(value),
    }
}

/// One chart's data, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The caption.
    pub title: &'static str,
    /// What the x axis's groups are.
    pub x_desc: &'static str,
    /// What the y axis measures, with its unit.
    pub y_desc: &'static str,
    /// The x axis's groups, in order.
    pub groups: Vec<String>,
    /// The bars in each group, in order.
    pub series: Vec<Series>,
}

/// One bar per group: a kernel with one setting of its switches.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Whose results.
    pub kernel: Kernel,
    /// The legend's text.
    pub label: String,
    /// The value in each of the chart's groups (the mean, if the setting
    /// ran more than once there), or None where it did not run.
    pub values: Vec<Option<f64>>,
}

/// One measurement: its group, its kernel and switch setting, its value.
struct Point {
    /// The x-axis group it belongs to.
    group: String,
    /// Whose result it is.
    kernel: Kernel,
    /// The values of the switches that vary, as (column, value).
    setting: Vec<(&'static str, String)>,
    /// What the bar shows.
    value: f64,
}

/// The charts for `rows` (each with its kernel) that have any data.
pub fn charts(rows: &[(Kernel, Row)]) -> Vec<Chart> {
    SPECS.iter().filter_map(|spec| chart(spec, rows)).collect()
}

/// The chart `spec` describes, or None if no row has its data.
fn chart(spec: &Spec, rows: &[(Kernel, Row)]) -> Option<Chart> {
    let mine: Vec<&(Kernel, Row)> = rows.iter().filter(|(_, r)| r.bench == spec.bench).collect();
    // The switches that take more than one value among a kernel's rows.
    let varying = |kernel: Kernel| -> Vec<&'static str> {
        SWITCHES
            .iter()
            .map(|(column, _)| *column)
            .filter(|column| {
                let mut values = mine
                    .iter()
                    .filter(|(k, _)| *k == kernel)
                    .filter_map(|(_, row)| row.get(column));
                let first = values.next();
                values.any(|v| Some(v) != first)
            })
            .collect()
    };
    let (faultline, linux) = (varying(Kernel::Faultline), varying(Kernel::Linux));
    let mut points = Vec::new();
    for (kernel, row) in &mine {
        let switches = match kernel {
            Kernel::Faultline => &faultline,
            Kernel::Linux => &linux,
        };
        let setting: Vec<(&'static str, String)> = switches
            .iter()
            .filter_map(|column| Some((*column, row.get(column)?.to_owned())))
            .collect();
        let mut point = |group: String, metric: &str| {
            if let Some(value) = row.number(metric) {
                points.push(Point {
                    group,
                    kernel: *kernel,
                    setting: setting.clone(),
                    value,
                });
            }
        };
        match &spec.groups {
            Groups::ByColumns {
                columns,
                name,
                metric,
            } => {
                let values: Option<Vec<&str>> = columns.iter().map(|c| row.get(c)).collect();
                if let Some(values) = values {
                    point(name(&values), metric);
                }
            }
            Groups::ByMetric(metrics) => {
                for (metric, name) in metrics.iter() {
                    point(name.to_string(), metric);
                }
            }
        }
    }
    if points.is_empty() {
        return None;
    }

    // Groups in the order they first appear, faultline's first; series
    // faultline's first, each kernel's settings in increasing order (a
    // switch off before on, 4K before 64K).
    points.sort_by_key(|p| p.kernel);
    let mut groups: Vec<String> = Vec::new();
    let mut keys: Vec<(Kernel, Vec<(&'static str, String)>)> = Vec::new();
    for p in &points {
        if !groups.contains(&p.group) {
            groups.push(p.group.clone());
        }
        let key = (p.kernel, p.setting.clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| compare_settings(&a.1, &b.1)));
    let series = keys
        .into_iter()
        .map(|(kernel, setting)| {
            let values = groups
                .iter()
                .map(|group| {
                    let matching: Vec<f64> = points
                        .iter()
                        .filter(|p| p.kernel == kernel && p.setting == setting && &p.group == group)
                        .map(|p| p.value)
                        .collect();
                    (!matching.is_empty())
                        .then(|| matching.iter().sum::<f64>() / matching.len() as f64)
                })
                .collect();
            Series {
                kernel,
                label: label(kernel, &setting),
                values,
            }
        })
        .collect();
    Some(Chart {
        title: spec.title,
        x_desc: spec.x_desc,
        y_desc: spec.y_desc,
        groups,
        series,
    })
}

/// A switch's value as a number (decimal, or hex as 0x2), if it is one.
fn numeric(value: &str) -> Option<u64> {
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

/// Orders two settings of the same switches, switch by switch: numbers
/// by value, anything else as text.
fn compare_settings(a: &[(&str, String)], b: &[(&str, String)]) -> Ordering {
    for ((_, x), (_, y)) in a.iter().zip(b) {
        let order = match (numeric(x), numeric(y)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// The legend's text for a kernel with a setting of its switches.
fn label(kernel: Kernel, settings: &[(&str, String)]) -> String {
    let mut label = kernel.name().to_owned();
    for (i, (column, value)) in settings.iter().enumerate() {
        let name = SWITCHES
            .iter()
            .find(|(c, _)| c == column)
            .map_or(*column, |(_, name)| *name);
        label.push_str(if i == 0 { ": " } else { ", " });
        label.push_str(&format!("{name} {}", setting(value)));
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv;

    /// The tidy CSV of runs written `bench|settings|metrics`, each list
    /// space-separated `key=value` pairs, as scripts/benchtable.py writes it.
    fn tidy(kernel: &str, runs: &[&str]) -> String {
        let mut text = String::from("kernel,benchmark,setting,metric,value\n");
        for run in runs {
            let [bench, setting, metrics] = run.split('|').collect::<Vec<_>>()[..] else {
                panic!("{run}: not bench|settings|metrics");
            };
            let setting = if setting.is_empty() { "-" } else { setting };
            for (metric, value) in metrics.split(' ').filter_map(|m| m.split_once('=')) {
                text += &format!("{kernel},{bench},{setting},{metric},{value}\n");
            }
        }
        text
    }

    /// Rows of both kernels, as the scripts write them.
    fn rows() -> Vec<(Kernel, Row)> {
        let faultline = csv::parse(&tidy(
            "faultline",
            &[
            "boot||first_user_ns=17257376",
            "finish_fault|size=65536 multi_page=0 contpte=1 fault_around_bytes=65536 vma_lock=1|ns_per_iter=6741 faults_per_iter=8.00",
            "finish_fault|size=32768 multi_page=0 contpte=1 fault_around_bytes=65536 vma_lock=1|ns_per_iter=6741 faults_per_iter=8.00",
            "finish_fault|size=65536 multi_page=1 contpte=1 fault_around_bytes=65536 vma_lock=1|ns_per_iter=1007 faults_per_iter=1.00",
            "finish_fault|size=32768 multi_page=1 contpte=1 fault_around_bytes=65536 vma_lock=1|ns_per_iter=1008 faults_per_iter=1.00",
            "page_fault4|tasks=1 threads=1 multi_page=1 contpte=1 fault_around_bytes=65536 vma_lock=0|ops_per_sec=4481273 faults=38918",
            "page_fault4|tasks=1 threads=1 multi_page=1 contpte=1 fault_around_bytes=65536 vma_lock=1|ops_per_sec=4612472 faults=38918",
            "page_fault4|tasks=1 threads=0 multi_page=1 contpte=1 fault_around_bytes=65536 vma_lock=1|ops_per_sec=4589926 faults=38921",
            "clock_gettime|calls=100000 vdso=1|vdso_ns_per_call=51 syscall_ns_per_call=296",
            "mttcg_scaling|pmu=0|threads1_ops=2363156 threads2_ops=2370403 ratio=1.00 spin_ratio=0.99 getppid1_ratio=0.95",
            "mttcg_scaling|pmu=1|threads1_ops=2476888 threads2_ops=4267943 ratio=1.72 spin_ratio=1.97 getppid1_ratio=1.30",
            "seed004|workload=python3 exec_enabled=0x0 mapping_align=0x0 fault_around=65536|faults=6718 ns=496000208 text_64k_aligned=5 text_cont=0",
            "seed004|workload=python3 exec_enabled=0x2 mapping_align=0x1 fault_around=65536|faults=6716 ns=496092384 text_64k_aligned=90 text_cont=88",
            "seed004|workload=bash_coreutils exec_enabled=0x0 mapping_align=0x0 fault_around=65536|faults=5437 ns=315771696 text_64k_aligned=3 text_cont=0",
            "seed004|workload=bash_coreutils exec_enabled=0x2 mapping_align=0x1 fault_around=65536|faults=5425 ns=316205680 text_64k_aligned=87 text_cont=85",
            "tlb_lat_pagefault|shmem_64k=never pages=512 contpte=1|dtlb_miss=5149 itlb_miss=19 ns_per_page=116",
            "tlb_lat_pagefault|shmem_64k=always pages=512 contpte=1|dtlb_miss=339 itlb_miss=19 ns_per_page=63",
            ],
        ))
        .unwrap();
        // Linux ran finish_fault twice (its loop sets a switch Linux does
        // not have), and has only fault-around to show.
        let linux = csv::parse(&tidy(
            "linux",
            &[
            "finish_fault|size=65536 fault_around_bytes=65536|ns_per_iter=16778 faults_per_iter=8.00",
            "finish_fault|size=65536 fault_around_bytes=65536|ns_per_iter=16780 faults_per_iter=8.00",
            "clock_gettime|calls=100000 vdso=1|vdso_ns_per_call=60 syscall_ns_per_call=449",
            "seed004|workload=python3 exec_enabled=none mapping_align=none fault_around=65536|faults=6744 ns=509500000",
            "seed004|workload=python3 exec_enabled=none mapping_align=none fault_around=4096|faults=7907 ns=510000000",
            ],
        ))
        .unwrap();
        faultline
            .into_iter()
            .map(|r| (Kernel::Faultline, r))
            .chain(linux.into_iter().map(|r| (Kernel::Linux, r)))
            .collect()
    }

    /// The chart whose title starts with `title_start`.
    fn find<'a>(charts: &'a [Chart], title_start: &str) -> &'a Chart {
        charts
            .iter()
            .find(|c| c.title.starts_with(title_start))
            .unwrap()
    }

    #[test]
    fn a_chart_per_claim_with_data_each_seeds_claim_first() {
        let charts = charts(&rows());
        let titles: Vec<_> = charts.iter().map(|c| c.title).collect();
        assert_eq!(
            titles,
            [
                "Seed 000's claim: faults per iteration in a 64K view of a 2M folio (8 -> 1)",
                "Seed 000: time per iteration (8 stores into the view)",
                "Seed 002: page_fault4 (will-it-scale) under -icount, per-VMA locks off and on",
                "Seed 002: 2 threads : 1 thread on 2 vCPUs, MTTCG (real time, medians of 5)",
                "Seed 004's claim: share of mapped text in aligned 64K folios",
                "Seed 004: share of mapped text under the contiguous bit",
                "Seed 004: page faults running Debian's programs, per run",
                "TLB model: lat_pagefault's dTLB misses, 4K and 64K shmem folios",
                "Control: clock_gettime through the vDSO and as a system call",
            ]
        );
    }

    #[test]
    fn seed_000s_claim_is_faults_per_iteration() {
        let charts = charts(&rows());
        let chart = find(&charts, "Seed 000's claim");
        assert_eq!(chart.y_desc, "page faults per iteration");
        assert_eq!(chart.series[0].values, [Some(8.0), Some(8.0)]);
        assert_eq!(chart.series[1].values, [Some(1.0), Some(1.0)]);
        assert_eq!(chart.series[2].values, [Some(8.0), None]);
    }

    #[test]
    fn seed_004s_claim_is_faultlines_share_of_text_alone() {
        let charts = charts(&rows());
        let chart = find(&charts, "Seed 004's claim");
        assert_eq!(chart.groups, ["python3", "bash + coreutils"]);
        // Linux has no /proc/thpmaps: its rows have no share to draw.
        assert!(chart.series.iter().all(|s| s.kernel == Kernel::Faultline));
        assert_eq!(chart.series[0].values, [Some(5.0), Some(3.0)]);
        assert_eq!(chart.series[1].values, [Some(90.0), Some(87.0)]);
        let cont = find(&charts, "Seed 004: share of mapped text under");
        assert_eq!(cont.series[1].values, [Some(88.0), Some(85.0)]);
    }

    #[test]
    fn the_switch_off_and_on_beside_linux() {
        let charts = charts(&rows());
        let chart = find(&charts, "Seed 000: time");
        assert_eq!(chart.groups, ["64K view", "32K view"]);
        let labels: Vec<_> = chart.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "faultline: multi_page off",
                "faultline: multi_page on",
                "Linux 6.12"
            ]
        );
        assert_eq!(chart.series[0].values, [Some(6741.0), Some(6741.0)]);
        assert_eq!(chart.series[1].values, [Some(1007.0), Some(1008.0)]);
        // The mean of Linux's two runs; no 32K run.
        assert_eq!(chart.series[2].values, [Some(16779.0), None]);
        assert_eq!(chart.series[2].kernel, Kernel::Linux);
    }

    #[test]
    fn groups_by_several_columns_and_by_metric() {
        let charts = charts(&rows());
        let chart = find(&charts, "Seed 002: page_fault4");
        assert_eq!(chart.groups, ["1 thread", "1 process"]);
        let labels: Vec<_> = chart.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["faultline: vma_lock off", "faultline: vma_lock on"]
        );
        assert_eq!(chart.series[0].values, [Some(4481273.0), None]);
        assert_eq!(chart.series[1].values, [Some(4612472.0), Some(4589926.0)]);

        let chart = find(&charts, "Control: clock_gettime");
        assert_eq!(chart.groups, ["vDSO", "system call"]);
        assert_eq!(chart.series[0].label, "faultline");
        assert_eq!(chart.series[0].values, [Some(51.0), Some(296.0)]);
        assert_eq!(chart.series[1].values, [Some(60.0), Some(449.0)]);

        let chart = find(&charts, "Seed 002: 2 threads");
        assert_eq!(chart.groups, ["page_fault4", "spin", "getppid1"]);
        assert_eq!(chart.series[0].label, "faultline: PMU off");
        assert_eq!(chart.series[1].values, [Some(1.72), Some(1.97), Some(1.3)]);
    }

    #[test]
    fn several_switches_name_each_setting() {
        let charts = charts(&rows());
        let chart = find(&charts, "Seed 004: page faults");
        assert_eq!(chart.groups, ["python3", "bash + coreutils"]);
        let labels: Vec<_> = chart.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "faultline: exec 0x0, align 0x0",
                "faultline: exec 0x2, align 0x1",
                "Linux 6.12: fault-around 4K",
                "Linux 6.12: fault-around 64K",
            ]
        );
        assert_eq!(chart.series[2].values, [Some(7907.0), None]);
    }

    #[test]
    fn the_tlb_models_misses_by_folio_size() {
        let charts = charts(&rows());
        let chart = find(&charts, "TLB model: lat_pagefault");
        assert_eq!(chart.groups, ["512 pages"]);
        let labels: Vec<_> = chart.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "faultline: 64K folios always",
                "faultline: 64K folios never"
            ]
        );
        assert_eq!(chart.series[0].values, [Some(339.0)]);
        assert_eq!(chart.series[1].values, [Some(5149.0)]);
    }

    #[test]
    fn group_and_setting_names() {
        assert_eq!(view(&["65536"]), "64K view");
        assert_eq!(tasks(&["1", "1"]), "1 thread");
        assert_eq!(tasks(&["4", "1"]), "4 threads");
        assert_eq!(tasks(&["2", "0"]), "2 processes");
        assert_eq!(tasks(&["1", "0"]), "1 process");
        assert_eq!(pages(&["512"]), "512 pages");
        assert_eq!(workload(&["gcc"]), "gcc");
        assert_eq!(setting("0"), "off");
        assert_eq!(setting("1"), "on");
        assert_eq!(setting("4096"), "4K");
        assert_eq!(setting("0x2"), "0x2");
        assert_eq!(bytes("1000"), "1000");
        assert_eq!(numeric("0x10"), Some(16));
        assert_eq!(numeric("4096"), Some(4096));
        assert_eq!(numeric("none"), None);
        let setting = |values: &[&str]| -> Vec<(&str, String)> {
            values.iter().map(|v| ("x", v.to_string())).collect()
        };
        let order = |a: &[&str], b: &[&str]| compare_settings(&setting(a), &setting(b));
        assert_eq!(order(&["65536"], &["4096"]), Ordering::Greater);
        assert_eq!(order(&["0x2", "0x0"], &["0x2", "0x1"]), Ordering::Less);
        assert_eq!(order(&["none"], &["0"]), Ordering::Greater);
        assert_eq!(order(&["1"], &["1"]), Ordering::Equal);
    }
}
