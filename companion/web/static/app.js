// The connection and the tray card: one EventSource; a full snapshot on connect, then small
// updates (tray, status, game). The game itself is drawn by game.js, its forms by forms.js.
"use strict";

const CT = window.CT;
const { COLOURS, t, tn, colourName } = CT;
const $ = (id) => document.getElementById(id);
const STATUS_TEXT = {
  starting: t("starting"), waiting: t("waiting for cubes"), settling: t("cubes moving…"),
  read: t("tray read"), uncertain: t("please check"), refused: t("button refused"), error: t("problem"),
  offline: t("reconnecting…"),
};

// The panel's Next met a question (firmware.service.needs_a_yes: an unusual drop): the panel
// cannot say yes, so the card says a phone must, with the button that asks it here.
const NEEDS_A_YES = "The device's Next button did not use this reading: a player must say yes to it first, on a phone.";

function timeOf(unixSeconds) {
  return unixSeconds ? new Date(unixSeconds * 1000).toLocaleTimeString() : "";
}

function summary(tray) {
  if (tray.error) return t("could not read: {error}", { error: tray.error });
  return CT.countsText(tray.counts) || t("empty tray");
}

function showTray(tray) {
  window.CT.tray = tray;
  window.CT.onTray();
  for (const colour of COLOURS) {
    const n = tray.counts[colour] || 0;
    document.querySelector(`[data-count="${colour}"]`).textContent = n;
    document.querySelector(`.count[data-colour="${colour}"]`).classList.toggle("zero", n === 0);
  }
  $("actions").textContent = tray.actions.length ? tray.actions.map(colourName).join(", ") : "—";
  $("ap").textContent = tray.ap;
  $("gold").textContent = tray.gold;
  $("total-note").textContent = tray.total ? t("({n} cubes ÷ 3, rounded up)", { n: tray.total }) : "";
  const picture = $("tray-picture");
  if (tray.picture) {
    picture.src = tray.picture;
    picture.hidden = false;
  } else {
    picture.hidden = true;
  }
  $("tray-caption").textContent = !tray.frame_id ? t("Waiting for the first reading…")
    : tray.ms != null ? t("Read at {time} in {ms} ms", { time: timeOf(tray.read_at), ms: Math.round(tray.ms) })
    : t("Read at {time}", { time: timeOf(tray.read_at) });
  const alert = $("tray-alert");
  const problems = tray.error ? [t("The last picture could not be read: {error}", { error: tray.error })]
    : tray.uncertain ? [t("Please check the tray: {warnings}",
      { warnings: CT.fewWarnings(tray.warnings) || t("some cubes are unclear") })]
    : [];
  alert.textContent = problems.join(" ");
  alert.hidden = problems.length === 0;
}

function addHistory(tray, atTop) {
  if (!tray.frame_id) return;
  const li = document.createElement("li");
  li.textContent = t("{time}: {summary}", { time: timeOf(tray.read_at), summary: summary(tray) });
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
  // a phone cannot hover: the problem in words on the tray card too (the chip only says "problem")
  const problem = $("camera-problem");
  // and why a button on the device itself was refused (its red LED flickers for 5 s)
  const words = {
    error: () => t("Camera problem: {message}", { message: status.message }),
    refused: () => t("A button on the device was refused: {message}", { message: status.message }),
  }[status.state];
  const asks = status.state === "refused" && !!status.message_msg
    && status.message_msg.msg === NEEDS_A_YES;
  $("next-asks").hidden = !asks;
  problem.hidden = asks || !(words && status.message);
  problem.textContent = problem.hidden ? "" : words();
}

// The reading Next could not use, sent from this phone: the device asks its question here
// (CT.ask), where a player can answer it.
$("next-asks-use").addEventListener("click", async (e) => {
  if (await CT.useReading(e.currentTarget)) $("next-asks").hidden = true; // nothing waits for a yes
});

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
    if (snap.game) window.CT.render(snap.game, true); // what the device has now, whatever was shown
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
  source.onerror = () => showStatus({ state: "offline", message: t("lost the connection to the device") });
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
    if (await CT.ask(body.confirm, t("Keep it anyway"), t("No, I will empty the tray"))) return calibrate(true);
    return { response, body: { error: t("empty the tray, then calibrate again") } };
  }
  return { response, body };
}

$("calibrate").addEventListener("click", async () => {
  const button = $("calibrate");
  const result = $("calibrate-result");
  button.disabled = true;
  result.textContent = t("Calibrating…");
  try {
    const { response, body } = await calibrate(false);
    if (!response.ok) {
      result.textContent = t("Not calibrated: {error}", { error: body.error || response.statusText });
    } else if (body.cubes_seen > 0) {
      result.textContent = tn(
        "Saved. The counter saw {n} cube in that picture: if the tray was not really empty, empty it and calibrate again.",
        "Saved. The counter saw {n} cubes in that picture: if the tray was not really empty, empty it and calibrate again.",
        body.cubes_seen);
    } else {
      result.textContent = t("Saved: the empty tray is the new reference.");
    }
    if (response.ok && body.floor_too_dark) {
      result.textContent += " " + t(
        "But the tray floor is nearly black in the picture ({share} percent of it): cubes there cannot be seen. Light the tray and calibrate again.",
        { share: Math.round(body.floor_too_dark * 100) });
    }
  } finally {
    button.disabled = false;
  }
});

$("undo").addEventListener("click", (e) => window.CT.send({ type: "undo" }, e.currentTarget));
$("redo").addEventListener("click", (e) => window.CT.send({ type: "undo", redo: true }, e.currentTarget));

connect();
