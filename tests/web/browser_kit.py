"""Browser tests' helpers: Debian's chromium driven by Playwright (its own browser
download cannot work on these machines)."""

from __future__ import annotations

import os
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


def artifacts() -> Path:
    """Where test runs leave what a person looks at afterwards (CI keeps it): $DREAMER_ARTIFACTS,
    else /tmp/dreamer-artifacts; outside the clone, so a run never dirties the tree."""
    return Path(os.environ.get("DREAMER_ARTIFACTS") or "/tmp/dreamer-artifacts")


def screenshots(width: str) -> Path:
    """The product test's screenshots of each page at one width: <artifacts>/web/<width>/<page>.png."""
    folder = artifacts() / "web" / width
    folder.mkdir(parents=True, exist_ok=True)
    return folder

# The layout checks a page must pass, run in the page: nothing wider than the screen, and
# every control a person can see is really there to click (the topmost thing at its centre).
LAYOUT_JS = r"""() => {
  // What may scroll sideways by design: code, a wide data table's frame, the top navigation's row.
  const HORIZONTAL = "pre, textarea, .scroll, .top nav";
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
  // A list that scrolls up and down (the messages, the history) must not hide a too-wide item
  // by scrolling sideways or clipping it: only these are meant to scroll sideways.
  const sideways = (c) => c.matches(HORIZONTAL);
  const vertical = (c) => /(auto|scroll)/.test(getComputedStyle(c).overflowY) && !sideways(c);
  const wide = new Set();
  for (const e of document.querySelectorAll("body *")) {
    if (!shown(e) || e.closest(".skip, .sr")) continue;
    const r = e.getBoundingClientRect(), box = clipping(e);
    if (!box) {
      if (r.right > width + 1 || r.left < -1) problems.push(`${name(e)} reaches ${Math.round(r.left)}..${Math.round(r.right)}px`);
    } else if (vertical(box) && !wide.has(box)) {
      const b = box.getBoundingClientRect(), s = getComputedStyle(box);
      const inner = b.left + box.clientLeft, right = inner + box.clientWidth;  // its content area, no scrollbar
      if (r.right + box.scrollLeft > right + 1 || r.left + box.scrollLeft < inner - 1) {
        wide.add(box);
        problems.push(`${name(e)} reaches ${Math.round(r.left)}..${Math.round(r.right)}px inside ${name(box)}, ` +
                      `which ends at ${Math.round(right)}px and only scrolls up and down (overflow-x ${s.overflowX})`);
      }
    }
  }
  for (const box of document.querySelectorAll("body *")) {  // however it happens: a sideways scroll in a list
    if (wide.has(box) || !shown(box) || box.closest(".skip, .sr") || !vertical(box)) continue;
    if (box.scrollWidth > box.clientWidth + 1) problems.push(`${name(box)} scrolls sideways (${box.scrollWidth}px of content in ${box.clientWidth}px)`);
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
