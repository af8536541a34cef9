// Activity: the audit chain is recomputed only when asked (it reads the whole log).
"use strict";

document.getElementById("verify-chain")?.addEventListener("click", async (event) => {
  const button = event.currentTarget, out = document.getElementById("chain");
  button.disabled = true;
  out.className = "tag";
  out.textContent = "checking…";
  try {
    const chain = await api("GET", "/v1/audit/verify");
    out.className = chain.ok ? "tag ok" : "tag bad";
    out.textContent = chain.ok ? `chain verified · ${chain.entries} entries intact`
      : `chain broken at entry ${chain.first_bad}: ${chain.reason}`;
  } catch (error) {
    out.className = "tag bad";
    out.textContent = error.message;
  } finally {
    button.disabled = false;
  }
});
