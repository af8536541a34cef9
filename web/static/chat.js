// Chat with Sidekick: POST /v1/chat and render its event stream as it arrives; the
// conversation history on the left pages, searches and deletes through /v1/conversations.
"use strict";

const chat = document.querySelector(".chat");
const list = document.getElementById("messages");
const form = document.getElementById("composer");
const input = document.getElementById("message");
const send = document.getElementById("send");
let conversationId = chat.dataset.conversation || null;
let busy = false;

const scrollDown = () => { list.scrollTop = list.scrollHeight; };
// Held at the newest message while the reader is there, even as the list's box changes
// (a notice or banner arriving above it, the phone keyboard opening); not once they scroll up.
let atBottom = true;
let seenHeight = list.clientHeight;
list.addEventListener("scroll", () => {
  // A scroll the box's own change of size caused (the notice pushing it down) is not the reader
  // leaving the bottom: the resize observer below puts the newest message back.
  if (list.clientHeight !== seenHeight) return;
  atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 48;
});
// The list's own box and each message's (content that grows after arrival: a notice above,
// a rating box or the details filled in, a font that loads late) both move the newest one.
const holdDown = new ResizeObserver(() => {
  seenHeight = list.clientHeight;
  if (atBottom) scrollDown();
});
holdDown.observe(list);
for (const item of list.children) holdDown.observe(item);
new MutationObserver((changes) => {
  for (const change of changes) change.addedNodes.forEach((n) => { if (n.nodeType === 1) holdDown.observe(n); });
}).observe(list, { childList: true });

// --- answers: the sentence first, what ran folded under it -------------------------------

// The same wording as web/wording.py's call_sentence.
function argsPhrase(args) {
  if (!args || typeof args !== "object") return "";
  const shown = (v) => (Array.isArray(v) ? v.map(shown).join(", ")
    : v && typeof v === "object" ? Object.entries(v).map(([k, x]) => `${k} ${shown(x)}`).join(", ") : String(v));
  const text = Object.values(args).filter((v) => v !== null && v !== "" && !(Array.isArray(v) && !v.length))
    .map(shown).join("; ");
  return text.length <= 60 ? text : `${text.slice(0, 59).trimEnd()}…`;
}
const callSentence = (call) => {
  const said = argsPhrase(call.args);
  return `Asked ${call.agent} to ${String(call.function).replaceAll("_", " ")}${said ? `: ${said}` : ""}`;
};

