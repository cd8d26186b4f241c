"""Inline SVG charts from plain data: lines (with an optional shaded band) and horizontal bars.

Standard library only, so the drawing is tested without Django and a page pays no script for it.
Each chart is a `<figure>`: a caption, the SVG, a legend as an HTML list (it wraps on a phone,
where text inside a scaled-down SVG would shrink), and the numbers in a `<details>` table,
because a screen reader cannot read a picture (`role="img"` names it; the table holds the
data).

Why it looks the way it does:

* The SVG has a `viewBox` and `width="100%"`, so it scales to any width and never makes a page
  scroll sideways. The drawing space is only 480 units wide so that text stays legible when a
  phone shrinks it to about 340 pixels.
* Colours are not in the markup: every shape has classes (`series-0`..`series-7`, `band`,
  `bar`, `axis`, `grid`) that `ladder/static/ladder/charts.css` styles. Series also differ by
  dash pattern there, so they can be told apart without colour.
* Every piece of text is escaped: bot names are user input. Output is well-formed XML as well
  as HTML (no named entities beyond XML's, every element closed), which the tests check by
  parsing it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

__all__ = [
    "BandPoint",
    "Bar",
    "Point",
    "Series",
    "bar_chart",
    "line_chart",
    "nice_ticks",
]

WIDTH = 480
"""Drawing units across; see the module docstring for why so few."""
LINE_HEIGHT = 260
PALETTE = 8
"""Series classes cycle through series-0..series-7 (charts.css styles each)."""
MARKERS_UP_TO = 40
"""A series with at most this many points gets a dot on each, so single games show."""
TABLE_ROWS = 25
"""Rows per series in a line chart's table: enough to read the shape, short enough to skim."""
LABEL_CHARS = 36
"""Names longer than this are shortened inside the drawing (the table has them in full)."""

_IDENT = re.compile(r"[a-z][a-z0-9-]{0,63}")


@dataclass(frozen=True)
class Point:
    """One point of a line: `x` a number (a game count) or a POSIX timestamp (`x_dates`)."""

    x: float
    y: float


@dataclass(frozen=True)
class Series:
    """One line of a chart, named in its legend and table."""

    name: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class BandPoint:
    """The band's low and high edge at `x`, drawn as one shaded area around the line."""

    x: float
    low: float
    high: float


@dataclass(frozen=True)
class Bar:
    """One bar: `value` on the chart's scale, `cells` the extra columns of its table row."""

    label: str
    value: float
    cells: tuple[str, ...] = ()


