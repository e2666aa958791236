// The wait before the `n`th retry (0 first), served to both pages (/app/backoff.js,
// /console/backoff.js): doubling from `first` ms up to `most` ms, plus up to 30% at random, so
// that thousands of phones that lost the server (or its database) together do not all come
// back in the same second.
"use strict";
export function backoff(n, first, most) {
  const base = Math.min(most, first * Math.pow(2, n));
  return base + Math.random() * base * 0.3;
}
