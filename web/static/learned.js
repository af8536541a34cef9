// What Sidekick learned: delete an example, turn learning off or on.
"use strict";

document.addEventListener("click", async (event) => {
  const forget = event.target.closest("button[data-action=forget]");
  if (forget) {
    const row = forget.closest("tr");
    forget.disabled = true;
    try {
      await api("DELETE", `/v1/learned/${row.dataset.example}`);
      row.remove();
      toast("Forgotten.");
      if (!document.querySelector("tr[data-example]")) location.reload();
    } catch (error) {
      toast(error.message);
      forget.disabled = false;
    }
    return;
  }
  const toggle = event.target.closest("button[data-action=learning]");
  if (toggle) {
    toggle.disabled = true;
    try {
      await api("PUT", "/v1/learned/settings", { learning: toggle.dataset.learning !== "true" });
      location.reload();
    } catch (error) {
      toast(error.message);
      toggle.disabled = false;
    }
  }
});
