"""Opens a generated index.html in headless Chromium: every image must decode (naturalWidth > 0)
and the page must log no console error. Skipped when no Chromium is installed, unless
KCNN_REQUIRE_BROWSER=1 (CI), which makes a missing browser a failure."""
import html
import json
import os
import re
import shutil
import subprocess

import pytest

import synthetic
from kcnn_report import cli

CHECK = """<script>
window.__kcnnErrors = [];
window.addEventListener('error', function (e) {
  window.__kcnnErrors.push(String(e.message || (e.target && (e.target.src || e.target.outerHTML)).slice(0, 80)));
}, true);
(function () {
  var ce = console.error;
  console.error = function () { window.__kcnnErrors.push(Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); };
})();
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).map(function (i) { return i.alt; });
  var p = document.createElement('pre');
  p.id = 'kcnn-check';
  p.textContent = 'KCNN_CHECK ' + JSON.stringify({images: imgs.length, bad: bad, errors: window.__kcnnErrors});
  document.body.appendChild(p);
});
</script>"""


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    if os.environ.get("KCNN_REQUIRE_BROWSER") == "1":
        pytest.fail("KCNN_REQUIRE_BROWSER=1 but no chromium on PATH")
    pytest.skip("no chromium installed")


def open_in_browser(index_html):
    page = open(index_html, encoding="utf-8").read()
    assert "<head>" in page
    checked = os.path.join(os.path.dirname(index_html), "browser-check.html")
    with open(checked, "w", encoding="utf-8") as f:
        f.write(page.replace("<head>", "<head>" + CHECK, 1))
    r = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--no-first-run", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000",
                        "--dump-dom", "file://" + checked], capture_output=True, text=True, timeout=180)
    m = re.search(r"KCNN_CHECK (\{.*?\})</pre>", r.stdout, re.S)
    assert m, f"no check result in the DOM (rc {r.returncode}): {r.stderr[-2000:]}"
    result = json.loads(html.unescape(m.group(1)))
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l and "browser-check.html" in l]
    return result, console


@pytest.mark.parametrize("embed", [False, True], ids=["images_beside", "images_embedded"])
def test_report_opens_in_chromium_with_every_image_decoded(tmp_path, embed):
    a = synthetic.write(str(tmp_path / "a"), "a", synthetic.device_rows("Host CPU A", run_id="RA"), synthetic.CEILINGS_A)
    b = synthetic.write(str(tmp_path / "b"), "b", synthetic.device_rows("GPU B", 0.5, 2.0, run_id="RB"), synthetic.CEILINGS_B)
    out = tmp_path / "report"
    assert cli.main([a, b, "-o", str(out)] + (["--embed"] if embed else [])) == 0
    result, console = open_in_browser(str(out / "index.html"))
    pngs = [p for p in os.listdir(out) if p.endswith(".png")]
    assert result["images"] == len(pngs) > 5
    assert result["bad"] == []
    assert result["errors"] == []
    assert console == []


def test_the_check_itself_catches_a_broken_image(tmp_path):
    # Guard against a check that cannot fail: a corrupt data URI must be reported.
    page = tmp_path / "index.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                    "<img alt='broken' src='data:image/png;base64,AAAA'></body></html>")
    result, _ = open_in_browser(str(page))
    assert result["images"] == 1 and result["bad"] == ["broken"]
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                    "<script>console.error('kcnn test error')</script></body></html>")
    result, _ = open_in_browser(str(page))
    assert result["errors"] == ["kcnn test error"]
