// The query that subscribes in the WebSocket's URL (docs/protocol.md, Subscribing in the URL),
// served to both pages (/app/subscribe-url.js, /console/subscribe-url.js): `f` is the subscribe
// frame the page would otherwise send on open, `subscribe=EVENT&ref=R` (&since_seq=N when it
// has one) is the same request, which the server runs as the socket opens.
"use strict";
export function subscribeQuery(f) {
  const q = new URLSearchParams({ subscribe: f.event_id, ref: f.ref });
  if (f.since_seq) q.set("since_seq", String(f.since_seq));
  return q.toString();
}