def nice_ticks(
    low: float, high: float, count: int = 5, steps: Sequence[float] = (1, 2, 2.5, 5)
) -> list[float]:
    """About `count` round tick values covering [low, high]: steps of `steps` x 10^k (leave 2.5
    out for whole numbers).

    >>> nice_ticks(1432, 1618)
    [1400.0, 1450.0, 1500.0, 1550.0, 1600.0, 1650.0]
    >>> nice_ticks(0, 1)
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"ticks need finite bounds, got {low!r}, {high!r}")
    if high <= low:
        low, high = low - 1, low + 1
    raw = (high - low) / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (*steps, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    stop = math.ceil(high / step) * step
    return [float(round(start + i * step, 10)) for i in range(round((stop - start) / step) + 1)]


def _number(value: float, decimals: int = 2) -> str:
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _coord(value: float) -> str:
    return f"{value:.1f}"


def _date(value: float, span: float | None = None) -> str:
    """A timestamp as a table shows it, or (given the axis' `span` in seconds) as precisely
    as an axis tick over that span needs."""
    if span is None:
        pattern = "%Y-%m-%d %H:%M"
    elif span < 3_600:
        pattern = "%H:%M:%S"
    elif span < 2 * 86_400:
        pattern = "%m-%d %H:%M"
    else:
        pattern = "%Y-%m-%d"
    return datetime.fromtimestamp(value, UTC).strftime(pattern)


def _clip(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check(ident: str, values: Sequence[float]) -> None:
    if not _IDENT.fullmatch(ident):
        raise ValueError(f"a chart id is lower-case letters, digits and dashes, got {ident!r}")
    bad = [v for v in values if not math.isfinite(v)]
    if bad:
        raise ValueError(f"chart {ident}: values must be finite numbers, got {bad[0]!r}")


def _open(ident: str, kind: str, title: str) -> list[str]:
    return [
        f'<figure class="chart chart-{kind}" id="{ident}">',
        f'<figcaption class="chart-title">{escape(title)}</figcaption>',
    ]


def _empty(ident: str, kind: str, title: str, message: str) -> str:
    parts = _open(ident, kind, title)
    parts.append(f'<p class="chart-empty">{escape(message)}</p>')
    parts.append("</figure>")
    return "".join(parts)


def _svg_open(ident: str, height: int, title: str, description: str) -> str:
    # No xmlns: inline in HTML, the parser puts <svg> in the SVG namespace itself (and the pages
    # name no other site, not even the namespace's URL).
    # aria-labelledby/-describedby point at the SVG's own <title> and <desc>: one source for
    # the accessible name and the tooltip, and role="img" keeps a screen reader from wandering
    # through hundreds of shapes.
    return (
        f'<svg class="chart-svg" viewBox="0 0 {WIDTH} {height}"'
        f' width="100%" preserveAspectRatio="xMidYMid meet" role="img"'
        f' aria-labelledby="{ident}-title" aria-describedby="{ident}-desc">'
        f'<title id="{ident}-title">{escape(title)}</title>'
        f'<desc id="{ident}-desc">{escape(description)}</desc>'
    )


def _table(caption: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    body = "".join(
        "<tr>"
        + f'<th scope="row">{escape(row[0])}</th>'
        + "".join(f'<td class="num">{escape(cell)}</td>' for cell in row[1:])
        + "</tr>"
        for row in rows
    )
    return (
        '<details class="chart-data"><summary>The numbers</summary><div class="scroll">'
        f"<table><caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div></details>"
    )


def _sample(count: int, limit: int) -> list[int]:
    """Up to `limit` indices of `count` items, evenly spread, always the first and the last."""
    if count <= limit:
        return list(range(count))
    return sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})


def line_chart(
    series: Sequence[Series],
    band: Sequence[BandPoint] | None = None,
    *,
    ident: str,
    title: str,
    description: str,
    x_label: str,
    y_label: str,
    x_dates: bool = False,
    y_decimals: int = 0,
    band_label: str = "band",
    series_label: str = "Series",
    empty: str = "No games yet.",
) -> str:
    """A line per series over a shared x axis, with `band` shaded behind them.

    `x_dates`: x values are POSIX timestamps (UTC), labelled as dates. `ident` becomes the
    figure's id (and its SVG title's id), so it must be unique on the page. Series without
    points are left out; with none left, the figure holds the `empty` message instead.
    """
    drawn = [s for s in series if s.points]
    band = list(band or ())
    xs = [p.x for s in drawn for p in s.points] + [b.x for b in band]
    ys = [p.y for s in drawn for p in s.points] + [v for b in band for v in (b.low, b.high)]
    _check(ident, xs + ys)
    if not drawn:
        return _empty(ident, "line", title, empty)

    frame = _LineFrame.around(xs, ys, x_dates)
    out = _open(ident, "line", title)
    out.append(_svg_open(ident, LINE_HEIGHT, title, description))
    # Grid and axes first, so lines draw over them.
    out.append(_line_axes(frame, _x_ticks(frame, x_dates), x_label, y_label, y_decimals))
    if band:
        out.append(_band_polygon(frame, band))
    out.extend(_series_lines(frame, drawn))
    out.append("</svg>")
    if len(drawn) > 1 or band:
        out.append(_line_legend(drawn, band_label if band else None))
    out.append(
        _line_table(
            drawn, band, title, x_label, y_label, x_dates, y_decimals, band_label, series_label
        )
    )
    out.append("</figure>")
    return "".join(out)


@dataclass(frozen=True)
class _LineFrame:
    """A line chart's plot area and the data ranges mapped onto it."""

    x_lo: float
    x_hi: float
    y_ticks: list[float]
    left: float = 52.0
    right: float = 12.0
    top: float = 26.0
    bottom: float = 44.0

    @classmethod
    def around(cls, xs: Sequence[float], ys: Sequence[float], x_dates: bool) -> _LineFrame:
        """The frame holding every x and y: a single x widened to an hour (dates) or 1, the
        y axis from nice ticks around the values."""
        x_lo, x_hi = min(xs), max(xs)
        if x_hi == x_lo:
            pad = 3600.0 if x_dates else 1.0
            x_lo, x_hi = x_lo - pad, x_hi + pad
        return cls(x_lo, x_hi, nice_ticks(min(ys), max(ys)))

    @property
    def plot_w(self) -> float:
        return WIDTH - self.left - self.right

    @property
    def plot_h(self) -> float:
        return LINE_HEIGHT - self.top - self.bottom

    def px(self, x: float) -> float:
        return self.left + (x - self.x_lo) / (self.x_hi - self.x_lo) * self.plot_w

    def py(self, y: float) -> float:
        y_lo, y_hi = self.y_ticks[0], self.y_ticks[-1]
        return self.top + (y_hi - y) / (y_hi - y_lo) * self.plot_h


