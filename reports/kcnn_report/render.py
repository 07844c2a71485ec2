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
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
tr.best td { font-weight: bold; background: #eefaf2; }
.fail td { background: #fdecec; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figcaption { font-size: 12px; color: #555; max-width: 640px; }
img { max-width: 100%; border: 1px solid #eee; }
.note { color: #555; font-size: 13px; }
nav.toc { font-size: 13px; columns: 3; background: #f7f7f7; padding: 0.4em 1em; border: 1px solid #e3e3e3; }
nav.toc a { display: block; }
ul.findings { font-size: 14px; line-height: 1.35; padding-left: 1.2em; }
ul.findings li { margin: 0.25em 0; }
ul.findings li a.src { font-size: 12px; color: #2a7; }
ul.findings li.rule-failures, ul.findings li.rule-fixed { list-style: square; }
h3 { font-size: 15px; margin: 0.8em 0 0.2em; }
"""


HTML_MAX_ROWS = 400   # longer tables: the first rows on the page, all of them in a CSV beside it


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
        lines.append(f"\n_{len(df) - max_rows} more rows in index.html (over {HTML_MAX_ROWS}: in the CSV named below)_")
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
        self.toc = []
        self.toc_at = None
        self.csvs = set()

    def toc_here(self):
        """The table of contents goes here (filled in at write())."""
        self.toc_at = (len(self.md), len(self.html))
        self.md.append(None)
        self.html.append(None)

    def heading(self, text, anchor=None):
        anchor = anchor or slug(text)
        self.toc.append((anchor, text))
        self.md.append(f"\n<a id='{anchor}'></a>\n\n## {text}\n")
        self.html.append(f"<h2 id='{html.escape(anchor)}'>{html.escape(text)}</h2>")

    def subheading(self, text):
        self.md.append(f"\n### {text}\n")
        self.html.append(f"<h3>{html.escape(text)}</h3>")

    def findings(self, items):
        """Statements with a link to the section each rests on (its anchor)."""
        if not items:
            self.para("No finding: no rule had the data it needs.")
            return
        lis = []
        for f in items:
            self.md.append(f"- {f['text']} ([{f['link']}](#{f['link']}))")
            lis.append(f"<li class='rule-{html.escape(f['rule'])}'>{html.escape(f['text'])} "
                       f"<a class='src' href='#{html.escape(f['link'])}'>[{html.escape(f['link'])}]</a></li>")
        self.md.append("")
        self.html.append("<ul class='findings'>" + "".join(lis) + "</ul>")

    def csv(self, df, name, what):
        """The full table as a CSV beside the page, linked."""
        if df is None or df.empty:
            return
        df.to_csv(os.path.join(self.folder, name), index=False)
        self.md.append(f"Full data: [{name}]({name}) ({what}, {len(df)} rows).\n")
        self.html.append(f"<p class='note'>Full data: <a href='{html.escape(name)}'>{html.escape(name)}</a> "
                         f"({html.escape(what)}, {len(df)} rows).</p>")

    def para(self, text):
        self.md.append(text + "\n")
        self.html.append(f"<p class='note'>{html.escape(text)}</p>")

    def table(self, df, md_rows=40, best_col=None, fail=False, collapse_over=60, label="table", csv_name=None):
        shown = df.drop(columns=[best_col]) if best_col and df is not None and not df.empty else df
        if best_col and df is not None and not df.empty:
            shown = df.assign(**{best_col: df[best_col].map(lambda b: "best" if b else "")})
        self.md.append(md_table(shown, md_rows))
        extra = ""
        if df is not None and not df.empty and (csv_name or len(df) > HTML_MAX_ROWS):
            # The whole table as a CSV beside the page; a long one shows its first rows on the page.
            name = csv_name or f"table-{slug(label)}.csv"
            n = 2
            while name in self.csvs:
                name, n = f"{name[:-4]}-{n}.csv", n + 1
            self.csvs.add(name)
            shown.to_csv(os.path.join(self.folder, name), index=False)
            self.md.append(f"Full table: [{name}]({name}) ({len(df)} rows).\n")
            if len(df) > HTML_MAX_ROWS:
                extra = (f"<p class='note'>First {HTML_MAX_ROWS} of {len(df)} rows; all of them in "
                         f"<a href='{html.escape(name)}'>{html.escape(name)}</a>.</p>")
                df = df.head(HTML_MAX_ROWS)
            else:
                extra = f"<p class='note'>As CSV: <a href='{html.escape(name)}'>{html.escape(name)}</a>.</p>"
        t = html_table(df, best_col=best_col, fail=fail) + extra
        if df is not None and len(df) > collapse_over:
            t = f"<details><summary>{html.escape(label)} ({len(df)} rows shown)</summary>{t}</details>"
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
        if self.toc_at is not None:
            m, h = self.toc_at
            self.md[m] = "Contents: " + " | ".join(f"[{t}](#{a})" for a, t in self.toc) + "\n"
            self.html[h] = ("<nav class='toc'>" + "".join(f"<a href='#{html.escape(a)}'>{html.escape(t)}</a>"
                                                         for a, t in self.toc) + "</nav>")
        with open(os.path.join(self.folder, "report.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(self.md))
        with open(os.path.join(self.folder, "index.html"), "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                    f"<title>{html.escape(self.title)}</title><style>{CSS}</style></head><body>"
                    f"<h1>{html.escape(self.title)}</h1>" + "\n".join(self.html) + "</body></html>\n")


def slug(text):
    import re
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def frame(records):
    return pd.DataFrame(records)
