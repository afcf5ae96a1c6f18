// Who may play on this phone: the table code. Without it the page only watches (the write controls
// are hidden, a "join" field shows); with it every write sends the code as X-Table-Code.
// The code comes typed in, or in the QR code's link (?code=...): it is kept in localStorage and
// taken out of the address bar at once, so a screenshot or a shared link does not give it away.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const KEY = "cubetower.tableCode";
  const HEADER = "X-Table-Code";
  const $ = (id) => document.getElementById(id);
  const { t } = CT;

  const normalise = (text) => String(text || "").toUpperCase().replace(/[\s-]/g, "");

  function stored() {
    try { return localStorage.getItem(KEY) || ""; } catch (err) { return ""; }
  }

  function keep(code) {
    try {
      if (code) localStorage.setItem(KEY, code); else localStorage.removeItem(KEY);
    } catch (err) { /* private mode: the code lasts as long as the page */ }
    memory = code;
  }

  let memory = stored();
  const code = () => memory;

  function show(message) {
    const playing = !!memory;
    document.body.classList.toggle("watching", !playing);
    document.body.dataset.access = playing ? "playing" : "watching";
    $("join-card").hidden = playing;
    $("code-card").hidden = !playing;
    $("code-chip").hidden = !playing;
    $("table-code").textContent = memory;
    $("code-chip").textContent = t("table {code}", { code: memory });
    $("join-link").textContent = playing ? `${location.origin}/?code=${memory}` : "";
    if (message !== undefined) $("join-result").textContent = message;
  }

  // A write to the device: the code rides along; a refusal of the code sends the phone back to watching.
  async function write(url, options) {
    const headers = { ...((options && options.headers) || {}) };
    if (memory) headers[HEADER] = memory;
    const response = await fetch(url, { ...options, method: (options && options.method) || "POST", headers });
    if (response.status === 403) {
      const body = await response.clone().json().catch(() => ({}));
      if (body.join) { keep(""); show(body.error); }
    }
    return response;
  }

  // Whether `candidate` (default: the kept code) still plays: true, false, or null when the
  // device could not say (offline; too many wrong codes: told on the page). Only the answer for
  // the code kept *now* counts, so a late answer about an older code cannot undo a newer one.
  async function check(candidate) {
    const asked = candidate === undefined ? memory : candidate;
    if (!asked) { show(); return false; }
    let writer = false;
    try {
      const response = await fetch("/api/access", { headers: { [HEADER]: asked } });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) { show(body.error || response.statusText); return null; }
      writer = body.writer === true;
    } catch (err) {
      return null; // offline: keep what we have; the stream's reconnect checks again
    }
    if (candidate !== undefined) return writer;
    if (memory === asked && !writer) {
      keep("");
      show(t("The table code on this phone is no longer the table's (a player asked for a new one). Enter the new code to play."));
    }
    return writer;
  }

  async function join(typed) {
    const candidate = normalise(typed);
    if (!candidate) { show(t("Enter the table code.")); return; }
    const writer = await check(candidate);
    if (writer) {
      keep(candidate);
      show("");
    } else if (writer === false) {
      show(t("That is not this table's code. Ask a player for it: it is shown on every phone that plays."));
    }
  }

  async function renew() {
    $("new-code-confirm").hidden = true;
    const response = await write("/api/access/new-code");
    const body = await response.json().catch(() => ({}));
    if (response.ok && body.code) {
      keep(body.code);
      show();
      $("code-result").textContent = t("New code: {code}. Every other phone watches until it joins with it.", { code: body.code });
    } else {
      $("code-result").textContent = t("No new code: {error}", { error: body.error || response.statusText });
    }
  }

  // The QR code's link: join with its code, then drop it from the address bar.
  const params = new URLSearchParams(location.search);
  if (params.has("code")) {
    keep(normalise(params.get("code")));
    params.delete("code");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  }

  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    join($("join-code").value).then(() => { if (memory) $("join-code").value = ""; });
  });
  $("new-code").addEventListener("click", () => { $("new-code-confirm").hidden = false; });
  $("new-code-cancel").addEventListener("click", () => { $("new-code-confirm").hidden = true; });
  $("new-code-yes").addEventListener("click", renew);
  $("leave").addEventListener("click", () => {
    keep("");
    show(t("This phone only watches now."));
    CT.go("join-card"); // the code card is gone: show where that is said, and how to join again
  });

  show();
  CT.access = { code, check, header: HEADER };
  CT.write = write;
})(window.CT);
