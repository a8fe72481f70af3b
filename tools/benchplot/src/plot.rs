//! Drawing the charts into one SVG: a panel per chart, one above the
//! other, each a grouped bar chart with its legend to the right (legends
//! name switch settings, too long to sit inside the plot).

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{Chart, Kernel, Series};

/// The SVG's width, in pixels.
const WIDTH: u32 = 1000;
/// The height of the text above the panels.
const HEADER: u32 = 64;
/// Each panel's height.
const PANEL_HEIGHT: u32 = 330;
/// The part of each panel's width the plot takes; the legend has the rest.
const PLOT_SHARE: f64 = 0.64;
/// The part of each group's width its bars take (the rest spaces groups).
const BAR_SPAN: f64 = 0.8;
/// The narrowest bar, in pixels, that gets its value written above it.
const LABELLED_BAR: f64 = 40.0;
/// Room above the tallest bar, for its value.
const HEADROOM: f64 = 1.15;
/// The font of every text.
const FONT: &str = "sans-serif";

/// The x axis of a grouped bar chart: `n` groups, each one unit wide, with
/// a tick (and the group's name) under each one's middle, where plotters'
/// own axes would put round numbers.
struct GroupAxis(usize);

impl Ranged for GroupAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let width = f64::from(limit.1 - limit.0);
        limit.0 + (value / self.0 as f64 * width).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        (0..self.0).map(|g| g as f64 + 0.5).collect()
    }

    fn range(&self) -> Range<f64> {
        0.0..self.0 as f64
    }
}

/// An error of plotters', as text.
fn error(err: impl std::fmt::Display) -> String {
    format!("drawing: {err}")
}

/// `value` with at most `decimals` decimals, without trailing zeros.
fn trimmed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A number short enough for a bar's label or a tick: 4.48M, 16.8k, 6741,
/// 1.72.
pub fn compact(value: f64) -> String {
    if value.abs() >= 1e6 {
        format!("{}M", trimmed(value / 1e6, 2))
    } else if value.abs() >= 1e4 {
        format!("{}k", trimmed(value / 1e3, 1))
    } else {
        trimmed(value, 2)
    }
}

/// The colour of bar series `index` of `count` of a kernel's: faultline's
/// blue, Linux's orange, from light (a switch off, listed first) to dark.
fn color(kernel: Kernel, index: usize, count: usize) -> RGBColor {
    let (light, dark, single) = match kernel {
        Kernel::Faultline => ((158, 202, 225), (8, 48, 107), (49, 130, 189)),
        Kernel::Linux => ((253, 174, 107), (140, 45, 4), (230, 85, 13)),
    };
    if count <= 1 {
        return RGBColor(single.0, single.1, single.2);
    }
    let t = index as f64 / (count - 1) as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + t * (f64::from(b) - f64::from(a))).round() as u8;
    RGBColor(
        mix(light.0, dark.0),
        mix(light.1, dark.1),
        mix(light.2, dark.2),
    )
}

/// The colour of each of `series`, in order.
fn colors(series: &[Series]) -> Vec<RGBColor> {
    let count = |kernel| series.iter().filter(|s| s.kernel == kernel).count();
    let mut seen = [0, 0];
    series
        .iter()
        .map(|s| {
            let slot = match s.kernel {
                Kernel::Faultline => &mut seen[0],
                Kernel::Linux => &mut seen[1],
            };
            *slot += 1;
            color(s.kernel, *slot - 1, count(s.kernel))
        })
        .collect()
}

/// Draws `charts` into the SVG at `path`, under the title `title` and the
/// line `note`.
pub fn draw(charts: &[Chart], title: &str, note: &str, path: &Path) -> Result<(), String> {
    let height = HEADER + PANEL_HEIGHT * charts.len() as u32;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(error)?;
    let (header, body) = root.split_vertically(HEADER);
    header
        .draw(&Text::new(title, (16, 12), (FONT, 22).into_font()))
        .map_err(error)?;
    header
        .draw(&Text::new(note, (16, 40), (FONT, 13).into_font()))
        .map_err(error)?;
    for (chart, panel) in charts.iter().zip(body.split_evenly((charts.len(), 1))) {
        draw_chart(chart, &panel)?;
    }
    root.present().map_err(error)
}

