// Install from a bundle file or a gallery: stage → show the review → approve with the chosen switches.
"use strict";

const uploadForm = document.getElementById("upload-form");
const reviewBox = document.getElementById("review");
const fileInput = document.getElementById("bundle");
const drop = document.getElementById("drop");
let staged = null;

// The drop zone: a dropped file becomes the input's file, as if chosen.
const showChosen = () => { document.getElementById("chosen").textContent = fileInput.files[0]?.name || ""; };
fileInput.addEventListener("change", showChosen);
for (const name of ["dragenter", "dragover"]) {
  drop.addEventListener(name, (event) => { event.preventDefault(); drop.classList.add("over"); });
}
for (const name of ["dragleave", "drop"]) drop.addEventListener(name, () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  if (!event.dataTransfer?.files.length) return;
  fileInput.files = event.dataTransfer.files;
  showChosen();
});

function scopeRow(row, optional) {
  const li = document.getElementById("scope-row").content.firstElementChild.cloneNode(true);
  li.querySelector(".sentence").textContent = row.sentence;
  li.querySelector("code").textContent = row.scope;
  const risk = li.querySelector(".risk");
  risk.textContent = `${row.risk} risk`;
  risk.classList.add(row.risk);
  const need = li.querySelector(".need");
  if (optional && (row.scope === "fs:*" || row.scope === "fs.ro:*")) {
    // Names no folder: nothing to switch on now; a folder is granted on the Permissions page later.
    need.textContent = "optional: you choose the folders later";
  } else if (optional) {
    // Off until the person turns it on: an optional permission is never granted by default.
    // (A tool server's tools are the exception: they are all on, and a switch turns one off.)
    const box = el("input", { type: "checkbox", "data-scope": row.scope, role: "switch" });
    box.checked = Boolean(staged && staged.manifest && staged.manifest.kind === "tool");
    need.append(el("label", { class: "switch" }, box, el("span", { text: box.checked ? "optional, on" : "optional, off" })));
    box.addEventListener("change", () => { box.nextElementSibling.textContent = box.checked ? "optional, on" : "optional, off"; });
  } else {
    need.textContent = "required";
  }
  return li;
}

// A description still holding the scaffold's placeholder (a listing published with it) or none
// reads "No description yet" (contracts/manifest.py shown_description; the page carries the texts).
function described(text) {
  const holder = document.getElementById("upload").dataset;
  const said = (text || "").trim();
  return !said || said === holder.placeholderDescription ? holder.noDescription : said;
}

function showReview(data) {
  const r = data.review, up = data.upgrade;
  document.getElementById("r-title").textContent = `${r.title || r.name} ${r.version}`;
  document.getElementById("r-desc").textContent = described(r.description);
  document.getElementById("r-publisher").textContent =
    `Published by ${r.publisher || "an unknown publisher"}` + (r.publisher_verified
      ? ` (verified: signed with key ${r.publisher_fingerprint || "?"}, from ${r.gallery || "a gallery"})`
      : " (not verified: a local bundle's publisher is only its claim)");
  const scopes = document.getElementById("r-scopes");
  scopes.replaceChildren();
  // On an upgrade, only what changed is asked about; kept grants stay.
  const rows = up ? up.scopes_added : r.scopes;
  const upgradeNote = document.getElementById("r-upgrade");
  if (up) {
    upgradeNote.hidden = false;
    const same = up.from_version === up.to_version;
    upgradeNote.textContent = (same ? `Reinstall ${up.to_version} (the version installed now). `
      : `Upgrade from ${up.from_version} to ${up.to_version}. `) +
      (up.scopes_added.length ? "It asks for new permissions below." : "It asks for no new permissions.") +
      (up.scopes_removed.length ? ` No longer needs: ${up.scopes_removed.join(", ")}.` : "") +
      (up.functions_added.length ? ` New functions: ${up.functions_added.join(", ")}.` : "");
    document.getElementById("r-scopes-title").textContent = "New permissions it asks for";
  }
  for (const row of rows) scopes.append(scopeRow(row, !row.required));
  document.getElementById("r-none").hidden = rows.length > 0;
  const fns = document.getElementById("r-functions");
  fns.replaceChildren();
  for (const f of r.functions.filter((f) => f.exported)) {
    fns.append(el("li", {}, el("code", { text: f.name }), " ", el("span", { class: "muted small", text: f.description || "" })));
  }
  // The review is the page now: what was there before steps aside until it is decided.
  document.getElementById("upload").hidden = true;
  const gallery = document.getElementById("from-gallery");
  if (gallery) gallery.hidden = true;
  reviewBox.hidden = false;
  reviewBox.scrollIntoView({ block: "start" });
  document.getElementById("approve").focus({ preventScroll: true });
}

uploadForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = document.getElementById("bundle").files[0];
  if (!file) return;
  const button = uploadForm.querySelector("button");
  button.disabled = true;
  try {
    staged = await api("POST", "/v1/bundles", await file.arrayBuffer(), { headers: { "Content-Type": "application/gzip" } });
    showReview(staged);
  } catch (error) {
    toast(error.message);
  } finally {
    button.disabled = false;
  }
});

// From a gallery: search → pick → the kernel downloads, verifies and stages it → the same review.
const galleryForm = document.getElementById("gallery-form");
if (galleryForm) {
  const hits = document.getElementById("gallery-hits");
  galleryForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const q = document.getElementById("gallery-q").value.trim();
    try {
      const found = await api("GET", `/v1/gallery/search?q=${encodeURIComponent(q)}&limit=20`);
      hits.replaceChildren();
      if (!found.length) hits.append(el("li", { class: "muted", text: "Nothing in the gallery matches that." }));
      for (const hit of found) {
        const button = el("button", { type: "button", text: `Review ${hit.latest || ""}`.trim() });
        button.addEventListener("click", async () => {
          button.disabled = true;
          try {
            staged = await api("POST", "/v1/gallery/install", { name: hit.name, version: hit.latest });
            showReview(staged);
          } catch (error) {
            toast(error.message);
          } finally {
            button.disabled = false;
          }
        });
        hits.append(el("li", { class: "gallery-hit" },
          el("div", {}, el("strong", { text: hit.title || hit.name }), " ", el("code", { class: "small", text: hit.name }),
            el("br"), el("span", { class: "muted small", text: `${described(hit.description)} · by ${hit.publisher}` })),
          button));
      }
    } catch (error) {
      toast(error.message);
    }
  });
}

document.getElementById("approve").addEventListener("click", async () => {
  if (!staged) return;
  const boxes = [...reviewBox.querySelectorAll("input[data-scope]")];
  const grant = boxes.filter((b) => b.checked).map((b) => b.dataset.scope);
  const without = boxes.filter((b) => !b.checked).map((b) => b.dataset.scope);
  const tool = staged.manifest && staged.manifest.kind === "tool";
  try {
    const agent = await api("POST", "/v1/agents", tool
      ? { bundle_id: staged.bundle_id, approve: true, without }
      : { bundle_id: staged.bundle_id, approve: true, grant, without });
    location.href = `/agents/${encodeURIComponent(agent.name)}`;
  } catch (error) {
    toast(error.message);
  }
});

document.getElementById("decline").addEventListener("click", () => {
  staged = null;
  reviewBox.hidden = true;
  document.getElementById("upload").hidden = false;
  const gallery = document.getElementById("from-gallery");
  if (gallery) gallery.hidden = false;
  uploadForm.reset();
  showChosen();
  toast("Nothing was installed.");
});
