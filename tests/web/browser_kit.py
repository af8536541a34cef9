"""Browser tests' helpers: Debian's chromium driven by Playwright (its own browser
download cannot work on these machines)."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-dev-shm-usage"]


def chromium_missing() -> str | None:
    """Why browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does this)"
    return None


VENDOR = Path(__file__).resolve().parent / "vendor"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"

# The layout checks a page must pass, run in the page: nothing wider than the screen, and
# every control a person can see is really there to click (the topmost thing at its centre).
LAYOUT_JS = r"""() => {
  const width = document.documentElement.clientWidth, height = window.innerHeight, problems = [];
  // A sticky or fixed top bar is the top edge of what can be seen: content scrolls under it by design.
  const bar = document.querySelector("header.top");
  const barStyle = bar && getComputedStyle(bar).position;
  const top = bar && /sticky|fixed/.test(barStyle) ? bar.getBoundingClientRect().bottom : 0;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "") +
    " “" + (e.innerText || e.value || e.getAttribute("aria-label") || "").trim().slice(0, 40) + "”";
  if (document.documentElement.scrollWidth > width + 1)
    problems.push(`the page is ${document.documentElement.scrollWidth}px wide on a ${width}px screen`);
  const clipping = (e) => { // the nearest ancestor that scrolls or clips, if any
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (/(auto|scroll|hidden)/.test(s.overflowX + s.overflowY)) return p;
    }
    return null;
  };
  const shown = (e) => {  // checkVisibility: also false inside a closed <details>
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && Number(s.opacity) > 0.05 &&
      e.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: true });
  };
  for (const e of document.querySelectorAll("body *")) {
    if (!shown(e) || clipping(e) || e.closest(".skip, .sr")) continue;
    const r = e.getBoundingClientRect();
    if (r.right > width + 1 || r.left < -1) problems.push(`${name(e)} reaches ${Math.round(r.left)}..${Math.round(r.right)}px`);
  }
  for (const e of document.querySelectorAll("a[href], button, input:not([type=hidden]), textarea, select, summary")) {
    if (!shown(e) || e.closest(".sr, .skip")) continue;
    const r = e.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x > width || y > height) continue; // off screen: reached by scrolling
    if (y < top && !bar.contains(e)) continue; // scrolled under the top bar
    const box = clipping(e)?.getBoundingClientRect();
    if (box && (x < box.left || x > box.right || y < box.top || y > box.bottom)) continue; // scrolled away in its list
    const hit = document.elementFromPoint(x, y);
    if (!hit || e.contains(hit) || (hit.closest("label") && hit.closest("label").contains(e))) continue;
    problems.push(`${name(e)} is under ${name(hit)}`);
  }
  return problems;
}"""

AXE_JS = """async () => {
  const found = await axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"]},
                                         resultTypes: ["violations"]});
  return found.violations.map((v) => `${v.id}: ${v.help} — ` + v.nodes.slice(0, 4).map((n) => n.target.join(" ")).join(" | "));
}"""
