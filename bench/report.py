"""RESULTS.md and results.png from the sections' results."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from causes import CAUSES
from measure import Section, Table

ORDER = [
    "skipping",
    "e2e",
    "build",
    "size",
    "scale",
    "layout",
    "rowgroups",
    "readgroups",
    "ssb",
    "iceberg",
    "sql",
    "maintain",
]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> list[str]:
    lines = [f"**{table.title}**", ""]
    lines.append("| " + " | ".join(_cell(h) for h in table.headers) + " |")
    lines.append("|" + "|".join("---" for _ in table.headers) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    lines += ["", *(f"_{note}_" for note in table.notes), ""] if table.notes else [""]
    return lines


def _mark(met: bool | None) -> str:
    return "—" if met is None else "✓ met" if met else "✗ missed"


def _heading(section: Section) -> str:
    return section.title if section.mode == "quick" else f"{section.title} (full mode)"


def _runs(runs: dict[str, dict[str, Any]]) -> list[str]:
    """Which commands produced the sections below, and the machine they ran on."""
    lines = ["| run | date | took | load average at its start (1/5/15 min) |", "|---|---|---|---|"]
    latest: dict[str, str] = {}
    for header in sorted(runs.values(), key=lambda h: str(h["env"]["date"])):
        env = header["env"]
        load = next(
            (v if "at start" in k else f"{v} ({k})" for k, v in env.items() if "load" in k), ""
        )
        lines.append(
            f"| `{header['command']}` | {env['date']} | {_cell(env.get('this run', ''))} | {load} |"
        )
        latest = env
    skip = ("date", "this run")
    lines += ["", "| | |", "|---|---|"]
    lines += [
        f"| {k} | {_cell(v)} |"
        for k, v in latest.items()
        if k not in skip and not k.startswith("load average")
    ]
    return lines


def render(sections: list[Section], runs: dict[str, dict[str, Any]], image: str) -> str:
    lines = [
        "# skipindex benchmarks",
        "",
        "Each section says the mode and date it was measured in: the latest quick-mode results "
        "come first, then the latest full-mode ones. Every figure is measured against its "
        "baseline in the same run; timings are medians of alternating runs (see each "
        "section). The plot shows quick-mode results. Regenerate with `./dev bench --quick` "
        "(SF1 skipping counts, SF1 Spark timings on a query subset, small builds; under 10 "
        "minutes on 2 cores with data generation) or `./dev bench --full` (SF10 Spark "
        "timings, every query, 100k-file prune; about an hour).",
        "",
        f"![benchmark summary]({image})",
        "",
        *_runs(runs),
        "",
        "## Targets",
        "",
        "| target | measured | result | section |",
        "|---|---|---|---|",
    ]
    causes: dict[str, str] = {}
    for section in sections:
        for target in section.targets:
            lines.append(
                f"| {_cell(target.goal)} | {_cell(target.measured)} | "
                f"{_mark(target.met)} | {_heading(section)} |"
            )
            if target.met is False:
                cause = CAUSES.get(target.key, "not profiled yet")
                causes[target.key or target.goal] = f"- **{target.goal}** — {cause}"
    if causes:
        lines += [
            "",
            "Why the missed targets are missed (from `bench/causes.py`):",
            "",
            *causes.values(),
        ]
    for section in sections:
        lines += [
            "",
            f"## {_heading(section)}",
            "",
            f"_{section.mode} mode, measured {section.date}, section took "
            f"{section.seconds:.0f} s; load average after it (1/5/15 min): "
            f"{section.load or 'not recorded'}._",
            "",
            section.intro,
            "",
        ]
        for table in section.tables:
            lines += markdown_table(table)
    return "\n".join(lines).rstrip() + "\n"


def plot(saved: list[Section], target: Path) -> None:
    """Nine panels, each from the section's quick-mode result (else its full one)."""
    sections: dict[str, Section] = {}
    for section in saved:
        sections.setdefault(section.key, section)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 3, figsize=(18, 15))
    panels: list[Callable[[Any], bool]] = [
        lambda ax: _skipping(ax, sections.get("skipping"), "shuffled"),
        lambda ax: _skipping(ax, sections.get("skipping"), "natural"),
        lambda ax: _e2e(ax, sections.get("e2e")),
        lambda ax: _build(ax, sections.get("build")),
        lambda ax: _sizes(ax, sections.get("size")),
        lambda ax: _scale(ax, sections.get("scale")),
        lambda ax: _layout(ax, sections.get("layout")),
        lambda ax: _row_groups(ax, sections.get("rowgroups")),
        lambda ax: _read_groups(ax, sections.get("readgroups")),
    ]
    for ax in axes.flat[len(panels) :]:
        ax.set_axis_off()  # a 3 x 3 grid with room for more sections
    for ax, draw in zip(axes.flat, panels, strict=False):
        if not draw(ax):
            ax.set_axis_off()
            ax.text(0.5, 0.5, "not measured", ha="center", va="center")
    fig.suptitle("skipindex benchmarks (see bench/RESULTS.md)")
    fig.tight_layout()
    fig.savefig(target, dpi=90)
    plt.close(fig)


