"""kcnn-report: results CSVs of kcnn-bench -> HTML/Markdown comparison report with plots."""

__version__ = "0.1.0"
