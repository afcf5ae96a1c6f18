// Tapping the tray floor's four corners on the camera's whole picture (the manual override of
// the automatic tray finder). Taps are sent in the picture's own pixels, whatever its size here.
"use strict";

(() => {
  const { t } = window.CT;
  const $ = (id) => document.getElementById(id);
  const picture = $("corners-picture");
  let taps = [];

  function say(text) { $("corners-result").textContent = text; }

  function redraw() {
    for (const old of document.querySelectorAll(".corner-mark")) old.remove();
    taps.forEach(([x, y], i) => {
      const mark = document.createElement("span");
      mark.className = "corner-mark";
      mark.textContent = String(i + 1);
      // in % of the frame (the picture fills it), so the marks stay on their corners when the
      // phone turns and the picture is drawn at another size
      mark.style.left = `${(x / picture.naturalWidth) * 100}%`;
      mark.style.top = `${(y / picture.naturalHeight) * 100}%`;
      picture.parentElement.appendChild(mark);
    });
    $("corners-hint").textContent = taps.length < 4
      ? t("Tap corner {n} of 4.", { n: taps.length + 1 }) : t("Four corners: use them, or start over.");
    $("corners-save").disabled = taps.length !== 4;
  }

  async function send(corners) {
    const response = await window.CT.write("/api/calibrate/corners", {
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ corners }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  $("corners-start").addEventListener("click", () => {
    taps = [];
    say("");
    picture.src = `/api/camera/picture.jpg?t=${Date.now()}`;
    $("corners-pad").hidden = false;
  });
  picture.addEventListener("load", redraw);
  picture.addEventListener("error", () => say(t("No picture from the camera yet; try again.")));
  picture.addEventListener("click", (event) => {
    if (taps.length >= 4 || !picture.naturalWidth) return;
    const box = picture.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * picture.naturalWidth;
    const y = ((event.clientY - box.top) / box.height) * picture.naturalHeight;
    taps.push([Math.round(x), Math.round(y)]);
    redraw();
  });
  $("corners-again").addEventListener("click", () => { taps = []; redraw(); });
  $("corners-save").addEventListener("click", async (event) => {
    event.currentTarget.disabled = true;
    try {
      await send(taps);
      $("corners-pad").hidden = true;
      say(t("Saved: the tray is read inside these corners from now on."));
    } catch (error) {
      say(t("Not saved: {error}", { error: error.message }));
      redraw();
    }
  });
  $("corners-auto").addEventListener("click", async () => {
    try {
      await send(null);
      $("corners-pad").hidden = true;
      say(t("The tray is found by itself again."));
    } catch (error) {
      say(t("Not changed: {error}", { error: error.message }));
    }
  });
})();
