"""Formatting: the Markdown and the self-contained HTML page (images embedded as data URIs)."""
import base64
import html
import math
import os

import pandas as pd

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
h1 { border-bottom: 2px solid #2a7; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
tr.best td { font-weight: bold; background: #eefaf2; }
.fail td { background: #fdecec; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figcaption { font-size: 12px; color: #555; max-width: 640px; }
img { max-width: 100%; border: 1px solid #eee; }
.note { color: #555; font-size: 13px; }
"""


def fmt(v):
    if isinstance(v, (bool,)):
        return "yes" if v else ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 1:
            return f"{v:.3g}" if a < 100 else f"{v:.1f}"
        return f"{v:.3g}"
    return str(v)


def md_table(df, max_rows=None):
    if df is None or df.empty:
        return "_no data_\n"
    shown = df if max_rows is None else df.head(max_rows)
    cols = list(shown.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for _, r in shown.iterrows():
        lines.append("| " + " | ".join(fmt(r[c]).replace("|", "\\|") for c in cols) + " |")
    if max_rows is not None and len(df) > max_rows:
        lines.append(f"\n_{len(df) - max_rows} more rows in index.html_")
    return "\n".join(lines) + "\n"


def html_table(df, best_col=None, fail=False):
    if df is None or df.empty:
        return "<p class='note'>no data</p>"
    cols = [c for c in df.columns if c != best_col] if best_col else list(df.columns)
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in cols) + "</tr></thead><tbody>"]
    for _, r in df.iterrows():
        cls = " class='best'" if best_col and bool(r[best_col]) else (" class='fail'" if fail else "")
        out.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(fmt(r[c]))}</td>" for c in cols) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


class Page:
    """Collects the sections once and writes them as Markdown and as HTML."""

    def __init__(self, title, folder, embed=False):
        # embed: images as data URIs (one self-contained file); otherwise index.html refers to the
        # PNGs beside it by relative name, which also opens from disk and keeps the page small.
        self.title, self.folder, self.embed = title, folder, embed
        self.md, self.html = [f"# {title}\n"], []

    def heading(self, text):
        self.md.append(f"\n## {text}\n")
        self.html.append(f"<h2>{html.escape(text)}</h2>")

    def para(self, text):
        self.md.append(text + "\n")
        self.html.append(f"<p class='note'>{html.escape(text)}</p>")

    def table(self, df, md_rows=40, best_col=None, fail=False, collapse_over=60, label="table"):
        shown = df.drop(columns=[best_col]) if best_col and df is not None and not df.empty else df
        if best_col and df is not None and not df.empty:
            shown = df.assign(**{best_col: df[best_col].map(lambda b: "best" if b else "")})
        self.md.append(md_table(shown, md_rows))
        t = html_table(df, best_col=best_col, fail=fail)
        if df is not None and len(df) > collapse_over:
            t = f"<details><summary>{html.escape(label)} ({len(df)} rows)</summary>{t}</details>"
        self.html.append(t)

    def figures(self, figs):
        for name, caption in figs:
            self.md.append(f"![{caption}]({name})\n")
            src = html.escape(name)
            if self.embed:
                with open(os.path.join(self.folder, name), "rb") as f:
                    src = "data:image/png;base64," + base64.b64encode(f.read()).decode("ascii")
            self.html.append(f"<figure><img src='{src}' alt='{html.escape(caption)}'>"
                             f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def write(self):
        with open(os.path.join(self.folder, "report.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(self.md))
        with open(os.path.join(self.folder, "index.html"), "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                    f"<title>{html.escape(self.title)}</title><style>{CSS}</style></head><body>"
                    f"<h1>{html.escape(self.title)}</h1>" + "\n".join(self.html) + "</body></html>\n")


def frame(records):
    return pd.DataFrame(records)
