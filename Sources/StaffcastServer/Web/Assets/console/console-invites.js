// The console's invite form: a join link with its QR code, and revoking it.
"use strict";
import { $, S, api, errorText } from "./console-core.js";

// ---- invites -----------------------------------------------------------------------------
$("invite-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("invite-status").textContent = "Creating…";
  const res = await api("POST", "/v1/events/" + S.eventId + "/invites?qr=svg", {
    access_level: $("invite-level").value, expires_in_minutes: parseInt($("invite-expires").value, 10) || 60,
    max_uses: parseInt($("invite-uses").value, 10) || 1 });
  if (!res.ok) { $("invite-status").textContent = errorText(res); return; }
  S.invite = res.data;
  $("invite-status").textContent = "";
  $("invite-result").hidden = false;
  if (res.data.qr_svg) $("invite-qr").src = "data:image/svg+xml;base64," + btoa(res.data.qr_svg);
  $("invite-url").textContent = res.data.url; $("invite-url").href = res.data.url;
  $("invite-facts").textContent = res.data.access_level + " · up to " + res.data.max_uses + " people · valid until " + new Date(res.data.expires_at).toLocaleString();
  $("invite-revoke").disabled = false;
});
$("invite-revoke").addEventListener("click", async () => {
  if (!S.invite) return;
  const res = await api("DELETE", "/v1/invites/" + encodeURIComponent(S.invite.code));
  $("invite-facts").textContent = res.ok ? "Revoked: the link no longer works." : errorText(res);
  if (res.ok) { $("invite-revoke").disabled = true; $("invite-qr").removeAttribute("src"); }
});