def _x_ticks(frame: _LineFrame, x_dates: bool) -> list[tuple[float, str]]:
    """The x axis's ticks and their labels."""
    if x_dates:
        # Four ticks across; one whose label repeats the previous one's (a span of seconds)
        # is left out.
        ticks: list[tuple[float, str]] = []
        span = frame.x_hi - frame.x_lo
        for x in (frame.x_lo + i * span / 3 for i in range(4)):
            label = _date(x, span)
            if not ticks or label != ticks[-1][1]:
                ticks.append((x, label))
        return ticks
    numbers = nice_ticks(frame.x_lo, frame.x_hi, count=6, steps=(1, 2, 5))
    return [(x, _number(x)) for x in numbers if frame.x_lo <= x <= frame.x_hi and x == int(x)]


def _line_axes(
    frame: _LineFrame,
    x_ticks: Sequence[tuple[float, str]],
    x_label: str,
    y_label: str,
    y_decimals: int,
) -> str:
    """The grid, then the axes: y labels, x ticks with their labels, the axes' names."""
    left, right, top, plot_h = frame.left, frame.right, frame.top, frame.plot_h
    out = ['<g class="grid" aria-hidden="true">']
    for y in frame.y_ticks:
        out.append(
            f'<line x1="{_coord(left)}" x2="{_coord(WIDTH - right)}"'
            f' y1="{_coord(frame.py(y))}" y2="{_coord(frame.py(y))}"/>'
        )
    out.append("</g>")
    out.append('<g class="axis" aria-hidden="true">')
    for y in frame.y_ticks:
        out.append(
            f'<text x="{_coord(left - 6)}" y="{_coord(frame.py(y) + 4)}" text-anchor="end">'
            f"{escape(_number(y, y_decimals + 2))}</text>"
        )
    for x, label in x_ticks:
        at = frame.px(x)
        anchor = "start" if at < left + 30 else "end" if at > WIDTH - right - 30 else "middle"
        out.append(
            f'<line x1="{_coord(at)}" x2="{_coord(at)}" y1="{_coord(top + plot_h)}"'
            f' y2="{_coord(top + plot_h + 4)}"/>'
            f'<text x="{_coord(at)}" y="{_coord(top + plot_h + 18)}"'
            f' text-anchor="{anchor}">{escape(label)}</text>'
        )
    out.append(
        f'<text class="axis-label" x="{_coord(left + frame.plot_w / 2)}" y="{LINE_HEIGHT - 4}"'
        f' text-anchor="middle">{escape(x_label)}</text>'
        f'<text class="axis-label" x="4" y="14">{escape(y_label)}</text>'
    )
    out.append("</g>")
    return "".join(out)


def _band_polygon(frame: _LineFrame, band: Sequence[BandPoint]) -> str:
    """The band as one shape: its high edge left to right, then its low edge back."""
    ordered = sorted(band, key=lambda b: b.x)
    edge = [(frame.px(b.x), frame.py(b.high)) for b in ordered]
    edge += [(frame.px(b.x), frame.py(b.low)) for b in reversed(ordered)]
    points = " ".join(f"{_coord(x)},{_coord(y)}" for x, y in edge)
    return f'<polygon class="band" points="{points}"/>'


def _series_lines(frame: _LineFrame, drawn: Sequence[Series]) -> list[str]:
    """A group per series: its line, and a dot per point when it has few."""
    out: list[str] = []
    for index, line in enumerate(drawn):
        css = f"series-{index % PALETTE}"
        coords = " ".join(f"{_coord(frame.px(p.x))},{_coord(frame.py(p.y))}" for p in line.points)
        out.append(f'<g class="series {css}">')
        if len(line.points) > 1:
            out.append(f'<polyline class="line" points="{coords}"/>')
        if len(line.points) <= MARKERS_UP_TO:
            for p in line.points:
                out.append(
                    f'<circle class="marker" cx="{_coord(frame.px(p.x))}"'
                    f' cy="{_coord(frame.py(p.y))}" r="3"/>'
                )
        out.append("</g>")
    return out


def _line_legend(drawn: Sequence[Series], band_label: str | None) -> str:
    """The legend as an HTML list (it wraps on a phone): a swatch per series, and the band's."""
    out = ['<ul class="chart-legend">']
    for index, line in enumerate(drawn):
        out.append(
            '<li><svg class="swatch" viewBox="0 0 24 10" aria-hidden="true">'
            f'<g class="series series-{index % PALETTE}">'
            '<line class="line" x1="0" x2="24" y1="5" y2="5"/></g></svg>'
            f"{escape(line.name)}</li>"
        )
    if band_label is not None:
        out.append(
            '<li><svg class="swatch" viewBox="0 0 24 10" aria-hidden="true">'
            '<rect class="band" x="0" y="0" width="24" height="10"/></svg>'
            f"{escape(band_label)}</li>"
        )
    out.append("</ul>")
    return "".join(out)


