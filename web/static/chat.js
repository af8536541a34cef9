// Chat with Sidekick: POST /v1/chat and render its event stream as it arrives.
"use strict";

const chat = document.querySelector(".chat");
const list = document.getElementById("messages");
const form = document.getElementById("composer");
const input = document.getElementById("message");
const send = document.getElementById("send");
let conversationId = chat.dataset.conversation || null;
let busy = false;

const scrollDown = () => { list.scrollTop = list.scrollHeight; };

function userMessage(text) {
  document.getElementById("welcome")?.remove();
  list.append(el("li", { class: "msg user" }, el("div", { class: "bubble", text })));
}

function callCard(event) {
  const card = document.getElementById("call-card").content.firstElementChild.cloneNode(true);
  card.querySelector(".fn").textContent = `${event.agent}.${event.function}`;
  card.querySelector(".state").textContent = "running…";
  card.querySelector(".args").textContent = JSON.stringify(event.args, null, 2);
  return card;
}

function finishCard(card, event) {
  card.classList.add(event.ok ? "ok" : "failed");
  card.querySelector(".state").textContent = event.ok ? "done" : "failed";
  card.querySelector(".result").textContent = JSON.stringify(event.ok ? event.result : event.error, null, 2);
  if (event.invocation_id) {
    const link = card.querySelector(".trace");
    link.href = `/activity/${encodeURIComponent(event.invocation_id)}`;
    link.hidden = false;
  }
}

// A question from Sidekick: choices as buttons, a confirmation as Approve / Decline.
function askBox(pending) {
  const box = el("div", { class: "ask", role: "group", "aria-label": "Sidekick asks" });
  const buttons = el("div", { class: "actions" });
  const answer = (text, shown) => { box.querySelectorAll("button").forEach((b) => (b.disabled = true)); say(text, shown); };
  if (pending.kind === "confirm") {
    box.append(el("p", { text: pending.question }));
    const approve = el("button", { class: "primary", type: "button", text: "Approve" });
    const decline = el("button", { type: "button", text: "Decline" });
    approve.onclick = () => answer("yes", "Approve");
    decline.onclick = () => answer("no", "Decline");
    buttons.append(approve, decline);
  } else {
    const options = (pending.options || []).map((o) => (typeof o === "string" ? o : o.label));
    if (!options.length) return null; // a value to type: the composer answers it
    box.append(el("p", { text: pending.question.split("\n")[0] })); // the options are the buttons
    options.forEach((label, i) => {
      const b = el("button", { class: "chip", type: "button", text: label });
      b.onclick = () => answer(String(i + 1), label); // by number: labels may share words
      buttons.append(b);
    });
  }
  box.append(buttons);
  return box;
}

// A new conversation joins the list on the left at once.
function addToHistory(id, title) {
  const aside = document.querySelector(".history");
  if (!aside) return;
  aside.querySelector("p.muted")?.remove();
  let ul = aside.querySelector("ul");
  if (!ul) { ul = el("ul"); aside.append(ul); }
  ul.querySelectorAll("a[aria-current]").forEach((a) => a.removeAttribute("aria-current"));
  const link = el("a", { href: `/chat/${encodeURIComponent(id)}`, "aria-current": "page" },
    el("span", { class: "title", text: title.slice(0, 80) }), el("span", { class: "muted small", text: "just now" }));
  ul.prepend(el("li", {}, link));
}

function parseBlock(block) {
  let name = "message", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  try { return [name, JSON.parse(data || "{}")]; } catch { return [name, {}]; }
}

async function say(text, shown = text) {
  if (busy || !text.trim()) return;
  busy = true; send.disabled = true;
  document.querySelectorAll(".ask button").forEach((b) => (b.disabled = true));
  userMessage(shown);
  const item = el("li", { class: "msg assistant" });
  const bubble = el("div", { class: "bubble" });
  item.append(bubble);
  list.append(item);
  scrollDown();
  const cards = [];
  let asked = null;
  try {
    const response = await api("POST", "/v1/chat", { message: text, conversation_id: conversationId }, { raw: true });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data?.error?.message || `The kernel answered ${response.status}.`);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const [name, event] = parseBlock(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (name === "start") {
          if (!conversationId && event.conversation_id) {
            conversationId = event.conversation_id;
            history.replaceState(null, "", `/chat/${conversationId}`);
            addToHistory(conversationId, text);
          }
        } else if (name === "tool_call") {
          const card = callCard(event);
          cards.push(card);
          item.insertBefore(card, bubble);
        } else if (name === "tool_result") {
          const card = cards.find((c) => !c.classList.contains("ok") && !c.classList.contains("failed")) || callCard(event);
          if (!card.isConnected) item.insertBefore(card, bubble);
          finishCard(card, event);
        } else if (name === "text") {
          bubble.textContent += event.delta || "";
        } else if (name === "clarification" || name === "confirmation") {
          asked = event;
        } else if (name === "error") {
          bubble.classList.add("error");
          bubble.textContent = event.message || "Something went wrong.";
        }
        scrollDown();
      }
    }
    if (asked) {
      const box = askBox(asked);
      if (box) {
        // The box asks the question; the bubble keeps only what ran before it.
        const at = bubble.textContent.indexOf(asked.question);
        if (at >= 0) bubble.textContent = bubble.textContent.slice(0, at).trim();
        if (!bubble.textContent) bubble.remove();
        item.append(box);
      }
    }
  } catch (error) {
    bubble.classList.add("error");
    bubble.textContent = error.message;
  } finally {
    busy = false; send.disabled = false;
    scrollDown();
    input.focus();
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value;
  input.value = "";
  say(text);
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
});
document.addEventListener("click", (event) => {
  const chip = event.target.closest("[data-say]");
  if (chip) say(chip.dataset.say);
});

// A conversation that waits on a question shows its buttons again.
const stored = document.getElementById("pending");
if (stored) {
  try {
    const pending = JSON.parse(stored.textContent);
    const box = askBox(pending);
    const last = list.querySelector(".msg.assistant:last-child");
    if (box && last) {
      const bubble = last.querySelector(".bubble");
      const at = bubble ? bubble.textContent.indexOf(pending.question) : -1;
      if (at >= 0) bubble.textContent = bubble.textContent.slice(0, at).trim();
      if (bubble && !bubble.textContent) bubble.remove();
      last.append(box);
    }
  } catch { /* an unreadable stored question: the composer still answers it */ }
}
const preset = new URLSearchParams(location.search).get("say");
if (preset) input.value = preset;
scrollDown();
input.focus();
