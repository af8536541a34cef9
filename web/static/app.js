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
  const row = button.closest("tr[data-agent]");
  if (!row) return;
  const { agent, scope } = row.dataset;
  button.disabled = true;
  try {
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
