// dreamer web app: what every page shares. Calls of /v1 carry the session cookie and
// the page's CSRF token; the kernel refuses an unsafe call without it.
"use strict";

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content || "";

async function api(method, path, body, extra = {}) {
  const headers = { "X-CSRF-Token": csrfToken(), ...(extra.headers || {}) };
  let payload = body;
  if (body !== undefined && !(body instanceof Blob) && !(body instanceof ArrayBuffer)) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: "same-origin", signal: extra.signal });
  if (extra.raw) return response;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data?.error?.message || `The kernel answered ${response.status}.`);
  return data;
}

function toast(text) {
  const el = document.getElementById("toast");
  if (!el) return;
  el.textContent = text;
  el.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => el.classList.remove("show"), 3200);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// Grant / revoke buttons in permission tables: one API call, takes effect at once.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const row = button.closest("[data-agent][data-scope]");
  if (!row) return;
  const { agent, scope } = row.dataset;
  button.disabled = true;
  try {
    if (button.dataset.action === "grant-offer") {  // a feed notice's one-click grant
      await api("POST", `/v1/agents/${encodeURIComponent(agent)}/grants`, { scope });
      row.replaceChildren(el("span", { class: "tag ok", text: `Granted ${scope} to ${agent}` }));
      toast(`Granted ${scope} to ${agent}. Its next run may use it.`);
      return;
    }
    if (button.dataset.action === "revoke") {
      await api("DELETE", `/v1/agents/${encodeURIComponent(agent)}/grants?scope=${encodeURIComponent(scope)}`);
      row.querySelector(".state").innerHTML = '<span class="muted">not granted</span>';
      button.textContent = "Grant"; button.dataset.action = "grant"; button.className = "small";
      toast(`Revoked ${scope} from ${agent}.`);
    } else {
      await api("POST", `/v1/agents/${encodeURIComponent(agent)}/grants`, { scope });
      row.querySelector(".state").textContent = "just now";
      button.textContent = "Revoke"; button.dataset.action = "revoke"; button.className = "danger small";
      toast(`Granted ${scope} to ${agent}.`);
    }
  } catch (error) {
    toast(error.message);
  } finally {
    button.disabled = false;
  }
});

// Account page: sign a browser out; this one goes to the sign-in page.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-action=end-session]");
  if (!button) return;
  const row = button.closest("tr[data-session]");
  button.disabled = true;
  try {
    await api("DELETE", `/v1/sessions/${encodeURIComponent(row.dataset.session)}`);
    if (row.querySelector(".tag.ok")) { location.href = "/login"; return; }
    row.remove();
    toast("That browser is signed out.");
  } catch (error) {
    toast(error.message);
    button.disabled = false;
  }
});

// Phones: the navigation folds into a menu.
document.querySelector(".top .menu")?.addEventListener("click", (event) => {
  const top = event.currentTarget.closest(".top");
  const open = top.classList.toggle("open");
  event.currentTarget.setAttribute("aria-expanded", String(open));
});

// Urgent posts raise a notice on whatever page is open, once each. The feed page marks
// what it shows as seen (data-seen-up-to). Elsewhere the feed is read once, then the
// kernel pushes each new post down one event stream (GET /v1/feed/stream): no polling.
// <html data-feed> says where that stands: "reading", "listening" or "closed".
const seenKey = () => `dreamer-urgent-seen:${document.querySelector(".who .name")?.textContent || ""}`;
const seenUpTo = () => Number(localStorage.getItem(seenKey()) || 0);
const markSeen = (id) => { if (id > seenUpTo()) localStorage.setItem(seenKey(), String(id)); };
const NOTICE_MAX_AGE_MS = 2 * 24 * 3600 * 1000;

function showNotice(slot, post) {
  const text = post.text.length > 220 ? `${post.text.slice(0, 219)}…` : post.text;
  const open = el("a", { class: "button primary", href: `/feed#post-${post.id}`, text: "Open the feed" });
  const dismiss = el("button", { type: "button", text: "Dismiss" });
  const box = el("div", { class: "notice", role: "alert", "data-post": String(post.id) },
    el("p", {}, ...(text.startsWith(post.agent) ? [] : [el("strong", { text: `${post.agent}: ` })]), text), el("div", { class: "actions" }, open, dismiss));
  const done = () => { markSeen(post.id); box.remove(); };
  dismiss.addEventListener("click", done);
  open.addEventListener("click", () => markSeen(post.id));
  slot.replaceChildren(box);
}

const noticeWorthy = (p) => p.priority === "urgent" && p.id > seenUpTo()
  && Date.now() - Date.parse(p.created_at) < NOTICE_MAX_AGE_MS;

async function watchFeed(slot) {
  const state = (value) => { document.documentElement.dataset.feed = value; };
  state("reading");
  let after = "";  // from now on, unless the read below says where the feed stood
  try {
    const posts = await api("GET", "/v1/feed?limit=20");
    after = `?after=${posts.reduce((most, p) => Math.max(most, p.id), 0)}`;
    const fresh = posts.filter(noticeWorthy);
    if (fresh.length && !slot.querySelector(".notice")) showNotice(slot, fresh[0]);
  } catch { /* offline or signed out: the stream below says so too */ }
  // EventSource reconnects by itself after a dropped connection (sending the last id it saw);
  // a refusal (signed out, credential revoked) closes it for good.
  const stream = new EventSource(`/v1/feed/stream${after}`);
  stream.addEventListener("open", () => state("listening"));
  stream.addEventListener("post", (event) => {
    const post = JSON.parse(event.data);
    if (noticeWorthy(post) && !slot.querySelector(".notice")) showNotice(slot, post);
  });
  stream.addEventListener("error", (event) => {
    if (event.data || stream.readyState === EventSource.CLOSED) { stream.close(); state("closed"); }
  });
}

const feedSeen = document.querySelector("[data-seen-up-to]");
if (feedSeen) markSeen(Number(feedSeen.dataset.seenUpTo));
const noticeSlot = document.querySelector("[data-watch-feed]");
if (noticeSlot) watchFeed(noticeSlot);
