"""A player's rating history in one game as an SVG chart, drawn here (no script, no chart
library in the browser): the Glicko-2 rating as a line in its band of +-2 deviations, the Elo
rating as a dashed line, a point a rated result (in the order rated, evenly spaced), each a link
to its board, a value axis and dates beneath.

The chart is inline markup of the page, styled by presentation attributes alone (the site's
policy allows no inline style); the page gives the same points as a table beside it, so the
chart is hidden from screen readers and its links are out of the tab order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from markupsafe import Markup

from pbmserv.core.ratings.timeline import RatedPoint

WIDTH, HEIGHT = 480, 260
LEFT, RIGHT, TOP, BOTTOM = 54, 14, 30, 34
#: The band is shown this far beyond the lines at most (a newcomer's is +-700).
BAND_REACH = 250.0
STEPS = (10, 20, 25, 50, 100, 200, 250, 500, 1000)
MOST_TICKS = 5
DATES = 4
#: About how wide a date under the chart is drawn (10 characters), and the room between two.
DATE_WIDTH, DATE_ROOM = 72, 6
GLICKO, ELO, GRID, INK = "#0b4f9c", "#b24a00", "#d8d8d0", "#4a4a4a"


def _ticks(low: float, high: float) -> list[int]:
    """Round values from below ``low`` to above ``high``, at most :data:`MOST_TICKS` + 1."""
    span = max(high - low, 40.0)
    step = next((s for s in STEPS if span / s <= MOST_TICKS), STEPS[-1])
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    if last == first:
        last += step
    return list(range(int(first), int(last) + 1, step))


def _number(value: float) -> str:
    return f"{value:.1f}"


def describe(point: RatedPoint) -> str:
    """A point in few words (its tooltip; the table has the rest): digits and plain words,
    nothing to escape."""
    return f"{point.day}, board {point.board}: {point.result}"


def point_rows(points: Sequence[RatedPoint]) -> Markup:
    """The chart's points as the rows of a table (date, board, result, Glicko-2 +- 2 RD, Elo):
    written here rather than in a template loop, which would cost a page of 500 points more
    than the rest of it."""
    return Markup(
        "\n".join(
            f'<tr><td>{p.day}</td><td><a href="/g/{p.board}">{p.board}</a></td>'
            f"<td>{p.result}</td><td>{p.glicko:.0f} &plusmn; {2 * p.rd:.0f}</td>"
            f"<td>{p.elo:.0f}</td></tr>"
            for p in points
        )
    )


def rating_chart(points: Sequence[RatedPoint], name: str) -> Markup:
    """The chart of ``points`` (at least one); ``name`` tells its ids apart from another
    chart's on the page (a game's name: letters and digits)."""
    if not points:
        raise ValueError("a chart needs a point")
    lines = [p.glicko for p in points] + [p.elo for p in points]
    low, high = min(lines), max(lines)
    band_low = min(p.glicko - 2 * p.rd for p in points)
    band_high = max(p.glicko + 2 * p.rd for p in points)
    ticks = _ticks(max(band_low, low - BAND_REACH), min(band_high, high + BAND_REACH))
    bottom, top = ticks[0], ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    inset = min(12.0, plot_w / 4)
    n = len(points)

    def x(i: int) -> float:
        if n == 1:
            return LEFT + plot_w / 2
        return LEFT + inset + i * (plot_w - 2 * inset) / (n - 1)

    def y(value: float) -> float:
        return TOP + plot_h * (top - value) / (top - bottom)

    clip = f"plot-{name}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" aria-hidden="true" focusable="false" '
        f'font-family="sans-serif" font-size="14" fill="{INK}">',
        f'<defs><clipPath id="{clip}"><rect x="{LEFT}" y="{TOP}" width="{plot_w}" '
        f'height="{plot_h}"/></clipPath></defs>',
    ]
    out.append('<g class="axis values">')
    for tick in ticks:
        at = _number(y(tick))
        out.append(
            f'<line x1="{LEFT}" y1="{at}" x2="{WIDTH - RIGHT}" y2="{at}" stroke="{GRID}"/>'
            f'<text x="{LEFT - 6}" y="{at}" text-anchor="end" dominant-baseline="middle">'
            f"{tick}</text>"
        )
    out.append("</g>")
    out.append('<g class="axis dates">')
    base = HEIGHT - BOTTOM
    for i in _date_marks(points, x):
        at = _number(x(i))
        anchor = "middle" if n == 1 else "start" if i == 0 else "end" if i == n - 1 else "middle"
        out.append(
            f'<line x1="{at}" y1="{base}" x2="{at}" y2="{base + 5}" stroke="{INK}"/>'
            f'<text x="{at}" y="{base + 20}" text-anchor="{anchor}">{points[i].day}</text>'
        )
    out.append(
        f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}" stroke="{INK}"/></g>'
    )
    xs = [_number(x(i)) for i in range(n)]
    glicko = [f"{at},{_number(y(p.glicko))}" for at, p in zip(xs, points, strict=True)]
    elo = [f"{at},{_number(y(p.elo))}" for at, p in zip(xs, points, strict=True)]
    # The band's edges (a band needs a width: around one point alone, a short bar).
    edges = list(zip(xs, points, strict=True))
    if n == 1:
        edges = [(_number(x(0) - 4), points[0]), (_number(x(0) + 4), points[0])]
    upper = [f"{at},{_number(y(p.glicko + 2 * p.rd))}" for at, p in edges]
    lower = [f"{at},{_number(y(p.glicko - 2 * p.rd))}" for at, p in reversed(edges)]
    out.append(
        f'<g clip-path="url(#{clip})"><polygon class="band" points="{" ".join(upper + lower)}" '
        f'fill="{GLICKO}" fill-opacity="0.15" stroke="none"/>'
    )
    out.append(
        f'<polyline class="elo" points="{" ".join(elo)}" fill="none" stroke="{ELO}" '
        'stroke-width="2" stroke-dasharray="6 4"/>'
    )
    out.append(
        f'<polyline class="glicko" points="{" ".join(glicko)}" fill="none" stroke="{GLICKO}" '
        'stroke-width="2"/></g>'
    )
    # The circles' paint on their group (inherited): 500 points, 30 kB less.
    out.append(f'<g class="points" fill="#ffffff" stroke="{GLICKO}" stroke-width="2">')
    for point, xs_at, at in zip(points, xs, glicko, strict=True):
        out.append(
            f'<a href="/g/{point.board}" tabindex="-1"><circle cx="{xs_at}" '
            f'cy="{at[len(xs_at) + 1 :]}" r="4"><title>{describe(point)}</title></circle></a>'
        )
    out.append("</g>")
    out.append(_legend())
    out.append("</svg>")
    return Markup("".join(out))


def _legend() -> str:
    return (
        '<g class="legend">'
        f'<rect x="{LEFT}" y="6" width="22" height="14" fill="{GLICKO}" fill-opacity="0.15"/>'
        f'<line x1="{LEFT}" y1="13" x2="{LEFT + 22}" y2="13" stroke="{GLICKO}" stroke-width="2"/>'
        f'<text x="{LEFT + 28}" y="13" dominant-baseline="middle">Glicko-2 \u00b1 2 RD</text>'
        f'<line x1="{LEFT + 160}" y1="13" x2="{LEFT + 182}" y2="13" stroke="{ELO}" '
        'stroke-width="2" stroke-dasharray="6 4"/>'
        f'<text x="{LEFT + 188}" y="13" dominant-baseline="middle">Elo</text></g>'
    )


def _date_marks(points: Sequence[RatedPoint], x: Callable[[int], float]) -> list[int]:
    """The points whose dates are written under the chart: up to :data:`DATES` spread evenly,
    never overlapping (the first date is anchored at its start, the last at its end, the others
    at their middle) nor the same day again; the last point's kept before a middle one."""
    n = len(points)
    wanted = sorted({round(k * (n - 1) / (DATES - 1)) for k in range(DATES)}) if n > 1 else [0]

    def clear(left: int, right: int) -> bool:
        reach = DATE_WIDTH if left == 0 else DATE_WIDTH / 2
        back = DATE_WIDTH if right == n - 1 else DATE_WIDTH / 2
        return x(right) - x(left) >= reach + back + DATE_ROOM

    marks: list[int] = []
    for i in wanted:
        if marks and points[i].day == points[marks[-1]].day:
            continue
        if marks and not clear(marks[-1], i):
            if i == n - 1 and len(marks) > 1 and clear(marks[-2], i):
                marks[-1] = i
            continue
        marks.append(i)
    return marks