/// One chart into `panel`: the plot on the left, the legend on the right.
fn draw_chart<DB: DrawingBackend>(
    chart: &Chart,
    panel: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let (plot, legend) = panel.split_horizontally(f64::from(WIDTH) * PLOT_SHARE);
    let groups = chart.groups.len();
    let max = chart
        .series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0, |a: f64, &b| a.max(b));
    let top = if max > 0.0 { max * HEADROOM } else { 1.0 };
    let mut ctx = ChartBuilder::on(&plot)
        .caption(chart.title, (FONT, 15))
        .margin(10)
        .margin_top(6)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d(GroupAxis(groups), 0.0..top)
        .map_err(error)?;
    let group_name = |x: &f64| {
        let index = x.floor() as usize;
        chart.groups.get(index).cloned().unwrap_or_default()
    };
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_desc(chart.x_desc)
        .y_desc(chart.y_desc)
        .x_label_formatter(&group_name)
        .y_label_formatter(&|y| compact(*y))
        // Faint lines between the labelled ones: the bars are what counts.
        .light_line_style(RGBColor(244, 244, 244))
        .axis_desc_style((FONT, 13))
        .label_style((FONT, 12))
        .draw()
        .map_err(error)?;

    let slot = BAR_SPAN / chart.series.len() as f64;
    let bar_pixels = f64::from(ctx.plotting_area().dim_in_pixel().0) / groups as f64 * slot;
    let colors = colors(&chart.series);
    for (i, (series, color)) in chart.series.iter().zip(&colors).enumerate() {
        let bars: Vec<(f64, f64)> = series
            .values
            .iter()
            .enumerate()
            .filter_map(|(g, v)| Some((g as f64 + (1.0 - BAR_SPAN) / 2.0 + i as f64 * slot, (*v)?)))
            .collect();
        ctx.draw_series(
            bars.iter()
                .map(|&(x, v)| Rectangle::new([(x, 0.0), (x + slot * 0.92, v)], color.filled())),
        )
        .map_err(error)?;
        if bar_pixels >= LABELLED_BAR {
            let style =
                TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
            ctx.draw_series(
                bars.iter()
                    .map(|&(x, v)| Text::new(compact(v), (x + slot * 0.46, v), style.clone())),
            )
            .map_err(error)?;
        }
    }

    // The legend: a swatch and the series' name, a line each, level with
    // the top of the plot.
    for (i, (series, color)) in chart.series.iter().zip(&colors).enumerate() {
        let y = 34 + 20 * i as i32;
        legend
            .draw(&Rectangle::new([(6, y), (18, y + 12)], color.filled()))
            .map_err(error)?;
        legend
            .draw(&Text::new(
                series.label.as_str(),
                (26, y),
                (FONT, 13).into_font(),
            ))
            .map_err(error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(compact(4_481_273.0), "4.48M");
        assert_eq!(compact(2_000_000.0), "2M");
        assert_eq!(compact(16_778.0), "16.8k");
        assert_eq!(compact(20_000.0), "20k");
        assert_eq!(compact(6741.0), "6741");
        assert_eq!(compact(1.72), "1.72");
        assert_eq!(compact(0.5), "0.5");
        assert_eq!(compact(0.0), "0");
    }

    #[test]
    fn each_kernel_has_its_own_shades() {
        let series = |kernel| Series {
            kernel,
            label: String::new(),
            values: Vec::new(),
        };
        let colors = colors(&[
            series(Kernel::Faultline),
            series(Kernel::Faultline),
            series(Kernel::Linux),
        ]);
        assert_eq!(colors[0], RGBColor(158, 202, 225));
        assert_eq!(colors[1], RGBColor(8, 48, 107));
        assert_eq!(colors[2], RGBColor(230, 85, 13));
    }
}