// The same cleaning as contracts/reply_text.py's plain_error and error_words (keep the two alike):
// no traceback, no "add_items raised ValueError:", one sentence.
const TRACE_LINE = /^\s*(?:File "|Traceback|\^+$|During handling)/m;
const RAISED = /^[A-Za-z_]\w* raised (?=[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b)/;
const EXCEPTION = /\b(?:[A-Z][A-Za-z]*(?:Error|Exception)|Traceback|SystemExit|KeyboardInterrupt)\b:?\s*/g;
function errorWords(error) {
  let said = String((typeof error === "string" ? error : error?.message) || "").trim();
  const trace = said.search(TRACE_LINE);
  if (trace >= 0) said = said.slice(0, trace).trim();
  said = said.replace(RAISED, "").replace(EXCEPTION, "").trim().replace(/^['"]+|['"]+$/g, "").trim();
  said = said.split(/\s+/).filter(Boolean).join(" ");
  if (said.length < 4) return "It failed without saying why.";
  if (said.length > 400) said = `${said.slice(0, 399).trimEnd()}…`;
  return said[0].toUpperCase() + said.slice(1) + (/[.!?…]$/.test(said) ? "" : ".");
}

function detailsBox() {
  const box = el("details", { class: "details" }, el("summary"), el("ul"));
  return box;
}

function summarize(box) {
  const calls = [...box.querySelectorAll(":scope > ul > li")];
  const agents = [...new Set(calls.map((c) => c.dataset.agent))].sort();
  const failed = calls.filter((c) => c.classList.contains("failed")).length;
  box.querySelector("summary").textContent =
    `Details: ${calls.length} call${calls.length === 1 ? "" : "s"} to ${agents.join(", ")}${failed ? `, ${failed} failed` : ""}`;
}

function callItem(event) {
  const io = el("details", {}, el("summary", { text: "Arguments and result" }),
    el("pre", { class: "args", tabindex: "0", text: JSON.stringify(event.args ?? {}, null, 2) }), el("pre", { class: "result", tabindex: "0", text: "…" }));
  const item = el("li", { class: "call" },
    el("div", { class: "what" }, el("span", { class: "dot", "aria-hidden": "true" }),
      el("span", { text: callSentence(event) }), el("span", { class: "fn", text: `${event.agent}.${event.function}` })),
    io);
  item.dataset.agent = event.agent;
  return item;
}

// A call that did its part but lacks a grant to finish (its result's `needs_grant`, e.g. watch
// without net:HOST): the Grant button under the sentence (app.js grants it; the kernel takes
// only a scope the agent's manifest asks for). The same as chat.html draws for a stored answer.
function grantOffer(agent, scope) {
  const offer = el("div", { class: "offer" },
    el("button", { class: "primary small", type: "button", "data-action": "grant-offer", text: `Grant ${scope} to ${agent}` }));
  offer.dataset.agent = agent;
  offer.dataset.scope = scope;
  return offer;
}

function finishCall(item, event) {
  item.classList.add(event.ok ? "ok" : "failed");
  item.querySelector(".result").textContent = JSON.stringify(event.ok ? event.result : event.error, null, 2);
  if (!event.ok && event.error) item.querySelector(".what").after(el("p", { class: "why", text: errorWords(event.error) }));
  if (event.invocation_id) {
    item.append(el("a", { class: "small trace", href: `/activity/${encodeURIComponent(event.invocation_id)}`, text: "Open the trace" }));
  }
}

// A question from Sidekick: choices as buttons, a confirmation as Approve / Decline.
const YES_NO = /\s*\(\s*yes\s*\/\s*no\s*\)\s*$/i;
function askBox(pending) {
  const box = el("div", { class: "ask", role: "group", "aria-label": "Sidekick asks" });
  const buttons = el("div", { class: "actions" });
  const answer = (text, shown) => {
    box.querySelectorAll("button").forEach((b) => (b.disabled = true));
    box.classList.add("answered");
    say(text, shown);
  };
  const question = String(pending.question || "").split("\n")[0].replace(YES_NO, "");
  if (pending.kind === "confirm") {
    box.append(el("p", { text: question }));
    const approve = el("button", { class: "primary", type: "button", text: "Approve" });
    const decline = el("button", { type: "button", text: "Decline" });
    approve.onclick = () => answer("yes", "Approve");
    decline.onclick = () => answer("no", "Decline");
    buttons.append(approve, decline);
  } else {
    const options = (pending.options || []).map((o) => (typeof o === "string" ? o : o.label));
    if (!options.length) return null; // a value to type: the composer answers it
    box.append(el("p", { text: question })); // the options are the buttons
    options.forEach((label, i) => {
      const b = el("button", { class: "chip", type: "button", text: label });
      b.onclick = () => answer(String(i + 1), label); // by number: labels may share words
      buttons.append(b);
    });
  }
  box.append(buttons);
  return box;
}

// The box asks the question; the bubble keeps only what came before it (never the prompt twice).
function placeAsk(item, bubble, pending) {
  const box = askBox(pending);
  if (!box) return null;
  if (bubble) {
    const whole = String(pending.question || "");
    for (const q of [whole, whole.split("\n")[0], whole.replace(YES_NO, "")]) {
      const at = q ? bubble.textContent.indexOf(q) : -1;
      if (at >= 0) { bubble.textContent = bubble.textContent.slice(0, at).trim(); break; }
    }
    if (!bubble.textContent.trim()) bubble.remove();
  }
  const details = item.querySelector(":scope > .details");
  if (details) item.insertBefore(box, details); else item.append(box);
  return box;
}

// --- history: grouped by day, paged, searchable, each one deletable -----------------------

const historyList = document.getElementById("history-list");
const historyState = JSON.parse(document.getElementById("history-data").textContent);
let historyQuery = "";

function when(iso) {
  const at = new Date(iso), seconds = (Date.now() - at) / 1000;
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return at.toLocaleDateString(undefined, { day: "numeric", month: "short" });
}

function dayLabel(iso) {
  const at = new Date(iso), today = new Date();
  const days = Math.round((new Date(today.toDateString()) - new Date(at.toDateString())) / 86400000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return at.toLocaleDateString(undefined, { weekday: "long" });
  return at.toLocaleDateString(undefined, { day: "numeric", month: "long", year: "numeric" });
}

function historyRow(c) {
  const link = el("a", { href: `/chat/${encodeURIComponent(c.id)}` },
    el("span", { class: "title", text: c.title }),
    el("span", { class: "muted small", text: `${when(c.updated_at)}${c.waiting ? " · waiting for you" : ""}` }));
  if (c.id === conversationId) link.setAttribute("aria-current", "page");
  const forget = el("button", { type: "button", class: "forget", "aria-label": `Delete the conversation “${c.title}”`, title: "Delete", text: "✕" });
  const row = el("li", {}, link, forget);
  forget.addEventListener("click", () => askToDelete(row, c));
  return row;
}

function askToDelete(row, c) {
  const keep = el("button", { type: "button", class: "small", text: "Keep" });
  const sure = el("button", { type: "button", class: "small danger", text: "Delete" });
  const original = [...row.childNodes];
  row.replaceChildren(el("div", { class: "sure" }, el("span", { text: "Delete this conversation?" }), sure, keep));
  sure.focus();
  keep.addEventListener("click", () => { row.replaceChildren(...original); original[1].focus(); });
  sure.addEventListener("click", async () => {
    sure.disabled = true;
    try {
      await api("DELETE", `/v1/conversations/${encodeURIComponent(c.id)}`);
      if (c.id === conversationId) { location.href = "/"; return; }
      const group = row.parentElement;
      row.remove();
      if (!group.children.length) { group.previousElementSibling?.remove(); group.remove(); }
      toast("The conversation is deleted.");
    } catch (error) {
      toast(error.message);
      sure.disabled = false;
    }
  });
}

function renderHistory(rows, append) {
  if (!append) historyList.replaceChildren();
  historyList.querySelector(".more")?.remove();
  for (const c of rows) {
    const label = dayLabel(c.updated_at);
    let group = [...historyList.querySelectorAll("ul")].find((u) => u.dataset.day === label);
    if (!group) {
      group = el("ul");
      group.dataset.day = label;
      historyList.append(el("h3", { text: label }), group);
    }
    group.append(historyRow(c));
  }
  if (!historyList.querySelector("li")) {
    historyList.append(el("p", { class: "muted small", text: historyQuery
      ? `No conversation mentions “${historyQuery}”.` : "Your conversations will appear here." }));
  }
  historyState.shown = (append ? historyState.shown : 0) + rows.length;
  if (rows.length >= historyState.page) {
    const more = el("button", { type: "button", class: "small more", text: "Show older conversations" });
    more.addEventListener("click", () => loadHistory(true));
    historyList.append(more);
  }
}

async function loadHistory(append) {
  const params = new URLSearchParams({ limit: historyState.page, offset: append ? historyState.shown : 0 });
  if (historyQuery) params.set("q", historyQuery);
  try {
    renderHistory(await api("GET", `/v1/conversations?${params}`), append);
  } catch (error) {
    toast(error.message);
  }
}

document.getElementById("history-search").addEventListener("submit", (event) => {
  event.preventDefault();
  historyQuery = document.getElementById("history-q").value.trim();
  loadHistory(false);
});
document.getElementById("history-q").addEventListener("search", (event) => {
  if (!event.target.value && historyQuery) { historyQuery = ""; loadHistory(false); }
});

// Phones: the history is a panel over the chat, opened from the bar above the messages.
const historyPanel = document.getElementById("history");
const historyToggle = document.getElementById("history-toggle");
function showHistory(open) {
  historyPanel.classList.toggle("open", open);
  historyPanel.parentElement.classList.toggle("history-open", open);
  historyToggle.setAttribute("aria-expanded", String(open));
  (open ? document.getElementById("history-q") : historyToggle).focus();
}
historyToggle.addEventListener("click", () => showHistory(!historyPanel.classList.contains("open")));
document.getElementById("history-close").addEventListener("click", () => showHistory(false));

// A new conversation joins the history at once.
function addToHistory(id, title) {
  historyList.querySelectorAll("a[aria-current]").forEach((a) => a.removeAttribute("aria-current"));
  historyList.querySelector("p.muted")?.remove();
  let today = historyList.querySelector('ul[data-day="Today"]');
  if (!today) {
    today = el("ul");
    today.dataset.day = "Today";
    historyList.prepend(el("h3", { text: "Today" }), today);
  }
  today.prepend(historyRow({ id, title: title.slice(0, 80), updated_at: new Date().toISOString(), waiting: false }));
  document.querySelector(".chat-bar .here").textContent = title.slice(0, 80);
}

// --- sending ------------------------------------------------------------------------------

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
  document.getElementById("welcome")?.remove();
  list.append(el("li", { class: "msg user" }, el("div", { class: "bubble", text: shown })));
  const item = el("li", { class: "msg assistant" });
  const bubble = el("div", { class: "bubble streaming" });
  item.append(bubble);
  list.append(item);
  scrollDown();
  let details = null;
  const open = [];
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
            document.title = `${text.slice(0, 80)} · dreamer`;
            addToHistory(conversationId, text);
          }
        } else if (name === "tool_call" || name === "tool_result") {
          if (!details) { details = detailsBox(); item.append(details); }
          let call = name === "tool_result" ? open.shift() : null;
          if (!call) {
            call = callItem(event);
            details.querySelector("ul").append(call);
            if (name === "tool_call") open.push(call);
          }
          if (name === "tool_result") {
            finishCall(call, event);
            const scope = event.ok && event.result && event.result.needs_grant;
            if (typeof scope === "string") bubble.after(grantOffer(event.agent, scope));
          }
          summarize(details);
        } else if (name === "text") {
          bubble.textContent += event.delta || "";
        } else if (name === "clarification" || name === "confirmation") {
          asked = event;
        } else if (name === "done") {
          if (event.turn_id && window.rateBox) item.append(window.rateBox(event.turn_id));
        } else if (name === "error") {
          bubble.classList.add("error");
          bubble.textContent = `Sidekick could not finish that: ${event.message || "something went wrong."}`;
        }
        scrollDown();
      }
    }
    if (!bubble.textContent.trim() && !asked) bubble.textContent = "Done.";
    if (asked) placeAsk(item, bubble, asked)?.querySelector("button")?.focus();
  } catch (error) {
    bubble.classList.add("error");
    bubble.textContent = `Sidekick could not answer: ${error.message}`;
  } finally {
    bubble.classList.remove("streaming");
    busy = false; send.disabled = false;
    scrollDown();
    if (!item.querySelector(".ask")) input.focus();
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

// --- arrival ------------------------------------------------------------------------------

renderHistory(historyState.rows, false);
historyList.querySelector("a[aria-current]")?.scrollIntoView({ block: "nearest" });
// A conversation that waits on a question shows its buttons again.
const stored = document.getElementById("pending");
if (stored) {
  try {
    const last = list.querySelector(".msg.assistant:last-child");
    if (last) placeAsk(last, last.querySelector(".bubble"), JSON.parse(stored.textContent));
  } catch { /* an unreadable stored question: the composer still answers it */ }
}
const preset = new URLSearchParams(location.search).get("say");
if (preset) input.value = preset;
scrollDown();
input.focus({ preventScroll: true });
