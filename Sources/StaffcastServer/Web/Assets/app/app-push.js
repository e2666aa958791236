// The staff app's Web Push offer (docs/protocol.md, Web Push).
"use strict";
import { $, S, t } from "./app-state.js";
import { pushRegistered } from "./app-background.js";

// Web Push (docs/protocol.md, Web Push), offered only when this server answers GET /v1/push/key.
function b64url(s) {
  const pad = "=".repeat((4 - s.length % 4) % 4);
  const raw = atob((s + pad).replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}
export async function offerPush() {
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !S.token) return;
  let key = null;
  try { const r = await fetch("/v1/push/key", { cache: "no-store" }); if (r.ok) key = (await r.json()).public_key; } catch (_) {}
  if (!key) return;
  $("push-button").hidden = false;
  $("push-button").onclick = async () => {
    try {
      if (await Notification.requestPermission() !== "granted") { $("push-status").textContent = t("pushDenied"); return; }
      const reg = await navigator.serviceWorker.ready;
      const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64url(key) });
      const r = await fetch("/v1/push/subscriptions", { method: "POST", cache: "no-store",
        headers: { "Authorization": "Bearer " + S.token, "Content-Type": "application/json" }, body: JSON.stringify(sub.toJSON()) });
      if (!r.ok) throw new Error("HTTP " + r.status);
      pushRegistered();
      $("push-status").textContent = t("pushDone");
    } catch (err) { $("push-status").textContent = t("pushFailed", { reason: err.message || String(err) }); }
  };
}
