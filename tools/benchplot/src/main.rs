//! `benchplot`: draws the results of `make bench` and `make bench-linux`
//! as build/bench.svg, for each benchmark the fault-path switch off and on
//! and faultline beside Linux 6.12.
//!
//!   benchplot [--faultline CSV] [--linux CSV] [--out SVG]
//!
//! The defaults are build/bench.csv, build/bench-linux.csv and
//! build/bench.svg; a results file that is not there is left out (one of
//! them must be). scripts/bench.sh and scripts/bench-linux.sh run it after
//! writing their CSV. This file owns the command line; csv.rs reads the
//! files, charts.rs decides the charts and their bars, plot.rs draws them.

mod charts;
mod csv;
mod plot;

use std::path::PathBuf;
use std::process::ExitCode;

use charts::Kernel;

/// The results files and the picture, from the command line.
struct Paths {
    /// make bench's results.
    faultline: PathBuf,
    /// make bench-linux's results.
    linux: PathBuf,
    /// The picture.
    out: PathBuf,
}

/// Parses `args` (after the program's name).
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Paths, String> {
    let mut paths = Paths {
        faultline: "build/bench.csv".into(),
        linux: "build/bench-linux.csv".into(),
        out: "build/bench.svg".into(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "--faultline" => &mut paths.faultline,
            "--linux" => &mut paths.linux,
            "--out" => &mut paths.out,
            _ => return Err(format!("unknown argument {arg}")),
        };
        *slot = args.next().ok_or(format!("{arg} needs a file"))?.into();
    }
    Ok(paths)
}

/// Reads what results there are and draws them.
fn run(paths: &Paths) -> Result<(), String> {
    let mut rows = Vec::new();
    let mut sources = Vec::new();
    for (kernel, path, command) in [
        (Kernel::Faultline, &paths.faultline, "make bench"),
        (Kernel::Linux, &paths.linux, "make bench-linux"),
    ] {
        if !path.exists() {
            eprintln!(
                "benchplot: no {}: {} left out",
                path.display(),
                kernel.name()
            );
            continue;
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let parsed = csv::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        rows.extend(parsed.into_iter().map(|row| (kernel, row)));
        sources.push(format!("{command} ({})", path.display()));
    }
    if sources.is_empty() {
        return Err("no results to draw: run make bench or make bench-linux".into());
    }
    let charts = charts::charts(&rows);
    let note = format!(
        "From {}. Under -icount a virtual ns is one instruction.",
        sources.join(" and ")
    );
    plot::draw(&charts, title(&rows), &note, &paths.out)?;
    println!(
        "benchplot: {} charts in {}",
        charts.len(),
        paths.out.display()
    );
    Ok(())
}

/// The picture's title: beside Linux only where Linux's results are in it.
fn title(rows: &[(Kernel, csv::Row)]) -> &'static str {
    let has = |kernel| rows.iter().any(|(k, _)| *k == kernel);
    match (has(Kernel::Faultline), has(Kernel::Linux)) {
        (true, true) => "Each seed's claim: faultline with its switch off and on, beside Linux 6.12",
        (true, false) => "Each seed's claim: faultline with its switch off and on (no Linux 6.12 results: make bench-linux)",
        _ => "Linux 6.12 alone (no faultline results: make bench)",
    }
}

/// Draws the picture; exits 1 if it cannot, 2 on a bad command line.
fn main() -> ExitCode {
    let paths = match parse_args(std::env::args().skip(1)) {
        Ok(paths) => paths,
        Err(err) => {
            eprintln!(
                "benchplot: {err}\nusage: benchplot [--faultline CSV] [--linux CSV] [--out SVG]"
            );
            return ExitCode::from(2);
        }
    };
    match run(&paths) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("benchplot: {err}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_names_linux_only_when_its_results_are_drawn() {
        let row = |text: &str| csv::parse(text).unwrap().remove(0);
        let text = "kernel,benchmark,setting,metric,value\nfaultline,boot,-,x,1\n";
        let faultline = (Kernel::Faultline, row(text));
        let linux = (Kernel::Linux, row(text));
        assert!(title(&[faultline.clone(), linux.clone()]).ends_with("beside Linux 6.12"));
        assert!(title(&[faultline]).contains("no Linux 6.12 results"));
        assert!(title(&[linux]).contains("no faultline results"));
    }
}
