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

function fillRateBox(box) {
  if (box.querySelector("button[data-rate]")) return;
  for (const [value, label, mark] of [["up", "Good answer", "👍"], ["down", "Not what I meant", "👎"]]) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link rate-button";
    button.dataset.rate = value;
    button.title = label;
    button.setAttribute("aria-label", label);
    button.setAttribute("aria-pressed", String(box.dataset.rating === value));
    button.textContent = mark;
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
