// The game: the "what now" card, inside the tower, players and score sheet, and the game's history.
// Commands go to /api/game/<id>/command with the seq this phone shows; one request at a time,
// each tap with its own Idempotency-Key (kept for the tap's retries).
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const { el, COLOURS, t, tn, colourName } = CT;
  const $ = (id) => document.getElementById(id);
  const READINGS = ["tray_read", "setup_drop_read", "bump_read"];
  const STAGE_TITLE = {
    new: t("New game"), seating: t("Seating"), setup: t("Set-up"), tray: t("Drop the cubes"),
    actions: t("Actions"), round_end: t("End of the round"), pirate: t("Pirates"), final: t("Final scoring"),
    over: t("Game over"),
  };

  let shown = null; // the GAME this phone shows
  let shownKey = null; // what the "what now" body was built for
  let shownMoreKey = null;
  let shownSheetsKey = null;
  let busy = false;
  let newGameOpen = false;

  CT.game = () => shown;

  // --- sending -------------------------------------------------------------------------
  // A button that is off for its own reason carries data-off="1"; busy turns every command off,
  // and so does a change of the game for a moment (``hold``).
  function setBusy(on) {
    busy = on;
    document.body.classList.toggle("busy", on);
    applyOff();
  }

  function setOff(button, off) {
    button.dataset.off = off ? "1" : "";
    button.disabled = blocked(button) || off;
  }

  // A tap presses what is drawn when the finger comes down. After the game changed, the same
  // place may hold another command: the second tap of a double tap on "Gold instead" would take
  // the next player's gold, a second tap on Undo would undo one more. So for a moment after
  // each change every command button is off; a tap then is one meant for what was there before
  // (a form's own submit is not held: a form is filled, not tapped twice).
  const HOLD_MS = 500;
  let heldUntil = 0;
  let holdTimer = null;

  function blocked(button) {
    const held = performance.now() < heldUntil && button.type !== "submit";
    return busy || held;
  }

  function applyOff() {
    for (const button of document.querySelectorAll("button.cmd")) {
      button.disabled = blocked(button) || button.dataset.off === "1";
    }
  }

  function hold() {
    heldUntil = performance.now() + HOLD_MS;
    applyOff();
    clearTimeout(holdTimer);
    holdTimer = setTimeout(applyOff, HOLD_MS + 20);
  }

  function clearRefusals() {
    for (const node of document.querySelectorAll(".refusal")) node.remove();
  }

  // Show the server's message right after the button (or its row) that was pressed.
  function refuse(near, message) {
    clearRefusals();
    const note = el("p", { class: "refusal", role: "alert", text: message });
    const anchor = (near && (near.closest(".button-row") || near)) || $("now-body");
    if (anchor.isConnected) anchor.after(note); else $("now-body").prepend(note);
    note.scrollIntoView({ block: "nearest" });
  }

  function notice(message) {
    const node = $("game-notice");
    node.textContent = message || "";
    node.hidden = !message;
  }

  // One tap, one Idempotency-Key. When the answer is lost (the Wi-Fi dropped it) or the device
  // was busy, the same request goes again with the same key: the device applies the tap once
  // and answers the retry as it answered the first try. crypto.randomUUID needs HTTPS; the
  // device is plain HTTP on the table's network, so the key is made from getRandomValues.
  const RETRY_DELAYS_MS = [400, 1200, 2500];

  function newKey() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function fetchOnce(url, body) {
    const init = {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": newKey() },
      body: JSON.stringify(body),
    };
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= RETRY_DELAYS_MS.length;
      try {
        const response = await CT.write(url, init);  // adds the table code
        if (last || ![502, 503, 504].includes(response.status)) return response;
      } catch (err) {
        if (last) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
    }
  }

  // serverWords: a 409 with the fresh game is said in the server's words (a new game's race:
  // "another phone started a game first (game 3 ...), so yours was not started")
  async function post(url, body, near, serverWords) {
    if (busy) return null;
    clearRefusals();
    notice("");
    setBusy(true);
    try {
      const response = await fetchOnce(url, body);
      const data = await response.json().catch(() => ({ error: response.statusText }));
      if (response.ok) return data;
      if (response.status === 409 && data.confirm && !body.confirmed) {
        // the device asks first (an unusual drop): the same request again is the players' yes
        setBusy(false);
        if (await CT.ask(data.confirm)) return post(url, { ...body, confirmed: true }, near, serverWords);
        return null;
      }
      if (response.status === 409 && data.game) {
        setBusy(false);
        render(data.game, true);
        if (serverWords && data.error) { notice(data.error); return null; }
        // What the table is at now, not "press again": by now it may be another player's turn.
        const now = data.game.id === null ? t("New game") : nowTitle(data.game.state);
        notice(t("Another phone changed the game first, so nothing was sent. Now: {now}. Press again only if that is still what you meant.", { now }));
        return null;
      }
      setBusy(false);
      refuse(near, data.error || t("refused ({status})", { status: response.status }));
      if (!data.kind && shown && shown.id !== null) refresh(); // not the rules: maybe a new game
      return null;
    } catch (err) {
      setBusy(false);
      // fetch's own words ("Failed to fetch", "NetworkError when…") say nothing to a player;
      // pressing again is safe: the command carries the game's step, so it cannot apply twice
      refuse(near, err instanceof TypeError
        ? t("Could not reach the device: is this phone still on the table's Wi-Fi? Press again once it is (a press that did arrive is not applied twice).")
        : t("Could not reach the device: {error}", { error: err.message }));
      return null;
    } finally {
      if (busy) setBusy(false);
    }
  }

  async function refresh() {
    try {
      const response = await fetch("/api/game");
      if (response.ok) render(await response.json());
    } catch (err) { /* the stream will bring it */ }
  }

  // extra: {reading: id} when the counts are a camera reading's, not typed by hand
  async function send(command, near, extra) {
    if (!shown || shown.id === null) return;
    const form = near && near.closest("form");
    const card = form && form.closest(".card");
    const game = await post(`/api/game/${shown.id}/command`, { base: shown.seq, command, ...extra }, near);
    if (game) render(game);
    if (form) focusAfter(form, card);
  }
  CT.send = send;
  CT.post = post;

  // --- the "what now" card ---------------------------------------------------------------
  function panel(title, ...children) {
    return el("div", { class: "panel" }, title ? el("h3", { text: title }) : null, children);
  }

  function bigButton(text, onclick, extra) {
    return el("button", { type: "button", class: `cmd big ${extra || ""}`, onclick }, text);
  }

  // A form whose fields are kept when the card is drawn anew (keptForms): key names it, the
  // same in the card drawn anew while it asks for the same thing.
  function keeping(key, form) {
    form.dataset.keep = key;
    return form;
  }

  // Opens a form below `holder`, replacing whatever form was open there. The player's tap (or
  // key) on its button, `event`, moves the focus into the form, so a screen reader or a keyboard
  // goes on in it: to its heading, or the form itself, never a field, whose phone keyboard would
  // cover the form. A form the page opens again itself (drawn anew after another phone's change)
  // leaves the focus where it is.
  const openers = new WeakMap(); // each form opened by a button: that button
  function openIn(holder, form, event) {
    const opener = event && event.currentTarget;
    if (opener) openers.set(form, opener);
    holder.replaceChildren(form);
    form.scrollIntoView({ block: "nearest" });
    const target = form.querySelector("h3") || form;
    target.tabIndex = -1;
    if (event && event.isTrusted) target.focus({ preventScroll: true });
  }

  // Its Cancel closes it: the focus goes back to the button that opened it.
  function closeIn(holder) {
    const form = holder.firstElementChild;
    const active = document.activeElement;
    const inside = !active || active === document.body || (form && form.contains(active));
    holder.replaceChildren();
    const opener = form && openers.get(form);
    if (inside && opener && opener.isConnected && !opener.disabled) opener.focus();
  }

  // A form gone once it was sent (the card is drawn anew for what comes next) took the focus
  // with it, to nowhere: back to the button that opened it where that is still there, else to
  // the heading of its card (the Table card's says what now).
  function focusAfter(form, card) {
    const active = document.activeElement;
    if (form.isConnected || (active && active !== document.body)) return;
    const opener = openers.get(form);
    if (opener && opener.isConnected && !opener.disabled) { opener.focus(); return; }
    const heading = card && card.isConnected && card.querySelector("h2");
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }

  function trayNow() {
    return CT.tray || { counts: {}, total: 0, frame_id: null };
  }

  // A live region: a screen reader says a new reading of the drop the card waits for ("Latest
  // reading: 4 cubes, 3 blue, 1 white"); fillReading leaves it untouched while the reading is
  // the same, so another phone's update does not say it again.
  function readingSummary() {
    const box = el("div", { class: "reading", id: "now-reading", "aria-live": "polite" });
    fillReading(box);
    return box;
  }

  // The reading was there before this phase's previous one began (or before the game was
  // started): the server will not let it start a phase, since it may be the last drop's.
  // A reading of a tray the camera saw unchanged dates from that tray's first reading.
  function staleReading(tray) {
    const taken = tray.same_tray_as || tray.id;
    return !!(shown && shown.reading_after !== null && shown.reading_after !== undefined
      && taken !== undefined && taken !== null && taken <= shown.reading_after);
  }

  // What the drop before this one was, in words: "the set-up drop", "the brown phase began".
  // A phase skipped for an empty storage space had no drop (as companion/drops.py says).
  function previousDrop(state) {
    let i = COLOURS.indexOf(state.phase);
    let round = state.round;
    const skipped = state.skipped_phases || [];
    if (i < 0) return t("the set-up drop");
    for (;;) {
      i -= 1;
      if (i < 0) { i = COLOURS.length - 1; round -= 1; }
      if (round < 1) return t("the set-up drop");
      const colour = COLOURS[i];
      if (!skipped.some((s) => s.round === round && s.phase === colour && s.why === "storage empty")) {
        return t("the {colour} phase began", { colour: colourName(colour) });
      }
    }
  }

  function goodReading(tray) {
    return !!(tray.frame_id && !tray.error);
  }

  // A reading the "Use this reading" button may send now.
  function usableReading(tray) {
    const stage = shown && shown.state ? shown.state.stage : "";
    return goodReading(tray) && !(stage === "tray" && staleReading(tray));
  }

  function fillReading(box) {
    const tray = trayNow();
    for (const button of document.querySelectorAll("button.use-reading")) setOff(button, !usableReading(tray));
    const counts = el("ul", { class: "mini-counts" },
      COLOURS.filter((c) => (tray.counts[c] || 0) > 0).map((c) =>
        el("li", {}, CT.swatch(c), ` ${t("{n} {colour}", { n: tray.counts[c], colour: colourName(c) })}`)));
    const parts = [];
    if (!tray.frame_id) parts.push(el("p", { class: "muted", text: t("No tray reading yet.") }));
    else if (!tray.error) { // a camera problem has no counts: its "0 cubes" would be no reading
      parts.push(el("p", { class: "muted", text: tn("Latest reading: {n} cube", "Latest reading: {n} cubes", tray.total) }));
      if (tray.total) parts.push(counts);
    }
    const state = shown && shown.state ? shown.state : {};
    if (goodReading(tray) && staleReading(tray)) {
      parts.push(el("p", { class: "alert used", text: state.stage === "tray"
        ? t("This reading is from before {drop}, so it may be that drop: drop the {colour} cubes and wait for the new reading (or enter the counts by hand).", { drop: previousDrop(state), colour: colourName(state.phase) })
        : t("This reading was taken before the game was started: is it the set-up drop?") }));
    }
    if (tray.error) parts.push(el("p", { class: "alert", text: t("The last picture could not be read: {error}", { error: tray.error }) }));
    else if (tray.uncertain) {
      parts.push(el("p", { class: "alert", text: t("Please check the counts: {warnings}", { warnings: CT.fewWarnings(tray.warnings) || t("some cubes are unclear") }) }));
    }
    const html = parts.map((part) => part.outerHTML).join("");
    if (readingShown.get(box) !== html) {
      box.replaceChildren(...parts);
      readingShown.set(box, html);
    }
  }
  const readingShown = new WeakMap(); // each reading box: what it shows

  CT.onTray = function onTray() {
    const box = $("now-reading");
    if (box) fillReading(box);
    showGameUse();
  };

  // The Device view's tray card shows the camera's latest reading; the phase in play may use
  // other counts (the players corrected the drop or typed it in, or the tray changed since). Said
  // under the camera's offer, so the Device view does not seem to contradict the Table view.
  function showGameUse() {
    const note = $("game-uses");
    if (!note) return;
    const state = shown && shown.state;
    const used = state && state.offer ? state.cubes.action_space : null;
    const tray = trayNow();
    const differs = !!used && goodReading(tray)
      && COLOURS.some((c) => (used[c] || 0) !== (tray.counts[c] || 0));
    note.hidden = !differs;
    if (!differs) { note.textContent = ""; return; }
    note.textContent = t("The phase in play uses other counts: {counts} ({ap} AP, or {gold} gold).",
      { counts: CT.countsText(used), ap: state.offer.ap, gold: state.offer.gold });
  }

  // The latest reading as the drop the game waits for (the tray card's answer to a Next press
  // the device refused with a question): the device asks it here, as for "Use this reading".
  // True once that no longer waits: the reading was used, or the game waits for no drop now.
  CT.useReading = async function useReading(near) {
    const expects = shown && shown.state ? shown.state.expects_events || [] : [];
    const kind = ["tray_read", "setup_drop_read"].find((k) => expects.includes(k));
    if (!kind) return true;
    const tray = trayNow();
    if (!goodReading(tray)) {
      refuse(near, t("There is no good tray reading to use: read the tray or enter the counts by hand."));
      return false;
    }
    const before = shown;
    await send({ type: kind, tray: tray.counts }, near, { reading: tray.id });
    return shown !== before;
  };

  function readingPanel(title, intro, kind, useText, countsText, bounds) {
    const holder = el("div", { class: "form-holder" });
    const use = bigButton(useText, (e) => {
      const tray = trayNow();
      if (!goodReading(tray)) { refuse(e.currentTarget, t("There is no good tray reading to use: read the tray or enter the counts by hand.")); return; }
      send({ type: kind, tray: tray.counts }, e.currentTarget, { reading: tray.id });
    }, "primary use-reading");
    setOff(use, !usableReading(trayNow()));
    const keep = `counts|${kind}`; // kept, opened again, when the card is drawn anew (keptForms)
    const edit = el("button", {
      type: "button", class: "secondary edit-counts", text: kind === "setup_drop_read" ? t("Enter counts by hand") : t("Edit the counts first"),
      dataset: { opens: keep },
      onclick: (e) => openIn(holder, keeping(keep, CT.countsForm(trayNow().counts, countsText,
        (counts, button) => send({ type: kind, tray: counts }, button), () => closeIn(holder), bounds)), e),
    });
    // "Nothing fell": the players' own word that the phase has no cubes (the device asks first)
    const nothing = kind === "tray_read" ? el("button", {
      type: "button", class: "cmd secondary nothing-fell", text: t("Nothing fell"),
      onclick: (e) => send({ type: kind, tray: Object.fromEntries(COLOURS.map((c) => [c, 0])) }, e.currentTarget),
    }) : null;
    return panel(title, intro ? el("p", { text: intro }) : null, readingSummary(),
      el("div", { class: "button-row" }, use, edit, nothing), holder);
  }

  function pirateCard(state) {
    const input = CT.numberInput({ max: 20, "aria-label": t("pirate marker value"), id: "pirate-value", class: "pirate-value" });
    const button = el("button", { type: "submit", class: "cmd primary", text: t("Reveal this pirate marker") });
    const revealed = state.pirates.revealed || [];
    const form = el("form", { class: "pirate-form", dataset: { keep: `pirate|${revealed.length}` } },
      CT.field(t("Number on the pirate marker just turned face up"), input), el("div", { class: "button-row" }, button));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const value = CT.typedValue(input);
      if (value === null) { refuse(button, t("Enter the number printed on the marker.")); return; }
      send({ type: "pirate_revealed", value }, button);
    });
    return panel(t("Reveal a pirate marker"),
      el("p", { text: revealed.length ? t("Revealed so far: {values} (strength {strength}).", { values: revealed.join(", "), strength: state.pirates.strength }) : t("No pirate marker revealed yet.") }),
      form);
  }

  function attackResults(state) {
    const attack = state.pirates.last_attack;
    if (!attack) return null;
    // the Gold column only when someone got gold for fighting them off (a token's reward)
    const gold = Object.values(attack.players).some((r) => r.gold);
    const rows = Object.entries(attack.players).map(([name, r]) => el("tr", {},
      el("th", { scope: "row", text: name }), el("td", { text: r.cannons_fired }),
      el("td", { text: r.fought_off ? t("fought off") : t("−{n} VP", { n: r.vp_lost }) }),
      gold ? el("td", { text: r.gold ? `+${r.gold}` : "" }) : null));
    const heads = [t("Player"), t("Cannons"), t("Result"), ...(gold ? [t("Gold")] : [])];
    const title = t("Pirates in round {round}: strength {strength}", { round: attack.round, strength: attack.strength });
    return el("div", { class: "attack" },
      el("h3", { text: title }),
      scrollBox(title, el("table", { class: "grid small" },
        el("thead", {}, el("tr", {}, heads.map((h) => el("th", { scope: "col", text: h })))),
        el("tbody", {}, rows))));
  }

  // A table that can be wider than a narrow phone (long names, large text) scrolls sideways in
  // its own box, as the page's other tables do (index.html): the box takes the focus, so arrow
  // keys scroll it, and a screen reader names it.
  function scrollBox(name, table) {
    return el("div", { class: "scroll", tabindex: "0", role: "region",
      "aria-label": t("{table}, scrolls sideways", { table: name }) }, table);
  }

  function actionsCard(game) {
    const state = game.state;
    const player = state.turn;
    const opts = state.options[player];
    const me = state.players.find((p) => p.name === player) || {};
    const holder = el("div", { class: "form-holder" });
    const offer = state.offer || {};
    const choices = (opts ? opts.actions : []).map((action) => el("button", {
      type: "button", class: `cmd action-btn ${action.colour}`, dataset: { colour: action.colour, via: action.via },
      onclick: (e) => openIn(holder, CT.actionForm(game, player, action,
        (command, button) => send(command, button), () => closeIn(holder)), e),
    }, CT.swatch(action.colour), el("span", { class: "action-name", text: action.name }),
    action.via !== "tray" ? el("span", { class: "via", text: action.via === "white" ? t("white cubes as joker") : t("via green/red token") }) : null,
    el("b", { class: "ap", text: t("{n} AP", { n: action.ap }) }),
    // the cube's colour in words after what the button shows, so its name starts with the words
    // on it ("Move Ships 3 AP (blue)"): a voice control's "tap Move Ships 3 AP" finds it
    el("span", { class: "visually-hidden", text: ` ${t("({colour})", { colour: colourName(action.colour) })}` })));
    const extras = [];
    if (opts) {
      extras.push(bigButton(t("Take {n} gold", { n: opts.gold_instead }), (e) =>
        send({ type: "action", player, choice: "gold" }, e.currentTarget), "gold-instead"));
      if (opts.vp_instead !== null && opts.vp_instead !== undefined) {
        extras.push(bigButton(t("Take {n} VP", { n: opts.vp_instead }), (e) =>
          send({ type: "action", player, choice: "vp" }, e.currentTarget), "vp-instead"));
      }
    }
    // who is on turn and who has acted: bold and struck through on the screen, said in words to
    // a screen reader (which reads neither)
    const order = el("ol", { class: "phase-order" }, (state.phase_order || []).map((name) => {
      const now = name === player;
      const done = !now && (state.acted || []).includes(name);
      return el("li", { class: now ? "now" : done ? "done" : "" }, name,
        now || done ? el("span", { class: "visually-hidden", text: ` ${now ? t("(on turn)") : t("(acted this phase)")}` }) : null);
    }));
    const n = (offer.actions || []).length;
    return panel(null,
      el("p", { class: "offer-line" }, CT.swatch(state.phase),
        ` ${tn("{colour} phase: {n} action on offer, {ap} AP or {gold} gold.", "{colour} phase: {n} actions on offer, {ap} AP or {gold} gold.", n, { colour: colourName(state.phase), ap: offer.ap, gold: offer.gold })}`),
      el("p", { class: "offer-line muted" }, opts && opts.gold_to_buy_ap
        ? t("{player} has {gold} gold (may buy up to {n} AP).", { player, gold: me.gold, n: opts.gold_to_buy_ap })
        : t("{player} has {gold} gold.", { player, gold: me.gold })),
      order,
      el("div", { class: "choices" }, choices),
      el("div", { class: "button-row" }, extras),
      holder);
  }

  function finalCard(game) {
    const state = game.state;
    const needProgress = !state.settings.progress_track_vp;
    const needSpecial = !state.settings.special_track_vp;
    const inputs = {};
    // an undone final scoring's values come back into the fields: fixing one typo after an undo
    // must not mean typing every player's VP again
    const earlier = [...game.history].reverse().find((h) => h.type === "final_scoring");
    const before = (earlier && earlier.inputs) || {};
    const rows = state.players.map((p) => {
      inputs[p.name] = {};
      const cells = [el("th", { scope: "row", text: p.name })];
      for (const [key, need] of [["progress_vp", needProgress], ["special_vp", needSpecial]]) {
        if (!need) continue;
        const input = CT.numberInput({ "aria-label": key === "progress_vp" ? t("{player} progress track VP", { player: p.name }) : t("{player} special track VP", { player: p.name }), class: key,
          value: before[p.name] && before[p.name][key] !== undefined ? before[p.name][key] : undefined });
        inputs[p.name][key] = input;
        cells.push(el("td", {}, input));
      }
      return el("tr", {}, cells);
    });
    const button = el("button", { type: "submit", class: "cmd primary", text: t("Score the game") });
    const form = el("form", { class: "final-form" },
      el("p", { text: t("Enter the highest VP reached or passed on each player's tracks (from the player sheets).") }),
      scrollBox(t("Final scoring"), el("table", { class: "grid" },
        el("thead", {}, el("tr", {}, el("th", { text: t("Player") }),
          needProgress ? el("th", { text: t("Progress VP") }) : null, needSpecial ? el("th", { text: t("Special VP") }) : null)),
        el("tbody", {}, rows))),
      el("div", { class: "button-row" }, button));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (!needProgress && !needSpecial) { send({ type: "final_scoring" }, button); return; }
      const players = {};
      for (const [name, fields] of Object.entries(inputs)) {
        const values = {};
        for (const [key, input] of Object.entries(fields)) { const n = CT.typedValue(input); if (n !== null) values[key] = n; }
        players[name] = values;
      }
      send({ type: "final_scoring", players }, button);
    });
    return panel(null, form);
  }

  function overCard(game) {
    const sheet = game.score_sheet;
    // the next game starts here too (not only under "More"): it is what the table does next
    const holder = el("div", { class: "form-holder" });
    const next = bigButton(t("Start a new game…"), (e) => openIn(holder, newGameForm(() => closeIn(holder)), e),
      "over-new-game");
    return panel(null,
      el("p", { class: "winner", text: t("{player} wins!", { player: sheet.winner }) }),
      el("ol", { class: "ranking" }, rankingItems(sheet)),
      tieNote(sheet),
      el("div", { class: "button-row" }, next),
      holder);
  }

  // Ranking lines: tied players share a place ("1. Ada 40 VP (tie)", "1. Ben 40 VP (tie)").
  function rankingItems(sheet) {
    return sheet.ranking.map((r) => el("li", {
      value: r.place || undefined, class: `${r.player === sheet.winner ? "leader" : ""}${r.tied ? " tied" : ""}`,
    }, r.tied ? t("{player}: {n} VP (tie)", { player: r.player, n: r.total }) : t("{player}: {n} VP", { player: r.player, n: r.total })));
  }
  CT.rankingItems = rankingItems;

  // The rulebook's tie-break, named: "the tied player who is ahead ... in player order wins".
  function tieNote(sheet) {
    if (!sheet.tie_break || !sheet.ranking.length) return null;
    const top = sheet.ranking.filter((r) => r.total === sheet.ranking[0].total).map((r) => r.player);
    const values = { players: top.join(` ${t("and")} `), player: sheet.winner };
    return el("p", { class: "muted tie-break", text: sheet.final
      ? t("Tie between {players}: {player} wins, being ahead in player order (the rulebook's tie-break).", values)
      : t("Tie between {players}: {player} would win, being ahead in player order (the rulebook's tie-break).", values) });
  }
  CT.tieNote = tieNote;

  function nowTitle(state) {
    switch (state.stage) {
      case "setup": return t("Set up the game");
      case "tray": return t("Phase {colour} (round {round}): drop the cubes", { colour: colourName(state.phase), round: state.round });
      case "actions": return t("{player}'s turn", { player: state.turn });
      case "round_end": return t("End round {round}: pirates attack (strength {strength})", { round: state.round, strength: state.pirates.strength });
      case "pirate": return t("Round {round} is over: reveal the next pirate marker", { round: state.round });
      case "final": return t("Final scoring");
      case "over": return t("Game over");
      default: return STAGE_TITLE[state.stage] || state.stage;
    }
  }

  function nowBody(game) {
    const state = game.state;
    const expects = state.expects_events || [];
    const out = [];
    if (state.stage === "setup") {
      if (expects.includes("setup_drop_read")) {
        out.push(readingPanel(t("Drop all 49 cubes into the tower"),
          t("Put all 49 cubes into the tower at once; the cubes that fall out go to the storage spaces."),
          "setup_drop_read", t("Use this tray reading"), t("Use these counts"), state.vision_bounds));
      }
      if (expects.includes("pirate_revealed")) out.push(pirateCard(state));
      out.push(panel(t("The player sheets"), CT.sheetGoods(game, send)));
    } else if (state.stage === "tray") {
      const phase = colourName(state.phase);
      out.push(readingPanel(null, t("Drop the {colour} storage cubes (and any cubes waiting in the tray) into the tower.", { colour: phase }),
        "tray_read", t("Use this reading for the {colour} phase", { colour: phase }),
        t("Use these counts for the {colour} phase", { colour: phase }), state.vision_bounds));
      out.push(bumpPanel(true));
    } else if (state.stage === "actions") {
      out.push(actionsCard(game));
    } else if (state.stage === "round_end") {
      out.push(panel(null, el("p", { text: t("After the white phase the pirates attack: cannons are fired, VP lost.") }),
        bigButton(t("End round {round}: pirates attack (strength {strength})", { round: state.round, strength: state.pirates.strength }),
          (e) => send({ type: "round_ended" }, e.currentTarget), "primary end-round")));
    } else if (state.stage === "pirate") {
      out.push(attackResults(state));
      out.push(pirateCard(state));
    } else if (state.stage === "final") {
      out.push(attackResults(state));
      out.push(finalCard(game));
    } else if (state.stage === "over") {
      out.push(overCard(game));
    } else {
      out.push(panel(null, el("p", { text: t("The game expects {expects}. Use Redo to bring back what was undone.", { expects: state.expects }) })));
    }
    return out;
  }

  // A bump: cubes that fell out of the tower at the wrong time. Between rounds' phases the tray
  // holds only them, so the form starts at the camera's reading; while a phase's drop waits for
  // its reading (the "tray" stage) the tray holds that drop too, so the form starts empty and
  // says which cubes to count (the rules keep them in the tray for the next phase's drop).
  function bumpPanel(afterDrop) {
    const holder = el("div", { class: "form-holder" });
    const open = el("button", {
      type: "button", class: "secondary small bump",
      text: t("Cubes fell out early (bump)"),
      onclick: (e) => {
        // prefilled only from a reading newer than this phase's start: the phase's own drop (or
        // an older tray) is not a bump, and recording it would count those cubes twice
        const tray = trayNow();
        const start = afterDrop || staleReading(tray) ? {} : tray.counts;
        const form = CT.countsForm(start, t("Record the bumped cubes"),
          (counts, button) => send({ type: "bump_read", tray: counts }, button), () => closeIn(holder),
          shown && shown.state.vision_bounds);
        if (afterDrop) {
          form.prepend(el("p", { class: "muted", text: t("Count only the cubes that fell out early, not this phase's drop. They stay in the tray for the next phase: the reading of this drop must still show them.") }));
        }
        openIn(holder, form, e);
      },
    });
    return el("div", { class: "bump-box" }, open, holder);
  }

  function moreBody(game) {
    const state = game.state;
    const out = [];
    for (const p of state.players) {
      if (p.treasure_chests > 0) {
        out.push(el("button", {
          type: "button", class: "cmd secondary chest", dataset: { player: p.name },
          onclick: (e) => send({ type: "chest_cashed", player: p.name }, e.currentTarget),
        }, t("{player}: cash a treasure chest for 3 gold ({n} left)", { player: p.name, n: p.treasure_chests })));
      }
      for (const tok of p.progress_tokens || []) {
        if ((tok.name === "gold3" || tok.name === "gold5") && !tok.used) {
          out.push(el("button", {
            type: "button", class: "cmd secondary token-used", dataset: { player: p.name, token: tok.name },
            onclick: (e) => send({ type: "token_used", player: p.name, token: tok.name }, e.currentTarget),
          }, t("{player}: use the gold token ({n} gold now)", { player: p.name, n: tok.name === "gold3" ? 3 : 5 })));
        }
      }
    }
    // (while a drop waits for its reading the bump is on the Table view's card itself)
    if (!["new", "seating", "over", "tray"].includes(state.stage) && state.setup_drop_read) out.push(bumpPanel(false));
    out.push(el("p", {}, el("a", {
      href: `/api/game/${game.id}/events.jsonl`, class: "export", download: "",
      text: t("Download this game's log (for cubetower replay)"),
    })));
    const holder = el("div", { class: "form-holder" });
    out.push(el("button", {
      type: "button", class: "secondary new-game-open", text: t("Start a new game…"),
      onclick: (e) => {
        newGameOpen = true;
        openIn(holder, newGameForm(() => { newGameOpen = false; closeIn(holder); }), e);
      },
    }), holder);
    return out;
  }

  // --- no game: the new game form ------------------------------------------------------------
  function newGameForm(onCancel) {
    const names = [1, 2, 3, 4].map((i) => el("input", {
      // No maxlength: it would cut a pasted name without a word; the server's refusal says the limit.
      type: "text", class: "player-name", autocomplete: "off",
      "aria-label": i === 1 ? t("Player 1 (start player)") : t("Player {n}", { n: i }),
      placeholder: i === 1 ? t("start player") : i <= 2 ? t("name") : t("name (optional)"),
    }));
    const gameName = el("input", { type: "text", id: CT.uid("gname"), class: "game-name", placeholder: t("e.g. Friday") });
    const button = el("button", { type: "submit", class: "cmd primary big", text: t("Start the game") });
    const form = el("form", { class: "new-game" },
      el("p", { text: t("Players in player order: the start player first (2 to 4 players).") }),
      names.map((input, i) => el("div", { class: "field" },
        el("label", { for: input.id = CT.uid("p"), text: i === 0 ? t("Player 1 (start player)") : t("Player {n}", { n: i + 1 }) }), input)),
      el("div", { class: "field" }, el("label", { for: gameName.id, text: t("Game name (optional)") }), gameName),
      el("div", { class: "button-row" }, button,
        onCancel ? el("button", { type: "button", class: "secondary", text: t("Cancel"), onclick: onCancel }) : null));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const players = names.map((n) => n.value.trim()).filter(Boolean);
      // the game this phone shows at the table (null: none), the one the players mean to
      // replace: when another phone started one first, the device answers 409 with it instead
      // of starting a second game (taken before the question, which names this game)
      const body = { players, replaces: shown ? shown.id : null };
      if (gameName.value.trim()) body.name = gameName.value.trim();
      if (shown && shown.id !== null && shown.state.stage !== "over") {
        const name = shown.state.name ? `"${shown.state.name}"` : t("Game {n}", { n: shown.id });
        const question = t("Start a new game? {game} ({now}) stays on the device: History lists it, to look at or resume.",
          { game: name, now: nowTitle(shown.state) });
        if (!await CT.ask(question, t("Start the new game"), t("Keep playing"))) return;
      }
      const card = form.closest(".card");
      const game = await post("/api/game", body, button, true);
      if (game) { newGameOpen = false; render(game, true); }
      focusAfter(form, card);
    });
    return form;
  }

  // --- undo / redo -------------------------------------------------------------------------
  function undoTarget(history) {
    for (let i = history.length - 1; i >= 0; i--) {
      const h = history[i];
      if (h.in_force && h.type !== "undo" && h.type !== "game_created") return h;
    }
    return null;
  }

  function redoText(history) {
    for (let i = history.length - 1; i >= 0; i--) {
      const h = history[i];
      if (!h.in_force) continue;
      if (h.type !== "undo") return null;
      // An undo names the event it took back (target); an undo of an undo is a redo.
      const target = history.find((x) => x.n === h.target);
      if (target && target.type === "undo") continue;
      return target ? target.text : "";
    }
    return null;
  }

  function renderUndo(game) {
    const target = undoTarget(game.history);
    const undo = $("undo");
    const redo = $("redo");
    const seated = target && target.type === "players_seated";
    undo.textContent = target && !seated ? t("Undo: {what}", { what: target.text }) : t("Nothing to undo");
    setOff(undo, !target || seated);
    undo.dataset.target = target ? target.n : "";
    const again = redoText(game.history);
    redo.textContent = again !== null ? t("Redo: {what}", { what: again }) : t("Nothing to redo");
    setOff(redo, !again);
  }

  // --- tower, players, score sheet, history -------------------------------------------------------
  function renderTower(state) {
    const cubes = state.cubes;
    const most = Math.max(1, ...COLOURS.map((c) => cubes.tower[c] || 0));
    for (const c of COLOURS) {
      document.querySelector(`[data-tower="${c}"]`).textContent = cubes.tower[c] || 0;
      document.querySelector(`[data-bar="${c}"]`).style.width = `${((cubes.tower[c] || 0) / most) * 4}rem`;
      document.querySelector(`[data-storage="${c}"]`).textContent = cubes.storage[c] || 0;
      document.querySelector(`[data-space="${c}"]`).textContent = cubes.action_space[c] || 0;
      document.querySelector(`#tower tr[data-colour="${c}"]`).classList.toggle("zero", !cubes.tower[c]);
    }
    const waiting = CT.countsText(cubes.tray);
    $("tower-total").textContent = tn("{n} cube inside the tower.", "{n} cubes inside the tower.", cubes.inside_tower_total)
      + (waiting ? ` ${t("Waiting in the tray for the next drop: {cubes}.", { cubes: waiting })}` : "");
  }

  function gridTable(table, players, rows, turn) {
    const head = el("tr", {}, el("th", { scope: "col", text: "" }),
      players.map((name) => el("th", { scope: "col", class: name === turn ? "turn" : "", dataset: { player: name } }, name)));
    const body = rows.map(([label, cell, cls]) => el("tr", { class: cls || "" }, el("th", { scope: "row", text: label }),
      players.map((name, i) => {
        const value = cell(i);
        return el("td", { class: name === turn ? "turn" : "", dataset: { player: name } }, value instanceof Node ? value : String(value));
      })));
    table.replaceChildren(el("thead", {}, head), el("tbody", {}, body));
  }

  function renderPlayers(game) {
    const state = game.state;
    const players = state.player_order.length ? state.player_order : state.players.map((p) => p.name);
    const byName = Object.fromEntries(state.players.map((p) => [p.name, p]));
    const ps = players.map((n) => byName[n]);
    const tokens = (p) => {
      const list = el("span", { class: "tokens" });
      for (const tok of p.progress_tokens) {
        list.append(el(tok.used ? "s" : "span", { class: "token", text: CT.tokenLabel(tok.name), title: tok.name, dataset: { token: tok.name } }));
      }
      if (!p.progress_tokens.length) list.textContent = "—";
      return list;
    };
    // one good a line, "cotton 4" kept together (a cell of words wrapped one a line was unreadable)
    const goodsList = (counts) => {
      const items = Object.entries(counts || {}).filter(([, n]) => n > 0);
      return items.length
        ? el("span", { class: "goods-list" }, items.map(([good, n]) => el("span", { text: `${CT.goodName(good)}\u00a0${n}` })))
        : "—";
    };
    // the tiles planned and not yet built: what Build may place (its refusals name them)
    const planned = (p) => {
      const { villages, landscapes } = p.supply;
      const parts = [villages ? tn("{n} village", "{n} villages", villages) : null,
        landscapes.length ? tn("landscape {sizes}", "landscapes {sizes}", landscapes.length, { sizes: landscapes.join(", ") }) : null];
      const lines = parts.filter(Boolean);
      return lines.length ? el("span", { class: "goods-list" }, lines.map((text) => el("span", { text }))) : "—";
    };
    const posts = (p) => {
      const islands = Object.entries(p.trading_posts).map(([isl, n]) => `${isl}${n > 1 ? `×${n}` : ""}`);
      return islands.length ? `${p.trading_posts_total} (${islands.join(", ")})` : "0";
    };
    gridTable($("players"), players, [
      [t("VP"), (i) => ps[i].vp, "vp"],
      [t("Gold"), (i) => ps[i].gold, "gold"],
      [t("Cannons"), (i) => ps[i].cannons],
      [t("Trading posts"), (i) => posts(ps[i]), "posts"],
      [t("Progress"), (i) => `${ps[i].progress}${ps[i].progress_at_end ? ` ${t("(end)")}` : ""}`],
      [t("Special track"), (i) => `${ps[i].special_track}${ps[i].special_at_end ? ` ${t("(end)")}` : ""}`],
      [t("Production tokens"), (i) => goodsList(ps[i].production), "production"],
      [t("Commodities"), (i) => goodsList(ps[i].commodities), "commodities"],
      [t("Planned tiles"), (i) => planned(ps[i]), "planned"],
      [t("Chests"), (i) => ps[i].treasure_chests],
      [t("Tokens"), (i) => tokens(ps[i]), "tokens"],
    ], state.turn);
    const islands = Object.entries(state.islands || {}).map(([name, isl]) =>
      `${name}${isl.big ? ` ${t("(big)")}` : ""}${isl.completed ? " ✓" : ""}: ${Object.entries(isl.posts).map(([p, n]) => `${p} ${n}`).join(", ") || t("no posts")}`);
    $("islands").textContent = islands.length ? t("Islands: {islands}", { islands: islands.join(" · ") }) : "";

    const sheet = game.score_sheet;
    const sheets = Object.fromEntries(sheet.players.map((s) => [s.player, s]));
    const ss = players.map((n) => sheets[n]);
    $("score-note").textContent = sheet.final ? t("(final)") : t("(if the game ended now)");
    gridTable($("score"), players, [
      [t("VP so far"), (i) => ss[i].vp_before_final_scoring],
      [t("Gold"), (i) => ss[i].gold.vp],
      [t("Goods"), (i) => ss[i].goods.vp],
      [t("Progress"), (i) => ss[i].progress.vp],
      [t("Special"), (i) => ss[i].special_actions.vp],
      [t("Total"), (i) => ss[i].total, "total"],
    ], state.turn);
    $("ranking").replaceChildren(...rankingItems(sheet));
    const tie = tieNote(sheet);
    if (tie) $("ranking").append(el("li", { class: "muted note tie-note" }, tie.textContent));
    const missing = sheet.players.filter((s) => s.missing_inputs.length);
    if (!sheet.final && missing.length) {
      $("ranking").append(el("li", { class: "muted note", text: t("Track VP (progress, special) are entered at the end.") }));
    }
  }

  // A stored log this version could not fold was repaired when loaded (companion.recovery):
  // the players must know the game on screen lacks moves they made. Cut short before #from, it
  // lacks them until the players enter them again; once the game has an event #from (entered
  // since, or the events after it kept), "from #5 on" would name moves that are there now.
  function renderSetAside(game) {
    const aside = game.set_aside;
    const node = $("set-aside");
    node.hidden = !aside;
    if (!aside) node.textContent = "";
    else if (game.seq < aside.from) {
      node.textContent = tn(
        "{n} stored event of this game, from #{from} on, could not be read back and was set aside (it is kept on the device): check the game against the table and enter what is missing.",
        "{n} stored events of this game, from #{from} on, could not be read back and were set aside (they are kept on the device): check the game against the table and enter what is missing.",
        aside.events, { from: aside.from });
    } else {
      node.textContent = tn(
        "{n} stored event of this game could not be read back when the game was loaded and was set aside (it is kept on the device); the game went on without it.",
        "{n} stored events of this game could not be read back when the game was loaded and were set aside (they are kept on the device); the game went on without them.",
        aside.events);
    }
  }

  // A half-typed correction stays open, with what was typed, when another phone changes the
  // game (the list is drawn anew on every change); not once another phone has corrected that
  // same reading (its key names the counts the form started from), as for a player's sheet.
  function renderLog(game) {
    const list = $("game-log");
    const kept = keptForms(list);
    const items = [...game.history].reverse().map((h) => {
      const text = el(h.in_force ? "span" : "s", { class: "text", text: h.text });
      // an undone line is struck through, which a screen reader does not say: it says "(undone)"
      const li = el("li", { value: h.n, class: h.in_force ? "" : "undone", dataset: { n: h.n, type: h.type } }, text,
        h.in_force ? null : el("span", { class: "visually-hidden", text: ` (${t("undone")})` }),
        h.outcome ? el("small", { class: "outcome", text: ` → ${h.outcome}` }) : null);
      if (!h.in_force) li.title = t("undone");
      if (READINGS.includes(h.type) && h.in_force) {
        const holder = el("div", { class: "form-holder" });
        const keep = `correct|${h.n}|${JSON.stringify(h.tray)}`;
        li.append(" ", el("button", {
          type: "button", class: "secondary small correct", "aria-label": t("Correct reading #{n}", { n: h.n }), text: t("Correct"),
          dataset: { opens: keep },
          onclick: (e) => openIn(holder, keeping(keep, CT.countsForm(h.tray, t("Correct reading #{n}", { n: h.n }),
            (counts, button) => send({ type: "tray_corrected", target: h.n, tray: counts }, button),
            () => closeIn(holder), h.bounds)), e),
        }), holder);
      }
      return li;
    });
    list.replaceChildren(...items);
    restoreKept(list, kept);
  }

  // --- render ------------------------------------------------------------------------------------
  // The "what now" body is rebuilt only when what it shows changes, so a half-filled form
  // survives another phone cashing a chest; "More" likewise.
  function situationKey(game) {
    const s = game.state;
    return JSON.stringify([game.id, s.stage, s.round, s.phase, s.turn, s.expects_events,
      s.turn ? s.options[s.turn] : null, s.offer, s.pirates, s.setup_drop_read, s.cubes,
      s.stage === "setup" ? CT.sheetGoodsKey(s) : null]);
  }

  function moreKey(game) {
    const s = game.state;
    return JSON.stringify([game.id, s.stage, s.setup_drop_read, s.cubes.tower,
      s.players.map((p) => [p.name, p.treasure_chests, p.progress_tokens])]);
  }

  // An action form that was open, opened again in the card drawn anew, with what was typed.
  // Not on offer any more: at another turn (this one's action was sent) it simply goes; while
  // it is still that player's turn, another phone took the action away (a correction of the
  // drop), and the form must not vanish without a word.
  function reopen(carried, state) {
    const button = [...$("now-body").querySelectorAll(".action-btn")].find((b) =>
      CT.actionKey(state.turn, { colour: b.dataset.colour, via: b.dataset.via }) === carried.key);
    if (!button) {
      if (carried.key.split("|")[0] === state.turn) {
        notice(t("{action} is no longer on offer (another phone changed the game): what was typed in it is gone.",
          { action: carried.title }));
      }
      return;
    }
    button.click();
    const form = $("now-body").querySelector(".action-form");
    if (!form) return;
    CT.restoreForm(form, carried.state);
    focusAt(form, carried.focus);
  }

  // Where in a form the focus is (the form itself, its heading, a field, a button), as a place
  // to focus again in the same form drawn anew (null: not in it).
  function focusPlace(form) {
    const place = [form, ...form.querySelectorAll("*")].indexOf(document.activeElement);
    return place < 0 ? null : place;
  }
  function focusAt(form, place) {
    const node = place === null ? null : [form, ...form.querySelectorAll("*")][place];
    if (node) node.focus({ preventScroll: true });
  }

  // The other half-filled forms in `box` (a pirate marker's value, counts typed by hand, a
  // sheet's ticks), each by its data-keep key: another phone's entry redraws the whole card, and
  // what this phone's player was typing must not go with it. The field being typed in too.
  function keptForms(box) {
    return [...box.querySelectorAll("form[data-keep]")].map((form) => ({
      key: form.dataset.keep, state: CT.formState(form), focus: focusPlace(form),
    }));
  }

  // ...put back into the same forms drawn anew; one that was opened by a button ("Enter counts
  // by hand") is opened again. A form no longer there (another phone sent it) is not.
  function restoreKept(box, kept) {
    for (const { key, state, focus } of kept) {
      const find = () => [...box.querySelectorAll("form[data-keep]")].find((f) => f.dataset.keep === key);
      let form = find();
      if (!form) {
        const opener = [...box.querySelectorAll("[data-opens]")].find((b) => b.dataset.opens === key);
        if (opener) { opener.click(); form = find(); }
      }
      if (!form) continue;
      CT.restoreForm(form, state);
      focusAt(form, focus);
    }
  }

  // The title is a live region: a screen reader says it whenever its text node is replaced, even
  // by the same words. Every update of the game (another phone cashing a chest) would say
  // "Ada's turn" again; only a new title is said.
  function setTitle(text) {
    const title = $("now-title");
    if (title.textContent !== text) title.textContent = text;
  }

  // force: show this game even if it looks no newer (the server's answer to a conflict, or
  // the snapshot of a new connection, which may follow a restart that lost the last event)
  function render(game, force) {
    if (!game) return;
    const same = shown && game.id === shown.id && game.seq === shown.seq;
    // nor an older state of the game on screen arriving late (the stream's event of the
    // previous command after this phone's own answer to the next one): it would put it back
    const older = shown && game.id === shown.id && game.seq < shown.seq;
    if ((same || older) && !force) return;
    const previous = shown;
    shown = game;
    const noGame = game.id === null;
    for (const id of ["tower-card", "players-card", "log-card"]) $(id).hidden = noGame;
    $("sheets-card").hidden = noGame || !CT.sheetGoodsOpen(game.state);
    $("undo-row").hidden = noGame;
    $("more").hidden = noGame;
    document.body.dataset.stage = noGame ? "none" : game.state.stage;
    document.body.dataset.seq = noGame ? "" : game.seq;
    if (previous && !same) notice(""); // another state: an older "another phone" note no longer applies
    if (noGame) {
      if (CT.onGameShown) CT.onGameShown(game, previous);
      $("game-title").textContent = "";
      setTitle(t("New game"));
      if (shownKey !== "none") $("now-body").replaceChildren(newGameForm(null));
      shownKey = "none";
      return;
    }
    const state = game.state;
    $("game-title").textContent = [state.name, state.round ? t("round {n}", { n: state.round }) : "",
      state.phase ? t("{colour} phase", { colour: colourName(state.phase) }) : ""]
      .filter(Boolean).join(" · ");
    setTitle(nowTitle(state));
    // Each part is drawn anew only when what it shows changed (``force`` only lets a snapshot
    // through, e.g. on reconnecting): a half-filled form must survive a Wi-Fi blip. An open
    // action form still on offer is opened again with what was typed.
    const key = situationKey(game);
    if (key !== shownKey) {
      const open = $("now-body").querySelector(".action-form");
      const carried = open ? { key: open.dataset.key, state: CT.formState(open), focus: focusPlace(open),
        title: open.querySelector("h3").textContent.trim() } : null;
      const kept = keptForms($("now-body"));
      clearRefusals();
      $("now-body").replaceChildren(...nowBody(game).filter(Boolean));
      shownKey = key;
      if (carried) reopen(carried, state);
      restoreKept($("now-body"), kept);
    }
    const more = moreKey(game);
    if (more !== shownMoreKey && !newGameOpen) {
      $("more-body").replaceChildren(...moreBody(game));
      shownMoreKey = more;
    }
    const sheets = CT.sheetGoodsKey(state);
    if (sheets !== shownSheetsKey) {
      const kept = keptForms($("sheets-body"));
      $("sheets-body").replaceChildren(CT.sheetGoods(game, send));
      shownSheetsKey = sheets;
      restoreKept($("sheets-body"), kept);
    }
    renderSetAside(game);
    renderUndo(game);
    renderTower(state);
    renderPlayers(game);
    renderLog(game);
    CT.onTray();
    if (CT.onGameShown) CT.onGameShown(game, previous);
    if (busy) setBusy(true); // freshly drawn buttons stay disabled while a request is out
    if (previous && !same && previous.id === game.id) hold(); // the game changed under the finger
  }
  CT.render = render;
})(window.CT);