def _layout(ax: Any, section: Section | None) -> bool:
    if section is None or "shares" not in section.plot:
        return False
    shares = section.plot["shares"]
    width = 0.8 / len(shares)
    positions = range(len(section.plot["queries"]))
    for i, (name, values) in enumerate(shares.items()):
        offset = (i - (len(shares) - 1) / 2) * width
        ax.bar([p + offset for p in positions], [100 * v for v in values], width, label=name)
    ax.set_xticks(list(positions), section.plot["queries"])
    ax.set_ylabel("% of files min-max keeps")
    ax.set_ylim(0, 115)
    ax.set_title("6. layout: files kept after clustering")
    ax.legend(fontsize=7, ncol=3, loc="upper center")
    return True


def _row_groups(ax: Any, section: Section | None) -> bool:
    ylabel = "pyarrow: all files / named row groups"
    return _speedup_bars(ax, section, ylabel, "7. row groups inside kept files")


def _read_groups(ax: Any, section: Section | None) -> bool:
    ylabel = "plain Spark / skipindex.read (all columns)"
    return _speedup_bars(ax, section, ylabel, "8. read() by row groups")


def _speedup_bars(ax: Any, section: Section | None, ylabel: str, title: str) -> bool:
    if section is None or "speedup" not in section.plot:
        return False
    ax.bar(_short(section.plot["queries"]), section.plot["speedup"])
    ax.axhline(3, color="grey", linestyle="--", linewidth=1)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return True


def _short(names: list[str]) -> list[str]:
    return [n.split(" ")[0] for n in names]


def _skipping(ax: Any, section: Section | None, order: str) -> bool:
    if section is None or order not in section.plot:
        return False
    data = section.plot[order]
    series = [
        ("floor", "floor"),
        ("delta", "Delta"),
        ("minmax", "min-max"),
        ("bloom", "+Bloom"),
        ("bitmaps", "+bitmaps"),
    ]
    width = 0.16
    positions = range(len(data["queries"]))
    for i, (key, label) in enumerate(series):
        ax.bar([p + (i - 2) * width for p in positions], data[key], width, label=label)
    ax.set_xticks(list(positions), _short(data["queries"]))
    ax.set_ylabel("files kept (of 100)")
    ax.set_ylim(0, 118)
    ax.set_title(f"1. files kept, {order} layout")
    ax.legend(fontsize=7, ncol=5, loc="upper center")
    return True


def _e2e(ax: Any, section: Section | None) -> bool:
    if section is None or not section.plot:
        return False
    orders = [o for o in ("shuffled", "natural") if o in section.plot]
    queries = section.plot[orders[0]]["queries"]
    width = 0.8 / len(orders)
    for i, order in enumerate(orders):
        ax.bar(
            [p + i * width for p in range(len(queries))],
            section.plot[order]["speedup"],
            width,
            label=order,
        )
    ax.axhline(1, color="black", linewidth=0.8)
    ax.axhline(3, color="grey", linestyle="--", linewidth=0.8, label="3x target")
    ax.set_xticks([p + width / 2 for p in range(len(queries))], _short(queries))
    ax.set_ylabel("plain Spark time / skipindex.read time")
    ax.set_title("2. Spark end to end speedup")
    ax.legend(fontsize=7)
    return True


def _build(ax: Any, section: Section | None) -> bool:
    if section is None or not section.plot:
        return False
    kinds = section.plot["kinds"]
    ax.barh(range(len(kinds)), section.plot["ratio"])
    ax.set_yticks(list(range(len(kinds))), kinds, fontsize=8)
    ax.axvline(1.5, color="grey", linestyle="--", linewidth=0.8, label="1.5x (min-max + Bloom)")
    ax.axvline(3, color="black", linestyle="--", linewidth=0.8, label="3x (all kinds)")
    ax.set_xlabel("build time / pyarrow read time")
    ax.set_title("3. build cost")
    ax.legend(fontsize=7)
    return True


def _sizes(ax: Any, section: Section | None) -> bool:
    if section is None or not section.plot:
        return False
    orders = [o for o in ("shuffled", "natural") if o in section.plot]
    kinds = section.plot[orders[0]]["kinds"]
    width = 0.8 / len(orders)
    for i, order in enumerate(orders):
        values = [b / 1e6 for b in section.plot[order]["bytes"]]
        ax.bar([p + i * width for p in range(len(kinds))], values, width, label=order)
    ax.set_xticks([p + width / 2 for p in range(len(kinds))], kinds, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("index MB, all indexed columns (log)")
    ax.set_title("4. index size per kind")
    ax.legend(fontsize=7)
    return True


def _scale(ax: Any, section: Section | None) -> bool:
    if section is None or not section.plot:
        return False
    files = section.plot["files"]
    for name, values in section.plot.items():
        if name != "files":
            ax.plot(files[: len(values)], [v * 1000 for v in values], marker="o", label=name)
    ax.axhline(100, color="grey", linestyle="--", linewidth=0.8, label="100 ms target")
    ax.axhline(1000, color="black", linestyle="--", linewidth=0.8, label="1 s target")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("files")
    ax.set_ylabel("warm prune ms")
    ax.set_title("5. prune latency vs files")
    ax.legend(fontsize=7)
    return True