def _line_table(
    drawn: Sequence[Series],
    band: Sequence[BandPoint],
    title: str,
    x_label: str,
    y_label: str,
    x_dates: bool,
    y_decimals: int,
    band_label: str,
    series_label: str,
) -> str:
    def x_text(x: float) -> str:
        return _date(x) if x_dates else _number(x)

    def y_text(y: float) -> str:
        return _number(y, y_decimals)

    first_xs = [p.x for p in drawn[0].points]
    if (
        len(drawn) > 1
        and len(first_xs) <= 20
        and all([p.x for p in s.points] == first_xs for s in drawn)
    ):
        # Every series at the same x values (a tournament's rounds): one row per series reads
        # like the standings table.
        wide = [[s.name, *(y_text(p.y) for p in s.points)] for s in drawn]
        columns = [series_label, *(f"{x_label} {x_text(x)}" for x in first_xs)]
        return _table(f"{title}: {y_label}", columns, wide)

    edges = {b.x: b for b in band}
    with_band = bool(band) and len(drawn) == 1
    headers = [x_label, y_label] if len(drawn) == 1 else [series_label, x_label, y_label]
    if with_band:
        headers += [f"{band_label}: low", f"{band_label}: high"]
    rows: list[list[str]] = []
    for s in drawn:
        for i in _sample(len(s.points), TABLE_ROWS):
            p = s.points[i]
            row = [x_text(p.x), y_text(p.y)]
            if len(drawn) > 1:
                row.insert(0, s.name)
            if with_band:
                edge = edges.get(p.x)
                row += [y_text(edge.low), y_text(edge.high)] if edge else ["", ""]
            rows.append(row)
    sampled = any(len(s.points) > TABLE_ROWS for s in drawn)
    caption = f"{title}{' (a sample of the points)' if sampled else ''}"
    return _table(caption, headers, rows)


def bar_chart(
    bars: Sequence[Bar],
    *,
    ident: str,
    title: str,
    description: str,
    label_header: str,
    value_label: str,
    headers: Sequence[str] = (),
    max_value: float = 1.0,
    percent: bool = True,
    reference: float | None = None,
    reference_label: str = "",
    empty: str = "No games yet.",
) -> str:
    """Horizontal bars, one per item, each with its label above it (long names fit a phone).

    Values run from 0 to `max_value`; `percent` shows them as percentages. `reference` draws
    a dashed line at that value (50%, an even head-to-head score). `headers` name the extra
    columns of each bar's `cells` in the table.
    """
    extra = [max_value] if reference is None else [max_value, reference]
    _check(ident, [b.value for b in bars] + extra)
    if max_value <= 0:
        raise ValueError(f"chart {ident}: max_value must be positive, got {max_value!r}")
    if any(len(b.cells) != len(headers) for b in bars):
        raise ValueError(f"chart {ident}: every bar needs one cell per header {list(headers)}")
    if not bars:
        return _empty(ident, "bar", title, empty)

    row_h, top, left, value_w = 42.0, 20.0, 6.0, 52.0
    bottom = top + row_h * len(bars)
    height = round(bottom + (20 if reference is not None else 6))
    bar_w = WIDTH - left - value_w

    def shown(value: float) -> str:
        return f"{value * 100:.0f}%" if percent else _number(value)

    def px(value: float) -> float:
        return left + max(0.0, min(value, max_value)) / max_value * bar_w

    out = _open(ident, "bar", title)
    out.append(_svg_open(ident, height, title, description))
    out.append(
        f'<g class="axis" aria-hidden="true"><text class="axis-label" x="{left}" y="13">'
        f"{escape(value_label)}</text></g>"
    )
    for i, bar in enumerate(bars):
        y = top + i * row_h
        out.append(
            f'<g class="bar-row"><text class="bar-label" x="{left}" y="{_coord(y + 13)}">'
            f"{escape(_clip(bar.label))}</text>"
            f'<rect class="bar-track" x="{left}" y="{_coord(y + 19)}" width="{_coord(bar_w)}"'
            f' height="14"/>'
            f'<rect class="bar" x="{left}" y="{_coord(y + 19)}"'
            f' width="{_coord(px(bar.value) - left)}" height="14"/>'
            f'<text class="bar-value" x="{WIDTH - 4}" y="{_coord(y + 31)}" text-anchor="end">'
            f"{escape(shown(bar.value))}</text></g>"
        )
    if reference is not None:
        x = _coord(px(reference))
        out.append(
            f'<g class="reference" aria-hidden="true"><line x1="{x}" x2="{x}" y1="{top - 2}"'
            f' y2="{_coord(bottom)}"/>'
            f'<text x="{x}" y="{_coord(bottom + 14)}" text-anchor="middle">'
            f"{escape(reference_label)}</text></g>"
        )
    out.append("</svg>")
    rows = [[bar.label, shown(bar.value), *bar.cells] for bar in bars]
    out.append(_table(title, [label_header, value_label, *headers], rows))
    out.append("</figure>")
    return "".join(out)
