// The connection and the tray card: one EventSource; a full snapshot on connect, then small
// updates (tray, status, game). The game itself is drawn by game.js, its forms by forms.js.
"use strict";

const CT = window.CT;
const { COLOURS } = CT;
const $ = (id) => document.getElementById(id);
const STATUS_TEXT = {
  starting: "starting", waiting: "waiting for cubes", settling: "cubes moving…",
  read: "tray read", uncertain: "please check", error: "problem", offline: "reconnecting…",
};

function timeOf(unixSeconds) {
  return unixSeconds ? new Date(unixSeconds * 1000).toLocaleTimeString() : "";
}

function summary(tray) {
  if (tray.error) return `could not read: ${tray.error}`;
  const parts = COLOURS.filter((c) => tray.counts[c] > 0).map((c) => `${tray.counts[c]} ${c}`);
  return parts.length ? parts.join(", ") : "empty tray";
}

function showTray(tray) {
  window.CT.tray = tray;
  window.CT.onTray();
  for (const colour of COLOURS) {
    const n = tray.counts[colour] || 0;
    document.querySelector(`[data-count="${colour}"]`).textContent = n;
    document.querySelector(`.count[data-colour="${colour}"]`).classList.toggle("zero", n === 0);
  }
  $("actions").textContent = tray.actions.length ? tray.actions.join(", ") : "—";
  $("ap").textContent = tray.ap;
  $("gold").textContent = tray.gold;
  $("total-note").textContent = tray.total ? `(${tray.total} cubes ÷ 3, rounded up)` : "";
  const picture = $("tray-picture");
  if (tray.picture) {
    picture.src = tray.picture;
    picture.hidden = false;
  } else {
    picture.hidden = true;
  }
  $("tray-caption").textContent = tray.frame_id
    ? `Read at ${timeOf(tray.read_at)}${tray.ms != null ? ` in ${Math.round(tray.ms)} ms` : ""}`
    : "Waiting for the first reading…";
  const alert = $("tray-alert");
  const problems = tray.error ? [`The last picture could not be read: ${tray.error}`]
    : tray.uncertain ? ["Please check the tray: " + (CT.fewWarnings(tray.warnings) || "some cubes are unclear")]
    : [];
  alert.textContent = problems.join(" ");
  alert.hidden = problems.length === 0;
}

function addHistory(tray, atTop) {
  if (!tray.frame_id) return;
  const li = document.createElement("li");
  li.textContent = `${timeOf(tray.read_at)}: ${summary(tray)}`;
  if (tray.error) li.className = "err";
  const list = $("history");
  if (atTop) list.prepend(li); else list.append(li);
  while (list.children.length > 30) list.lastChild.remove();
}

function showStatus(status) {
  const el = $("status");
  el.dataset.state = status.state;
  el.textContent = STATUS_TEXT[status.state] || status.state;
  el.title = status.message || "";
}

async function loadHistory() {
  const response = await fetch("/api/tray/history?limit=30");
  if (!response.ok) return;
  const body = await response.json();
  $("history").replaceChildren();
  for (const tray of body.readings) addHistory(tray, false);
}

function connect() {
  const source = new EventSource("/api/stream");
  window.CT.source = source;
  source.addEventListener("snapshot", (e) => {
    const snap = JSON.parse(e.data);
    showTray(snap.tray);
    showStatus(snap.status);
    if (snap.game) window.CT.render(snap.game);
    else $("now-card").hidden = true; // a device without a game table: the tray only
    loadHistory();
    window.CT.access.check(); // (re)connected: a new code may have been made meanwhile
  });
  source.addEventListener("access", () => window.CT.access.check()); // a new table code
  source.addEventListener("game", (e) => window.CT.render(JSON.parse(e.data)));
  source.addEventListener("tray", (e) => {
    const tray = JSON.parse(e.data);
    showTray(tray);
    addHistory(tray, true);
  });
  source.addEventListener("status", (e) => showStatus(JSON.parse(e.data)));
  source.onerror = () => showStatus({ state: "offline", message: "lost the connection to the device" });
}

$("read-now").addEventListener("click", async () => {
  const button = $("read-now");
  button.disabled = true;
  try {
    const response = await window.CT.write("/api/tray/read");
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      showStatus({ state: "error", message: body.error || response.statusText });
    }
  } finally {
    setTimeout(() => { button.disabled = false; }, 1000);
  }
});

// Cubes in the picture: the device asks first (409 with "confirm"), and so do we.
async function calibrate(confirmed) {
  const response = await CT.write("/api/calibrate/empty", {
    headers: { "Content-Type": "application/json" }, body: JSON.stringify({ confirmed }),
  });
  const body = await response.json().catch(() => ({}));
  if (response.status === 409 && body.confirm && !confirmed) {
    if (await CT.ask(body.confirm, "Keep it anyway", "No, I will empty the tray")) return calibrate(true);
    return { response, body: { error: "empty the tray, then calibrate again" } };
  }
  return { response, body };
}

$("calibrate").addEventListener("click", async () => {
  const button = $("calibrate");
  const result = $("calibrate-result");
  button.disabled = true;
  result.textContent = "Calibrating…";
  try {
    const { response, body } = await calibrate(false);
    if (!response.ok) {
      result.textContent = `Not calibrated: ${body.error || response.statusText}`;
    } else if (body.cubes_seen > 0) {
      result.textContent = `Saved. The counter saw ${body.cubes_seen} cube(s) in that picture: ` +
        "if the tray was not really empty, empty it and calibrate again.";
    } else {
      result.textContent = "Saved: the empty tray is the new reference.";
    }
  } finally {
    button.disabled = false;
  }
});

$("undo").addEventListener("click", (e) => window.CT.send({ type: "undo" }, e.currentTarget));
$("redo").addEventListener("click", (e) => window.CT.send({ type: "undo", redo: true }, e.currentTarget));

connect();
