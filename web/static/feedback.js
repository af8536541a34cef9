// Thumbs up/down (and an optional note) on a Sidekick answer or an activity row: POST /v1/feedback.
// A row holds <span class="rate" data-target="turn_…|inv_…" data-rating="up|down|">; its buttons
// are built here (chat answers arriving later call window.rateBox), clicks are handled once.
"use strict";

function rateBox(target, rating) {
  const box = document.createElement("span");
  box.className = "rate";
  box.dataset.target = target;
  box.dataset.rating = rating || "";
  fillRateBox(box);
  return box;
}

// Drawn as SVG, not emoji: a browser without a colour-emoji font (a server's chromium, some
// Linux desktops) shows an emoji as an empty box. Paths: Feather icons (MIT).
const THUMBS = {
  up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
  down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
};

function thumbIcon(value) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [name, v] of [["viewBox", "0 0 24 24"], ["width", "16"], ["height", "16"], ["fill", "none"],
    ["stroke", "currentColor"], ["stroke-width", "2"], ["stroke-linecap", "round"], ["stroke-linejoin", "round"],
    ["aria-hidden", "true"], ["focusable", "false"]]) svg.setAttribute(name, v);
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", THUMBS[value]);
  svg.append(path);
  return svg;
}

function fillRateBox(box) {
  if (box.querySelector("button[data-rate]")) return;
  for (const [value, label] of [["up", "Good answer"], ["down", "Not what I meant"]]) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link rate-button";
    button.dataset.rate = value;
    button.title = label;
    button.setAttribute("aria-label", label);
    button.setAttribute("aria-pressed", String(box.dataset.rating === value));
    button.append(thumbIcon(value));
    box.append(button);
  }
}

async function sendRating(box, rating, note) {
  const body = { target: box.dataset.target, rating };
  if (note) body.note = note;
  const done = await api("POST", "/v1/feedback", body);
  box.dataset.rating = rating;
  box.querySelectorAll("button[data-rate]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.rate === rating)));
  return done;
}

function noteForm(box, rating) {
  box.querySelector("form.rate-note")?.remove();
  const form = document.createElement("form");
  form.className = "rate-note";
  const input = document.createElement("input");
  input.name = "note";
  input.maxLength = 500;
  input.placeholder = rating === "down" ? "What did you mean? (optional)" : "A word on it (optional)";
  input.setAttribute("aria-label", "A note with your rating");
  const save = document.createElement("button");
  save.type = "submit";
  save.className = "small";
  save.textContent = "Add note";
  form.append(input, save);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await sendRating(box, rating, input.value.trim());
      form.remove();
      toast("Thanks, your note was kept.");
    } catch (error) { toast(error.message); }
  });
  box.append(form);
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-rate]");
  if (!button) return;
  const box = button.closest(".rate");
  button.disabled = true;
  try {
    const done = await sendRating(box, button.dataset.rate);
    toast(button.dataset.rate === "down" && done.learned
      ? "Thanks. Sidekick won't send those words there again." : "Thanks for the rating.");
    noteForm(box, button.dataset.rate);
  } catch (error) {
    toast(error.message);
  } finally {
    button.disabled = false;
  }
});

document.querySelectorAll(".rate[data-target]").forEach(fillRateBox);
window.rateBox = rateBox;
